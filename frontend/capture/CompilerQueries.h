//===- CompilerQueries.h - What a program asks about being compiled -------===//
//
// `torch.compiler.is_compiling()` tells a program whether it runs as a
// compiled graph (torch.compile, torch.export) rather than eagerly. Programs
// use it to leave out what a graph cannot hold: checks that read a tensor's
// values, warnings, fast paths for eager mode.
//
// A served call must give what eager gives, and eager, calling the program
// when the artifact serves it, answers False: so capture answers False by
// default, and the graph is the program's eager path. A program whose
// eager path a graph cannot hold (a branch on a mask's values) is then
// refused there. `--assume-compiling` answers True, as torch.compile does:
// the graph is then the program's compiled path, which is right only when
// the program computes the same on both paths, as libraries that ask
// (transformers, torch.nn) promise; no guard can check that promise.
//
// `torch.compiler.is_exporting()` asks whether the program runs under
// torch.export. `--assume-exporting` answers True to both questions, as
// torch.export does (torch.compile answers is_exporting() False), so the
// graph is the path a program keeps for export: transformers' Mamba and
// Jamba scan sequentially there instead of calling associative_scan, whose
// generic mode is built on torch.vmap.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/Value.h"

#include <optional>

namespace dync::capture {

/// Whether \p function is torch.compiler.is_compiling, whose answer while
/// capturing is the interpreter's (Interpreter::compilingAnswer). Torch's
/// other spellings (`torch._dynamo.is_compiling`,
/// `torch._utils.is_compiling`) are Python functions that call this one.
bool isCompilerQuery(PyObject* function);

/// Whether \p function is torch.compiler.is_exporting, whose answer while
/// capturing is the interpreter's (Interpreter::exportingAnswer).
bool isExportQuery(PyObject* function);

} // namespace dync::capture
