//===- ValueBuilder.h - Real objects made values, with sources and guards -===//
//
// Every real object capture reads (a frame input, a module attribute, a
// global, a default, a closure cell, an item of a container) becomes a value
// here. The builder decides which value kind stands for it, which source it
// keeps (the dictionary reads a guard can repeat without running Python,
// DictReads.h), and installs the guards that pin what capture assumed of it:
// constants by value, functions by identity, containers by type and length
// or keys, tensors as graph inputs with their tensor guards.
//
// It needs only the guard set, the tensor oracle (for graph inputs), the
// recorder (making an input cannot be taken back), torch's types and the
// registered builtins; the interpreter and object semantics call it rather
// than wrapping objects themselves.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/BuiltinRegistry.h"
#include "frontend/capture/GuardedDefaults.h"
#include "frontend/capture/Recorder.h"
#include "frontend/capture/TorchTypes.h"
#include "frontend/capture/Value.h"
#include "frontend/oracle/TensorOracle.h"
#include "ir/Graph.h"
#include "ir/Guard.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <Python.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace dync::capture {

/// Whether \p callee is `list.append` or `list.extend` bound to a list
/// whose items the program has not read (UnreadLists.cpp).
bool appendsToUnreadList(const ValuePtr& callee);

/// Whether `base[key] = ...` assigns an entry of a dict whose entries the
/// program has not read (not a namespace, whose entries are attributes)
/// by a constant key, leaving the others unread (UnreadDicts.cpp).
bool storesIntoUnreadDict(const ValuePtr& base, const ValuePtr& key);

class ValueBuilder {
public:
  ValueBuilder(oracle::TensorOracle& oracle, ir::GuardSet& guards, Recorder& recorder,
               const TorchTypes& types, const BuiltinRegistry& builtins)
      : oracle_(oracle), guards_(guards), recorder_(recorder), types_(types), builtins_(builtins) {}

  /// The entry module's dict: functions defined there are the program's own.
  void setEntryGlobals(PyObject* entryGlobals) { entryGlobals_ = entryGlobals; }
  /// Where a real list or dict of the caller's the program changed in place
  /// is found: wrapReal gives back that changed value (SideEffects.cpp).
  void setChangedContainers(std::function<ValuePtr(PyObject*)> lookup) {
    changedContainers_ = std::move(lookup);
  }
  /// Where the entries the program assigned of a real dict it never read
  /// as one are found: attributes set on an object (its instance dict) and
  /// globals stored (a module's dict), by name, in the order first set.
  using AssignedEntries = std::vector<std::pair<std::string, ValuePtr>>;
  void setAssignedEntries(std::function<AssignedEntries(PyObject*)> lookup) {
    assignedEntries_ = std::move(lookup);
  }

  //===--------------------------------------------------------------------===//
  // Capture's view of real state the program changed (ChangedState.cpp).
  // Capture never changes real objects while capturing; every read of one
  // the program may have changed asks here first.

  /// What real dict \p dict holds under \p key as the program left it so
  /// far: nullopt when the program changed neither the dict nor that
  /// entry (the real dict answers), else the value, or null when the
  /// program removed the key.
  llvm::Expected<std::optional<ValuePtr>> changedEntry(PyObject* dict, PyObject* key) const;
  /// The first of nn.Module \p module's instance dict and tables
  /// (`_parameters`, `_buffers`, `_modules`) the program changed while
  /// capturing, or nothing.
  std::optional<std::string> changedModuleTable(PyObject* module) const;
  /// Fails when the program changed a table of nn.Module value \p module
  /// (changedModuleTable) and \p what (`len()`, `iterating`, ...) would
  /// be answered by the real module, which capture does not change.
  llvm::Error refuseChangedModuleRead(const Value& module, llvm::StringRef what) const;

  //===--------------------------------------------------------------------===//
  // Real objects as values.

  /// A real object found in the frame's inputs (or reached from them) as a
  /// value; tensors become graph inputs named after \p source, constants
  /// read through a source are guarded.
  llvm::Expected<ValuePtr> wrapReal(PyObject* object, SourcePtr source);
  /// A Python function as a Function value: its defaults and closure cells
  /// wrapped in turn, pinned by a function guard when read through
  /// \p source.
  llvm::Expected<ValuePtr> functionFromReal(PyObject* function, SourcePtr source);
  /// Guards \p object, read through \p source, by value when the guards can
  /// spell it (None, bool, int64, float, str), else by type.
  void guardConstant(PyObject* object, const SourcePtr& source);

