//===- RaiseOnlyBranch.cpp - Data-dependent branches that only raise ------===//
//
// `if torch.any(var < 0): raise ValueError("...")` branches on a tensor's
// values, which capture does not know. When one side of such a branch does
// nothing but build an exception and raise it, the program's result along
// the other side is the same whatever the values are, except that it raises
// when the condition holds. Capture then continues along the other side and
// records a run-time check: `aten::_assert_async.msg`, which raises when its
// one-element tensor is false, with the exception's type and message as its
// text (`"ValueError: var has negative entry/entries"`). torch.fx and the
// passes treat it as a side effect, so it stays in the graph; codegen turns a
// failure of it into the original exception (docs/capture.md, "Branches that
// only raise").
//
// Each side is run speculatively by the real opcode handlers on a
// checkpoint of capture's state that is always rolled back
// (BytecodeMachine::speculateRaise, Speculate.cpp): giving up leaves capture
// exactly as it was, and the data-dependent-branch error stands.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/BytecodeMachine.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"
#include "ir/RunTimeCheck.h"

#include <optional>

namespace dync::capture {

using bytecode::Instruction;
using python::PyRef;

namespace {

/// What the check says when it fails: "Type" or "Type: message", for an
/// exception of a builtin class made from no argument or one str, which
/// the runtime can raise again exactly. None for other exceptions.
std::optional<std::string> checkText(PyObject* exception) {
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(exception));
  PyRef module = PyRef::steal(PyObject_GetAttrString(type, "__module__"));
  PyRef args = PyRef::steal(PyObject_GetAttrString(exception, "args"));
  if (!module || !args) {
    PyErr_Clear();
    return std::nullopt;
  }
  std::optional<std::string> moduleName = python::utf8Of(module.get());
  // A builtin class's tp_name is its plain name.
  std::string typeName = reinterpret_cast<PyTypeObject*>(type)->tp_name;
  if (moduleName != "builtins" || !PyTuple_CheckExact(args.get()))
    return std::nullopt;
  Py_ssize_t count = PyTuple_GET_SIZE(args.get());
  if (count == 0)
    return typeName;
  if (count != 1 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(args.get(), 0)))
    return std::nullopt;
  std::optional<std::string> message = python::utf8Of(PyTuple_GET_ITEM(args.get(), 0));
  if (!message)
    return std::nullopt;
  return typeName + ": " + *message;
}

/// The index of the instruction at which the side starting at \p start
/// raises, whatever its values: straight-line code (no jump, return or
/// yield, no handler of the frame around it) ending in a raise. Its calls
/// may do anything: eager mode either raises there or earlier, from one of
/// them. None for any other side.
std::optional<size_t> alwaysRaises(const Frame& frame, size_t start,
                                   const bytecode::OpcodeTable& opcodes,
                                   llvm::function_ref<bool(size_t)> caught) {
  // Building an exception's message takes a few dozen instructions; a
  // longer side is doing something else.
  constexpr size_t MaxInstructions = 256;
  const std::vector<Instruction>& instructions = frame.decoded->instructions;
  for (size_t pc = start; pc < instructions.size() && pc < start + MaxInstructions; ++pc) {
    const Instruction& ins = instructions[pc];
    const bytecode::OpcodeInfo* info = opcodes.lookup(ins.opcode);
    if (!info || ins.jumpTarget >= 0 || caught(pc))
      return std::nullopt;
    if (info->name == "RAISE_VARARGS" || info->name == "RERAISE")
      return pc;
    if (info->name == "RETURN_VALUE" || info->name == "YIELD_VALUE")
      return std::nullopt;
  }
  return std::nullopt;
}

/// The name of the opcode at instruction \p index, or empty.
llvm::StringRef opcodeAt(const Frame& frame, size_t index, const bytecode::OpcodeTable& opcodes) {
  const std::vector<Instruction>& instructions = frame.decoded->instructions;
  if (index >= instructions.size())
    return {};
  const bytecode::OpcodeInfo* info = opcodes.lookup(instructions[index].opcode);
  return info ? llvm::StringRef(info->name) : llvm::StringRef();
}

} // namespace

