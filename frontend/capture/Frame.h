//===- Frame.h - One symbolic activation of a Python function -------------===//
#pragma once

#include "frontend/bytecode/Instruction.h"
#include "frontend/capture/Value.h"

#include <Python.h>

#include <string>
#include <vector>

namespace dync::capture {

/// The state of one function being interpreted: its fast locals (locals,
/// cells and free variables in 3.11's single array), its value stack and
/// where it is. Inlined calls get frames of their own.
struct Frame {
  /// The code object (borrowed; the function value keeps it alive).
  PyCodeObject* code = nullptr;
  const bytecode::DecodedCode* decoded = nullptr;
  /// Fast locals by index: co_localsplusnames.
  std::vector<ValuePtr> locals;
  std::vector<ValuePtr> stack;
  /// The function's globals (borrowed from the function value).
  PyObject* globals = nullptr;
  /// Reads of these globals get G[...] sources: they are the entry module's.
  bool entryGlobals = false;
  std::string qualname;
  std::string filename;
  /// Names set by KW_NAMES for the next CALL.
  python::PyRef kwNames;

  /// Index of the instruction executing, and of the one to run next.
  size_t pc = 0;
  size_t next = 0;
  bool done = false;
  ValuePtr returnValue;
  /// Whether the value returned goes on the caller's stack as it is (a
  /// property getter's, BytecodeMachine::run), so a dict with entries
  /// unread it returns stays so (UnreadDicts.cpp).
  bool returnsUnread = false;

  /// Generator bodies run to completion when called; what they yield is
  /// collected here.
  bool generator = false;
  std::vector<ValuePtr> yielded;
  /// A generator that runs as its consumer asks (a @contextlib.contextmanager
  /// context, GeneratorContexts.cpp) stops at each yield instead: `paused`
  /// is then set, and running the frame again resumes it with None sent in.
  bool pauseAtYield = false;
  bool paused = false;

  /// A class body's namespace, a Dict value that LOAD_NAME, STORE_NAME and
  /// DELETE_NAME read and write (ClassBodies.cpp); null in function bodies.
  ValuePtr names;

  const bytecode::Instruction& instruction() const { return decoded->instructions[pc]; }
};

} // namespace dync::capture
