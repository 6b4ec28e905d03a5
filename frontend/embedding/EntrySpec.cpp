//===- EntrySpec.cpp - Parsing "FILE.py:QUALNAME" --------------------------===//
#include "frontend/embedding/EntrySpec.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

namespace dync::python {

namespace {

bool isIdentifierStart(char c) {
  return llvm::isAlpha(c) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}

bool isIdentifier(llvm::StringRef text) {
  if (text.empty() || !isIdentifierStart(text.front()))
    return false;
  return llvm::all_of(text.drop_front(),
                      [](char c) { return isIdentifierStart(c) || llvm::isDigit(c); });
}

llvm::Error specError(const llvm::Twine& message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

constexpr llvm::StringLiteral Expected = "expected FILE.py:QUALNAME, e.g. model.py:Model.forward";

} // namespace

bool isDottedName(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef, 4> parts;
  text.split(parts, '.', /*MaxSplit=*/-1, /*KeepEmpty=*/true);
  return llvm::all_of(parts, isIdentifier);
}

llvm::Expected<EntrySpec> parseEntrySpec(llvm::StringRef text) {
  size_t colon = text.rfind(':');
  // "model.py", or a path with a drive letter and nothing after it.
  if (colon == llvm::StringRef::npos ||
      (text.ends_with(".py") && !isDottedName(text.drop_front(colon + 1))))
    return specError("entry '" + text + "' names no function: " + Expected);
  // Only the last colon can be followed by a dotted name (a dotted name has
  // no colon), so that is the one to split at, or there is none.
  llvm::StringRef path = text.take_front(colon);
  llvm::StringRef qualname = text.drop_front(colon + 1);
  if (qualname.empty())
    return specError("entry '" + text + "' has nothing after ':': " + Expected);
  if (!isDottedName(qualname))
    return specError("'" + qualname + "' in entry '" + text +
                     "' is not a dotted Python name: " + Expected);
  if (path.empty())
    return specError("entry '" + text + "' has no file before ':': " + Expected);
  if (!path.ends_with(".py"))
    return specError("'" + path + "' is not a Python source file (a .py file)");

  EntrySpec spec;
  spec.path = path.str();
  spec.qualname = qualname.str();
  spec.text = text.str();
  return spec;
}

} // namespace dync::python