bool BytecodeMachine::caughtInFrame(const Frame& frame, size_t index) const {
  // Follows the exception through the cleanups of grad-mode `with` blocks:
  // each region's handler is PUSH_EXC_INFO, WITH_EXCEPT_START (calling the
  // __exit__ kept at the region's depth), ..., RERAISE, and the region
  // around that handler leads to `COPY 3; POP_EXCEPT; RERAISE 1`, from
  // which the exception goes on to whatever covers the block.
  constexpr int MaxNestedBlocks = 32;
  for (int block = 0; block < MaxNestedBlocks; ++block) {
    std::optional<bytecode::ExceptionRegion> region = findExceptionHandler(*frame.decoded, index);
    if (!region)
      return false;
    size_t handler = region->handler;
    if (opcodeAt(frame, handler, opcodes_) != "PUSH_EXC_INFO" ||
        opcodeAt(frame, handler + 1, opcodes_) != "WITH_EXCEPT_START" || region->depth == 0 ||
        region->depth > frame.stack.size() || !isGradModeExit(frame.stack[region->depth - 1]))
      return true;
    std::optional<bytecode::ExceptionRegion> cleanup =
        findExceptionHandler(*frame.decoded, handler + 1);
    if (!cleanup)
      return false;
    index = cleanup->handler;
    if (opcodeAt(frame, index, opcodes_) != "COPY" ||
        opcodeAt(frame, index + 1, opcodes_) != "POP_EXCEPT" ||
        opcodeAt(frame, index + 2, opcodes_) != "RERAISE")
      return true;
  }
  return true;
}

llvm::Expected<bool> BytecodeMachine::raiseOnlyBranch(Frame& f, const Instruction& ins,
                                                      bool onTrue) {
  ValuePtr condition = f.stack.back();
  if (!condition->isTensor() || ins.jumpTarget < 0)
    return false;
  // An exception a caller catches is not the program's result; a grad-mode
  // `with` block of a caller's lets it through.
  for (const Frame* caller : frames_)
    if (caller != &f && caughtInFrame(*caller, caller->pc))
      return false;

  size_t fallThrough = f.pc + 1;
  size_t target = static_cast<size_t>(ins.jumpTarget);
  std::vector<ir::Guard> fallGuards, targetGuards;
  llvm::Expected<PyRef> fallRaises = speculateRaise(f, fallThrough, fallGuards);
  if (!fallRaises)
    return fallRaises.takeError();
  llvm::Expected<PyRef> targetRaises = speculateRaise(f, target, targetGuards);
  if (!targetRaises)
    return targetRaises.takeError();
  // Both sides raising is a program that always raises.
  std::optional<std::string> text;
  bool fallSideRaises = bool(*fallRaises);
  if (bool(*fallRaises) != bool(*targetRaises))
    text = checkText(fallSideRaises ? fallRaises->get() : targetRaises->get());
  // An exception capture cannot make again (a message formatting tensor
  // values, the program's own class, a side that does more before raising)
  // is left to the original code: the check falls back to it when it fails.
  bool fallsBack = !text;
  if (fallsBack) {
    auto caught = [&](size_t pc) { return caughtInFrame(f, pc); };
    std::optional<size_t> fallRaise = alwaysRaises(f, fallThrough, opcodes_, caught);
    std::optional<size_t> targetRaise = alwaysRaises(f, target, opcodes_, caught);
    if (bool(fallRaise) == bool(targetRaise))
      return false;
    // The speculated run and the code agree on which side raises.
    if ((*fallRaises || *targetRaises) && bool(fallRaise) != fallSideRaises)
      return false;
    fallSideRaises = bool(fallRaise);
    const Instruction& raise = f.decoded->instructions[fallRaise ? *fallRaise : *targetRaise];
    text = (ir::FallBackCheckPrefix + "the program raises at " + f.filename + ":" +
            llvm::Twine(raise.position.line) + ", with an exception capture cannot make again")
               .str();
  }

  // bool() of a tensor is defined for one element only; a check on more
  // would fail where eager fails differently.
  PyRef numel = PyRef::steal(PyObject_CallMethod(condition->object.get(), "numel", nullptr));
  if (!numel || !PyLong_CheckExact(numel.get()) || PyLong_AsLongLong(numel.get()) != 1) {
    PyErr_Clear();
    return false;
  }

  // The jump is taken when bool(condition) == onTrue. The check asserts
  // that the raising side is not taken.
  bool raisesWhenTrue = fallSideRaises ? !onTrue : onTrue;
  ValuePtr holds = condition;
  if (raisesWhenTrue) {
    llvm::Expected<PyRef> logicalNot = importObject("torch.logical_not");
    if (!logicalNot)
      return logicalNot.takeError();
    llvm::Expected<ValuePtr> negated = context_.callOracle(logicalNot->get(), {condition}, {});
    if (!negated)
      return negated.takeError();
    holds = *negated;
  }
  llvm::Expected<PyRef> assertOp = importObject("torch.ops.aten._assert_async.msg");
  if (!assertOp)
    return assertOp.takeError();
  ValuePtr message = makeConstantSteal(python::newStr(*text));
  if (!message)
    return pythonError("making a check's message");
  llvm::Expected<ValuePtr> checked = context_.callOracle(assertOp->get(), {holds, message}, {});
  if (!checked)
    return checked.takeError();

  // The check's text was read from the program's state: the guards the
  // raising side installed pin it. A fall-back check's text reads nothing.
  if (!fallsBack)
    for (ir::Guard& guard : fallSideRaises ? fallGuards : targetGuards)
      guards_.add(std::move(guard));
  pop(f);
  f.next = fallSideRaises ? target : fallThrough;
  return true;
}

