//===- DataBranches.cpp - Decisions on data, specialized to the example ---===//
//
// `if mask.any():` needs a side, and fake tensors have no values. The
// example inputs do: the oracle runs the graph's calls so far on them
// (oracle_example_values.py) and says which side they take. Capture goes
// on along that side after recording a fall-back run-time check,
// `aten::_assert_async.msg(cond, "fall back: ...")`, which holds when a
// call takes the same side and otherwise runs the program's original code
// (codegen.md, "Run-time checks"). That is sound only while the graph has
// done nothing the caller could see; a decision after an input was written
// or random numbers were drawn keeps the refusal (the oracle says which).
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"
#include "ir/RunTimeCheck.h"

#include "llvm/Support/Path.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// "FILE:LINE" of the decision and its source text, from the innermost
/// frame with a line.
std::pair<std::string, std::string> decisionPlace(const std::vector<CaptureFrame>& stack) {
  for (const CaptureFrame& frame : stack)
    if (frame.location.line > 0)
      return {llvm::sys::path::filename(frame.location.file).str() + ":" +
                  std::to_string(frame.location.line),
              llvm::StringRef(frame.location.lineText).trim().str()};
  return {"an unknown line", ""};
}

} // namespace

llvm::Expected<bool> Interpreter::decideOnExample(const ValuePtr& condition,
                                                  const std::string& refusal) {
  if (dataBranches_ == DataBranches::Refuse)
    return captureError(refusal);
  auto refuse = [&](const std::string& why) {
    return captureError(refusal + " (not specialized to the example's side: " + why + ")");
  };
  if (llvm::Error refused =
          recorder_.irreversible("specializing a decision on data to the example"))
    return refused;

  // What the check reads: the tensor itself (bool() of one element), or a
  // number read from data made a tensor, nonzero where Python's truth is.
  ValuePtr tensor = condition;
  if (condition->kind == ValueKind::SymNum) {
    llvm::Expected<PyRef> scalarTensor = importObject("torch.scalar_tensor");
    if (!scalarTensor)
      return scalarTensor.takeError();
    llvm::Expected<ValuePtr> made = callOracle(scalarTensor->get(), {condition}, {});
    if (!made) {
      llvm::consumeError(made.takeError());
      return refuse("the graph cannot compute the condition as a value");
    }
    tensor = *made;
  } else if (condition->kind != ValueKind::Tensor) {
    return captureError(refusal);
  }
  PyRef numel = PyRef::steal(PyObject_CallMethod(tensor->object.get(), "numel", nullptr));
  if (!numel || !PyLong_CheckExact(numel.get()) || PyLong_AsLongLong(numel.get()) != 1) {
    // bool() of more elements (or of a count known only from data) is not
    // a decision eager makes either way.
    PyErr_Clear();
    return captureError(refusal);
  }

  llvm::Expected<oracle::TensorOracle::ExampleTruth> example =
      oracle_.exampleTruth(tensor->object.get());
  if (!example)
    return example.takeError();
  if (!example->value)
    return refuse(example->whyNot);
  bool side = *example->value;

  ValuePtr holds = tensor;
  if (!side) {
    llvm::Expected<PyRef> logicalNot = importObject("torch.logical_not");
    if (!logicalNot)
      return logicalNot.takeError();
    llvm::Expected<ValuePtr> negated = callOracle(logicalNot->get(), {tensor}, {});
    if (!negated)
      return negated.takeError();
    holds = *negated;
  }
  auto [where, lineText] = decisionPlace(callStack());
  std::string sideText = side ? "True" : "False";
  std::string text = (ir::FallBackCheckPrefix + "the decision on tensor data at " + where +
                      " takes the other side than the example's (" + sideText +
                      "), to which the graph was specialized")
                         .str();
  llvm::Expected<PyRef> assertOp = importObject("torch.ops.aten._assert_async.msg");
  if (!assertOp)
    return assertOp.takeError();
  ValuePtr message = makeConstantSteal(python::newStr(text));
  if (!message)
    return pythonError("making a check's message");
  llvm::Expected<ValuePtr> checked = callOracle(assertOp->get(), {holds, message}, {});
  if (!checked)
    return checked.takeError();
  std::string note = where + ": the decision on tensor data";
  if (!lineText.empty())
    note += " (" + lineText + ")";
  note += " is specialized to the example's side (" + sideText +
          "); calls that take the other side run the original code; to compile both, keep "
          "the decision in tensors (torch.where(cond, a, b)) or use torch.cond(cond, true_fn, "
          "false_fn, operands)";
  if (llvm::find(dataNotes_, note) == dataNotes_.end())
    dataNotes_.push_back(std::move(note));
  return side;
}

} // namespace dync::capture
