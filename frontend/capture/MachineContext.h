//===- MachineContext.h - What the bytecode machine sees --------*- C++ -*-===//
//
// The bytecode machine (BytecodeMachine.h: frames, the dispatch loop, the
// opcode handlers) sees the rest of capture through this narrow interface,
// as object semantics sees it through SemanticsContext: capture's state,
// Python's operations over values (ObjectSemantics), and the few operations
// of the interpreter an opcode needs (calls, conversions for the oracle,
// assignments that capture keeps as side effects). How a call is made
// (inlined, a builtin, the oracle, a module's forward) stays out of the
// machine; so does everything the interpreter keeps about side effects,
// classes made while capturing and context variables. The Interpreter is
// the one implementation.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/ObjectSemantics.h"
#include "frontend/capture/Recorder.h"
#include "frontend/capture/TorchTypes.h"
#include "frontend/capture/Value.h"
#include "frontend/capture/ValueBuilder.h"
#include "frontend/embedding/PyRef.h"
#include "frontend/oracle/TensorOracle.h"
#include "ir/Guard.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace dync::capture {

class MachineContext {
public:
  virtual ~MachineContext() = default;

  //===--------------------------------------------------------------------===//
  // Capture's state.

  /// Makes real objects values, with their sources and guards.
  virtual ValueBuilder& values() = 0;
  virtual ir::GuardSet& guards() = 0;
  virtual const TorchTypes& types() const = 0;
  /// What a speculated path must be able to take back.
  virtual Recorder& recorder() = 0;
  virtual oracle::TensorOracle& oracle() = 0;
  /// Attribute and item reads, truth, iteration, operators over values.
  virtual ObjectSemantics& semantics() = 0;

  //===--------------------------------------------------------------------===//
  // Calls and the objects the oracle computes on.

  /// `callee(*args, **kwargs)`, however capture makes that call.
  virtual llvm::Expected<ValuePtr> call(const ValuePtr& callee, std::vector<ValuePtr> args,
                                        KeywordArgs kwargs = {}) = 0;
  /// Runs \p callable on fake values through the oracle.
  virtual llvm::Expected<ValuePtr> callOracle(PyObject* callable, const std::vector<ValuePtr>& args,
                                              const KeywordArgs& kwargs) = 0;
  /// The Python object a value stands for when passed to torch.
  virtual llvm::Expected<python::PyRef> toPython(const ValuePtr& value) = 0;
  /// The Python type of a value (new reference).
  virtual llvm::Expected<python::PyRef> pythonType(const ValuePtr& value) = 0;
  /// The `operator` module's function \p name (borrowed).
  virtual PyObject* operatorFunction(llvm::StringRef name) = 0;
  /// Whether \p object is a grad-mode context manager (or class of one).
  virtual bool isGradModeManager(PyObject* object) const = 0;
  /// \p value, an int computed from tensor data, specialized to the
  /// example's value with a fall-back check (DataBranches.cpp): the
  /// constant; null when there is nothing to specialize; an error with
  /// \p refusal when it cannot be.
  virtual llvm::Expected<ValuePtr> specializeIntOnExample(const ValuePtr& value,
                                                          const std::string& refusal) = 0;

  //===--------------------------------------------------------------------===//
  // Assignments capture keeps (Instances.cpp, RealAttributes.cpp,
  // RealObjects.cpp, SideEffects.cpp).

  /// `instance.name = value` on an object made while capturing; \p direct
  /// skips the class's __setattr__.
  virtual llvm::Error setInstanceAttr(const ValuePtr& instance, llvm::StringRef name,
                                      ValuePtr value, bool direct = false) = 0;
  /// `base.name = value` on an object that exists outside capture.
  virtual llvm::Error setRealAttr(const ValuePtr& base, llvm::StringRef name, ValuePtr value) = 0;
  /// After STORE_DEREF or DELETE_DEREF: keeps the real cell made for
  /// \p cell, if any, holding what it holds.
  virtual llvm::Error syncRealCell(const ValuePtr& cell) = 0;
  /// Before STORE_DEREF or DELETE_DEREF of free variable \p name: fails
  /// when \p cell is a real function's closure cell (SideEffects.cpp).
  virtual llvm::Error checkCellAssignment(const ValuePtr& cell, llvm::StringRef name) = 0;
  /// Called before \p container (a List or Dict value) is changed in place.
  virtual llvm::Error noteContainerMutation(const ValuePtr& container, const llvm::Twine& what) = 0;
  /// `global name = value` in a frame over \p globals.
  virtual llvm::Error storeGlobal(PyObject* globals, bool entryGlobals, PyObject* name,
                                  ValuePtr value) = 0;
  /// What the program assigned to global \p name of \p globals, or null.
  virtual ValuePtr storedGlobal(PyObject* globals, PyObject* name) const = 0;
  /// How many calls into the world (print, logging) are recorded to be made
  /// after the graph (WorldCalls.cpp).
  virtual size_t worldCallCount() const = 0;

  //===--------------------------------------------------------------------===//
  // Errors.

  /// What an error located now adds about how capture answered the
  /// program's questions (torch.compiler.is_compiling()); empty if nothing.
  virtual std::string locatedErrorNote() const = 0;
};

} // namespace dync::capture
