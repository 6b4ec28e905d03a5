//===- ArgumentBinding.h - Arguments bound to parameter names ---*- C++ -*-===//
//
// torch's functions that capture calls itself (torch.cond, torch map,
// torch.func.vmap) take their arguments as a Python function would; this
// binds them to the parameters' names and raises the TypeError CPython
// would.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/BuiltinRegistry.h"
#include "frontend/capture/Value.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <vector>

namespace dync::capture {

/// Binds \p args and \p kwargs to \p names, as a Python call would: the
/// first \p required must be given, the rest default to null; positional
/// arguments past the names go to \p rest when it is given. Only the first
/// \p positional names (all, by default) take positional arguments; the
/// others are keyword-only.
llvm::Expected<std::vector<ValuePtr>>
bindArguments(llvm::StringRef function, llvm::ArrayRef<const char*> names, size_t required,
              std::vector<ValuePtr> args, KeywordArgs kwargs, std::vector<ValuePtr>* rest = nullptr,
              std::optional<size_t> positional = std::nullopt);

} // namespace dync::capture
