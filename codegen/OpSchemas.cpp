//===- OpSchemas.cpp - Argument positions of operator overloads -----------===//

#include "codegen/OpSchemas.h"

#include "llvm/ADT/StringExtras.h"

using namespace dync::codegen;

namespace {

llvm::Error schemaError(llvm::StringRef schema, const llvm::Twine& why) {
  return llvm::createStringError("cannot read operator schema '" + schema + "': " + why);
}

/// Calls `visit(i, c)` for each character of `text` from `from` on that stands
/// outside string literals (in which a backslash escapes the next character)
/// until `visit` returns true; returns that position, or npos.
template <typename Visit> size_t scanUnquoted(llvm::StringRef text, size_t from, Visit visit) {
  char quote = 0;
  for (size_t i = from; i < text.size(); ++i) {
    char c = text[i];
    if (quote) {
      if (c == '\\')
        ++i;
      else if (c == quote)
        quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (visit(i, c)) {
      return i;
    }
  }
  return llvm::StringRef::npos;
}

/// Splits the argument list at commas outside brackets and string literals;
/// defaults such as `int[2] stride=[1, 1]` or `str pad="a,b"` contain commas.
std::vector<llvm::StringRef> splitArguments(llvm::StringRef text) {
  std::vector<llvm::StringRef> parts;
  int depth = 0;
  size_t start = 0;
  scanUnquoted(text, 0, [&](size_t i, char c) {
    if (c == '(' || c == '[') {
      ++depth;
    } else if (c == ')' || c == ']') {
      --depth;
    } else if (c == ',' && depth == 0) {
      parts.push_back(text.slice(start, i).trim());
      start = i + 1;
    }
    return false;
  });
  llvm::StringRef last = text.substr(start).trim();
  if (!last.empty() || !parts.empty())
    parts.push_back(last);
  return parts;
}

} // namespace

llvm::Error OpSchemas::add(llvm::StringRef schema) {
  schema = schema.trim();
  size_t open = schema.find('(');
  if (open == llvm::StringRef::npos)
    return schemaError(schema, "no argument list");
  llvm::StringRef name = schema.take_front(open).trim();
  size_t colons = name.find("::");
  if (colons == llvm::StringRef::npos || name.empty())
    return schemaError(schema, "expected 'namespace::name(' at the start");
  std::string key = name.str();
  if (name.find('.', colons) == llvm::StringRef::npos)
    key += ".default";

  // The argument list ends at the parenthesis matching `open`.
  int depth = 0;
  size_t close = scanUnquoted(schema, open, [&](size_t, char c) {
    if (c == '(')
      ++depth;
    else if (c == ')' && --depth == 0)
      return true;
    return false;
  });
  if (close == llvm::StringRef::npos)
    return schemaError(schema, "unbalanced parentheses");

  std::vector<Arg> names;
  for (llvm::StringRef arg : splitArguments(schema.slice(open + 1, close))) {
    // `*` only marks where keyword-only arguments begin; they still take
    // positions on the shim's stack.
    if (arg == "*")
      continue;
    llvm::StringRef declaration = arg.split('=').first.rtrim();
    size_t space = declaration.find_last_of(" \t");
    if (space == llvm::StringRef::npos)
      return schemaError(schema, "argument '" + arg + "' has no name");
    names.push_back(
        {declaration.take_front(space).trim().str(), declaration.substr(space + 1).str()});
  }
  args_[key] = std::move(names);
  return llvm::Error::success();
}

llvm::Error OpSchemas::addLines(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    line = line.trim();
    if (line.empty() || line.starts_with("#"))
      continue;
    if (llvm::Error error = add(line))
      return error;
  }
  return llvm::Error::success();
}

std::optional<unsigned> OpSchemas::position(llvm::StringRef op, llvm::StringRef name) const {
  auto it = args_.find(op);
  if (it == args_.end())
    return std::nullopt;
  for (unsigned i = 0; i < it->second.size(); ++i)
    if (it->second[i].name == name)
      return i;
  return std::nullopt;
}

std::optional<llvm::StringRef> OpSchemas::type(llvm::StringRef op, unsigned index) const {
  auto it = args_.find(op);
  if (it == args_.end() || index >= it->second.size())
    return std::nullopt;
  return llvm::StringRef(it->second[index].type);
}
