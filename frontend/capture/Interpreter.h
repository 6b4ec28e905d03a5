//===- Interpreter.h - Symbolic execution of CPython 3.11 bytecode --------===//
//
// Runs a function's bytecode over symbolic values (Value.h): Python
// semantics on constants come from CPython itself, tensor semantics from the
// tensor oracle, and user functions, methods and nn.Module forwards are
// inlined into frames of their own. Anything it cannot model stops capture
// with a CaptureError naming the reason and the place.
//
// The interpreter holds capture's parts and joins them: the bytecode
// machine (BytecodeMachine.h: frames, dispatch, opcode handlers), object
// semantics (ObjectSemantics.h), the value builder (ValueBuilder.h) and the
// recorder (Recorder.h). It is the one MachineContext and the one
// SemanticsContext: the machine and object semantics see it through those
// narrow interfaces. What it keeps itself is how calls are made (Calls.cpp
// and the builtins), objects and classes made while capturing, and the
// state capture replays or checks after the graph (side effects, context
// variables, dynamic dimensions).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/bytecode/Instruction.h"
#include "frontend/bytecode/OpcodeTable.h"
#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/BuiltinRegistry.h"
#include "frontend/capture/BytecodeMachine.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DataBranches.h"
#include "frontend/capture/Frame.h"
#include "frontend/capture/MachineContext.h"
#include "frontend/capture/MappingProxies.h"
#include "frontend/capture/ObjectSemantics.h"
#include "frontend/capture/Recorder.h"
#include "frontend/capture/SemanticsContext.h"
#include "frontend/capture/TorchTypes.h"
#include "frontend/capture/Value.h"
#include "frontend/capture/ValueBuilder.h"
#include "frontend/capture/Vmap.h"
#include "frontend/oracle/TensorOracle.h"
#include "ir/Graph.h"
#include "ir/Guard.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Error.h"

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dync::ir {
struct AutogradFunctionCall;
} // namespace dync::ir

namespace dync::capture {

using ir::Guard;
using ir::GuardKind;
using ir::GuardSet;

class Interpreter;

/// The interpreter is the one MachineContext, SemanticsContext and
/// BuiltinContext: the bytecode machine, object semantics and the builtins
/// see it through those interfaces only. Its public surface is what the
/// capture driver (Capture.cpp and the phases in CapturePhases.h) uses.
struct GeneratorContexts;

class Interpreter final : public MachineContext, public SemanticsContext, public BuiltinContext {
public:
  /// Binds the opcode table to \p opcodes (failing if an opcode has no row)
  /// and reads torch's types. \p entryGlobals is the entry module's dict. GIL
  /// held.
  static llvm::Expected<std::unique_ptr<Interpreter>> create(oracle::TensorOracle& oracle,
                                                             GuardSet& guards,
                                                             const bytecode::OpcodeTable& opcodes,
                                                             PyObject* entryGlobals);

  //===--------------------------------------------------------------------===//
  // What the capture driver uses.

  /// What torch.compiler.is_compiling() answers while capturing
  /// (CaptureOptions::assumeCompiling).
  void setCompilingAnswer(bool answer) { compilingAnswer_ = answer; }
  /// What torch.compiler.is_exporting() answers while capturing
  /// (CaptureOptions::assumeExporting).
  void setExportingAnswer(bool answer) { exportingAnswer_ = answer; }
  /// Whether decisions on data are specialized to the example
  /// (CaptureOptions::dataBranches).
  void setDataBranches(DataBranches mode) { dataBranches_ = mode; }
  /// One line per decision on data specialized to the example: where, and
  /// which side.
  const std::vector<std::string>& dataNotes() const { return dataNotes_; }
  /// Whether the function ran autograd's backward (torch.autograd.grad).
  bool runsBackward() const { return runsBackward_; }

  /// Makes real objects values, with their sources and guards.
  ValueBuilder& values() override { return values_; }
  const TorchTypes& types() const override { return types_; }
  oracle::TensorOracle& oracle() override { return oracle_; }
  /// What capture did that a speculated path must be able to take back.
  Recorder& recorder() override { return recorder_; }
  /// `callee(*args, **kwargs)`: inlined, a builtin, the oracle, a module's
  /// forward (Calls.cpp).
  llvm::Expected<ValuePtr> call(const ValuePtr& callee, std::vector<ValuePtr> args,
                                KeywordArgs kwargs = {}) override;
  /// The Python object a value stands for when passed to torch: a fake
  /// tensor, a constant, a new tuple or list of those.
  llvm::Expected<python::PyRef> toPython(const ValuePtr& value) override;
  /// The location of a node made now: the line each frame is at,
  /// innermost first; after the entry returned, its return.
  ir::Location nodeLocation() const { return machine_.nodeLocation(); }

