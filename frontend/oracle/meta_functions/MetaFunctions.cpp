// The Python module dync_meta_functions: ATen's direct Meta functions
// (at::meta::<op>), called boxed with a call's Python arguments.
//
// torch registers Python meta functions at the Meta dispatch key of most
// operators whose C++ Meta kernel is a structured kernel's, so the
// dispatcher reaches the Python ones. ATen also exports each structured
// kernel's functional variant as at::meta::<op>, which runs the structured
// meta function and allocates the output on the Meta device without the
// dispatcher: eager's CPU kernel runs the same meta function, so the
// result's sizes, strides and dtype are eager's. The table of them is
// generated from torch's own native_functions.yaml
// (generate_meta_function_table.py); the oracle's Python side
// (oracle_meta_kernels.py) decides which calls may take them.
//
// This is the one translation unit that includes ATen's Meta function
// headers and torch's Python conversions.

#include <ATen/MetaFunctions.h>
#include <ATen/core/boxing/KernelFunction.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/jit/python/pybind_utils.h>

#include <Python.h>

#include <exception>
#include <optional>
#include <string>
#include <vector>

namespace {

struct MetaFunction {
  const char* name;
  const char* overload;
  c10::KernelFunction kernel;
  // Looked up on the first call: the operator's schema, which the boxed
  // call needs and which gives its arguments' types and defaults.
  std::optional<c10::OperatorHandle> op;
};

std::vector<MetaFunction>& metaFunctions() {
#define DYNC_META_FUNCTION(name, overload, function)                                               \
  MetaFunction{name, overload, c10::KernelFunction::makeFromUnboxedRuntimeFunction(function),      \
               std::nullopt},
  static std::vector<MetaFunction> table{
#include "MetaFunctionTable.inc"
  };
#undef DYNC_META_FUNCTION
  return table;
}

// The stack of a call of `schema` from Python positional arguments and
// keywords, each converted to its argument's type by torch's own
// conversion, a number given for a tensor argument made a wrapped-number
// tensor as a call of the operator from Python makes it; an absent argument
// takes the schema's default.
torch::jit::Stack argumentStack(const c10::FunctionSchema& schema, PyObject* args,
                                PyObject* kwargs) {
  const auto& arguments = schema.arguments();
  Py_ssize_t positional = PyTuple_GET_SIZE(args);
  if (positional > static_cast<Py_ssize_t>(arguments.size()))
    throw std::runtime_error("too many arguments for " + schema.name());
  Py_ssize_t keywordsUsed = 0;
  torch::jit::ToIValueAllowNumbersAsTensors numbersAsTensors(true);
  torch::jit::Stack stack;
  stack.reserve(arguments.size());
  for (size_t i = 0; i < arguments.size(); ++i) {
    const c10::Argument& argument = arguments[i];
    PyObject* value = nullptr;
    if (static_cast<Py_ssize_t>(i) < positional) {
      value = PyTuple_GET_ITEM(args, i);
    } else if (kwargs) {
      value = PyDict_GetItemString(kwargs, argument.name().c_str());
      if (value)
        ++keywordsUsed;
    }
    if (value) {
      stack.push_back(
          torch::jit::toIValue(pybind11::handle(value), argument.real_type(), argument.N()));
    } else if (argument.default_value()) {
      stack.push_back(*argument.default_value());
    } else {
      throw std::runtime_error("missing argument " + argument.name() + " of " + schema.name());
    }
  }
  if (kwargs && keywordsUsed != PyDict_Size(kwargs))
    throw std::runtime_error("unknown keyword argument for " + schema.name());
  return stack;
}

// names() -> ["aten::mul.Tensor", ...]: the operator overloads the table
// holds, in its order.
PyObject* names(PyObject*, PyObject*) {
  const auto& table = metaFunctions();
  PyObject* list = PyList_New(static_cast<Py_ssize_t>(table.size()));
  if (!list)
    return nullptr;
  for (size_t i = 0; i < table.size(); ++i) {
    std::string name = table[i].name;
    if (*table[i].overload)
      name = name + "." + table[i].overload;
    PyObject* text = PyUnicode_FromStringAndSize(name.data(), static_cast<Py_ssize_t>(name.size()));
    if (!text) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, static_cast<Py_ssize_t>(i), text);
  }
  return list;
}

// Keeps the warnings a call gives, so that they are given only when it
// succeeds: a call that fails is only an attempt (the oracle then asks fake
// mode), and its warnings are not the program's.
struct KeptWarnings : c10::WarningHandler {
  std::vector<c10::Warning> warnings;
  void process(const c10::Warning& warning) override { warnings.push_back(warning); }
};

// call(index, args, kwargs): the function at `index` of names() on the
// arguments (tensors on the Meta device, or tensors whose TensorImpl is
// one, such as fake tensors), its result a new Meta tensor or a tuple of
// them. Any error (a conversion, the meta function's own check) is a
// RuntimeError, and leaves no warning.
PyObject* call(PyObject*, PyObject* const* argv, Py_ssize_t argc) {
  if (argc != 3 || !PyLong_Check(argv[0]) || !PyTuple_Check(argv[1]) ||
      (argv[2] != Py_None && !PyDict_Check(argv[2]))) {
    PyErr_SetString(PyExc_TypeError, "call(index, args: tuple, kwargs: dict | None)");
    return nullptr;
  }
  auto& table = metaFunctions();
  Py_ssize_t index = PyLong_AsSsize_t(argv[0]);
  if (index < 0 || index >= static_cast<Py_ssize_t>(table.size())) {
    PyErr_SetString(PyExc_IndexError, "no such Meta function");
    return nullptr;
  }
  MetaFunction& function = table[static_cast<size_t>(index)];
  try {
    if (!function.op)
      function.op =
          c10::Dispatcher::singleton().findSchemaOrThrow(function.name, function.overload);
    const c10::FunctionSchema& schema = function.op->schema();
    torch::jit::Stack stack =
        argumentStack(schema, argv[1], argv[2] == Py_None ? nullptr : argv[2]);
    KeptWarnings kept;
    {
      c10::WarningUtils::WarningHandlerGuard guard(&kept);
      function.kernel.callBoxed(*function.op, c10::DispatchKeySet(c10::DispatchKey::Meta), &stack);
    }
    for (const c10::Warning& warning : kept.warnings)
      c10::warn(warning);
    if (stack.size() == 1)
      return torch::jit::toPyObject(std::move(stack[0])).release().ptr();
    PyObject* results = PyTuple_New(static_cast<Py_ssize_t>(stack.size()));
    if (!results)
      return nullptr;
    for (size_t i = 0; i < stack.size(); ++i)
      PyTuple_SET_ITEM(results, static_cast<Py_ssize_t>(i),
                       torch::jit::toPyObject(std::move(stack[i])).release().ptr());
    return results;
  } catch (const pybind11::error_already_set& error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
  }
  return nullptr;
}

PyMethodDef methods[] = {{"names", names, METH_NOARGS,
                          "The operator overloads with a direct Meta function, in table order."},
                         {"call", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(call)),
                          METH_FASTCALL,
                          "call(index, args, kwargs): the Meta function of names()[index]."},
                         {nullptr, nullptr, 0, nullptr}};

PyModuleDef moduleDef = {PyModuleDef_HEAD_INIT,
                         "dync_meta_functions",
                         "ATen's direct Meta functions, called boxed.",
                         -1,
                         methods,
                         nullptr,
                         nullptr,
                         nullptr,
                         nullptr};

} // namespace

PyMODINIT_FUNC PyInit_dync_meta_functions() { return PyModule_Create(&moduleDef); }
