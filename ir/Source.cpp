//===- Source.cpp - Where a graph input or guarded value lives in the frame ===//
#include "ir/Source.h"

#include "ir/Argument.h"
#include "ir/Syntax.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"

#include <cmath>
#include <cstring>

namespace dync::ir {

namespace {

/// A Python string literal in single quotes. Quotes, backslashes and control
/// characters are escaped, so the text stays on one line and reads back the
/// same in Python and in parse(); other bytes (UTF-8 included) are kept.
void printPythonQuoted(llvm::raw_ostream& os, llvm::StringRef text) {
  os << '\'';
  for (unsigned char c : text) {
    if (c == '\'' || c == '\\')
      os << '\\' << c;
    else if (c == '\n')
      os << "\\n";
    else if (c == '\t')
      os << "\\t";
    else if (c == '\r')
      os << "\\r";
    else if (c < 0x20 || c == 0x7f)
      os << "\\x" << llvm::hexdigit(c >> 4, /*LowerCase=*/true)
         << llvm::hexdigit(c & 15, /*LowerCase=*/true);
    else
      os << c;
  }
  os << '\'';
}

bool isNameStart(char c) {
  return llvm::isAlpha(c) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}
bool isNameChar(char c) { return isNameStart(c) || llvm::isDigit(c); }

/// Reads the text form; `pos` is where the next character is, and where an
/// error is reported.
class SourceReader {
public:
  explicit SourceReader(llvm::StringRef text) : text_(text) {}

  /// The longest source at the start of the text.
  llvm::Expected<SourcePtr> read(size_t& length) {
    llvm::Expected<SourcePtr> source = readSource(length);
    if (source)
      length = pos_;
    return source;
  }

private:
  llvm::Expected<SourcePtr> readSource(size_t& length) {
    SourcePtr source;
    llvm::StringRef rest = text_.substr(pos_);
    if (rest.starts_with("L[") || rest.starts_with("G[") || rest.starts_with("M[")) {
      char root = rest.front();
      pos_ += 2;
      std::optional<std::string> name = readString();
      if (!name)
        return fail(length);
      if (!consume(']'))
        return fail(length, "expected ']'");
      source = root == 'L'   ? Source::local(*name)
               : root == 'G' ? Source::global(*name)
                             : Source::module(*name);
    } else if (rest.starts_with("type(")) {
      pos_ += 5;
      llvm::Expected<SourcePtr> base = readSource(length);
      if (!base)
        return base.takeError();
      if (!consume(')'))
        return fail(length, "expected ')'");
      if (!consume('.'))
        return fail(length, "expected '.' and an attribute name after type(...)");
      std::optional<llvm::StringRef> name = readName();
      if (!name)
        return fail(length, "expected an attribute name after '.'");
      source = Source::classAttr(*base, *name);
    } else if (rest.starts_with("list(")) {
      // `list(base.values())[i]` or `list(base)[i]`: a position of a dict.
      pos_ += 5;
      ++listDepth_;
      llvm::Expected<SourcePtr> base = readSource(length);
      --listDepth_;
      if (!base)
        return base.takeError();
      bool values = text_.substr(pos_).starts_with(".values()");
      if (values)
        pos_ += 9;
      if (!consume(')') || !consume('['))
        return fail(length, "expected ')[' and a position after list(...");
      std::optional<int64_t> position = readInteger();
      if (!position)
        return fail(length);
      if (*position < 0)
        return fail(length, "a position in list(...) is not negative");
      if (!consume(']'))
        return fail(length, "expected ']'");
      source = values ? Source::valueAt(*base, *position) : Source::keyAt(*base, *position);
    } else {
      return fail(length, "expected L['name'], G['name'], M['name'], type(...) or list(...)");
    }
    while (pos_ < text_.size()) {
      // Inside list(...), `.values()` ends the base.
      if (listDepth_ > 0 && text_.substr(pos_).starts_with(".values()"))
        break;
      if (consume('.')) {
        std::optional<llvm::StringRef> name = readName();
        if (!name)
          return fail(length, "expected an attribute name after '.'");
        if (*name == "__closure__") {
          // `.__closure__[i].cell_contents` is one step: a cell's contents.
          if (!consume('['))
            return fail(length, "expected '[' after __closure__");
          std::optional<int64_t> index = readInteger();
          if (!index)
            return fail(length);
          if (!consume(']') || !consume('.') || readName() != llvm::StringRef("cell_contents"))
            return fail(length, "expected '].cell_contents' after __closure__[i");
          source = Source::cell(source, *index);
          continue;
        }
        source = Source::attr(source, *name);
      } else if (consume('[')) {
        std::optional<DictKey> key = readKey();
        if (!key)
          return fail(length);
        source = Source::item(source, *key);
        if (!consume(']'))
          return fail(length, "expected ']'");
      } else {
        break;
      }
    }
    return source;
  }

