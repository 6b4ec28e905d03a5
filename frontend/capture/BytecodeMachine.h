//===- BytecodeMachine.h - Frames, dispatch and the opcode handlers -*- C++ -*-===//
//
// The part of capture that executes CPython 3.11 bytecode, as ceval.c is
// the part of CPython apart from the object protocol: the frames of the
// functions running, the dispatch loop, one handler per opcode, the
// exception table's unwinding, the call stack and the locations errors and
// nodes are given. Everything an opcode means beyond moving values between
// the stack, the locals and the frame (attribute reads, operators, calls,
// assignments capture keeps) it asks of its MachineContext.
//
// The opcode table (OpcodeDispatch.cpp) is total: every opcode the
// interpreter defines maps to a handler here or to a named reason. Handler
// bodies by concern: OpcodesStack.cpp, OpcodesControl.cpp,
// OpcodesExceptions.cpp, OpcodesClassBodies.cpp; branches whose one side
// only raises in RaiseOnlyBranch.cpp and Speculate.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/bytecode/Instruction.h"
#include "frontend/bytecode/OpcodeTable.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Frame.h"
#include "frontend/capture/MachineContext.h"
#include "frontend/capture/Value.h"
#include "ir/Graph.h"
#include "ir/Guard.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dync::capture {

class BytecodeMachine;

/// Whether code running with \p globals is a module of the torch package
/// (Interpreter.cpp).
bool insideTorchPackage(PyObject* globals);

/// How one opcode is executed, or why it is not.
using OpcodeHandler = llvm::Error (BytecodeMachine::*)(Frame&, const bytecode::Instruction&);
struct OpcodeEntry {
  const char* name;
  OpcodeHandler handler; ///< null when unsupported
  const char* reason;    ///< why it is unsupported
};
/// The table, one row per opcode name (OpcodeDispatch.cpp).
llvm::ArrayRef<OpcodeEntry> opcodeEntries();

class BytecodeMachine {
public:
  BytecodeMachine(MachineContext& context, const bytecode::OpcodeTable& opcodes)
      : context_(context), opcodes_(opcodes), values_(context.values()), guards_(context.guards()),
        types_(context.types()), recorder_(context.recorder()), semantics_(context.semantics()) {}

  /// Binds the opcode table to the running interpreter's opcodes, failing
  /// if an opcode has no row (OpcodeDispatch.cpp).
  llvm::Error bindOpcodes();
  const bytecode::OpcodeTable& opcodes() const { return opcodes_; }

  /// The decoded instructions of \p code, decoded once.
  llvm::Expected<const bytecode::DecodedCode*> decoded(PyCodeObject* code);
  /// Runs \p frame to its return, in a frame above the ones running; what
  /// it returned. An exception nothing in the program catches leaves the
  /// entry as its CaptureError.
  llvm::Expected<ValuePtr> run(Frame& frame);

  //===--------------------------------------------------------------------===//
  // Where the program is.

  /// The frames running, outermost (the entry) first.
  const std::vector<Frame*>& frames() const { return frames_; }
  /// The frame executing, or null outside any (for zero-argument super()).
  Frame* currentFrame() const { return frames_.empty() ? nullptr : frames_.back(); }
  /// The Python call stack capture is in, innermost first, for errors.
  std::vector<struct CaptureFrame> callStack() const;
  /// The location of a node made now (NodeLocation.cpp): the line each
  /// frame is at, innermost first; after the entry returned, its return.
  ir::Location nodeLocation() const;
  /// The exception being handled (what sys.exc_info() gives), or null.
  const ValuePtr& handledException() const { return handledException_; }

  //===--------------------------------------------------------------------===//
  // Checkpoints (Speculate.cpp).

  /// Registers with the recorder what a checkpoint saves of the machine:
  /// the frames (where they are, their stacks and locals) and its tables.
  void trackState();
  /// Adds every value the frames hold to \p roots: what a speculated path
  /// may mutate.
  void addRoots(std::vector<ValuePtr>& roots) const;

  //===--------------------------------------------------------------------===//
  // Opcode handlers (bodies in Opcodes*.cpp).
#define DYNC_OPCODE(NAME) llvm::Error op_##NAME(Frame& f, const bytecode::Instruction& ins);
#include "frontend/capture/Opcodes.def"

  // Shared pieces of opcode handlers.
  /// The top of the stack, popped; a list whose items were left unread
  /// that it is or holds is read whole first (UnreadLists.cpp), since what
  /// takes it may read it. popUnread leaves them unread, for what only
  /// keeps the value (a local, a cell) or reads its identity.
  ValuePtr pop(Frame& f);
  std::vector<ValuePtr> popN(Frame& f, size_t n);
  ValuePtr popUnread(Frame& f);
  /// The first error reading a popped value whole gave; the instruction
  /// that popped it fails with it.
  std::optional<llvm::Error> readError_;
  /// The code of the property getter the attribute read running calls,
  /// whose frame returns unread (Frame::returnsUnread); cleared by the
  /// next frame run and after each instruction.
  PyObject* unreadReturnCode_ = nullptr;
  void readWhole(const ValuePtr& value);
  llvm::Error takeReadError();
  /// A global (or builtin) read in frame \p f.
  llvm::Expected<ValuePtr> loadGlobal(Frame& f, PyObject* name);

private:
  llvm::Error locate(llvm::Error error);

