//===- Lexer.h - Tokens of the graph IR's text form ------------*- C++ -*-===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <string>

namespace dync::ir {

struct Token {
  enum Kind {
    Eof,
    Error,      // a malformed token; the lexer's errorMessage() says why
    Identifier, // graph, s0, f32, dtype, floordiv, ...
    OpName,     // aten::addmm.default (any `ident::chars`; the verifier checks the form)
    ValueName,  // %x, %0
    GraphName,  // @MLP.forward, @"any name"
    Integer,    // 784
    Float,      // 1.0, 1e-05
    String,     // "tanh"
    Source,     // L['x'], only where the parser asks for one
    BareName,   // torch.nn.modules.linear, only where the parser asks for a type name
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    EqualEqual,
    NotEqual,
    Equal,
    Comma,
    Colon,
    Plus,
    Minus,
    Star,
    Hash,
  };

  Kind kind = Eof;
  /// The token's text in the buffer; for ValueName and GraphName without the
  /// sigil, for String and quoted GraphName without unescaping.
  llvm::StringRef spelling;
  /// Where the token starts, sigil and quotes included.
  const char* start = nullptr;

  bool is(Kind k) const { return kind == k; }
  bool isKeyword(llvm::StringRef word) const { return kind == Identifier && spelling == word; }
  llvm::SMLoc loc() const { return llvm::SMLoc::getFromPointer(start); }
};

/// Splits a buffer into tokens, skipping blanks and `//` comments. Copying a
/// Lexer saves its position, which is how the parser looks ahead.
class Lexer {
public:
  explicit Lexer(llvm::StringRef buffer) : cur_(buffer.begin()), end_(buffer.end()) {}

  Token lex();
  /// Lexes a frame source (see scanSource) starting at the current position.
  Token lexSource();
  /// Lexes a source as far as its own grammar goes (Source::parsePrefix), as
  /// guards write them: `L['x'] : ...` ends before the blank.
  Token lexGuardSource();
  /// Lexes one part of a guard's `module:qualname`: a BareName made of
  /// `[A-Za-z0-9_.<>$]`, or a String.
  Token lexTypeNamePart();

  /// Why the last Error token was returned.
  llvm::StringRef errorMessage() const { return errorMessage_; }

private:
  Token make(Token::Kind kind, const char* start, llvm::StringRef spelling);
  Token make(Token::Kind kind, const char* start) {
    return make(kind, start, llvm::StringRef(start, cur_ - start));
  }
  Token error(const char* at, std::string message);
  void skipBlanksAndComments();
  Token lexNumber(const char* start);
  Token lexQuoted(const char* start, Token::Kind kind);

  const char* cur_;
  const char* end_;
  std::string errorMessage_;
};

/// Decodes the escapes of a String token's spelling (see printQuoted).
std::string unescapeString(llvm::StringRef spelling);

} // namespace dync::ir