  //===--------------------------------------------------------------------===//
  // Graph inputs.

  /// A real tensor made a graph input: the oracle's fake for it, once per
  /// object.
  llvm::Expected<ValuePtr> tensorInput(PyObject* real, SourcePtr source,
                                       llvm::ArrayRef<oracle::DynamicDim> dims = {});
  /// A Python int argument declared dynamic (`--dynamic n=n[1,64]`): a
  /// torch.SymInt that is the graph's int input holding \p symbol
  /// (SymIntInputs.cpp).
  llvm::Expected<ValuePtr> intInput(PyObject* real, SourcePtr source,
                                    const oracle::DynamicDim& symbol);
  /// The tensors made graph inputs, in the order they were made.
  const std::vector<ValuePtr>& tensorInputs() const { return inputOrder_; }
  /// The graph input made for the real tensor \p real, or null.
  ValuePtr tensorInputOf(PyObject* real) const {
    auto found = tensorInputs_.find(real);
    return found == tensorInputs_.end() ? nullptr : found->second.second;
  }
  /// The ints made graph inputs, in the order they were made.
  const std::vector<ValuePtr>& intInputs() const { return intInputOrder_; }
  /// An int inside an argument declared dynamic (`--dynamic cfg.n=n`):
  /// wherever the program reads it from \p source it is the graph's int
  /// input holding \p symbol, made at the first read, which calls
  /// \p onMade with it (SymIntInputs.cpp).
  struct DeclaredInt {
    SourcePtr source;
    oracle::DynamicDim symbol;
    std::function<void(const ValuePtr&)> onMade;
    /// The value made at the first read.
    ValuePtr value;
  };
  void declareInt(DeclaredInt declared) { declaredInts_.push_back(std::move(declared)); }
  const std::vector<DeclaredInt>& declaredInts() const { return declaredInts_; }
  /// The graph input made for real tensor \p real, or null.
  ValuePtr knownTensorInput(PyObject* real) const;
  /// The real tensor graph input \p value was made for, or null.
  PyObject* realTensorOf(const ValuePtr& value) const;

  //===--------------------------------------------------------------------===//
  // Sources of reads.

