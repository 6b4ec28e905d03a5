//===- DataBranches.cpp - Decisions on data, specialized to the example ---===//
//
// `if mask.any():` needs a side, and fake tensors have no values. The
// example inputs do: the oracle runs the graph's calls so far on them
// (oracle_example_values.py) and says which side they take. Capture goes
// on along that side after recording a fall-back run-time check,
// `aten::_assert_async.msg(cond, "fall back: ...")`, which holds when a
// call takes the same side and otherwise runs the program's original code
// (codegen.md, "Run-time checks"). That is sound only while the graph has
// done nothing the caller could see; a decision after an input was written,
// or on what random operators drew, keeps the refusal (the oracle says
// which). Draws before it are undone when the graph falls back
// (codegen/FallBackGenerator.cpp).
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"
#include "ir/RunTimeCheck.h"

#include "llvm/Support/Path.h"

#include <cmath>

namespace dync::capture {

using python::PyRef;

namespace {

/// "FILE:LINE" of the decision and its source text, from the innermost
/// frame with a line outside torch (the program's line that called into
/// torch, where torch decides), else the innermost with a line.
std::pair<std::string, std::string> decisionPlace(const std::vector<CaptureFrame>& stack) {
  const CaptureFrame* chosen = nullptr;
  for (const CaptureFrame& frame : stack)
    if (frame.location.line > 0 && !isTorchSource(frame.location.file)) {
      chosen = &frame;
      break;
    }
  for (const CaptureFrame& frame : stack)
    if (!chosen && frame.location.line > 0)
      chosen = &frame;
  if (!chosen)
    return {"an unknown line", ""};
  return {llvm::sys::path::filename(chosen->location.file).str() + ":" +
              std::to_string(chosen->location.line),
          llvm::StringRef(chosen->location.lineText).trim().str()};
}

/// A double as Python's repr() spells it (the shortest text that reads
/// back as the same value).
std::string floatText(double value) {
  PyRef text = PyRef::steal(PyObject_Repr(PyRef::steal(PyFloat_FromDouble(value)).get()));
  std::optional<std::string> spelled = text ? python::utf8Of(text.get()) : std::nullopt;
  if (!spelled) {
    PyErr_Clear();
    return std::to_string(value);
  }
  return *spelled;
}

} // namespace

void Interpreter::noteDataSpecialization(std::string note) {
  // A line decided in each layer (or each loop trip) is noted once.
  if (llvm::find(dataNotes_, note) == dataNotes_.end())
    dataNotes_.push_back(std::move(note));
}

llvm::Error Interpreter::recordFallBackCheck(const ValuePtr& condition, const std::string& text) {
  llvm::Expected<PyRef> assertOp = importObject("torch.ops.aten._assert_async.msg");
  if (!assertOp)
    return assertOp.takeError();
  ValuePtr message = makeConstantSteal(python::newStr(text));
  if (!message)
    return pythonError("making a check's message");
  llvm::Expected<ValuePtr> checked = callOracle(assertOp->get(), {condition, message}, {});
  if (!checked)
    return checked.takeError();
  return llvm::Error::success();
}

llvm::Expected<ValuePtr> Interpreter::conditionTensor(const ValuePtr& condition) {
  llvm::Expected<PyRef> scalarTensor = importObject("torch.scalar_tensor");
  if (!scalarTensor)
    return scalarTensor.takeError();
  llvm::Expected<ValuePtr> made = callOracle(scalarTensor->get(), {condition}, {});
  if (!made) {
    llvm::consumeError(made.takeError());
    return nullptr;
  }
  return *made;
}

llvm::Expected<bool> Interpreter::decideOnExample(const ValuePtr& condition,
                                                  const std::string& refusal) {
  if (dataBranches_ == DataBranches::Refuse)
    return captureError(refusal);
  // The same bool decided before (`if is_causal ...` in each layer): the
  // side taken then, which its check already states.
  if (condition->kind == ValueKind::SymNum)
    if (std::optional<bool> decided = oracle_.decidedTruth(condition->object.get()))
      return *decided;
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
    llvm::Expected<ValuePtr> made = conditionTensor(condition);
    if (!made)
      return made.takeError();
    if (!*made)
      return refuse("the graph cannot compute the condition as a value");
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
  if (llvm::Error error =
          recordFallBackCheck(holds, (ir::FallBackCheckPrefix + "the decision on tensor data at " +
                                      where + " takes the other side than the example's (" +
                                      sideText + "), to which the graph was specialized")
                                         .str()))
    return error;
  // A later use of the same bool (an argument `is_causal=b`) sees the side
  // taken, as torch sees a SymBool after torch._check.
  if (condition->kind == ValueKind::SymNum)
    if (llvm::Error error = oracle_.noteDecided(condition->object.get(), side))
      return error;

  std::string note = where + ": the decision on tensor data";
  if (!lineText.empty())
    note += " (" + lineText + ")";
  note += " is specialized to the example's side (" + sideText +
          "); calls that take the other side run the original code; to compile both, keep "
          "the decision in tensors (torch.where(cond, a, b)) or use torch.cond(cond, true_fn, "
          "false_fn, operands)";
  noteDataSpecialization(std::move(note));
  return side;
}

llvm::Expected<ValuePtr> Interpreter::intCheckTensor(const PyRef& holds) {
  llvm::Expected<ValuePtr> condition = wrapFake(holds.get());
  if (!condition)
    return condition.takeError();
  return conditionTensor(*condition);
}

// `f == example` as the program would write it (a `sym::eq` node on the
// graph value computing f). A zero also compares the sign: -0.0 == 0.0 in
// Python, but torch keeps the value as sympy's 0.0 from here on, and `1 /
// f` or `copysign` tell the two apart.
llvm::Expected<ValuePtr> Interpreter::floatCheckTensor(const PyRef& symFloat, double example) {
  llvm::Expected<ValuePtr> number = wrapFake(symFloat.get());
  if (!number)
    return number.takeError();
  llvm::Expected<PyRef> eq = importObject("operator.eq");
  if (!eq)
    return eq.takeError();
  ValuePtr constant = makeConstantSteal(PyFloat_FromDouble(example));
  if (!constant)
    return pythonError("making a float constant");
  llvm::Expected<ValuePtr> equal = callOracle(eq->get(), {*number, constant}, {});
  if (!equal)
    return equal.takeError();
  llvm::Expected<ValuePtr> tensor = conditionTensor(*equal);
  if (!tensor || !*tensor || example != 0)
    return tensor;
  llvm::Expected<ValuePtr> value = conditionTensor(*number);
  if (!value)
    return value.takeError();
  if (!*value)
    return nullptr;
  llvm::Expected<PyRef> signbit = importObject("torch.signbit");
  llvm::Expected<PyRef> logicalNot = importObject("torch.logical_not");
  llvm::Expected<PyRef> logicalAnd = importObject("torch.logical_and");
  if (!signbit || !logicalNot || !logicalAnd) {
    llvm::Error error = llvm::joinErrors(signbit.takeError(), logicalNot.takeError());
    return llvm::joinErrors(std::move(error), logicalAnd.takeError());
  }
  llvm::Expected<ValuePtr> sign = callOracle(signbit->get(), {*value}, {});
  if (sign && !std::signbit(example))
    sign = callOracle(logicalNot->get(), {*sign}, {});
  if (!sign)
    return sign.takeError();
  return callOracle(logicalAnd->get(), {*tensor, *sign}, {});
}

llvm::Expected<bool> Interpreter::specializeIntsOnExample(PyObject* symInt,
                                                          const std::string& refusal) {
  if (dataBranches_ == DataBranches::Refuse)
    return false;
  llvm::Expected<oracle::TensorOracle::ExampleInts> example = oracle_.exampleInts(symInt);
  if (!example)
    return example.takeError();
  if (example->ints.empty()) {
    if (example->whyNot.empty())
      return false;
    return captureError(refusal + " (not specialized to the example's value: " + example->whyNot +
                        ")");
  }
  if (llvm::Error refused =
          recorder_.irreversible("specializing an int read from data to the example"))
    return refused;

  auto [where, lineText] = decisionPlace(callStack());
  for (const oracle::TensorOracle::ExampleInt& one : example->ints) {
    std::string value = one.isFloat ? floatText(one.real) : std::to_string(one.value);
    std::string what = (one.isFloat ? "the float" : "the int " + one.name) +
                       " computed from tensor data" + (one.origin.empty() ? "" : " " + one.origin);
    // The check first, while `u0 == value` is still a relation torch
    // keeps; then torch takes the value, so what follows sees a number.
    llvm::Expected<ValuePtr> tensor =
        one.isFloat ? floatCheckTensor(one.holds, one.real) : intCheckTensor(one.holds);
    if (!tensor)
      return tensor.takeError();
    if (!*tensor)
      return captureError(refusal +
                          " (not specialized to the example's value: the graph "
                          "cannot compute " +
                          (one.isFloat ? "the float" : one.name) + " == " + value + ")");
    if (llvm::Error error =
            recordFallBackCheck(*tensor, (ir::FallBackCheckPrefix + what + ", which " + where +
                                          " needs as a number, differs from the example's value (" +
                                          value + "), to which the graph was specialized")
                                             .str()))
      return error;
    if (llvm::Error error = one.isFloat ? oracle_.specializeFloat(one.name, one.real)
                                        : oracle_.specializeInt(one.name, one.value))
      return error;

    std::string note = where + ": " + what;
    if (!lineText.empty())
      note += " (" + lineText + ")";
    note += " is specialized to the example's value (" + value +
            "); calls where it differs run the original code; to compile every value, compute "
            "it from Python numbers or sizes (x.shape), or keep the loop or size in tensors "
            "(torch.where, masks, torch's while_loop)";
    noteDataSpecialization(std::move(note));
  }
  return true;
}

llvm::Expected<ValuePtr> Interpreter::specializeIntOnExample(const ValuePtr& value,
                                                             const std::string& refusal) {
  if (value->kind != ValueKind::SymNum)
    return nullptr;
  llvm::Expected<bool> specialized = specializeIntsOnExample(value->object.get(), refusal);
  if (!specialized)
    return specialized.takeError();
  if (!*specialized)
    return nullptr;
  PyRef number = PyRef::steal(PyNumber_Index(value->object.get()));
  if (!number)
    return pythonError("reading an int specialized to the example's value");
  return makeConstantSteal(number.release());
}

} // namespace dync::capture