  /// A dimension the user declared dynamic: capture stops, at the line
  /// responsible, as soon as the program specializes it to a constant.
  struct DynamicWatch {
    python::PyRef fake;
    unsigned dim = 0;
    /// The --dynamic text and the tensor's source, for the message.
    std::string spec;
    std::string source;
    ir::SymbolRange range;
    /// Under `--dynamic auto`: a specialization is noted (in
    /// autoFindings()) rather than an error.
    bool noteOnly = false;
    /// The caller splits a range the program cuts at a boundary (see
    /// CaptureOptions::splitRanges), so a narrowing is not an error.
    bool cutAllowed = false;
    /// \p fake is the SymInt of an int argument rather than a tensor whose
    /// dimension \p dim is watched.
    bool intArgument = false;
  };
  void watchDynamic(DynamicWatch watch) { watches_.push_back(std::move(watch)); }
  /// What `--dynamic auto` learned while capturing: a dimension the
  /// program specialized, and the user's line that did it.
  struct AutoFinding {
    std::string source;
    unsigned dim = 0;
    std::string value;
    std::string where;
    std::string lineText;
  };
  const std::vector<AutoFinding>& autoFindings() const { return autoFindings_; }

  /// A Python function whose bytecode capture ran: its code, globals and
  /// __qualname__ (which a decorator or a generated method may set apart
  /// from its code's co_qualname).
  struct RanFunction {
    python::PyRef code;
    python::PyRef globals;
    std::string qualname;
  };
  /// The functions capture ran (the entry, and every function and method
  /// it inlined), in the order they first ran; repeats are kept. The
  /// artifact fingerprints them (docs/artifact.md, "Code identity").
  const std::vector<RanFunction>& functionsRun() const { return functionsRun_; }

  /// A change the function leaves on an object that existed before the
  /// call: what the rewritten code does after the graph, the value it puts
  /// there, and the program's line that made it.
  struct PendingSideEffect {
    ir::SideEffect effect;
    ValuePtr value;
    std::string where;
  };
  /// Every such change, in the order the program first made them:
  /// attributes assigned (setRealAttr), globals assigned (STORE_GLOBAL),
  /// lists and dicts of the caller's changed in place
  /// (noteContainerMutation).
  std::vector<PendingSideEffect> pendingSideEffects() const;
  /// Fails when the program leaves a context variable set: a change the
  /// graph cannot make.
  llvm::Error checkContextVarsRestored() const;
  /// Fails when a tensor passed to a call made after the graph was written
  /// in place after the call (WorldCalls.cpp).
  llvm::Error checkWorldCallTensors() const;
  /// Calls into the world recorded so far (WorldCalls.cpp).
  size_t worldCallCount() const override { return worldCalls_.size(); }

private:
  Interpreter(oracle::TensorOracle& oracle, GuardSet& guards, const bytecode::OpcodeTable& opcodes)
      : oracle_(oracle), guards_(guards), opcodes_(opcodes) {}

  llvm::Error readTypes();
  /// Registers with the recorder the state a checkpoint saves: guards,
  /// graph, the machine's frames, every value the interpreter holds and
  /// its own tables.
  void trackState();
  /// Every value the interpreter holds: through them, every value the
  /// program can reach.
  void addValueRoots(std::vector<ValuePtr>& roots) const;

  //===--------------------------------------------------------------------===//
  // Capture's state, as the contexts see it.

  GuardSet& guards() override { return guards_; }
  ObjectSemantics& semantics() override { return semantics_; }
  BuiltinRegistry& builtins() override { return builtins_; }
  const BuiltinRegistry& builtins() const override { return builtins_; }

  //===--------------------------------------------------------------------===//
  // Values from and to Python (FakeValues.cpp).

  llvm::Expected<ValuePtr> wrapFake(PyObject* object) override;
  llvm::Expected<PythonCallArguments> toPythonArguments(const std::vector<ValuePtr>& args,
                                                        const KeywordArgs& kwargs) override;
  llvm::Expected<python::PyRef> pythonType(const ValuePtr& value) override;
  /// Runs \p callable on fake values through the oracle.
  llvm::Expected<ValuePtr> callOracle(PyObject* callable, const std::vector<ValuePtr>& args,
                                      const KeywordArgs& kwargs) override;
  /// Whether \p object is a grad-mode context manager (or class of one).
  bool isGradModeManager(PyObject* object) const override;
  /// The `operator` module's function \p name (borrowed).
  PyObject* operatorFunction(llvm::StringRef name) override;

  //===--------------------------------------------------------------------===//
  // Where the program is, and torch.compiler.is_compiling().