  /// A dict key or list index as Python writes it: an int, a quoted str,
  /// True, False, None, a float (with a point or an exponent), or a tuple
  /// of those, `(1, 'a')`, `(1,)`, `()`.
  std::optional<DictKey> readKey(int depth = 0) {
    if (depth > 16)
      return error("a key nests tuples too deeply");
    if (pos_ < text_.size() && (text_[pos_] == '\'' || text_[pos_] == '"')) {
      std::optional<std::string> text = readString();
      return text ? std::optional<DictKey>(DictKey::str(std::move(*text))) : std::nullopt;
    }
    llvm::StringRef rest = text_.substr(pos_);
    for (auto [word, key] : {std::pair<llvm::StringRef, DictKey>{"True", DictKey::boolean(true)},
                             std::pair<llvm::StringRef, DictKey>{"False", DictKey::boolean(false)},
                             std::pair<llvm::StringRef, DictKey>{"None", DictKey::none()}})
      if (rest.starts_with(word) &&
          (rest.size() == word.size() || !isNameChar(rest[word.size()]))) {
        pos_ += word.size();
        return key;
      }
    if (consume('(')) {
      std::vector<DictKey> elements;
      bool comma = false;
      while (!consume(')')) {
        if (!elements.empty() && !comma)
          return error("expected ',' or ')' in a tuple key");
        std::optional<DictKey> element = readKey(depth + 1);
        if (!element)
          return std::nullopt;
        elements.push_back(std::move(*element));
        comma = consume(',');
        while (comma && consume(' '))
          ;
      }
      // `(1)` is the int 1 in Python, not a tuple.
      if (elements.size() == 1 && !comma)
        return error("a one-element tuple key is written with a comma, (k,)");
      return DictKey::tuple(std::move(elements));
    }
    size_t end = pos_;
    while (end < text_.size() && (llvm::isAlnum(text_[end]) || text_[end] == '.' ||
                                  text_[end] == '-' || text_[end] == '+'))
      ++end;
    llvm::StringRef number = text_.slice(pos_, end);
    if (number.find_first_of(".eE") == llvm::StringRef::npos) {
      std::optional<int64_t> index = readInteger();
      return index ? std::optional<DictKey>(DictKey::integer(*index)) : std::nullopt;
    }
    double value;
    if (number.getAsDouble(value, /*AllowInexact=*/true) || !std::isfinite(value))
      return error("expected a key: an int, a quoted str, True, False, None, a finite float or "
                   "a tuple of those");
    pos_ = end;
    return DictKey::floating(value);
  }

  std::optional<llvm::StringRef> readName() {
    size_t start = pos_;
    if (pos_ >= text_.size() || !isNameStart(text_[pos_]))
      return std::nullopt;
    while (pos_ < text_.size() && isNameChar(text_[pos_]))
      ++pos_;
    return text_.slice(start, pos_);
  }

  bool consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  llvm::Error fail(size_t& length, llvm::StringRef message = {}) {
    if (!message.empty())
      message_ = message.str();
    length = pos_;
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message_);
  }

  std::nullopt_t error(llvm::StringRef message) {
    message_ = message.str();
    return std::nullopt;
  }

  /// A Python string literal in single or double quotes, with the escapes
  /// printQuoted writes and Python's other one-character escapes.
  std::optional<std::string> readString() {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"'))
      return error("expected a quoted name");
    char quote = text_[pos_++];
    std::string value;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      char c = text_[pos_];
      if (c == '\n' || c == '\r')
        break;
      ++pos_;
      if (c != '\\') {
        value += c;
        continue;
      }
      if (pos_ >= text_.size())
        break;
      char escape = text_[pos_++];
      switch (escape) {
      case '\\':
      case '\'':
      case '"':
        value += escape;
        break;
      case 'n':
        value += '\n';
        break;
      case 't':
        value += '\t';
        break;
      case 'r':
        value += '\r';
        break;
      case 'x':
        if (pos_ + 2 > text_.size() || !llvm::isHexDigit(text_[pos_]) ||
            !llvm::isHexDigit(text_[pos_ + 1])) {
          pos_ -= 2;
          return error("expected two hex digits after '\\x'");
        }
        value += static_cast<char>(llvm::hexDigitValue(text_[pos_]) * 16 +
                                   llvm::hexDigitValue(text_[pos_ + 1]));
        pos_ += 2;
        break;
      default:
        pos_ -= 2;
        return error("unknown escape in string");
      }
    }
    if (pos_ >= text_.size() || text_[pos_] != quote)
      return error("unterminated string");
    ++pos_;
    return value;
  }

