//===- EmitBytecode.cpp - `inspect --emit=bytecode` -----------------------===//
//
// Connects `inspect` to the bytecode listing: the entry's code object is
// decoded by the bytecode toolkit and printed in `dis.dis`'s layout, nested
// code objects and exception tables included.
//
//===----------------------------------------------------------------------===//
#include "driver/EmitBytecode.h"

#include "frontend/bytecode/Listing.h"
#include "frontend/bytecode/OpcodeTable.h"

namespace dync::driver {

llvm::Error emitBytecode(llvm::raw_ostream& os, const python::ResolvedEntry& entry) {
  auto opcodes = bytecode::OpcodeTable::fromInterpreter();
  if (!opcodes)
    return opcodes.takeError();
  auto spellings = bytecode::ArgumentSpellings::fromInterpreter();
  if (!spellings)
    return spellings.takeError();
  bytecode::ListingPrinter printer(*opcodes, std::move(*spellings));
  return printer.print(os, entry.codeObject());
}

} // namespace dync::driver