  /// The exception being handled (what sys.exc_info() gives), or null.
  const ValuePtr& handledException() const override { return machine_.handledException(); }
  /// The frame executing, or null outside any (for zero-argument super()).
  Frame* currentFrame() const override { return machine_.currentFrame(); }
  /// The Python call stack capture is in, innermost first, for errors.
  std::vector<struct CaptureFrame> callStack() const { return machine_.callStack(); }
  /// Stops capture if the program has pinned or narrowed a dimension the
  /// user declared dynamic.
  llvm::Error checkDynamic() override;
  /// Tells the oracle which line of the program its next calls come from.
  void reportLocation() override;
  /// See SemanticsContext::decideOnExample (DataBranches.cpp).
  llvm::Expected<bool> decideOnExample(const ValuePtr& condition,
                                       const std::string& refusal) override;
  /// Specializes the ints read from tensor data that \p symInt (null: what
  /// the last failed oracle call needed) is computed from to the example's
  /// values, each with a fall-back check `u0 == value` (DataBranches.cpp):
  /// true when it did, false when there is nothing to specialize (or
  /// --data-branches=refuse), an error with \p refusal when it cannot.
  llvm::Expected<bool> specializeIntsOnExample(PyObject* symInt, const std::string& refusal);
  /// See BuiltinContext::specializeIntOnExample (DataBranches.cpp).
  llvm::Expected<ValuePtr> specializeIntOnExample(const ValuePtr& value,
                                                  const std::string& refusal) override;
  /// See MachineContext::locatedErrorNote.
  std::string locatedErrorNote() const override;
  /// Answers torch.compiler.is_compiling() at the current line, remembering
  /// the first line that asked: when capture later stops with the eager
  /// answer given, the error says where the program asked and names
  /// --assume-compiling.
  bool answerCompilerQuery();

  //===--------------------------------------------------------------------===//
  // How calls are made (Calls.cpp).

  llvm::Expected<ValuePtr> inlineFunction(const ValuePtr& function, std::vector<ValuePtr> args,
                                          KeywordArgs kwargs);
  /// \p function's locals for a call with \p args and \p kwargs, the
  /// defaults it read guarded and its library prepared for tracing.
  llvm::Expected<std::vector<ValuePtr>> bindCall(const ValuePtr& function,
                                                 std::vector<ValuePtr> args, KeywordArgs kwargs);
  /// Runs \p function's code over \p locals (bound arguments) in a new
  /// frame; \p names is a class body's namespace.
  llvm::Expected<ValuePtr> runFunction(const ValuePtr& function, std::vector<ValuePtr> locals,
                                       ValuePtr names);
  llvm::Error setUpFrame(Frame& frame, const ValuePtr& function, std::vector<ValuePtr> locals,
                         ValuePtr names);

  //===--------------------------------------------------------------------===//
  // @contextlib.contextmanager contexts (GeneratorContexts.cpp): the
  // generator's frame pauses at its yield while the `with` block runs.

  /// A frame for generator function \p function over its bound arguments,
  /// set to pause at each yield, not yet run.
  llvm::Expected<std::unique_ptr<Frame>>
  pausedFrame(const ValuePtr& function, std::vector<ValuePtr> args, KeywordArgs kwargs);
  /// A call capture makes of a context manager factory, or of the
  /// __enter__ / __exit__ of a context it made; none for any other call.
  llvm::Expected<std::optional<ValuePtr>>
  callGeneratorContext(const ValuePtr& callee, std::vector<ValuePtr>& args, KeywordArgs& kwargs);
  /// Runs a function of torch's symbolic-shape API on numbers and symbolic
  /// numbers.
  llvm::Expected<ValuePtr> callShapeFunction(const ValuePtr& function,
                                             const std::vector<ValuePtr>& args,
                                             const KeywordArgs& kwargs);
  llvm::Expected<ValuePtr> callModule(const ValuePtr& module, std::vector<ValuePtr> args,
                                      KeywordArgs kwargs);
  llvm::Expected<ValuePtr> callObject(const ValuePtr& callee, std::vector<ValuePtr> args,
                                      KeywordArgs kwargs);
  /// A NumPy function called on constants; null when \p callee is not
  /// NumPy's.
  llvm::Expected<ValuePtr> callNumpyOnConstants(const ValuePtr& callee,
                                                const std::vector<ValuePtr>& args,
                                                const KeywordArgs& kwargs);
  /// `nn.Softmax(dim=-1)` in forward: an nn.Module subclass called.
  llvm::Expected<ValuePtr> constructModule(const ValuePtr& cls, const std::vector<ValuePtr>& args,
                                           const KeywordArgs& kwargs);
  /// The same for a class whose MRO writes an `__init__` of its own: made
  /// by `object.__new__`, then that `__init__` followed symbolically with
  /// the fresh module as `self` (FreshModules.cpp).
  llvm::Expected<ValuePtr>
  constructModuleFollowingInit(const ValuePtr& cls, std::vector<ValuePtr> args, KeywordArgs kwargs);
  /// Refuses a module made while capturing that holds parameters or
  /// buffers other than those of the modules among \p given.
  llvm::Error refuseTensorsMadeAnew(PyObject* module, const std::string& name,
                                    const std::vector<ValuePtr>& args, const KeywordArgs& kwargs);
  /// What to do about state a module's construction makes anew on every
  /// call: \p direct when it is built in the captured code itself; when
  /// the __init__ of a module built while capturing builds it, that the
  /// module is built in the call, and to build it once in its owner's
  /// __init__ instead.
  std::string buildOnce(llvm::StringRef direct) const;
  /// Whether \p object is a module made while capturing.
  bool isFreshModule(PyObject* object) const;
  /// `module.name = value` on a module made while capturing, as
  /// nn.Module.__setattr__ files it.
  llvm::Error setFreshModuleAttr(const ValuePtr& module, llvm::StringRef name, ValuePtr value);
  /// torch's own methods that set a module up (`__init__` of torch's
  /// classes, `nn.Module.__setattr__`, `add_module`, ...) called on a module
  /// made while capturing; nullopt when \p callee is none of them or
  /// \p args do not start with such a module.
  llvm::Expected<std::optional<ValuePtr>> callFreshModuleSetup(const ValuePtr& callee,
                                                               const std::vector<ValuePtr>& args,
                                                               const KeywordArgs& kwargs);
  llvm::Expected<ValuePtr> moduleAttr(const ValuePtr& module, llvm::StringRef name) {
    return semantics_.moduleAttr(module, name);
  }
  /// A method of a real object (\p base) that capture handles as a builtin:
  /// \p bound is a C method bound to base's object whose descriptor is
  /// registered, and the result is that builtin bound to \p base; null when
  /// it is not one.
  ValuePtr boundBuiltinMethod(const ValuePtr& base, PyObject* bound) const override;