  std::optional<int64_t> readInteger() {
    size_t start = pos_;
    bool negative = consume('-');
    if (pos_ >= text_.size() || !llvm::isDigit(text_[pos_]))
      return error("expected an integer index or a quoted key");
    while (pos_ < text_.size() && llvm::isDigit(text_[pos_]))
      ++pos_;
    llvm::StringRef digits = text_.slice(start + (negative ? 1 : 0), pos_);
    uint64_t magnitude;
    uint64_t limit = uint64_t(INT64_MAX) + (negative ? 1 : 0);
    if (digits.getAsInteger(10, magnitude) || magnitude > limit) {
      pos_ = start;
      return error("index does not fit in 64 bits");
    }
    return negative ? int64_t(0 - magnitude) : int64_t(magnitude);
  }

  llvm::StringRef text_;
  size_t pos_ = 0;
  /// How many `list(` the source being read is inside.
  int listDepth_ = 0;
  std::string message_;
};

} // namespace

SourcePtr Source::local(llvm::StringRef name) {
  return SourcePtr(new Source(Kind::Local, nullptr, name.str(), 0, false));
}
SourcePtr Source::global(llvm::StringRef name) {
  return SourcePtr(new Source(Kind::Global, nullptr, name.str(), 0, false));
}
SourcePtr Source::attr(SourcePtr base, llvm::StringRef name) {
  return SourcePtr(new Source(Kind::Attr, std::move(base), name.str(), 0, false));
}
SourcePtr Source::index(SourcePtr base, int64_t index) {
  return SourcePtr(new Source(Kind::Item, std::move(base), "", index, true));
}
SourcePtr Source::key(SourcePtr base, llvm::StringRef key) {
  return SourcePtr(new Source(Kind::Item, std::move(base), key.str(), 0, false));
}
SourcePtr Source::item(SourcePtr base, const DictKey& key) {
  if (key.kind == DictKey::Kind::Int)
    return index(std::move(base), key.intValue);
  if (key.kind == DictKey::Kind::Str)
    return Source::key(std::move(base), key.strValue);
  return SourcePtr(
      new Source(Kind::Item, std::move(base), "", 0, false, std::make_shared<const DictKey>(key)));
}
SourcePtr Source::valueAt(SourcePtr base, int64_t position) {
  return SourcePtr(new Source(Kind::ValueAt, std::move(base), "", position, true));
}
SourcePtr Source::keyAt(SourcePtr base, int64_t position) {
  return SourcePtr(new Source(Kind::KeyAt, std::move(base), "", position, true));
}
SourcePtr Source::module(llvm::StringRef name) {
  return SourcePtr(new Source(Kind::Module, nullptr, name.str(), 0, false));
}
SourcePtr Source::classAttr(SourcePtr base, llvm::StringRef name) {
  return SourcePtr(new Source(Kind::ClassAttr, std::move(base), name.str(), 0, false));
}
SourcePtr Source::cell(SourcePtr base, int64_t index) {
  return SourcePtr(new Source(Kind::Cell, std::move(base), "", index, true));
}

llvm::Expected<SourcePtr> Source::parsePrefix(llvm::StringRef text, size_t& length) {
  return SourceReader(text).read(length);
}

llvm::Expected<SourcePtr> Source::parse(llvm::StringRef text) {
  size_t length = 0;
  llvm::Expected<SourcePtr> source = parsePrefix(text, length);
  if (source && length != text.size())
    source = llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "unexpected '" + text.substr(length, 1) + "'");
  if (!source)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "malformed source '" + text +
                                       "': " + llvm::toString(source.takeError()) + " at column " +
                                       llvm::Twine(length + 1));
  return source;
}

const Source& Source::root() const {
  const Source* source = this;
  while (source->base_)
    source = source->base_.get();
  return *source;
}

void Source::print(llvm::raw_ostream& os) const {
  switch (kind_) {
  case Kind::Local:
    os << "L[";
    printPythonQuoted(os, name_);
    os << ']';
    return;
  case Kind::Global:
    os << "G[";
    printPythonQuoted(os, name_);
    os << ']';
    return;
  case Kind::Module:
    os << "M[";
    printPythonQuoted(os, name_);
    os << ']';
    return;
  case Kind::Attr:
    base_->print(os);
    os << '.' << name_;
    return;
  case Kind::ClassAttr:
    os << "type(";
    base_->print(os);
    os << ")." << name_;
    return;
  case Kind::Cell:
    base_->print(os);
    os << ".__closure__[" << index_ << "].cell_contents";
    return;
  case Kind::Item:
    base_->print(os);
    os << '[';
    itemKey().print(os, /*python=*/true);
    os << ']';
    return;
  case Kind::ValueAt:
  case Kind::KeyAt:
    os << "list(";
    base_->print(os);
    os << (kind_ == Kind::ValueAt ? ".values())[" : ")[") << index_ << ']';
    return;
  }
}

