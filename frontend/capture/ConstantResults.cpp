//===- ConstantResults.cpp - Functions whose authors declare them constant --===//
//
// `torch._dynamo.assume_constant_result(f)` marks a function whose result is
// fixed for the life of the process: an install probe (is a package
// importable, which version), a hardware capability, an environment
// variable. torch.compile and torch.export call such a function for real and
// take its result as a constant; libraries mark their probes for them
// (transformers' `is_*_available`, under `functools.lru_cache`). Capture
// does the same: the probes read the file system through importlib's
// package search, which is neither a graph's business nor code capture
// could follow, and what they answer at export is what the artifact assumes
// wherever it is loaded, as a compiled graph assumes it in the process that
// compiled it.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"

namespace dync::capture {

namespace {

/// Whether \p function carries the mark `assume_constant_result` sets, read
/// from the function's own `__dict__` (no descriptor runs).
bool markedConstant(PyObject* function) {
  if (!function || !PyFunction_Check(function))
    return false;
  PyObject* dict = reinterpret_cast<PyFunctionObject*>(function)->func_dict;
  PyObject* mark = dict ? PyDict_GetItemString(dict, "_dynamo_marked_constant") : nullptr;
  return mark && PyObject_IsTrue(mark) == 1;
}

} // namespace

llvm::Expected<std::optional<ValuePtr>>
Interpreter::callMarkedConstant(const ValuePtr& function, const std::vector<ValuePtr>& args,
                                const KeywordArgs& kwargs) {
  if (!markedConstant(function->object.get()))
    return std::nullopt;
  // On arguments capture knows only symbolically the result could differ
  // from call to call: such a call is inlined like any other.
  if (!allConstant(args) ||
      !llvm::all_of(kwargs, [](const auto& kw) { return allConstant({kw.second}); }))
    return std::nullopt;
  llvm::Expected<ValuePtr> result = callForReal(function->object.get(), args, kwargs);
  if (!result)
    return result.takeError();
  if (!allConstant({*result})) {
    PyObject* returned = (*result)->object.get();
    return captureError(
        function->qualname +
        "() is marked as giving a constant result "
        "(torch._dynamo.assume_constant_result), but returned " +
        (returned ? describeObject(returned) : "a " + spelling((*result)->kind).str()) +
        ", which a graph cannot hold as a constant (numbers, strings, None "
        "and tuples or lists of those)");
  }
  // The function's code is the artifact's to fingerprint, as if it had run.
  functionsRun_.push_back({function->code, function->globals, function->qualname});
  return result;
}

} // namespace dync::capture
