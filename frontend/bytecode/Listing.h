//===- Listing.h - Human-readable bytecode listings ------------------------===//
//
// Prints decoded code objects in exactly the layout of CPython's `dis.dis`, so
// a listing can be compared line for line with the interpreter's own
// disassembler, and a reader who knows `dis` can read it without a legend.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/bytecode/OpcodeTable.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <Python.h>

#include <string>
#include <vector>

namespace dync::bytecode {

/// The argument spellings `dis` uses that are not in the opcode module:
/// FORMAT_VALUE conversions and MAKE_FUNCTION flags. Read from the running
/// interpreter's `dis` module, as the opcode table is from `opcode`.
struct ArgumentSpellings {
  std::vector<std::string> formatConversions;
  std::vector<std::string> makeFunctionFlags;

  static llvm::Expected<ArgumentSpellings> fromInterpreter();
};

class ListingPrinter {
public:
  ListingPrinter(const OpcodeTable& opcodes, ArgumentSpellings spellings)
      : opcodes_(opcodes), spellings_(std::move(spellings)) {}

  /// Prints \p code and, after it, every code object among its constants,
  /// recursively, each under a "Disassembly of ..." heading. GIL held.
  llvm::Error print(llvm::raw_ostream& os, PyCodeObject* code) const;

private:
  llvm::Error printOne(llvm::raw_ostream& os, PyCodeObject* code) const;

  const OpcodeTable& opcodes_;
  ArgumentSpellings spellings_;
};

} // namespace dync::bytecode