DictKey Source::itemKey() const {
  if (typedKey_)
    return *typedKey_;
  if (hasIndex_)
    return DictKey::integer(index_);
  return DictKey::str(name_);
}

DictKey DictKey::integer(int64_t value) {
  DictKey key;
  key.kind = Kind::Int;
  key.intValue = value;
  return key;
}
DictKey DictKey::str(std::string value) {
  DictKey key;
  key.kind = Kind::Str;
  key.strValue = std::move(value);
  return key;
}
DictKey DictKey::boolean(bool value) {
  DictKey key;
  key.kind = Kind::Bool;
  key.boolValue = value;
  return key;
}
DictKey DictKey::floating(double value) {
  DictKey key;
  key.kind = Kind::Float;
  key.floatValue = value;
  return key;
}
DictKey DictKey::none() { return DictKey(); }
DictKey DictKey::tuple(std::vector<DictKey> elements) {
  DictKey key;
  key.kind = Kind::Tuple;
  key.elements = std::move(elements);
  return key;
}

void DictKey::print(llvm::raw_ostream& os, bool python) const {
  switch (kind) {
  case Kind::Int:
    os << intValue;
    return;
  case Kind::Str:
    if (python)
      printPythonQuoted(os, strValue);
    else
      printQuoted(os, strValue);
    return;
  case Kind::Bool:
    os << (python ? (boolValue ? "True" : "False") : (boolValue ? "true" : "false"));
    return;
  case Kind::None:
    os << (python ? "None" : "none");
    return;
  case Kind::Float:
    printFloat(os, floatValue);
    return;
  case Kind::Tuple:
    os << '(';
    llvm::interleave(
        elements, os, [&](const DictKey& element) { element.print(os, python); }, ", ");
    if (elements.size() == 1)
      os << ',';
    os << ')';
    return;
  }
}

bool operator==(const DictKey& a, const DictKey& b) {
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case DictKey::Kind::Int:
    return a.intValue == b.intValue;
  case DictKey::Kind::Str:
    return a.strValue == b.strValue;
  case DictKey::Kind::Bool:
    return a.boolValue == b.boolValue;
  case DictKey::Kind::None:
    return true;
  case DictKey::Kind::Float:
    if (std::isnan(a.floatValue))
      return std::isnan(b.floatValue);
    return a.floatValue == b.floatValue && std::signbit(a.floatValue) == std::signbit(b.floatValue);
  case DictKey::Kind::Tuple:
    return a.elements == b.elements;
  }
  return false;
}

std::string Source::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  print(os);
  return text;
}

/// Whether \p source is an nn.Module's table of parameters, buffers or
/// submodules, a step value names leave out.
static bool isModuleTable(const Source& source) {
  return source.kind() == Source::Kind::Attr &&
         (source.name() == "_parameters" || source.name() == "_buffers" ||
          source.name() == "_modules");
}

std::string Source::valueName() const {
  std::string part = hasIndex_ ? std::to_string(index_) : name_;
  if (typedKey_) {
    llvm::raw_string_ostream os(part);
    typedKey_->print(os, /*python=*/true);
  }
  // Keys may hold characters that value names cannot; keep the name an
  // identifier so that the graph's text form reads back.
  for (char& c : part)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  switch (kind_) {
  case Kind::Local:
    return part;
  case Kind::Global:
    return "G_" + part;
  case Kind::Module:
    return "M_" + part;
  case Kind::ClassAttr:
    return base_->valueName() + "_class_" + part;
  case Kind::Cell:
    return base_->valueName() + "_cell_" + part;
  case Kind::Attr:
    if (isModuleTable(*this))
      return base_->valueName();
    return base_->valueName() + "_" + part;
  case Kind::Item:
    return base_->valueName() + "_" + part;
  case Kind::ValueAt:
    return base_->valueName() + "_values_" + part;
  case Kind::KeyAt:
    return base_->valueName() + "_keys_" + part;
  }
  return part;
}

bool operator==(const Source& a, const Source& b) {
  if (&a == &b)
    return true;
  if (a.kind_ != b.kind_ || a.hasIndex_ != b.hasIndex_ || a.name_ != b.name_ ||
      a.index_ != b.index_ || !a.typedKey_ != !b.typedKey_ ||
      (a.typedKey_ && !(*a.typedKey_ == *b.typedKey_)))
    return false;
  if (!a.base_ || !b.base_)
    return !a.base_ && !b.base_;
  return *a.base_ == *b.base_;
}

} // namespace dync::ir
