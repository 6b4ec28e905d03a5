//===- SemanticsContext.h - What object semantics sees ----------*- C++ -*-===//
//
// Python's operations over values (ObjectSemantics.h: attribute and item
// reads, truth, iteration, operators, identity, `in`) see capture through
// this narrow interface rather than through the whole interpreter, as a
// pass sees its context: capture's state (the value builder, the guards,
// torch's types, the recorder, the oracle), the conversions of values to
// and from the objects the oracle computes on, and the few operations of
// the interpreter they call back into (calls, instances' attributes and
// special methods, module container slices, attributes assigned while
// capturing). The Interpreter is the one implementation; the frames, the
// dispatch loop and everything else it holds stay out of reach.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/BuiltinRegistry.h"
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

#include <vector>

namespace dync::capture {

class SemanticsContext {
public:
  virtual ~SemanticsContext() = default;

  //===--------------------------------------------------------------------===//
  // Capture's state.

  /// Makes real objects values, with their sources and guards.
  virtual ValueBuilder& values() = 0;
  virtual ir::GuardSet& guards() = 0;
  virtual const TorchTypes& types() const = 0;
  /// The builtins capture implements.
  virtual const BuiltinRegistry& builtins() const = 0;
  /// What a speculated path must be able to take back.
  virtual Recorder& recorder() = 0;
  virtual oracle::TensorOracle& oracle() = 0;

  //===--------------------------------------------------------------------===//
  // Values to and from the objects the oracle computes on.

  /// A value the oracle returned: fake tensors, SymInts, constants, and
  /// tuples and lists of them.
  virtual llvm::Expected<ValuePtr> wrapFake(PyObject* object) = 0;
  /// The Python object a value stands for when passed to torch.
  virtual llvm::Expected<python::PyRef> toPython(const ValuePtr& value) = 0;
  /// Runs \p callable on fake values through the oracle.
  virtual llvm::Expected<ValuePtr> callOracle(PyObject* callable, const std::vector<ValuePtr>& args,
                                              const KeywordArgs& kwargs) = 0;
  /// The Python type of a value (new reference).
  virtual llvm::Expected<python::PyRef> pythonType(const ValuePtr& value) = 0;
  /// The `operator` module's function \p name (borrowed).
  virtual PyObject* operatorFunction(llvm::StringRef name) = 0;
  /// Tells the oracle which line of the program its next calls come from.
  virtual void reportLocation() = 0;
  /// Stops capture if the program has pinned or narrowed a dimension the
  /// user declared dynamic.
  virtual llvm::Error checkDynamic() = 0;
  /// Decides \p condition, a tensor or a number computed from tensor data,
  /// as the example inputs decide it, with a run-time check that runs the
  /// original code when a call decides otherwise (DataBranches.cpp); or
  /// fails with \p refusal, what capture says without that.
  virtual llvm::Expected<bool> decideOnExample(const ValuePtr& condition,
                                               const std::string& refusal) = 0;

  //===--------------------------------------------------------------------===//
  // The interpreter's operations object semantics calls back into.

  virtual llvm::Expected<ValuePtr> call(const ValuePtr& callee, std::vector<ValuePtr> args,
                                        KeywordArgs kwargs = {}) = 0;
  /// Calls special method \p name of \p self, an Instance, when its class
  /// defines it in Python; null when it does not.
  virtual llvm::Expected<ValuePtr> callSpecial(const ValuePtr& self, llvm::StringRef name,
                                               std::vector<ValuePtr> args) = 0;
  /// An attribute of an object made while capturing (Instances.cpp).
  virtual llvm::Expected<ValuePtr> instanceAttr(const ValuePtr& instance, llvm::StringRef name) = 0;
  /// A method of a real object that capture handles as a builtin, bound to
  /// \p base; null when \p bound is not one.
  virtual ValuePtr boundBuiltinMethod(const ValuePtr& base, PyObject* bound) const = 0;
  /// `container[slice]` for an nn.Module container, and an item of one
  /// sliced so (ModuleContainers.cpp).
  virtual llvm::Expected<ValuePtr> sliceModuleContainer(const ValuePtr& base, PyObject* slice) = 0;
  virtual llvm::Expected<ValuePtr> itemOfSlicedContainer(const ValuePtr& base,
                                                         const ValuePtr& key) = 0;
  /// What the program last assigned to attribute \p name of the real
  /// \p object while capturing (a Python module's: a global its functions
  /// stored), or null (RealAttributes.cpp).
  virtual ValuePtr assignedRealAttr(PyObject* object, llvm::StringRef name) const = 0;
  /// Called before \p container (a List or Dict value) is changed in place
  /// (SideEffects.cpp).
  virtual llvm::Error noteContainerMutation(const ValuePtr& container, const llvm::Twine& what) = 0;
  /// Whether the program registered a module hook on the real module
  /// \p module while capturing and has not removed it (ModuleHooks.h).
  virtual bool hasInstalledHooks(PyObject* module) const = 0;
};

} // namespace dync::capture