  /// BINARY_OP and COMPARE_OP: pops two operands and applies the operator
  /// whose spelling the argument indexes in \p spellings.
  using OperandsApplier = llvm::Expected<ValuePtr> (ObjectSemantics::*)(llvm::StringRef,
                                                                        const ValuePtr&,
                                                                        const ValuePtr&);
  llvm::Error applyTwoOperands(Frame& f, const bytecode::Instruction& ins, llvm::StringRef opname,
                               llvm::ArrayRef<std::string> spellings, OperandsApplier apply);
  llvm::Error unaryOperator(Frame& f, llvm::StringRef name);
  /// FORMAT_VALUE of a tensor: the int a 0-dim integer tensor formats as,
  /// specialized to the example's value; null for any other tensor.
  llvm::Expected<ValuePtr> formattedTensorInt(const ValuePtr& tensor);
  llvm::Error callWithStack(Frame& f, size_t argc, KeywordArgs kwargs);
  /// The items DICT_UPDATE and DICT_MERGE (`{**m}`, `f(**m)`) read from
  /// \p mapping, as a Dict value, read as CPython's dict merge reads them.
  llvm::Expected<ValuePtr> mappingItems(const ValuePtr& mapping);
  llvm::Error jumpIf(Frame& f, const bytecode::Instruction& ins, bool popped, bool onTrue);
  llvm::Error jumpIfNone(Frame& f, const bytecode::Instruction& ins, bool onNone);
  /// BEFORE_WITH on a context manager written in Python: enters it and
  /// pushes its __exit__ and what __enter__ gave; false when it is not one.
  llvm::Expected<bool> enterPythonContext(Frame& f, const ValuePtr& manager);

  //===--------------------------------------------------------------------===//
  // Data-dependent branches whose one side only raises (RaiseOnlyBranch.cpp).

  /// At a POP_JUMP_* on a tensor: when exactly one side does nothing but
  /// build an exception and raise it, records a run-time check raising it
  /// and continues along the other side (true). False when the branch is
  /// not of that form: the caller reports the data-dependent branch.
  llvm::Expected<bool> raiseOnlyBranch(Frame& f, const bytecode::Instruction& ins, bool onTrue);
  /// The same at a POP_JUMP_* on a symbolic bool torch cannot decide (a
  /// condition on a value computed from tensor data): states with
  /// torch._check that the raising side is not taken and continues along
  /// the other (true); false when the branch is not of that form.
  llvm::Expected<bool> raiseOnlySymbolicBranch(Frame& f, const bytecode::Instruction& ins,
                                               bool onTrue);
  /// The exception the code from instruction \p start of \p f raises, when
  /// it only builds one and raises it; null otherwise. Runs the opcode
  /// handlers on a checkpoint it rolls back, so it changes nothing; the
  /// guards the run installed (what the exception's text was read from)
  /// are left in \p guardsRead (Speculate.cpp).
  llvm::Expected<python::PyRef> speculateRaise(Frame& f, size_t start,
                                               std::vector<ir::Guard>& guardsRead);
  /// Whether an exception raised at instruction \p index of \p frame is
  /// caught by a handler of that frame. The cleanup of a `with` block on a
  /// grad-mode manager does not catch: its __exit__ restores the mode and
  /// re-raises, so the exception leaves the block as if it were not there.
  bool caughtInFrame(const Frame& frame, size_t index) const;
  /// Whether \p exit, the __exit__ a `with` block keeps on the stack, is a
  /// grad-mode manager's, which runs for real and never swallows.
  bool isGradModeExit(const ValuePtr& exit) const;

  //===--------------------------------------------------------------------===//
  // Exceptions raised in the program (OpcodesExceptions.cpp).

  /// When \p error is a RaisedException and the exception table of \p f
  /// has a handler for the instruction executing, unwinds the value stack
  /// to the handler's depth, pushes lasti if it asks, pushes the exception
  /// and moves \p f to the handler (success); else returns \p error.
  llvm::Error unwindToHandler(Frame& f, llvm::Error error);
  /// A RaisedException of exception value \p exception (an Object holding
  /// a real exception instance), with what capture says when nothing
  /// catches it: the words it was first raised with, when it was.
  llvm::Error reraise(const ValuePtr& exception);
  /// \p error as it leaves capture: a RaisedException nothing caught
  /// becomes its CaptureError; the state of handling is reset.
  llvm::Error uncaught(llvm::Error error);
  /// What an exception first raised said when uncaught, and where, by the
  /// exception object; kept while the exception is handled, for a re-raise.
  struct RaisedOrigin {
    python::PyRef object;
    std::string reason;
    std::vector<struct CaptureFrame> stack;
  };

  MachineContext& context_;
  const bytecode::OpcodeTable& opcodes_;
  // The context's state the handlers use throughout.
  ValueBuilder& values_;
  ir::GuardSet& guards_;
  const TorchTypes& types_;
  Recorder& recorder_;
  ObjectSemantics& semantics_;

  std::array<const OpcodeEntry*, 256> dispatch_{};
  std::map<PyObject*, std::pair<python::PyRef, std::unique_ptr<bytecode::DecodedCode>>> codes_;
  std::vector<Frame*> frames_;
  /// Where the entry function returned, for the graph's output node.
  ir::Location returnLocation_;
  size_t steps_ = 0;
  /// See RaisedOrigin.
  std::map<PyObject*, RaisedOrigin> raisedOrigins_;
  /// The exception being handled (sys.exc_info()'s), null outside any
  /// handler: PUSH_EXC_INFO saves it, POP_EXCEPT restores it.
  ValuePtr handledException_;
};

} // namespace dync::capture
