//===- AutocastState.cpp - torch's autocast state around a capture --------===//
#include "frontend/capture/AutocastState.h"

#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyRef.h"

#include <optional>

namespace dync::capture {

using python::PyRef;

namespace {

/// torch keeps no getter for the depth of nested autocast regions: one
/// more and one less read it without changing it.
std::optional<long> nestingDepth(PyObject* torch) {
  PyRef deeper = PyRef::steal(PyObject_CallMethod(torch, "autocast_increment_nesting", nullptr));
  PyRef back = PyRef::steal(PyObject_CallMethod(torch, "autocast_decrement_nesting", nullptr));
  if (!deeper || !back)
    return std::nullopt;
  long depth = PyLong_AsLong(back.get());
  if (depth == -1 && PyErr_Occurred())
    return std::nullopt;
  return depth;
}

} // namespace

llvm::Expected<AutocastState> AutocastState::read(PyObject* torch) {
  AutocastState state;
  PyRef enabled = PyRef::steal(PyObject_CallMethod(torch, "is_autocast_enabled", "s", "cpu"));
  PyRef dtype = PyRef::steal(PyObject_CallMethod(torch, "get_autocast_dtype", "s", "cpu"));
  PyRef cache = PyRef::steal(PyObject_CallMethod(torch, "is_autocast_cache_enabled", nullptr));
  std::optional<long> nesting = nestingDepth(torch);
  if (!enabled || !dtype || !cache || !nesting)
    return pythonError("reading torch's autocast state");
  state.enabled_ = enabled.get() == Py_True;
  state.cacheEnabled_ = cache.get() == Py_True;
  state.nesting_ = *nesting;
  state.dtype_ = dtype.get();
  return state;
}

void AutocastState::restore(PyObject* torch) const {
  // Each call's result is dropped; a failure is cleared below.
  auto call = [&](PyRef result) { (void)result; };
  PyObject* enabled = enabled_ ? Py_True : Py_False;
  PyObject* cache = cacheEnabled_ ? Py_True : Py_False;
  call(PyRef::steal(PyObject_CallMethod(torch, "set_autocast_enabled", "sO", "cpu", enabled)));
  if (dtype_)
    call(PyRef::steal(PyObject_CallMethod(torch, "set_autocast_dtype", "sO", "cpu", dtype_)));
  call(PyRef::steal(PyObject_CallMethod(torch, "set_autocast_cache_enabled", "O", cache)));
  if (std::optional<long> depth = nestingDepth(torch)) {
    for (long d = *depth; d > nesting_; --d)
      call(PyRef::steal(PyObject_CallMethod(torch, "autocast_decrement_nesting", nullptr)));
    for (long d = *depth; d < nesting_; ++d)
      call(PyRef::steal(PyObject_CallMethod(torch, "autocast_increment_nesting", nullptr)));
    // Leaving the outermost region clears the cast cache, as __exit__ does.
    if (*depth > nesting_ && nesting_ == 0)
      call(PyRef::steal(PyObject_CallMethod(torch, "clear_autocast_cache", nullptr)));
  }
  PyErr_Clear();
}

} // namespace dync::capture
