//===- BuiltinContext.h - What builtin handlers see -------------*- C++ -*-===//
//
// The builtins capture implements (Builtins.cpp, BuiltinMethods.cpp, the
// handlers of dicts, lists, torch.Size, control-flow operators, module
// hooks, id(), ContextVar, `__build_class__`, sys.exc_info()) see capture
// through this narrow interface, as the bytecode machine sees it through
// MachineContext and object semantics through SemanticsContext: capture's
// state, Python's operations over values (ObjectSemantics), calls and the
// conversions for the oracle, the assignments capture keeps, and the few
// tables of the interpreter that builtins with state of their own keep
// (id()'s numbers, ContextVar settings). How a call is made, the frames and
// everything else the interpreter holds stay out of reach. The Interpreter
// is the one implementation.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/BuiltinRegistry.h"
#include "frontend/capture/Frame.h"
#include "frontend/capture/ModuleHooks.h"
#include "frontend/capture/ObjectSemantics.h"
#include "frontend/capture/TorchTypes.h"
#include "frontend/capture/Value.h"
#include "frontend/capture/ValueBuilder.h"
#include "frontend/embedding/PyRef.h"
#include "frontend/oracle/TensorOracle.h"
#include "ir/Guard.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace dync::capture {

class BuiltinContext {
public:
  virtual ~BuiltinContext() = default;

  //===--------------------------------------------------------------------===//
  // Capture's state.

  /// Makes real objects values, with their sources and guards.
  virtual ValueBuilder& values() = 0;
  virtual ir::GuardSet& guards() = 0;
  virtual const TorchTypes& types() const = 0;
  virtual oracle::TensorOracle& oracle() = 0;
  /// The builtins capture implements; handlers register here.
  virtual BuiltinRegistry& builtins() = 0;

  //===--------------------------------------------------------------------===//
  // Python's operations over values (ObjectSemantics.h).

  virtual ObjectSemantics& semantics() = 0;
  llvm::Expected<ValuePtr> getAttr(const ValuePtr& base, llvm::StringRef name) {
    return semantics().getAttr(base, name);
  }
  llvm::Expected<ValuePtr> getItem(const ValuePtr& base, const ValuePtr& key) {
    return semantics().getItem(base, key);
  }
  llvm::Expected<bool> truth(const ValuePtr& value) { return semantics().truth(value); }
  llvm::Expected<std::vector<ValuePtr>> unpack(const ValuePtr& value) {
    return semantics().unpack(value);
  }
  llvm::Expected<ValuePtr> iter(const ValuePtr& value) { return semantics().iter(value); }
  llvm::Expected<ValuePtr> next(const ValuePtr& iterator) { return semantics().next(iterator); }
  llvm::Expected<ValuePtr> length(const ValuePtr& value) { return semantics().length(value); }
  llvm::Expected<ValuePtr> binary(llvm::StringRef symbol, const ValuePtr& a, const ValuePtr& b) {
    return semantics().binary(symbol, a, b);
  }
  llvm::Expected<ValuePtr> compare(llvm::StringRef symbol, const ValuePtr& a, const ValuePtr& b) {
    return semantics().compare(symbol, a, b);
  }
  llvm::Expected<ValuePtr> unary(llvm::StringRef operatorName, const ValuePtr& a) {
    return semantics().unary(operatorName, a);
  }
  llvm::Expected<bool> identical(const ValuePtr& a, const ValuePtr& b) {
    return semantics().identical(a, b);
  }
  llvm::Expected<bool> contains(const ValuePtr& container, const ValuePtr& item) {
    return semantics().contains(container, item);
  }
  llvm::Error addToSet(const ValuePtr& set, ValuePtr item) {
    return semantics().addToSet(set, std::move(item));
  }

  //===--------------------------------------------------------------------===//
  // Calls and the objects the oracle computes on.

  /// `callee(*args, **kwargs)`, however capture makes that call.
  virtual llvm::Expected<ValuePtr> call(const ValuePtr& callee, std::vector<ValuePtr> args,
                                        KeywordArgs kwargs = {}) = 0;
  /// Runs \p callable on fake values through the oracle.
  virtual llvm::Expected<ValuePtr> callOracle(PyObject* callable, const std::vector<ValuePtr>& args,
                                              const KeywordArgs& kwargs) = 0;
  /// A value the oracle returned: fake tensors, SymInts, constants, and
  /// tuples and lists of them.
  /// \p value, an int computed from tensor data that capture needs as a
  /// number (a trip count), specialized to the example's value with a
  /// fall-back check when the graph runs (DataBranches.cpp): the constant;
  /// null when there is nothing to specialize; an error with \p refusal
  /// when it cannot be.
  virtual llvm::Expected<ValuePtr> specializeIntOnExample(const ValuePtr& value,
                                                          const std::string& refusal) = 0;
  virtual llvm::Expected<ValuePtr> wrapFake(PyObject* object) = 0;
  /// The Python object a value stands for when passed to torch: a fake
  /// tensor, a constant, a new tuple or list of those.
  virtual llvm::Expected<python::PyRef> toPython(const ValuePtr& value) = 0;
  /// A call's arguments as the tuple and dict (null when there are no
  /// keywords) CPython's call protocol takes.
  struct PythonCallArguments {
    python::PyRef args;
    python::PyRef kwargs;
  };
  virtual llvm::Expected<PythonCallArguments> toPythonArguments(const std::vector<ValuePtr>& args,
                                                                const KeywordArgs& kwargs) = 0;
  /// The Python type of a value (new reference).
  virtual llvm::Expected<python::PyRef> pythonType(const ValuePtr& value) = 0;
  /// Tells the oracle which line of the program its next calls come from.
  virtual void reportLocation() = 0;
  /// Stops capture if the program has pinned or narrowed a dimension the
  /// user declared dynamic.
  virtual llvm::Error checkDynamic() = 0;