  /// The source to read \p classValue through, a value read from the class
  /// of \p base (found there under \p name by the MRO, not in base's
  /// instance dict): guards that base's instance dict does not shadow it,
  /// and gives `type(base).name` when the value is one a guard can pin
  /// without making it a graph input (a constant, a function); else null.
  SourcePtr classReadSource(const SourcePtr& base, llvm::StringRef name, PyObject* classValue);
  /// `type(base).name` for \p value, attribute \p name of the class of the
  /// object read through \p base (a class `type(obj)` or `obj.__class__`
  /// gave), when the class's MRO holds \p value itself (a plain class
  /// attribute or a function, no descriptor's result) and a guard can pin
  /// it; else null.
  SourcePtr classOfSource(const SourcePtr& base, PyObject* type, llvm::StringRef name,
                          PyObject* value);
  /// Where guards read Python class \p type: `G['Out']` for a class of
  /// the entry module, `M['pkg.mod'].Out` for another module's (nested
  /// classes through their outer ones), when that name holds the class
  /// itself; null for a class written in C or one no name reaches (defined
  /// in a function) (ClassAttributeSources.cpp).
  SourcePtr sourceOfClass(PyTypeObject* type);
  /// The source of attribute \p name as Python's lookup finds it on class
  /// \p type (an object made while capturing reads its class's attributes
  /// so): `SRC.name` for the first Python class of the MRO that holds it,
  /// with `absent` guards for the Python classes before it and `class`
  /// guards on `type.__mro__` up to the class that holds it. Null when a
  /// class written in C holds it or a class on the way has no source.
  /// With \p after, the lookup `super(after, obj)` makes: from the class
  /// after it in the MRO.
  SourcePtr classLookupSource(PyTypeObject* type, llvm::StringRef name, PyObject* after = nullptr);
  /// Pins `type.__mro__[1..last]` to the classes it holds now (`class`
  /// guards): a lookup that passed them visits them again only while the
  /// class's bases stay. False when no name reaches \p type.
  bool pinMroPrefix(PyTypeObject* type, Py_ssize_t last);
  /// For a classmethod or staticmethod \p descriptor read through
  /// \p descriptorSource: pins its type and gives `SRC.__func__`, the
  /// function it wraps; null without a source.
  SourcePtr wrappedFunctionSource(const SourcePtr& descriptorSource, PyObject* descriptor);
  /// wrapReal of \p value, a class attribute found through \p source,
  /// keeping the source only where a guard can pin the value (a constant, a
  /// container of constants); other objects a class holds are assumed
  /// unchanged.
  llvm::Expected<ValuePtr> wrapClassAttribute(PyObject* value, const SourcePtr& source);
  /// Whether a class attribute read of \p value keeps its source.
  bool keepsClassReadSource(PyObject* value) const;
  /// The source of \p value, read from Python module \p module through
  /// \p source (a module attribute, or a global of a function defined in
  /// that module), as far as guards may pin it. A library module's state
  /// (torch's, `torch.relu`) and anything read through `M['name']` (which
  /// the rewritten bytecode cannot evaluate) keep their source only where a
  /// guard pins the value by itself and no graph input can come of it:
  /// functions and built-in functions, modules (whose reads are filtered
  /// in turn), and, for a program's own modules, constants. Everything else
  /// is a constant of the graph, as before.
  SourcePtr moduleReadSource(const SourcePtr& source, PyObject* module, PyObject* value);
  /// `M['name'].global` for \p value, global \p global of a function whose
  /// globals are the dict of module `name` in sys.modules, as far as
  /// moduleReadSource keeps it; null for any other dict.
  SourcePtr moduleGlobalSource(PyObject* globals, llvm::StringRef global, PyObject* value);
  /// `base.name` for \p value read from \p object's instance dict by
  /// Python's generic lookup; null otherwise (DictReads.h).
  SourcePtr instanceDictSource(const SourcePtr& base, PyObject* object, PyObject* name,
                               PyObject* value);
  /// `base._parameters['name']` (or `_buffers`, `_modules`, as \p table
  /// says) for \p value in nn.Module \p module's table; null otherwise.
  SourcePtr moduleTableSource(const SourcePtr& base, PyObject* module, const char* table,
                              PyObject* name, PyObject* value);
  /// The source of \p item, which module container \p container gave for
  /// \p key: the table entry holding it (DictReads.h).
  SourcePtr containerItemSource(const SourcePtr& base, PyObject* container, PyObject* key,
                                PyObject* item);

  //===--------------------------------------------------------------------===//
  // Guards on what a read assumed.

  /// Guards that nn.Module \p module and the process have no hooks that
  /// nn.Module.__call__ would run (capture found none).
  void guardNoModuleHooks(const ValuePtr& module);
  /// Pins the keys, in order, of nn.Module \p module's `_modules` table
  /// (and `_parameters`, when it has entries): what iterating a container
  /// module, its len() and its positional items depend on.
  void guardModuleTableKeys(const ValuePtr& module);
  /// Pins what the class of a real dict object the program holds (an
  /// Instance value with a source, wrapDictObject) gives for \p name, as
  /// the MRO finds it: a Python function by a `function` guard through
  /// `type(SRC).name`, an attribute of its builtin base (dict's
  /// `__getitem__`) by a `same` guard with that base's own, nothing by
  /// `absent type(SRC).name`. Capture ran what it found; a class changed
  /// after export must miss. Other instances are left alone.
  void guardDictClassRead(const ValuePtr& instance, llvm::StringRef name);
  /// Guards what \p function's __defaults__ and __kwdefaults__ held where
  /// \p read says the call used them, when the function was read through a
  /// source (its length and each default used; a default that is neither a
  /// constant nor a function keeps its type pinned). Nothing for functions
  /// made while capturing.
  void guardDefaultsRead(const Value& function, const DefaultsRead& read);

  //===--------------------------------------------------------------------===//
  // Identity between sources (SourceIdentity.cpp).