  //===--------------------------------------------------------------------===//
  // Objects of Python classes made while capturing (Instances.cpp).

  /// `cls(*args, **kwargs)` for a class written in Python: its __new__ and
  /// __init__ run inlined over an Instance value.
  llvm::Expected<ValuePtr> construct(const ValuePtr& cls, std::vector<ValuePtr> args,
                                     KeywordArgs kwargs);
  llvm::Expected<ValuePtr> instanceAttr(const ValuePtr& instance, llvm::StringRef name) override;
  /// `instance.name = value`; \p direct skips the class's __setattr__, as
  /// `object.__setattr__(instance, name, value)` does.
  llvm::Error setInstanceAttr(const ValuePtr& instance, llvm::StringRef name, ValuePtr value,
                              bool direct = false) override;
  /// Calls special method \p name of \p self, an Instance, when its class
  /// defines it in Python; null when it does not.
  llvm::Expected<ValuePtr> callSpecial(const ValuePtr& self, llvm::StringRef name,
                                       std::vector<ValuePtr> args) override;

  //===--------------------------------------------------------------------===//
  // Classes defined while capturing, real objects made for values, and
  // autograd.Function.apply (ClassBodies.cpp, RealObjects.cpp,
  // ConstantResults.cpp, AutogradFunctions.cpp).

