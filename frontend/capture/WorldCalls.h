//===- WorldCalls.h - print, warnings and logging, made after the graph ----===//
//
// What the attribute reads need of WorldCalls.cpp: which functions are
// logging methods whose calls are made after the graph.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <Python.h>

namespace dync::capture {

/// Whether \p function is a logging method of logging.Logger or
/// logging.LoggerAdapter whose calls are made after the graph: a level
/// method logging defines, or one a library attached (an lru_cache
/// wrapper, as transformers' `warning_once` is).
bool isLoggingMethod(PyObject* function);

} // namespace dync::capture