  /// Notes that \p source reached \p object (a tensor, list, dict, module or
  /// other mutable object; constants, functions, classes and modules are
  /// pinned otherwise). A second source reaching an object one already
  /// reached is guarded `same SECOND : FIRST`: capture read one object
  /// through both, and a change made through one shows through the other.
  void noteIdentity(PyObject* object, const SourcePtr& source);
  /// The first source that reached \p object, or null.
  SourcePtr sourceOfReadObject(PyObject* object) const;
  /// The answer capture gave to `a is b` for real objects \p a and \p b
  /// read through \p sourceA and \p sourceB, guarded (`same` or
  /// `distinct`) when both are objects identity is tracked for.
  void guardIdentity(PyObject* a, const SourcePtr& sourceA, PyObject* b, const SourcePtr& sourceB,
                     bool same);
  /// Once the graph is built: every object the program changes (a tensor
  /// input the graph writes, directly or through a view; a list or dict
  /// filled or an object whose attribute is set after the graph) must not
  /// be, at the call, the object another source reached: a `distinct`
  /// guard for each other source of an object that could pass the same
  /// guards (a tensor of the same dtype, rank, sizes and requires_grad; an
  /// object of the same type).
  llvm::Error guardChangedObjectsDistinct(const ir::Graph& graph);

  //===--------------------------------------------------------------------===//
  // Functions made real by capture (RealObjects.cpp).

  /// Wrapping real function \p real gives back \p symbolic, the function
  /// made while capturing that it was made for.
  void noteRealFunction(PyObject* real, ValuePtr symbolic) {
    realFunctions_[real] = std::move(symbolic);
  }
  void forgetRealFunction(PyObject* real) { realFunctions_.erase(real); }

  //===--------------------------------------------------------------------===//
  // Lists the program may only append to (UnreadLists.cpp).

  /// While one is alive, wrapReal gives a caller's exact list read through
  /// a source with its items unread (Value::unreadItems): the reads the
  /// bytecode makes (an attribute, a global, an item, an argument), whose
  /// result the machine reads again only through its stack.
  class UnreadListReads {
  public:
    explicit UnreadListReads(ValueBuilder& builder)
        : builder_(builder), previous_(builder.unreadListReads_) {
      builder.unreadListReads_ = true;
    }
    ~UnreadListReads() { builder_.unreadListReads_ = previous_; }
    UnreadListReads(const UnreadListReads&) = delete;
    UnreadListReads& operator=(const UnreadListReads&) = delete;

  private:
    ValueBuilder& builder_;
    bool previous_;
  };
  /// Reads every list with unread items \p value is or holds (through
  /// containers, cells, bound methods, iterators), as wrapReal would have
  /// read it whole: its length pinned, its items read through their
  /// sources and put before what the program appended.
  llvm::Error readAllUnread(const ValuePtr& value);
  /// The same for \p value alone, not what it holds.
  llvm::Error readUnread(const ValuePtr& value);
  /// An object's or a module's namespace (`vars(obj)`, `mod.__dict__`), the
  /// exact dict \p object read through \p source, with its entries unread:
  /// the program's reads of one key are guarded one by one
  /// (readUnreadEntry), and any other read reads it whole.
  ValuePtr unreadNamespace(PyObject* object, const SourcePtr& source);
  /// `container[key]` of a dict (a namespace, an exact dict, an object of
  /// a dict class) whose entries are unread (UnreadDicts.cpp): the entry,
  /// read through its own source (or as the program assigned it); null
  /// when \p key is not a constant a source names or not in the dict, or
  /// the class reads items its own way, after which it is to be read
  /// whole.
  llvm::Expected<ValuePtr> readUnreadEntry(const ValuePtr& container, const ValuePtr& key);
  /// `object.name` of an object of a dict class whose entries are unread,
  /// when Python's lookup finds \p name in its instance dict: the
  /// attribute, read through `SRC.name`; null otherwise, after which the
  /// object is to be read whole.
  llvm::Expected<ValuePtr> readUnreadAttribute(const ValuePtr& object, llvm::StringRef name);
  /// `key in container` of a dict whose entries are unread, by a constant
  /// key: true when the program assigned it or the dict holds it (its
  /// type pinned), false for a str key it lacks (`absent SRC.key` for a
  /// namespace, `absent SRC['key']` for a dict); nothing when the dict is
  /// to be read whole to answer.
  std::optional<bool> containsUnread(const ValuePtr& container, const ValuePtr& key);
  /// `container.get(key, fallback)` of a dict whose entries are unread, by
  /// a constant key: the entry, read alone as `container[key]` reads it, or
  /// \p fallback (None when null) where the key's absence is guarded;
  /// nothing when the dict is to be read whole to answer.
  llvm::Expected<std::optional<ValuePtr>> getUnread(const ValuePtr& container, const ValuePtr& key,
                                                    const ValuePtr& fallback);
  /// `hasattr(object, name)` of an object of a dict class whose entries are
  /// unread: true when its instance dict holds \p name (its type pinned),
  /// false when neither the instance dict, the class nor a __getattr__
  /// gives it (each pinned absent); nothing when it is to be read whole.
  std::optional<bool> hasattrUnread(const ValuePtr& object, llvm::StringRef name);