  /// `__build_class__(body, name, *bases, **keywords)`, what a class
  /// statement calls: runs the body symbolically over a namespace, then
  /// makes the real class with the real metaclass.
  llvm::Expected<ValuePtr> buildClass(std::vector<ValuePtr> args, KeywordArgs kwargs) override;
  /// Why \p value cannot be made a real object ("a tensor"), or nothing
  /// when it can: constants, real objects, containers of those, functions
  /// made while capturing whose defaults can be. Closure cells always can:
  /// see materializeCell.
  std::optional<std::string> whyNotReal(const ValuePtr& value);
  /// The real object \p value stands for, making one for containers and
  /// functions made while capturing. Only for values whyNotReal accepts.
  llvm::Expected<python::PyRef> materialize(const ValuePtr& value);
  llvm::Expected<python::PyRef> materialize(const ValuePtr& value,
                                            std::map<const Value*, python::PyRef>& made);
  llvm::Expected<python::PyRef> materializeCell(const ValuePtr& cell);
  /// After STORE_DEREF or DELETE_DEREF: keeps the real cell made for \p cell,
  /// if any, holding what it holds.
  llvm::Error syncRealCell(const ValuePtr& cell) override;
  /// Where class body \p body binds \p attribute, for errors.
  std::optional<struct CaptureFrame> bindingFrame(const Value& body, const std::string& attribute);
  /// Calls \p callable for real on the real objects \p args and \p kwargs
  /// stand for (see materialize); what it returns is wrapped as read.
  llvm::Expected<ValuePtr> callForReal(PyObject* callable, const std::vector<ValuePtr>& args,
                                       const KeywordArgs& kwargs);
  /// A call of a function its author marked as giving a constant result
  /// (`torch._dynamo.assume_constant_result`), on constant arguments: run
  /// for real, its result a constant. nullopt for any other call, which is
  /// inlined.
  /// torch.utils.checkpoint.checkpoint(function, *args, use_reentrant=False)
  /// calls `function(*args)`; nullopt for any other callee
  /// (ActivationCheckpoint.cpp).
  llvm::Expected<std::optional<ValuePtr>>
  callActivationCheckpoint(const ValuePtr& callee, std::vector<ValuePtr> args, KeywordArgs kwargs);
  llvm::Expected<std::optional<ValuePtr>> callMarkedConstant(const ValuePtr& function,
                                                             const std::vector<ValuePtr>& args,
                                                             const KeywordArgs& kwargs);
  /// Whether calling \p function decorates a class defined while capturing
  /// with a standard library class decorator (dataclasses.dataclass,
  /// functools.total_ordering): such calls run for real.
  bool decoratesLocalClass(const Value& function, const std::vector<ValuePtr>& args) const;
  /// Whether \p function is torch.autograd.Function.apply.
  bool isAutogradApply(const Value& function);
  /// torch.autograd.grad(*args, **kwargs), its backward recorded from the
  /// fake tensors' history (AutogradGrad.cpp).
  llvm::Expected<ValuePtr> callAutogradGrad(std::vector<ValuePtr> args, KeywordArgs kwargs);
  /// `cls.apply(*args, **kwargs)` for an autograd.Function subclass `cls`
  /// (args[0]), without recording autograd.
  llvm::Expected<ValuePtr> applyAutogradFunction(std::vector<ValuePtr> args, KeywordArgs kwargs);
  /// A context for forward whose needs_input_grad is \p needsGrad.
  llvm::Expected<ValuePtr> autogradContext(std::vector<ValuePtr> needsGrad);
  /// forward (and setup_context) of \p cls over \p args on \p ctx, with
  /// grad mode off as apply runs them.
  llvm::Expected<ValuePtr> runAutogradForward(const ValuePtr& cls, const std::string& name,
                                              const ValuePtr& ctx, std::vector<ValuePtr> args,
                                              KeywordArgs kwargs);
  /// Sets torch's real grad mode, as a grad-mode block does.
  void setRealGradMode(bool on);
  /// What forward was given in place of apply's arguments when grad mode
  /// is on: tensors requiring grad detached, and the tuples and lists
  /// holding them copied (AutogradFunctions.cpp).
  struct ForwardArguments {
    /// A detached fake's object, or a copied container, to apply's value.
    std::map<const void*, ValuePtr> originals;
    /// Each list copy, with the items it was given.
    std::vector<std::pair<ValuePtr, std::vector<ValuePtr>>> lists;
  };
  /// `cls.apply(*args)` that records autograd: forward over detached
  /// inputs, backward captured into a backward graph, and the node that
  /// gives the outputs their history (AutogradBackward.cpp).
  llvm::Expected<ValuePtr> applyRecordingAutogradFunction(const ValuePtr& cls,
                                                          const std::string& name,
                                                          std::vector<ValuePtr> args);
  /// After forward returned \p result on \p ctx: backward captured, the
  /// node added, and \p result with its tensors replaced by the node's.
  llvm::Expected<ValuePtr> attachAutogradFunction(const ValuePtr& cls, const std::string& name,
                                                  const ValuePtr& ctx, const ValuePtr& result,
                                                  const std::vector<ir::ValueRef>& inputs,
                                                  const std::vector<size_t>& inputPositions,
                                                  size_t numArgs, const ForwardArguments& given);
  /// For each of \p outputs, the argument of apply forward modified in
  /// place and returned there (ctx.mark_dirty), or null; \p call's dirty
  /// indices are set.
  llvm::Expected<std::vector<ValuePtr>> dirtyOutputs(const std::string& name, const ValuePtr& ctx,
                                                     const std::vector<ValuePtr>& outputs,
                                                     const ForwardArguments& given,
                                                     ir::AutogradFunctionCall& call);
  /// \p kwargs of apply bound to forward's parameters and moved into
  /// \p args, as apply binds them (with forward's defaults when the class
  /// defines setup_context); whether anything was bound.
  llvm::Expected<bool> bindApplyKeywords(const ValuePtr& cls, const std::string& name,
                                         std::vector<ValuePtr>& args, KeywordArgs& kwargs);
  /// `aten::detach` of \p tensor, a fake of its own bound to the node.
  llvm::Expected<ValuePtr> detachedTensor(const ValuePtr& tensor);
  /// \p arg with the tensors requiring grad it holds in tuples and lists
  /// detached, as apply's forward (grad mode off) reads them.
  llvm::Expected<ValuePtr> detachNested(const ValuePtr& arg, ForwardArguments& given);
  /// \p value with what forward was given in its tuples and lists put back
  /// as apply's, which eager's forward returns as they are; refuses a list
  /// copy forward changed.
  llvm::Expected<ValuePtr> restoreNested(const std::string& name, const ValuePtr& value,
                                         const ForwardArguments& given);
  /// A fake tensor like \p like, requiring grad when \p requiresGrad, that
  /// stands for no graph value until the oracle binds it: empty_like run
  /// by the oracle, the calls it recorded erased.
  llvm::Expected<ValuePtr> unboundFake(const ValuePtr& like, bool requiresGrad);
  /// \p result with each of \p outputs replaced by a fake bound to the
  /// matching result of \p node.
  llvm::Expected<ValuePtr> bindAutogradOutputs(ir::Node* node, const ValuePtr& result,
                                               const std::vector<ValuePtr>& outputs,
                                               const std::vector<bool>& differentiable,
                                               const std::vector<ValuePtr>& dirty);

