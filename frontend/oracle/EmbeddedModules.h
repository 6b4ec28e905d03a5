//===- EmbeddedModules.h - Python modules compiled into dync ---*- C++ -*-===//
//
// The frontend's own Python code (frontend/oracle/embedded/*.py) is compiled
// into the binary, so dync needs no files beside it; each file becomes the
// module `dync_<stem>`. A finder installed on sys.meta_path the first time
// one is asked for (embedded/embedded_modules.py) lets them import one
// another with a plain import statement.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/embedding/PyRef.h"

#include "llvm/Support/Error.h"

namespace dync::oracle {

/// The embedded module \p name (e.g. "dync_oracle"): sys.modules' entry if it
/// was already run, else imported through the embedded modules' finder,
/// which compiles and runs its source and registers it there. GIL held.
llvm::Expected<python::PyRef> importEmbeddedModule(llvm::StringRef name);

} // namespace dync::oracle