  //===--------------------------------------------------------------------===//
  // Checkpoints (Recorder.h).

  /// Adds the values the builder holds to \p roots.
  void addRoots(std::vector<ValuePtr>& roots) const;
  /// Saves the builder's tables; the result restores them.
  Recorder::Restore save();

private:
  oracle::TensorOracle& oracle_;
  ir::GuardSet& guards_;
  Recorder& recorder_;
  const TorchTypes& types_;
  const BuiltinRegistry& builtins_;
  PyObject* entryGlobals_ = nullptr;
  std::function<ValuePtr(PyObject*)> changedContainers_;
  std::function<AssignedEntries(PyObject*)> assignedEntries_;
  bool unreadListReads_ = false;
  /// The real dict readUnreadDict is reading whole: what the program
  /// changed of it is put back by that read, not found by callersContainer.
  PyObject* wholeReadOf_ = nullptr;
  /// Lists given with their items unread, by the real list: every source
  /// reaching one list gets the one value, so appends through any of them
  /// land in one place.
  std::vector<std::pair<python::PyRef, ValuePtr>> unreadLists_;
  /// \p object, an exact list read through \p source, with its items unread.
  ValuePtr unreadList(PyObject* object, const SourcePtr& source);
  /// \p object, a dict (exact, or an OrderedDict) or an object of a dict
  /// class read through \p source, with its entries unread
  /// (UnreadDicts.cpp); null to read it whole now.
  ValuePtr unreadDict(PyObject* object, const SourcePtr& source);
  /// The value read before for real container \p object whose entries are
  /// still unread, or null.
  ValuePtr knownUnread(PyObject* object) const;
  /// readUnread of a Dict or an Instance (UnreadDicts.cpp).
  llvm::Error readUnreadDict(const ValuePtr& value);
  /// \p value, the Dict value read from real dict \p real, with the
  /// entries the program assigned without changing the dict as a
  /// container (an attribute of the object it is the instance dict of, a
  /// global of the module it is the dict of) put in.
  void overlayAssignedEntries(Value& value, PyObject* real) const;
  /// \p value, read as the caller's exact list or dict \p real, marked as
  /// such; or the value the program changed it into.
  ValuePtr callersContainer(ValuePtr value, PyObject* real);
  /// A real object of a dict subclass read through \p source, its items
  /// sourced and guarded (ValueBuilderDicts.cpp); nullopt to read it as any
  /// other object.
  std::optional<llvm::Expected<ValuePtr>> wrapDictObject(PyObject* object, const SourcePtr& source);
  /// Objects reached through sources, each with the first source that
  /// reached it (SourceIdentity.cpp).
  struct Identity {
    python::PyRef object;
    SourcePtr source;
  };
  std::vector<Identity> identities_;
  std::map<PyObject*, size_t> identityIndex_;
  /// Whether \p object's identity is tracked (see noteIdentity).
  bool tracksIdentity(PyObject* object) const;
  /// Graph inputs made from real tensors, by the real object.
  std::map<PyObject*, std::pair<python::PyRef, ValuePtr>> tensorInputs_;
  std::vector<ValuePtr> inputOrder_;
  std::vector<ValuePtr> intInputOrder_;
  std::vector<DeclaredInt> declaredInts_;
  /// The declared int at \p source read as \p real (SymIntInputs.cpp);
  /// nullopt when \p source names none.
  std::optional<llvm::Expected<ValuePtr>> declaredIntAt(PyObject* real, const SourcePtr& source);
  /// Functions functionFromReal is wrapping: a closure cell that holds one
  /// of them (a nested function calling itself) gets the same value
  /// instead of wrapping it again without end.
  std::map<PyObject*, ValuePtr> functionsBeingWrapped_;
  /// Real functions made for functions made while capturing: wrapping one
  /// gives back the symbolic function, whose defaults and closure cells are
  /// the ones capture reads and writes.
  std::map<PyObject*, ValuePtr> realFunctions_;
};

} // namespace dync::capture