  //===--------------------------------------------------------------------===//
  // State builtins keep: context variables (ContextVars.cpp), id()'s
  // numbers (IdentityBuiltins.cpp) and module hooks (ModuleHooks.cpp).

  std::map<PyObject*, ContextVarSetting>& contextVarSettings() override {
    return contextVarSettings_;
  }
  std::map<PyObject*, std::pair<python::PyRef, ContextVarToken>>& contextVarTokens() override {
    return contextVarTokens_;
  }
  std::map<const void*, std::pair<ValuePtr, python::PyRef>>& identities() override {
    return identities_;
  }
  /// Module hooks registered while capturing (ModuleHooks.cpp).
  std::vector<RegisteredHook>& registeredHooks() override { return registeredHooks_; }
  bool hasInstalledHooks(PyObject* module) const override {
    return installedHookOn(registeredHooks_, module) != nullptr;
  }

  //===--------------------------------------------------------------------===//
  // Slices of module containers (ModuleContainers.cpp).

  /// `container[slice]` for nn.Module \p base (a ModuleList, a Sequential):
  /// the container's class makes the new container for real, and its
  /// children are the values capture reads for them in \p base.
  llvm::Expected<ValuePtr> sliceModuleContainer(const ValuePtr& base, PyObject* slice) override;
  /// An item of a sliced container (`layers[:n][i]`), read by its class.
  llvm::Expected<ValuePtr> itemOfSlicedContainer(const ValuePtr& base,
                                                 const ValuePtr& key) override;

  //===--------------------------------------------------------------------===//
  // functools.partial (Partials.cpp) and types.MappingProxyType
  // (MappingProxies.cpp).

  /// Whether \p object is functools.partial, or a subclass that leaves
  /// construction and calls to it.
  bool isPartialClass(PyObject* object) const;
  /// Whether \p value is a partial, made while capturing or read.
  bool isPartial(const ValuePtr& value) const;
  /// What a partial holds.
  struct PartialParts {
    ValuePtr func;
    std::vector<ValuePtr> args;
    KeywordArgs keywords;
    /// It has attributes of its own, so a partial of it is not flattened.
    bool ownAttributes = false;
  };
  llvm::Expected<PartialParts> partialParts(const ValuePtr& partial);
  /// `cls(func, *args, **kwargs)` for a partial class \p cls.
  llvm::Expected<ValuePtr> makePartial(const ValuePtr& cls, std::vector<ValuePtr> args,
                                       KeywordArgs kwargs);
  /// Calling partial \p partial.
  llvm::Expected<ValuePtr> callPartial(const ValuePtr& partial, std::vector<ValuePtr> args,
                                       KeywordArgs kwargs);
  /// torch.func.vmap's functions that capture handles itself (Vmap.h).
  llvm::Expected<ValuePtr> callVmapFunction(VmapFunction which, const ValuePtr& callee,
                                            std::vector<ValuePtr> args, KeywordArgs kwargs);
  /// `torch.func.vmap(func, ...)`: a partial of torch's vmap_impl.
  llvm::Expected<ValuePtr> makeVmapped(std::vector<ValuePtr> args, KeywordArgs kwargs);
  /// `types.MappingProxyType(d)` for a dict \p args[0].
  llvm::Expected<ValuePtr> makeMappingProxy(std::vector<ValuePtr> args, const KeywordArgs& kwargs);

  //===--------------------------------------------------------------------===//
  // Attributes of real objects assigned while capturing (RealAttributes.cpp)
  // and side effects on the caller's objects, replayed after the graph
  // (SideEffects.cpp).

