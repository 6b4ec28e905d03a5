//===- AssociativeScanOperator.cpp - torch's associative_scan -------------===//
//
// `associative_scan(combine_fn, xs, dim, reverse=False,
// combine_mode="pointwise")` runs, in eager, on CUDA or XPU tensors only in
// its pointwise mode (it raises for others), and in its generic mode calls
// combine_fn under torch.vmap. Capture raises eager's errors for the
// arguments eager checks, in eager's order, refuses the pointwise mode on
// CUDA or XPU, and runs the generic mode as written.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/LoopOperators.h"

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/OperatorCalls.h"
#include "frontend/capture/ValueTrees.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/Twine.h"

namespace dync::capture {

namespace {

/// The constant string \p value holds, or none.
std::optional<std::string> constantString(const ValuePtr& value) {
  if (!value->isConstant() || !PyUnicode_Check(value->object.get()))
    return std::nullopt;
  return python::strOf(value->object.get());
}

/// `str(type(x))` of a constant, as eager's messages print it.
std::string typeText(const ValuePtr& value) {
  if (value->isConstant() && value->object)
    return python::strOf(reinterpret_cast<PyObject*>(Py_TYPE(value->object.get())));
  return "a " + spelling(value->kind).str();
}

/// Whether every leaf is on a device eager's pointwise mode runs on.
llvm::Expected<bool> onPointwiseDevices(BuiltinContext& interp,
                                        const std::vector<ValuePtr>& leaves) {
  for (const ValuePtr& leaf : leaves) {
    llvm::Expected<ValuePtr> device = interp.getAttr(leaf, "device");
    llvm::Expected<ValuePtr> type = device ? interp.getAttr(*device, "type") : device.takeError();
    if (!type)
      return type.takeError();
    std::optional<std::string> name = constantString(*type);
    if (!name || (*name != "cuda" && *name != "xpu"))
      return false;
  }
  return true;
}

} // namespace

llvm::Expected<ValuePtr> callAssociativeScan(BuiltinContext& interp, std::vector<ValuePtr> args,
                                             KeywordArgs kwargs) {
  llvm::Expected<std::vector<ValuePtr>> bound =
      bindArguments("associative_scan", {"combine_fn", "xs", "dim", "reverse", "combine_mode"}, 3,
                    std::move(args), std::move(kwargs));
  if (!bound)
    return bound.takeError();
  std::vector<ValuePtr> leaves;
  llvm::Expected<TreeShape> shape = flattenTree("torch associative_scan", (*bound)[1], leaves);
  if (!shape)
    return shape.takeError();
  if (leaves.empty())
    return raiseBuiltin(PyExc_IndexError, "list index out of range", "the program raises");
  llvm::Expected<ValuePtr> rank = interp.getAttr(leaves.front(), "ndim");
  if (!rank)
    return rank.takeError();
  llvm::Expected<ValuePtr> canonicalize =
      torchFunction(interp, "torch._prims_common.canonicalize_dim");
  if (!canonicalize)
    return canonicalize.takeError();
  llvm::Expected<ValuePtr> dim = interp.call(*canonicalize, {*rank, (*bound)[2]});
  if (!dim)
    return dim.takeError();
  if (!(*dim)->isConstant() || !PyLong_Check((*dim)->object.get()))
    return raiseBuiltin(PyExc_ValueError, "Dim must be an int, but got " + typeText(*dim),
                        "the program raises");
  ValuePtr reverse = (*bound)[3] ? (*bound)[3] : makeBool(false);
  if (!reverse->isConstant() || !PyBool_Check(reverse->object.get()))
    return raiseBuiltin(PyExc_RuntimeError, "Reverse must be a bool, but got " + typeText(reverse),
                        "the program raises");
  std::optional<std::string> mode =
      (*bound)[4] ? constantString((*bound)[4]) : std::optional<std::string>("pointwise");
  if (!mode || (*mode != "pointwise" && *mode != "generic"))
    return raiseBuiltin(PyExc_ValueError,
                        "Combine_mode must either 'pointwise' or 'generic', but got " +
                            ((*bound)[4]->isConstant() ? python::strOf((*bound)[4]->object.get())
                                                       : typeText((*bound)[4])),
                        "the program raises");
  // The generic mode runs as written: its torch.vmap is capture's to
  // model or refuse where the program calls it.
  if (*mode == "generic")
    return ValuePtr();
  llvm::Expected<bool> supported = onPointwiseDevices(interp, leaves);
  if (!supported)
    return supported.takeError();
  if (!*supported)
    return raiseBuiltin(PyExc_ValueError,
                        "For combine_mode='pointwise', all input tensors need to be on CUDA or XPU",
                        "the program raises");
  return captureError("torch associative_scan in its pointwise mode on CUDA or XPU tensors is not "
                      "supported");
}

} // namespace dync::capture
