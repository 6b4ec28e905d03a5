//===- EmitBytecode.cpp - `--emit=bytecode` listings ----------------------===//
//
// Connects `inspect` (an entry's own code) and `export` (its rewritten code)
// to the bytecode listing: the code object is decoded by the bytecode toolkit
// and printed in `dis.dis`'s layout, nested code objects and exception tables
// included.
//
//===----------------------------------------------------------------------===//
#include "compiler/EmitBytecode.h"

#include "frontend/bytecode/Listing.h"
#include "frontend/bytecode/OpcodeTable.h"

namespace dync::compiler {

llvm::Error emitBytecode(llvm::raw_ostream& os, const python::ResolvedEntry& entry) {
  return emitBytecode(os, entry.codeObject());
}

llvm::Error emitBytecode(llvm::raw_ostream& os, PyCodeObject* code) {
  auto opcodes = bytecode::OpcodeTable::fromInterpreter();
  if (!opcodes)
    return opcodes.takeError();
  auto spellings = bytecode::ArgumentSpellings::fromInterpreter();
  if (!spellings)
    return spellings.takeError();
  bytecode::ListingPrinter printer(*opcodes, std::move(*spellings));
  return printer.print(os, code);
}

} // namespace dync::compiler