llvm::Expected<bool> BytecodeMachine::raiseOnlySymbolicBranch(Frame& f, const Instruction& ins,
                                                              bool onTrue) {
  ValuePtr condition = f.stack.back();
  if (condition->kind != ValueKind::SymNum || ins.jumpTarget < 0)
    return false;
  for (const Frame* caller : frames_)
    if (caller != &f && caughtInFrame(*caller, caller->pc))
      return false;
  // Only a condition torch will not decide: one over a value computed from
  // tensor data whose ranges settle neither side. Any other is decided, and
  // guarded, as bool() decides it.
  llvm::Expected<PyRef> freeUnbacked =
      importObject("torch.fx.experimental.symbolic_shapes.free_unbacked_symbols");
  if (!freeUnbacked)
    return freeUnbacked.takeError();
  llvm::Expected<PyRef> knownTrue =
      importObject("torch.fx.experimental.symbolic_shapes.statically_known_true");
  if (!knownTrue)
    return knownTrue.takeError();
  llvm::Expected<PyRef> symNot = importObject("torch.sym_not");
  if (!symNot)
    return symNot.takeError();
  PyObject* cond = condition->object.get();
  PyRef symbols = PyRef::steal(PyObject_CallOneArg(freeUnbacked->get(), cond));
  PyRef negated = PyRef::steal(PyObject_CallOneArg(symNot->get(), cond));
  if (!symbols || !negated)
    return pythonError("reading a data-dependent condition");
  PyRef knownHolds = PyRef::steal(PyObject_CallOneArg(knownTrue->get(), cond));
  PyRef knownFails = PyRef::steal(PyObject_CallOneArg(knownTrue->get(), negated.get()));
  if (!knownHolds || !knownFails)
    return pythonError("reading a data-dependent condition");
  if (PyObject_Length(symbols.get()) <= 0 || PyObject_IsTrue(knownHolds.get()) == 1 ||
      PyObject_IsTrue(knownFails.get()) == 1) {
    PyErr_Clear();
    return false;
  }

  auto caught = [&](size_t pc) { return caughtInFrame(f, pc); };
  size_t fallThrough = f.pc + 1;
  size_t target = static_cast<size_t>(ins.jumpTarget);
  std::optional<size_t> fallRaise = alwaysRaises(f, fallThrough, opcodes_, caught);
  std::optional<size_t> targetRaise = alwaysRaises(f, target, opcodes_, caught);
  if (bool(fallRaise) == bool(targetRaise))
    return false;

  // The program goes on only where the raising side is not taken: that is
  // what torch._check states, as if the program had said it. The value
  // outside what it states runs the original code, which raises there as
  // eager does (docs/capture.md, "Branches that only raise").
  bool raisesWhenTrue = fallRaise ? !onTrue : onTrue;
  PyObject* holds = raisesWhenTrue ? negated.get() : cond;
  if (llvm::Error refused = recorder_.irreversible("stating a data-dependent condition"))
    return refused;
  llvm::Expected<PyRef> check = importObject("torch._check");
  if (!check)
    return check.takeError();
  PyRef checked = PyRef::steal(PyObject_CallOneArg(check->get(), holds));
  if (!checked)
    return pythonError("stating a data-dependent condition");
  pop(f);
  f.next = fallRaise ? target : fallThrough;
  return true;
}

} // namespace dync::capture