  /// `base.name = value` on an object that exists outside capture (a
  /// library's state object, an nn.Module): kept in capture's own state, as
  /// ContextVar settings are; reads of the attribute see it, and the last
  /// value is assigned to the real object after the graph. A module
  /// class's own __setattr__ written in Python is followed (setRealAttrAs);
  /// other objects whose class decides what assignment does (`__setattr__`
  /// other than nn.Module's, descriptors) are refused.
  llvm::Error setRealAttr(const ValuePtr& base, llvm::StringRef name, ValuePtr value) override;
  /// setRealAttr as nn.Module.__setattr__ itself assigns (\p asModuleSetattr:
  /// the module's class's own __setattr__ already ran and called it), or as
  /// the program's assignment does: a module class's own __setattr__
  /// written in Python (nn.RNNBase's) is followed, and its call of
  /// nn.Module's comes back here.
  llvm::Error setRealAttrAs(const ValuePtr& base, llvm::StringRef name, ValuePtr value,
                            bool asModuleSetattr);
  /// `nn.Module.__setattr__(module, name, value)` on a module that is not
  /// made while capturing (a class's own __setattr__ calling
  /// `super().__setattr__`): setRealAttrAs; nullopt for other calls.
  llvm::Expected<std::optional<ValuePtr>> callRealModuleSetattr(const ValuePtr& callee,
                                                                const std::vector<ValuePtr>& args,
                                                                const KeywordArgs& kwargs);
  /// `module.name = tensor` where \p name is one of the module's buffers:
  /// nn.Module.__setattr__ then files the tensor in the module's `_buffers`,
  /// which capture changes as the program's own dict change, replayed after
  /// the graph (RealAttributes.cpp). False when the assignment is not that
  /// case (the generic path decides), an error when it is but cannot be kept.
  llvm::Expected<bool> assignBuffer(const ValuePtr& base, llvm::StringRef name,
                                    const ValuePtr& value, bool asModuleSetattr = false);
  /// What the program last assigned to attribute \p name of \p object
  /// while capturing, or null.
  ValuePtr assignedRealAttr(PyObject* object, llvm::StringRef name) const override;
  /// Called before \p container (a List or Dict value) is changed in
  /// place. One read from the caller's objects (with a source) is recorded,
  /// so that its final contents are replayed after the graph and later reads
  /// of the same real container see the change; \p what names the change
  /// for a refusal (a container capture cannot refill).
  llvm::Error noteContainerMutation(const ValuePtr& container, const llvm::Twine& what) override;
  /// The value a container of the caller's read as \p real holds after the
  /// program changed it in place, or null when it did not.
  ValuePtr mutatedContainer(PyObject* real) const;
  /// The entries of real dict \p dict the program assigned while capturing
  /// without changing it as a container: attributes set on the object it
  /// is the instance dict of, globals stored in the module it is the dict
  /// of; in the order first assigned.
  ValueBuilder::AssignedEntries assignedEntries(PyObject* dict) const;
  /// `global name = value` in a frame over \p globals.
  llvm::Error storeGlobal(PyObject* globals, bool entryGlobals, PyObject* name,
                          ValuePtr value) override;
  /// What the program assigned to global \p name of \p globals, or null.
  ValuePtr storedGlobal(PyObject* globals, PyObject* name) const override;
  /// Refuses assigning a closure cell of a function that exists before the
  /// call (a `nonlocal` of a closure made outside it): no source names the
  /// cell for the replay, and capture reads its own copy of it.
  llvm::Error checkCellAssignment(const ValuePtr& cell, llvm::StringRef name) override;
  /// The program's file and line, for messages about a side effect.
  std::string programLine() const override;
  /// `callee(*args, **kwargs)` when it is a call into the world (print,
  /// warnings.warn, a logger's level methods): recorded to be made after
  /// the graph, giving None; nullopt for any other callee (WorldCalls.cpp).
  llvm::Expected<std::optional<ValuePtr>>
  callWorld(const ValuePtr& callee, const std::vector<ValuePtr>& args, const KeywordArgs& kwargs);
  /// `callee(*args)` as a branch of a control-flow operator
  /// (BranchEffects.cpp).
  llvm::Expected<ValuePtr> callWithoutSideEffects(const ValuePtr& callee,
                                                  std::vector<ValuePtr> args,
                                                  const llvm::Twine& what,
                                                  const llvm::Twine& why) override;

  //===--------------------------------------------------------------------===//
  // The interpreter's own tables, declared before capture's parts and so
  // destroyed after them.

