//===- BytecodeMachine.cpp - Frames and the dispatch loop -----------------===//
#include "frontend/capture/BytecodeMachine.h"

#include "frontend/bytecode/CodeObject.h"
#include "frontend/bytecode/Codec.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/PythonHelpers.h"

#include "llvm/ADT/ScopeExit.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// Generous: unrolled loops over layers run many instructions, but a loop
/// that never ends must still stop.
constexpr size_t MaxSteps = 50'000'000;
constexpr size_t MaxDepth = 200;

} // namespace

llvm::Expected<const bytecode::DecodedCode*> BytecodeMachine::decoded(PyCodeObject* code) {
  auto it = codes_.find(reinterpret_cast<PyObject*>(code));
  if (it != codes_.end())
    return it->second.second.get();
  llvm::Expected<bytecode::RawCode> raw = bytecode::readRawCode(code);
  if (!raw)
    return raw.takeError();
  llvm::Expected<bytecode::DecodedCode> decodedCode = bytecode::decode(*raw, opcodes_);
  if (!decodedCode)
    return decodedCode.takeError();
  auto stored = std::make_unique<bytecode::DecodedCode>(std::move(*decodedCode));
  const bytecode::DecodedCode* result = stored.get();
  codes_[reinterpret_cast<PyObject*>(code)] = {PyRef::borrow(reinterpret_cast<PyObject*>(code)),
                                               std::move(stored)};
  return result;
}

//===----------------------------------------------------------------------===//
// The dispatch loop.
//===----------------------------------------------------------------------===//

llvm::Expected<ValuePtr> BytecodeMachine::run(Frame& frame) {
  if (frames_.size() >= MaxDepth)
    return captureError("calls nested more than " + llvm::Twine(MaxDepth) +
                        " deep (unbounded recursion?)");
  if (frames_.empty()) {
    // A new capture (or attempt) handles no exception yet.
    raisedOrigins_.clear();
    handledException_ = nullptr;
  }
  // The getter of the attribute being read, run now: its value goes on
  // the reading frame's stack.
  PyObject* unreadReturn = std::exchange(unreadReturnCode_, nullptr);
  if (!frames_.empty() && frame.pc == 0 && !frame.generator && !frame.names && unreadReturn &&
      unreadReturn == reinterpret_cast<PyObject*>(frame.code))
    frame.returnsUnread = true;
  frames_.push_back(&frame);
  size_t executing = frame.pc;
  auto popFrame = llvm::make_scope_exit([&] {
    // The entry's return is where its graph's output node was written.
    if (frames_.size() == 1) {
      size_t after = std::exchange(frame.pc, executing);
      returnLocation_ = nodeLocation();
      frame.pc = after;
    }
    frames_.pop_back();
  });
  const std::vector<bytecode::Instruction>& instructions = frame.decoded->instructions;
  while (!frame.done) {
    if (frame.pc >= instructions.size())
      return locate(captureError("execution ran past the end of the code"));
    executing = frame.pc;
    const bytecode::Instruction& ins = instructions[frame.pc];
    frame.next = frame.pc + 1;
    const OpcodeEntry* entry = dispatch_[ins.opcode];
    if (!entry)
      return locate(captureError("unknown opcode " + llvm::Twine(unsigned(ins.opcode))));
    if (!entry->handler)
      return locate(captureError("unsupported opcode " + llvm::Twine(entry->name) + " (" +
                                 entry->reason + ")"));
    if (++steps_ > MaxSteps)
      return locate(captureError("more than " + llvm::Twine(MaxSteps) +
                                 " instructions executed (a loop that does not end?)"));
    llvm::Error error = (this->*entry->handler)(frame, ins);
    unreadReturnCode_ = nullptr;
    // Reading a popped list whole failed (UnreadLists.cpp).
    if (!error)
      error = takeReadError();
    else
      llvm::consumeError(takeReadError());
    if (error) {
      // An exception the program raised goes to this frame's handler, or
      // on to the caller's; past the entry, capture stops.
      error = unwindToHandler(frame, locate(std::move(error)));
      if (!error)
        continue;
      if (frames_.size() == 1)
        return uncaught(std::move(error));
      return error;
    }
    frame.pc = frame.next;
    // A generator run as its consumer asks stops after its yield; running
    // the frame again goes on from the next instruction.
    if (frame.paused)
      return frame.yielded.back();
  }
  return frame.returnValue;
}

std::vector<CaptureFrame> BytecodeMachine::callStack() const {
  std::vector<CaptureFrame> stack;
  for (auto it = frames_.rbegin(); it != frames_.rend(); ++it) {
    const Frame& frame = **it;
    CaptureFrame entry;
    python::SourceLocation& location = entry.location;
    location.file = frame.filename;
    entry.function = frame.qualname;
    if (frame.pc < frame.decoded->instructions.size()) {
      const bytecode::SourcePosition& position = frame.decoded->instructions[frame.pc].position;
      // Columns only mean something on a known, single line.
      if (position.line > 0) {
        location.line = static_cast<unsigned>(position.line);
        if (position.column >= 0 && position.endLine == position.line) {
          location.column = static_cast<unsigned>(position.column) + 1;
          location.endColumn =
              position.endColumn >= 0 ? static_cast<unsigned>(position.endColumn) + 1 : 0;
        }
      }
    }
    location.lineText = sourceLine(location.file, static_cast<int>(location.line));
    stack.push_back(std::move(entry));
  }
  return stack;
}

llvm::Error BytecodeMachine::locate(llvm::Error error) {
  if (!error)
    return error;
  if (error.isA<RaisedException>())
    return llvm::handleErrors(std::move(error), [&](std::unique_ptr<RaisedException> raised) {
      if (!raised->hasLocation())
        raised->setStack(callStack());
      return llvm::Error(std::move(raised));
    });
  std::string message;
  bool located = false;
  std::unique_ptr<CaptureError> capture;
  llvm::handleAllErrors(
      std::move(error),
      [&](std::unique_ptr<CaptureError> e) {
        located = e->hasLocation();
        capture = std::move(e);
      },
      [&](const llvm::ErrorInfoBase& other) { message = other.message(); });
  if (!capture)
    capture = std::make_unique<CaptureError>(message);
  if (!located) {
    if (std::string note = context_.locatedErrorNote(); !note.empty())
      capture = std::make_unique<CaptureError>(capture->reason() + note);
    capture->setStack(callStack());
  }
  return llvm::Error(std::move(capture));
}

} // namespace dync::capture