  /// Calls special method \p name of \p self, an Instance, when its class
  /// defines it in Python; null when it does not.
  virtual llvm::Expected<ValuePtr> callSpecial(const ValuePtr& self, llvm::StringRef name,
                                               std::vector<ValuePtr> args) = 0;

  //===--------------------------------------------------------------------===//
  // Assignments capture keeps (Instances.cpp, RealAttributes.cpp,
  // SideEffects.cpp).

  /// `instance.name = value` on an object made while capturing; \p direct
  /// skips the class's __setattr__, as `object.__setattr__` does.
  virtual llvm::Error setInstanceAttr(const ValuePtr& instance, llvm::StringRef name,
                                      ValuePtr value, bool direct = false) = 0;
  /// `base.name = value` on an object that exists outside capture.
  virtual llvm::Error setRealAttr(const ValuePtr& base, llvm::StringRef name, ValuePtr value) = 0;
  /// Called before \p container (a List or Dict value) is changed in place.
  virtual llvm::Error noteContainerMutation(const ValuePtr& container, const llvm::Twine& what) = 0;
  /// `callee(*args)` for code that must change nothing that existed before
  /// it (a branch of torch.cond, which runs only when the graph picks it):
  /// an assignment to an attribute or global, a change to a list, dict,
  /// object or cell made earlier, is an error naming \p what and giving
  /// \p why.
  virtual llvm::Expected<ValuePtr> callWithoutSideEffects(const ValuePtr& callee,
                                                          std::vector<ValuePtr> args,
                                                          const llvm::Twine& what,
                                                          const llvm::Twine& why) = 0;

  //===--------------------------------------------------------------------===//
  // Where the program is.

  /// The frame executing, or null outside any (for zero-argument super()).
  virtual Frame* currentFrame() const = 0;
  /// The exception being handled (what sys.exc_info() gives), or null.
  virtual const ValuePtr& handledException() const = 0;
  /// The program's file and line, for messages about a side effect.
  virtual std::string programLine() const = 0;

  //===--------------------------------------------------------------------===//
  // State of builtins that keep some.

  /// `__build_class__(body, name, *bases, **keywords)`, what a class
  /// statement calls (ClassBodies.cpp).
  virtual llvm::Expected<ValuePtr> buildClass(std::vector<ValuePtr> args, KeywordArgs kwargs) = 0;
  /// The numbers id() gave while capturing, by identity, with the value
  /// each was given for, kept alive so that no other takes its place
  /// (IdentityBuiltins.cpp).
  virtual std::map<const void*, std::pair<ValuePtr, python::PyRef>>& identities() = 0;
  /// What `ContextVar.set` gave a variable while capturing, and the token
  /// that undoes it (ContextVars.cpp). The real variables are never set: a
  /// set and its reset happen in capture's own state, so the run changes
  /// nothing outside.
  struct ContextVarSetting {
    python::PyRef variable;
    ValuePtr value;
  };
  struct ContextVarToken {
    python::PyRef variable;
    /// The setting before the set; none when the variable had none here.
    std::optional<ContextVarSetting> previous;
  };
  virtual std::map<PyObject*, ContextVarSetting>& contextVarSettings() = 0;
  virtual std::map<PyObject*, std::pair<python::PyRef, ContextVarToken>>& contextVarTokens() = 0;
  /// The module hooks the program registered while capturing, in the order
  /// it registered them (ModuleHooks.h).
  virtual std::vector<RegisteredHook>& registeredHooks() = 0;
};

/// Registers the builtin handler table (Builtins.cpp).
llvm::Error registerBuiltinHandlers(BuiltinContext& interp);
/// Registers `object`'s and `tuple`'s methods that classes made while
/// capturing call (Instances.cpp).
llvm::Error registerInstanceHandlers(BuiltinContext& interp);
/// Registers `__build_class__` (ClassBodies.cpp).
llvm::Error registerClassHandlers(BuiltinContext& interp);
/// Registers ContextVar's get, set and reset (ContextVars.cpp).
llvm::Error registerContextVarHandlers(BuiltinContext& interp);
/// Registers id() and vars() (IdentityBuiltins.cpp).
llvm::Error registerIdentityHandlers(BuiltinContext& interp);
/// Registers sys.exc_info() (OpcodesExceptions.cpp).
llvm::Error registerExceptionInfoHandlers(BuiltinContext& interp);
/// Registers Tensor.__deepcopy__, which copy.deepcopy calls
/// (TensorDeepcopy.cpp).
llvm::Error registerTensorCopyHandlers(BuiltinContext& interp);
/// Registers \p handler for \p object in \p interp's builtins.
inline void addBuiltin(BuiltinContext& interp, PyObject* object, BuiltinHandler handler) {
  interp.builtins().add(object, handler);
}

} // namespace dync::capture