  std::map<const void*, std::pair<ValuePtr, python::PyRef>> identities_;
  std::map<PyObject*, ContextVarSetting> contextVarSettings_;
  std::map<PyObject*, std::pair<python::PyRef, ContextVarToken>> contextVarTokens_;
  /// An attribute assigned by setRealAttr: the object (kept alive), its
  /// source, the program's line and what the program assigned last;
  /// `order` places it among the other side effects.
  struct RealAttrSetting {
    python::PyRef object;
    std::string name, owner, where;
    SourcePtr target;
    ValuePtr value;
    size_t order = 0;
  };
  std::vector<RealAttrSetting> realAttrSettings_;
  struct GlobalStore {
    python::PyRef globals;
    std::string name;
    SourcePtr target;
    ValuePtr value;
    std::string where;
    size_t order = 0;
  };
  std::vector<GlobalStore> globalStores_;
  struct MutatedContainer {
    python::PyRef object;
    ValuePtr value;
    std::string where;
    size_t order = 0;
  };
  std::vector<MutatedContainer> mutatedContainers_;
  /// Modules made while capturing (kept alive): capture's own objects,
  /// seen by nothing else.
  std::vector<python::PyRef> freshModules_;
  /// The modules built while capturing whose __init__ is being followed,
  /// outermost first: the class's name, the function that builds it, and
  /// the module that does, when a method of a module capture did not build
  /// is running (the class's short name and that method's qualified name).
  struct FreshInit {
    std::string className;
    std::string builtIn;
    std::string ownerClass;
    std::string ownerMethod;
  };
  std::vector<FreshInit> freshInits_;
  /// The FreshInit of \p module, built now.
  FreshInit freshInitOf(PyObject* module) const;
  /// Instance-dict attributes of those modules whose values exist in
  /// capture only (a tensor, a symbolic size, a bound method): read back
  /// through assignedEntries, never set on the real object.
  struct FreshModuleAttr {
    python::PyRef object;
    std::string name;
    ValuePtr value;
    size_t order = 0;
  };
  std::vector<FreshModuleAttr> freshModuleAttrs_;
  /// Module hooks registered while capturing (ModuleHooks.cpp).
  std::vector<RegisteredHook> registeredHooks_;
  /// A call into the world the rewritten code makes after the graph
  /// (WorldCalls.cpp): the source of the callable, or of the object whose
  /// method is called; the program's line; the exported function's line
  /// that led to it; its arguments as they were at the call (a tuple, and
  /// a dict by keyword) and the tensors among them with their versions then.
  struct WorldCall {
    std::string target;
    std::string method;
    std::string where;
    int64_t line = 0;
    ValuePtr args;
    ValuePtr kwargs;
    std::vector<std::pair<ValuePtr, long long>> tensorVersions;
    size_t order = 0;
  };
  std::vector<WorldCall> worldCalls_;
  /// Orders side effects of the three kinds; gaps a rollback leaves are
  /// harmless.
  size_t sideEffectCount_ = 0;
  /// Real cells made for cells made while capturing, by the symbolic cell
  /// (kept alive by the pair).
  std::map<const Value*, std::pair<ValuePtr, python::PyRef>> realCells_;
  /// Classes made by buildClass, kept alive.
  std::map<PyObject*, python::PyRef> localClasses_;
  /// See functionsRun().
  std::vector<RanFunction> functionsRun_;
  /// torch.autograd.Function.apply's function, once looked up.
  python::PyRef autogradApply_;
  /// The class of the context autograd.Function.forward gets.
  python::PyRef contextClass_;
  bool compilingAnswer_ = false;
  DataBranches dataBranches_ = DataBranches::Specialize;
  std::vector<std::string> dataNotes_;
  bool runsBackward_ = false;
  /// Records `aten::_assert_async.msg(condition, text)`, a fall-back check
  /// when \p text says so (DataBranches.cpp).
  llvm::Error recordFallBackCheck(const ValuePtr& condition, const std::string& text);
  /// Adds \p note to the notes export prints about specializations on data,
  /// unless it is there already.
  void noteDataSpecialization(std::string note);
  /// \p condition, a number computed from data, as a one-element tensor
  /// nonzero where Python's truth is; null when the graph cannot make it.
  llvm::Expected<ValuePtr> conditionTensor(const ValuePtr& condition);
  /// The fall-back check's tensor for an int (\p holds, `u0 == v`) or a
  /// float (its graph value, compared with \p example) read from data.
  llvm::Expected<ValuePtr> intCheckTensor(const python::PyRef& holds);
  llvm::Expected<ValuePtr> floatCheckTensor(const python::PyRef& symFloat, double example);
  /// vmap levels the program opened (closed when capture stops inside one).
  VmapLevels vmapLevels_;
  bool exportingAnswer_ = false;
  /// The @contextlib.contextmanager contexts made while capturing, by their
  /// marker object (GeneratorContexts.cpp).
  std::shared_ptr<GeneratorContexts> generatorContexts_;
  /// "FILE:LINE" of the first is_compiling() capture answered; empty if none.
  std::string firstCompilerQuery_;

  //===--------------------------------------------------------------------===//
  // Capture's parts. Declared in the order they refer to each other.

  Recorder recorder_;
  oracle::TensorOracle& oracle_;
  GuardSet& guards_;
  const bytecode::OpcodeTable& opcodes_;
  TorchTypes types_;
  BuiltinRegistry builtins_;
  ValueBuilder values_{oracle_, guards_, recorder_, types_, builtins_};
  ObjectSemantics semantics_{*this};
  BytecodeMachine machine_{*this, opcodes_};

  std::vector<DynamicWatch> watches_;
  std::vector<AutoFinding> autoFindings_;
};

} // namespace dync::capture
