//===- SymIntInputs.cpp - Python int arguments that stay symbolic ---------===//
//
// `--dynamic n=n[1,64]` makes the int argument `n` a symbol rather than a
// constant under an `equals` guard, as torch.export does for an int input
// given a Dim: capture sees a torch.SymInt, the graph takes it as an int
// input, and the `int` guard reads the symbol's value from the frame.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/ValueBuilder.h"

namespace dync::capture {

using python::PyRef;

llvm::Expected<ValuePtr> ValueBuilder::intInput(PyObject* real, SourcePtr source,
                                                const oracle::DynamicDim& symbol) {
  if (!source)
    return captureError("an int that was not reached from the frame's inputs cannot be a graph "
                        "input");
  // bool is a subclass of int, and an int subclass may override what the
  // program's arithmetic does: only an exact int is a size.
  if (!PyLong_CheckExact(real))
    return captureError(source->str() + " is a " + Py_TYPE(real)->tp_name +
                        ", not an int; only an int argument can be a symbolic int");
  llvm::Expected<PyRef> symInt =
      oracle_.addIntInput(real, source->valueName(), source->str(), symbol);
  if (!symInt)
    return symInt.takeError();
  ValuePtr value = makeValue(ValueKind::SymNum, std::move(*symInt), source);
  intInputOrder_.push_back(value);
  return value;
}

} // namespace dync::capture
