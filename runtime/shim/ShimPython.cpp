//===- ShimPython.cpp - torch.Tensor objects <-> shim tensor handles ------===//
//
// Kept apart from Shim.cpp so that only this small translation unit needs
// Python.h and torch's Python bindings, and a C++ host that runs full graphs
// without Python links neither.
//
//===----------------------------------------------------------------------===//

#include "runtime/shim/ShimInternal.h"
#include "runtime/shim/dync_shim.h"

#include <Python.h>
#include <torch/csrc/Device.h>
#include <torch/csrc/Dtype.h>
#include <torch/csrc/Layout.h>
#include <torch/csrc/MemoryFormat.h>
#include <torch/csrc/autograd/python_variable.h>
#include <torch/csrc/autograd/variable.h>

#include <cstring>

using namespace dync::shim;

namespace {

// torch's own THPVariable_Check falls back to PyObject_IsInstance, which may
// run a metaclass __instancecheck__ and throw. A subtype test on the type
// objects answers the same question for every real tensor class (Parameter,
// subclasses) without running Python-level code, which guards rely on.
bool isTensorObject(PyObject* obj) {
  if (!obj || !THPVariableClass)
    return false;
  return THPVariable_CheckExact(obj) ||
         PyType_IsSubtype(Py_TYPE(obj), reinterpret_cast<PyTypeObject*>(THPVariableClass));
}

} // namespace

extern "C" {

dync_status dync_tensor_from_pyobject(PyObject* obj, dync_tensor** out) {
  if (!out)
    return fail(DYNC_ERR_INVALID_ARGUMENT, "dync_tensor_from_pyobject: NULL out-parameter");
  *out = nullptr;
  if (!isTensorObject(obj))
    return fail(DYNC_ERR_PYTHON, std::string("expected a torch.Tensor, got ") +
                                     (obj ? Py_TYPE(obj)->tp_name : "NULL"));
  const at::Tensor& t = THPVariable_Unpack(obj);
  dync_tensor* handle = reinterpret_cast<dync_tensor*>(t.unsafeGetTensorImpl());
  dync_tensor_retain(handle);
  *out = t.defined() ? handle : nullptr;
  return DYNC_OK;
}

const dync_tensor* dync_tensor_borrow_from_pyobject(PyObject* obj) {
  if (!isTensorObject(obj))
    return nullptr;
  const at::Tensor& t = THPVariable_Unpack(obj);
  return t.defined() ? reinterpret_cast<const dync_tensor*>(t.unsafeGetTensorImpl()) : nullptr;
}

int dync_py_tensor_info(PyObject* obj, dync_tensor_info* out) {
  // Tensor or Parameter only: THPVariable_CheckExact reads the type
  // pointer, nothing else.
  if (!obj || !out || !THPVariableClass || !THPVariable_CheckExact(obj))
    return 0;
  const at::Tensor& t = THPVariable_Unpack(obj);
  if (!t.defined())
    return 0;
  return dync_tensor_info_of(reinterpret_cast<const dync_tensor*>(t.unsafeGetTensorImpl()), out);
}

int dync_py_sparse_coo_info(PyObject* obj, dync_tensor_info* out, int64_t* sparse) {
  if (!obj || !out || !THPVariableClass || !THPVariable_CheckExact(obj))
    return 0;
  const at::Tensor& t = THPVariable_Unpack(obj);
  if (!t.defined())
    return 0;
  return dync_sparse_coo_info_of(reinterpret_cast<const dync_tensor*>(t.unsafeGetTensorImpl()), out,
                                 sparse);
}

int dync_py_tensor_autograd_leaf(PyObject* obj) {
  if (!obj || !THPVariableClass || !THPVariable_CheckExact(obj))
    return 0;
  const at::Tensor& t = THPVariable_Unpack(obj);
  if (!t.defined())
    return 0;
  // Read without materializing: a tensor that never required grad has no
  // autograd metadata, hence neither history nor hooks.
  torch::autograd::AutogradMeta* meta = torch::autograd::impl::get_autograd_meta(t);
  if (!meta)
    return 1;
  if (!t.is_leaf())
    return 0;
  // Tensor.register_hook keeps its hooks in a Python table
  // (Tensor._backward_hooks) that one pre-hook of the tensor runs; with its
  // handles removed the table is empty and that pre-hook changes nothing.
  // Any other pre-hook is C++'s.
  size_t tableHooks = 0;
  PyObject* table = reinterpret_cast<THPVariable*>(obj)->backward_hooks;
  if (table && table != Py_None) {
    if (!PyDict_Check(table) || PyDict_GET_SIZE(table) != 0)
      return 0;
    tableHooks = 1;
  }
  bool cppHooks = meta->cpp_hooks_list_ && !meta->cpp_hooks_list_->empty();
  return !cppHooks && meta->hooks_.size() <= tableHooks ? 1 : 0;
}

int dync_py_torch_constant_is(PyObject* obj, int kind, const char* name) {
  // Exact types: each check reads the type pointer and a field, no Python.
  if (!obj || !name)
    return 0;
  switch (kind) {
  case DYNC_TORCH_DTYPE:
    return THPDtype_Check(obj) && std::strcmp(reinterpret_cast<THPDtype*>(obj)->name, name) == 0;
  case DYNC_TORCH_LAYOUT:
    return THPLayout_Check(obj) && std::strcmp(reinterpret_cast<THPLayout*>(obj)->name, name) == 0;
  case DYNC_TORCH_MEMORY_FORMAT:
    return THPMemoryFormat_Check(obj) &&
           std::strcmp(reinterpret_cast<THPMemoryFormat*>(obj)->name, name) == 0;
  case DYNC_TORCH_DEVICE:
    try {
      return THPDevice_Check(obj) && reinterpret_cast<THPDevice*>(obj)->device.str() == name;
    } catch (...) {
      return 0;
    }
  default:
    return 0;
  }
}

PyObject* dync_tensor_to_pyobject(const dync_tensor* t) {
  if (!t) {
    PyErr_SetString(PyExc_ValueError, "dync_tensor_to_pyobject: NULL tensor handle");
    return nullptr;
  }
  try {
    return THPVariable_Wrap(toTensor(t));
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
    return nullptr;
  }
}

void dync_shim_fill_python_api(dync_shim_api* api) {
  if (!api)
    return;

  // Assigning each function to its field checks its declaration against the
  // table's row.
#define DYNC_SHIM_PYTHON_FN(Name, field, function, Result, Params) api->field = function;
#include "runtime/shim/ShimApi.def"
}

} // extern "C"
