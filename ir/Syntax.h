//===- Syntax.h - Lexical rules of the graph IR's text form ----*- C++ -*-===//
//
// What counts as an identifier, a value name, a reserved word, an operator
// overload name or a frame source in `.dync` text. The lexer, the printer and
// the verifier all ask here, so a graph that verifies always prints as text
// that lexes back the same way.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace dync::ir {

/// `[A-Za-z_][A-Za-z0-9_]*`: symbol, keyword-argument and namespace names.
bool isIdentifier(llvm::StringRef text);

/// Words that the text form gives a meaning of their own in places where a
/// symbol could also appear: dtypes, devices, layouts, memory formats,
/// `true false none inf nan`, `min max floordiv mod`. A symbol may not be
/// named by one of them.
bool isReservedWord(llvm::StringRef text);
/// Every reserved word (for namers outside C++, such as the tensor oracle's
/// names of data-dependent symbols).
llvm::ArrayRef<llvm::StringRef> reservedWords();

/// `[A-Za-z0-9_.$]+`: what may follow `%` in a value name.
bool isValueName(llvm::StringRef text);

/// `[A-Za-z0-9_.$<>]+`: graph names that print without quotes after `@`
/// (Python qualified names such as `f.<locals>.g` included).
bool isBareGraphName(llvm::StringRef text);

/// True for `namespace::name.overload`, each part an identifier, as in
/// `aten::max.dim` or `aten::add.Tensor`.
bool isOperatorName(llvm::StringRef text);

/// Length of the frame source expression that starts \p text (`L['x']`,
/// `L['self'].fc.weight`): it ends before a `,` or `)` outside brackets and
/// quotes, before a `//` comment, or at a newline. Trailing blanks are not
/// counted. Returns 0 if brackets or quotes are unbalanced within it.
size_t scanSource(llvm::StringRef text);

/// A source prints and parses back unchanged: non-empty, single line,
/// balanced, no surrounding blanks, and \ref scanSource takes all of it.
bool isWellFormedSource(llvm::StringRef text);

/// Prints \p text as a double-quoted string literal; `"`, `\` and bytes
/// outside printable ASCII are escaped (`\"`, `\\`, `\n`, `\t`, `\xx`).
void printQuoted(llvm::raw_ostream& os, llvm::StringRef text);

} // namespace dync::ir
