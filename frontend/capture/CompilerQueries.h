//===- CompilerQueries.h - What a program asks about being compiled -------===//
//
// `torch.compiler.is_compiling()` tells a program whether it runs as a
// compiled graph (torch.compile, torch.export) rather than eagerly. Programs
// use it to leave out what a graph cannot hold: checks that read a tensor's
// values, warnings, fast paths for eager mode. Code capture runs becomes the
// compiled graph, so there the answer is True; when a guard misses, the
// original code runs eagerly and gets the real answer, False.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"

#include <optional>

namespace dync::capture {

/// What a call of \p function answers while capturing, when it is one of
/// torch's questions about compilation; nullopt for any other function.
/// Torch's other spellings (`torch._dynamo.is_compiling`,
/// `torch._utils.is_compiling`) are Python functions that call this one.
std::optional<bool> compilerQueryAnswer(PyObject* function);

} // namespace dync::capture
