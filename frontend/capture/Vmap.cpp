//===- Vmap.cpp - torch.func.vmap while capturing -------------------------===//
#include "frontend/capture/Vmap.h"

#include "frontend/capture/ArgumentBinding.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/ImportedAttribute.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include <array>
#include <utility>

namespace dync::capture {

using python::PyRef;

std::optional<VmapFunction> vmapFunction(PyObject* function) {
  if (!function || !PyFunction_Check(function))
    return std::nullopt;
  if (function == importedAttribute("torch._functorch.apis", "vmap"))
    return VmapFunction::Vmap;
  static constexpr std::array<std::pair<const char*, VmapFunction>, 5> entries = {{
      {"lazy_load_decompositions", VmapFunction::LoadDecompositions},
      {"_vmap_increment_nesting", VmapFunction::OpenLevel},
      {"_vmap_decrement_nesting", VmapFunction::CloseLevel},
      {"_add_batch_dim", VmapFunction::BatchDim},
      {"_remove_batch_dim", VmapFunction::BatchDim},
  }};
  for (const auto& [name, which] : entries)
    if (function == importedAttribute("torch._functorch.predispatch", name))
      return which;
  return std::nullopt;
}

VmapLevels::~VmapLevels() {
  if (open_ <= 0)
    return;
  PyObject* close = importedAttribute("torch._C._functorch", "_vmap_decrement_nesting");
  for (; close && open_ > 0; --open_) {
    PyRef closed = PyRef::steal(PyObject_CallNoArgs(close));
    if (!closed)
      PyErr_Clear();
  }
}

namespace {

bool isConstantInt(const ValuePtr& value) {
  return value->isConstant() && PyLong_Check(value->object.get()) &&
         !PyBool_Check(value->object.get());
}

} // namespace

llvm::Expected<ValuePtr> Interpreter::makeVmapped(std::vector<ValuePtr> args, KeywordArgs kwargs) {
  llvm::Expected<std::vector<ValuePtr>> bound =
      bindArguments("vmap", {"func", "in_dims", "out_dims", "randomness", "chunk_size"}, 1,
                    std::move(args), std::move(kwargs), nullptr, /*positional=*/4);
  if (!bound)
    return bound.takeError();
  ValuePtr randomness = (*bound)[3] ? (*bound)[3] : makeConstantSteal(python::newStr("error"));
  std::optional<std::string> mode =
      randomness->isConstant() && PyUnicode_Check(randomness->object.get())
          ? python::utf8Of(randomness->object.get())
          : std::nullopt;
  if (!mode || (*mode != "error" && *mode != "different" && *mode != "same"))
    return raiseBuiltin(PyExc_RuntimeError,
                        "Only allowed values for randomness are 'error', 'different', or "
                        "'same'. Got " +
                            (mode ? *mode : spelling(randomness->kind) + " value"));
  ValuePtr chunkSize = (*bound)[4] ? (*bound)[4] : makeConstant(PyRef::borrow(Py_None));
  if (!(chunkSize->isConstant() && chunkSize->object.get() == Py_None)) {
    if (!isConstantInt(chunkSize))
      return captureError("torch.func.vmap's chunk_size must be None or an int known while "
                          "capturing, not a " +
                          spelling(chunkSize->kind) + " value");
    if (PyLong_AsLongLong(chunkSize->object.get()) <= 0)
      return raiseBuiltin(PyExc_ValueError, "vmap: chunk_size should be None or greater than 0. "
                                            "(got " +
                                                python::strOf(chunkSize->object.get()) + ")");
  }
  PyObject* impl = importedAttribute("torch._functorch.vmap", "vmap_impl");
  llvm::Expected<PyRef> partialClass = importObject("functools.partial");
  if (!impl || !partialClass)
    return captureError("torch's vmap_impl or functools.partial could not be found");
  llvm::Expected<ValuePtr> implValue = values_.wrapReal(impl, nullptr);
  if (!implValue)
    return implValue.takeError();
  llvm::Expected<ValuePtr> cls = values_.wrapReal(partialClass->get(), nullptr);
  if (!cls)
    return cls.takeError();
  ValuePtr zero = makeConstantSteal(PyLong_FromLong(0));
  return makePartial(*cls,
                     {*implValue, (*bound)[0], (*bound)[1] ? (*bound)[1] : zero,
                      (*bound)[2] ? (*bound)[2] : zero, randomness, chunkSize},
                     {});
}

llvm::Expected<ValuePtr> Interpreter::callVmapFunction(VmapFunction which, const ValuePtr& callee,
                                                       std::vector<ValuePtr> args,
                                                       KeywordArgs kwargs) {
  switch (which) {
  case VmapFunction::Vmap:
    return makeVmapped(std::move(args), std::move(kwargs));
  case VmapFunction::LoadDecompositions:
    // Registers functorch's batching rules once per process; the program's
    // values are not involved.
    return callForReal(callee->object.get(), args, kwargs);
  case VmapFunction::OpenLevel:
  case VmapFunction::CloseLevel:
  case VmapFunction::BatchDim: {
    llvm::Expected<ValuePtr> result = callOracle(callee->object.get(), args, kwargs);
    if (result && which != VmapFunction::BatchDim)
      vmapLevels_.note(which == VmapFunction::OpenLevel);
    return result;
  }
  }
  return captureError("unknown vmap function");
}

} // namespace dync::capture
