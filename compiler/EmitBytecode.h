//===- EmitBytecode.h - `--emit=bytecode` listings ------------------------===//
#pragma once

#include "frontend/embedding/EntryResolver.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace dync::compiler {

/// Writes what `dync inspect --emit=bytecode` shows for \p entry, below the
/// header that names it. GIL held.
llvm::Error emitBytecode(llvm::raw_ostream& os, const python::ResolvedEntry& entry);

/// Writes the listing of \p code, as `dis.dis` prints it. GIL held.
llvm::Error emitBytecode(llvm::raw_ostream& os, PyCodeObject* code);

} // namespace dync::compiler
