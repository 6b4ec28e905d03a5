//===- Syntax.cpp - Lexical rules of the graph IR's text form -------------===//
#include "ir/Syntax.h"

#include "ir/TensorAttributes.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <vector>

namespace dync::ir {

static bool isIdentifierStart(char c) { return llvm::isAlpha(c) || c == '_'; }
static bool isIdentifierChar(char c) { return llvm::isAlnum(c) || c == '_'; }

bool isIdentifier(llvm::StringRef text) {
  return !text.empty() && isIdentifierStart(text.front()) &&
         llvm::all_of(text.drop_front(), isIdentifierChar);
}

llvm::ArrayRef<llvm::StringRef> reservedWords() {
  static const std::vector<llvm::StringRef> words = [] {
    std::vector<llvm::StringRef> all = {// literals
                                        "true", "false", "none", "inf", "nan",
                                        // symbolic-integer operators
                                        "min", "max", "floordiv", "mod",
                                        // joins the comparisons of a relation
                                        "or"};
    for (unsigned i = 0; i <= static_cast<unsigned>(DType::C128); ++i)
      all.push_back(spelling(static_cast<DType>(i)));
    for (unsigned i = 0; i <= static_cast<unsigned>(DeviceKind::Meta); ++i)
      all.push_back(spelling(static_cast<DeviceKind>(i)));
    for (unsigned i = 0; i <= static_cast<unsigned>(Layout::Jagged); ++i)
      all.push_back(spelling(static_cast<Layout>(i)));
    for (unsigned i = 0; i <= static_cast<unsigned>(MemoryFormat::Preserve); ++i)
      all.push_back(spelling(static_cast<MemoryFormat>(i)));
    return all;
  }();
  return words;
}

bool isReservedWord(llvm::StringRef text) { return llvm::is_contained(reservedWords(), text); }

bool isValueName(llvm::StringRef text) {
  return !text.empty() &&
         llvm::all_of(text, [](char c) { return isIdentifierChar(c) || c == '.' || c == '$'; });
}

bool isBareGraphName(llvm::StringRef text) {
  return !text.empty() && llvm::all_of(text, [](char c) {
    return isIdentifierChar(c) || c == '.' || c == '$' || c == '<' || c == '>';
  });
}

bool isOperatorName(llvm::StringRef text) {
  size_t colons = text.find("::");
  if (colons == llvm::StringRef::npos)
    return false;
  auto [name, overload] = text.drop_front(colons + 2).split('.');
  return isIdentifier(text.take_front(colons)) && isIdentifier(name) && isIdentifier(overload);
}

size_t scanSource(llvm::StringRef text) {
  llvm::SmallVector<char, 8> closers;
  size_t end = 0; // one past the last non-blank character taken
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n' || c == '\r')
      break;
    if (closers.empty() && (c == ',' || c == ')' || text.substr(i).starts_with("//")))
      break;
    // A node's trailing location, `%x: <type> = L['x'] loc("m.py":3:7)`.
    if (closers.empty() && i > 0 && (text[i - 1] == ' ' || text[i - 1] == '\t') &&
        text.substr(i).starts_with("loc("))
      break;
    if (c == '\'' || c == '"') {
      // A Python string literal: skip to its closing quote, honouring escapes.
      size_t j = i + 1;
      while (j < text.size() && text[j] != c && text[j] != '\n') {
        if (text[j] == '\\')
          ++j;
        ++j;
      }
      if (j >= text.size() || text[j] != c)
        return 0;
      i = j;
      end = i + 1;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      closers.push_back(c == '(' ? ')' : c == '[' ? ']' : '}');
    } else if (c == ')' || c == ']' || c == '}') {
      if (closers.empty() || closers.back() != c)
        return 0;
      closers.pop_back();
    }
    if (c != ' ' && c != '\t')
      end = i + 1;
  }
  return closers.empty() ? end : 0;
}

bool isWellFormedSource(llvm::StringRef text) {
  return !text.empty() && text.front() != ' ' && text.front() != '\t' &&
         scanSource(text) == text.size();
}

void printQuoted(llvm::raw_ostream& os, llvm::StringRef text) {
  os << '"';
  for (unsigned char c : text) {
    if (c == '"' || c == '\\')
      os << '\\' << c;
    else if (c == '\n')
      os << "\\n";
    else if (c == '\t')
      os << "\\t";
    else if (c >= 0x20 && c < 0x7f)
      os << c;
    else
      os << '\\' << llvm::hexdigit(c >> 4, /*LowerCase=*/true)
         << llvm::hexdigit(c & 15, /*LowerCase=*/true);
  }
  os << '"';
}

} // namespace dync::ir
