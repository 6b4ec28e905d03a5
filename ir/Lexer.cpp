//===- Lexer.cpp - Tokens of the graph IR's text form ---------------------===//
#include "ir/Lexer.h"

#include "ir/Source.h"
#include "ir/Syntax.h"

#include "llvm/ADT/StringExtras.h"

namespace dync::ir {

static bool isIdentifierChar(char c) { return llvm::isAlnum(c) || c == '_'; }

Token Lexer::make(Token::Kind kind, const char* start, llvm::StringRef spelling) {
  Token token;
  token.kind = kind;
  token.start = start;
  token.spelling = spelling;
  return token;
}

Token Lexer::error(const char* at, std::string message) {
  errorMessage_ = std::move(message);
  return make(Token::Error, at, llvm::StringRef(at, cur_ > at ? cur_ - at : 0));
}

void Lexer::skipBlanksAndComments() {
  while (cur_ < end_) {
    if (*cur_ == ' ' || *cur_ == '\t' || *cur_ == '\n' || *cur_ == '\r') {
      ++cur_;
    } else if (*cur_ == '/' && cur_ + 1 < end_ && cur_[1] == '/') {
      while (cur_ < end_ && *cur_ != '\n')
        ++cur_;
    } else {
      return;
    }
  }
}

Token Lexer::lex() {
  skipBlanksAndComments();
  const char* start = cur_;
  if (cur_ == end_)
    return make(Token::Eof, start);
  char c = *cur_++;
  auto followedBy = [&](char next) {
    if (cur_ < end_ && *cur_ == next) {
      ++cur_;
      return true;
    }
    return false;
  };
  switch (c) {
  case '(':
    return make(Token::LParen, start);
  case ')':
    return make(Token::RParen, start);
  case '[':
    return make(Token::LBracket, start);
  case ']':
    return make(Token::RBracket, start);
  case '{':
    return make(Token::LBrace, start);
  case '}':
    return make(Token::RBrace, start);
  case ',':
    return make(Token::Comma, start);
  case ':':
    return make(Token::Colon, start);
  case '+':
    return make(Token::Plus, start);
  case '-':
    return make(Token::Minus, start);
  case '*':
    return make(Token::Star, start);
  case '#':
    return make(Token::Hash, start);
  case '<':
    return make(followedBy('=') ? Token::LessEqual : Token::Less, start);
  case '>':
    return make(followedBy('=') ? Token::GreaterEqual : Token::Greater, start);
  case '=':
    return make(followedBy('=') ? Token::EqualEqual : Token::Equal, start);
  case '!':
    if (followedBy('='))
      return make(Token::NotEqual, start);
    return error(start, "unexpected character '!'");
  case '"':
    return lexQuoted(start, Token::String);
  case '%': {
    const char* name = cur_;
    while (cur_ < end_ && (isIdentifierChar(*cur_) || *cur_ == '.' || *cur_ == '$'))
      ++cur_;
    if (cur_ == name)
      return error(start, "expected a value name after '%'");
    return make(Token::ValueName, start, llvm::StringRef(name, cur_ - name));
  }
  case '@': {
    if (cur_ < end_ && *cur_ == '"') {
      Token quoted = lexQuoted(cur_, Token::GraphName);
      quoted.start = start;
      return quoted;
    }
    const char* name = cur_;
    while (cur_ < end_ && isBareGraphName(llvm::StringRef(cur_, 1)))
      ++cur_;
    if (cur_ == name)
      return error(start, "expected a graph name after '@'");
    return make(Token::GraphName, start, llvm::StringRef(name, cur_ - name));
  }
  default:
    break;
  }
  if (llvm::isDigit(c))
    return lexNumber(start);
  if (llvm::isAlpha(c) || c == '_') {
    while (cur_ < end_ && isIdentifierChar(*cur_))
      ++cur_;
    // `ns::name.overload` is one token, so operator names need no grammar.
    if (cur_ + 1 < end_ && cur_[0] == ':' && cur_[1] == ':') {
      cur_ += 2;
      while (cur_ < end_ && (isIdentifierChar(*cur_) || *cur_ == '.'))
        ++cur_;
      return make(Token::OpName, start);
    }
    return make(Token::Identifier, start);
  }
  if (llvm::isPrint(c))
    return error(start, std::string("unexpected character '") + c + "'");
  return error(start, "unexpected byte 0x" + llvm::utohexstr(static_cast<unsigned char>(c)));
}

Token Lexer::lexNumber(const char* start) {
  while (cur_ < end_ && llvm::isDigit(*cur_))
    ++cur_;
  bool isFloat = false;
  if (cur_ < end_ && *cur_ == '.') {
    isFloat = true;
    ++cur_;
    while (cur_ < end_ && llvm::isDigit(*cur_))
      ++cur_;
  }
  if (cur_ < end_ && (*cur_ == 'e' || *cur_ == 'E')) {
    const char* exponent = cur_++;
    if (cur_ < end_ && (*cur_ == '+' || *cur_ == '-'))
      ++cur_;
    if (cur_ == end_ || !llvm::isDigit(*cur_)) {
      cur_ = exponent + 1;
      return error(start, "expected digits in the exponent");
    }
    while (cur_ < end_ && llvm::isDigit(*cur_))
      ++cur_;
    isFloat = true;
  }
  if (cur_ < end_ && isIdentifierChar(*cur_))
    return error(start, "expected a separator after the number");
  return make(isFloat ? Token::Float : Token::Integer, start);
}

Token Lexer::lexQuoted(const char* start, Token::Kind kind) {
  // `start` is the opening quote; the spelling excludes both quotes.
  const char* body = start + 1;
  cur_ = body;
  while (cur_ < end_ && *cur_ != '"') {
    if (*cur_ == '\n')
      break;
    if (*cur_ == '\\') {
      ++cur_;
      if (cur_ == end_)
        break;
      if (llvm::isHexDigit(*cur_)) {
        if (cur_ + 1 == end_ || !llvm::isHexDigit(cur_[1]))
          return error(cur_ - 1, "expected two hex digits after '\\'");
        ++cur_;
      } else if (*cur_ != '"' && *cur_ != '\\' && *cur_ != 'n' && *cur_ != 't') {
        return error(cur_ - 1, "unknown escape in string");
      }
    }
    ++cur_;
  }
  if (cur_ == end_ || *cur_ != '"')
    return error(start, "unterminated string");
  llvm::StringRef spelling(body, cur_ - body);
  ++cur_;
  return make(kind, start, spelling);
}

Token Lexer::lexSource() {
  while (cur_ < end_ && (*cur_ == ' ' || *cur_ == '\t'))
    ++cur_;
  const char* start = cur_;
  llvm::StringRef rest(cur_, end_ - cur_);
  size_t length = scanSource(rest);
  if (length == 0) {
    // Say which: nothing there, or something unbalanced.
    llvm::StringRef line = rest.take_until([](char c) { return c == '\n'; });
    if (line.empty() || line.front() == ',' || line.front() == ')' || line.starts_with("//"))
      return error(start, "expected a source, e.g. L['x']");
    return error(start, "unbalanced brackets or quotes in source");
  }
  cur_ += length;
  return make(Token::Source, start);
}

Token Lexer::lexGuardSource() {
  while (cur_ < end_ && (*cur_ == ' ' || *cur_ == '\t'))
    ++cur_;
  const char* start = cur_;
  size_t length = 0;
  llvm::Expected<SourcePtr> source =
      Source::parsePrefix(llvm::StringRef(cur_, end_ - cur_), length);
  if (!source) {
    std::string message = llvm::toString(source.takeError());
    return error(start + length, "malformed source: " + message);
  }
  cur_ += length;
  return make(Token::Source, start);
}

Token Lexer::lexTypeNamePart() {
  while (cur_ < end_ && (*cur_ == ' ' || *cur_ == '\t'))
    ++cur_;
  const char* start = cur_;
  if (cur_ < end_ && *cur_ == '"')
    return lexQuoted(start, Token::String);
  while (cur_ < end_ && isBareGraphName(llvm::StringRef(cur_, 1)))
    ++cur_;
  if (cur_ == start)
    return error(start, "expected a type name like torch.nn.modules.linear:Linear");
  return make(Token::BareName, start);
}

std::string unescapeString(llvm::StringRef spelling) {
  std::string text;
  for (size_t i = 0; i < spelling.size(); ++i) {
    char c = spelling[i];
    if (c != '\\' || i + 1 == spelling.size()) {
      text += c;
      continue;
    }
    char next = spelling[++i];
    if (next == 'n')
      text += '\n';
    else if (next == 't')
      text += '\t';
    else if (llvm::isHexDigit(next) && i + 1 < spelling.size())
      text +=
          static_cast<char>(llvm::hexDigitValue(next) * 16 + llvm::hexDigitValue(spelling[++i]));
    else
      text += next;
  }
  return text;
}

} // namespace dync::ir
