//===- EntrySpec.h - Parsing "FILE.py:QUALNAME" ----------------------------===//
#pragma once

#include "llvm/Support/Error.h"

#include <string>

namespace dync::python {

/// Which function to compile: a Python file and a dotted path inside it.
struct EntrySpec {
  /// The file as written (may be relative).
  std::string path;
  /// "Model.forward", "net.encoder.forward", "f".
  std::string qualname;
  /// The spec as written, for messages.
  std::string text;
};

/// Whether \p text is one or more identifiers joined by single dots. Any
/// non-ASCII byte counts as an identifier character; Python has the last
/// word on whether such a name exists.
bool isDottedName(llvm::StringRef text);

/// Splits \p text at its last ':' that is followed by a dotted name, so
/// that a path holding colons (C:\models\net.py:Net.forward) still works,
/// and checks that the file part names a .py file. Errors are about how the
/// spec is written; nothing is read from disk.
llvm::Expected<EntrySpec> parseEntrySpec(llvm::StringRef text);

} // namespace dync::python
