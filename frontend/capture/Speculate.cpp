//===- Speculate.cpp - Running a path that may be taken back --------------===//
//
// The interpreter's and the bytecode machine's state as the recorder
// (Recorder.h) saves and restores it, and the speculative run of one side
// of a data-dependent branch with the real opcode handlers.
//
// A speculated run may do anything capture can take back: install guards,
// read globals and attributes, store locals, mutate lists, dicts and
// instances, inline the program's functions, raise and handle exceptions.
// It may not do what nothing takes back: call the tensor oracle (torch's
// ShapeEnv keeps what a call decided), make graph inputs, call the
// program's code for real or switch torch's grad mode; those refuse while a
// checkpoint is open (Recorder::irreversible) and the run fails there.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/Interpreter.h"

#include <tuple>

namespace dync::capture {

using bytecode::Instruction;
using python::PyRef;

namespace {

/// Building an exception takes a few instructions; a longer side is doing
/// something else.
constexpr size_t MaxSpeculatedInstructions = 64;

} // namespace

void Interpreter::trackState() {
  recorder_.trackGuards(guards_);
  recorder_.trackGraph(oracle_.builder().graph());
  // Every value the interpreter holds, and through them every value the
  // program can reach: what a speculated path may mutate.
  recorder_.trackValues([this](std::vector<ValuePtr>& roots) { addValueRoots(roots); });
  // The interpreter's own tables; the machine saves its frames
  // (BytecodeMachine::trackState).
  recorder_.track([this]() -> Recorder::Restore {
    auto tables = [this] {
      return std::tie(contextVarSettings_, contextVarTokens_, realAttrSettings_, globalStores_,
                      mutatedContainers_, registeredHooks_, worldCalls_, realCells_, localClasses_,
                      functionsRun_, watches_, autoFindings_, freshModuleAttrs_);
    };
    using Tables =
        decltype(std::apply([](auto&... table) { return std::make_tuple(table...); }, tables()));
    auto saved = std::make_shared<Tables>(tables());
    Recorder::Restore restoreValues = values_.save();
    return [tables, saved, restoreValues] {
      tables() = *saved;
      restoreValues();
    };
  });
}

void Interpreter::addValueRoots(std::vector<ValuePtr>& roots) const {
  machine_.addRoots(roots);
  for (const auto& [object, setting] : contextVarSettings_)
    roots.push_back(setting.value);
  for (const auto& [object, token] : contextVarTokens_)
    if (token.second.previous)
      roots.push_back(token.second.previous->value);
  for (const RealAttrSetting& setting : realAttrSettings_)
    roots.push_back(setting.value);
  for (const FreshModuleAttr& attr : freshModuleAttrs_)
    roots.push_back(attr.value);
  // Side effects on the caller's objects (SideEffects.cpp).
  for (const GlobalStore& store : globalStores_)
    roots.push_back(store.value);
  for (const MutatedContainer& mutated : mutatedContainers_)
    roots.push_back(mutated.value);
  for (const RegisteredHook& registered : registeredHooks_) {
    roots.push_back(registered.hook);
    roots.push_back(registered.handle);
  }
  for (const WorldCall& call : worldCalls_) {
    roots.push_back(call.args);
    roots.push_back(call.kwargs);
  }
  for (const auto& [value, cell] : realCells_)
    roots.push_back(cell.first);
  values_.addRoots(roots);
}

void BytecodeMachine::addRoots(std::vector<ValuePtr>& roots) const {
  for (const Frame* frame : frames_) {
    roots.insert(roots.end(), frame->locals.begin(), frame->locals.end());
    roots.insert(roots.end(), frame->stack.begin(), frame->stack.end());
    roots.insert(roots.end(), frame->yielded.begin(), frame->yielded.end());
    roots.push_back(frame->names);
    roots.push_back(frame->returnValue);
  }
  roots.push_back(handledException_);
}

void BytecodeMachine::trackState() {
  // The frames themselves (where they are, their stacks and locals as
  // vectors) and the machine's tables. The code cache is left out: what it
  // holds does not depend on the path.
  recorder_.track([this]() -> Recorder::Restore {
    auto tables = [this] {
      return std::tie(frames_, handledException_, raisedOrigins_, steps_, returnLocation_);
    };
    using Tables =
        decltype(std::apply([](auto&... table) { return std::make_tuple(table...); }, tables()));
    auto saved = std::make_shared<Tables>(tables());
    auto frameStates = std::make_shared<std::vector<std::pair<Frame*, Frame>>>();
    for (Frame* frame : frames_)
      frameStates->emplace_back(frame, *frame);
    return [tables, saved, frameStates] {
      tables() = *saved;
      for (const auto& [frame, state] : *frameStates)
        *frame = state;
    };
  });
}

llvm::Expected<PyRef> BytecodeMachine::speculateRaise(Frame& f, size_t start,
                                                      std::vector<ir::Guard>& guardsRead) {
  const std::vector<Instruction>& instructions = f.decoded->instructions;
  oracle::TensorOracle& oracle = context_.oracle();
  size_t factsBefore = oracle.shapeFactCount();
  size_t refusalsBefore = recorder_.refusals();
  size_t worldCallsBefore = context_.worldCallCount();
  // GuardSet::add only appends.
  size_t guardsBefore = guards_.guards().size();
  Recorder::Checkpoint checkpoint = recorder_.checkpoint();
  // The condition is popped on both sides of a POP_JUMP.
  pop(f);
  PyRef raised;
  size_t pc = start;
  for (size_t step = 0; step < MaxSpeculatedInstructions; ++step) {
    // An exception caught in this frame does not leave it (one a grad-mode
    // `with` block re-raises does); a return is not a raise.
    if (f.done || pc >= instructions.size() || caughtInFrame(f, pc))
      break;
    const Instruction& ins = instructions[pc];
    // Straight-line code only: a branch inside the side decides something
    // (a symbolic size, a tensor's values) before the run could know
    // whether the side raises.
    if (ins.jumpTarget >= 0)
      break;
    const OpcodeEntry* entry = dispatch_[ins.opcode];
    if (!entry || !entry->handler)
      break;
    f.pc = pc;
    f.next = pc + 1;
    llvm::Error error = (this->*entry->handler)(f, ins);
    if (!error)
      error = takeReadError();
    else
      llvm::consumeError(takeReadError());
    if (error) {
      llvm::handleAllErrors(
          std::move(error),
          [&](const RaisedException& exception) {
            if (PyExceptionInstance_Check(exception.object()))
              raised = PyRef::borrow(exception.object());
          },
          [](const llvm::ErrorInfoBase&) {});
      break;
    }
    pc = f.next;
  }
  // A side that prints or logs before raising is not only a raise: the
  // call must be made, so the branch is left to the original code
  // (RaiseOnlyBranch.cpp falls back when the code always raises there).
  if (context_.worldCallCount() != worldCallsBefore)
    raised = PyRef();
  if (raised)
    guardsRead.assign(guards_.guards().begin() + static_cast<std::ptrdiff_t>(guardsBefore),
                      guards_.guards().end());
  recorder_.rollback(checkpoint);
  // A refused effect makes the run fail, whatever error the handlers made
  // of the refusal.
  if (recorder_.refusals() != refusalsBefore)
    return PyRef();
  size_t factsAfter = oracle.shapeFactCount();
  if (factsBefore == size_t(-1) || factsAfter != factsBefore)
    return captureError("data-dependent branch: the condition depends on a tensor's values, and "
                        "trying whether one side only raises decided a symbolic size, which "
                        "capture cannot take back: keep the decision in tensors "
                        "(torch.where(cond, a, b)) or branch with torch.cond(cond, true_fn, "
                        "false_fn, operands)");
  return raised;
}

} // namespace dync::capture
