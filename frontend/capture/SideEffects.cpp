//===- SideEffects.cpp - Changes to the caller's objects, replayed after ---===//
//
// A function may change objects that exist before it is called: assign an
// attribute of a module or of a user object (RealAttributes.cpp), assign a
// global, append to a list or update a dict it was given or reads from a
// global or an attribute. Capture never touches the real objects: it keeps
// the new values in its own state, where later reads in the same capture
// find them, and at the end lists what each object must hold after the
// call. The graph's output node carries that list (ir::SideEffect); the
// rewritten code assigns each value to the real object after the graph ran
// (docs/rewrite.md), so the caller sees what eager mode leaves.
//
// Guards stay about the call's entry: the real objects are unchanged while
// capturing, so every guard a read installs checks what the object held
// when the function was called. A read after the program's own change
// returns the changed value and installs no guard.
//
// The records live in the interpreter's tables, which the recorder saves at
// each checkpoint (Speculate.cpp): a speculated path that is taken back
// takes its side effects back too.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include <algorithm>

namespace dync::capture {

using python::PyRef;

std::string Interpreter::programLine() const {
  std::vector<CaptureFrame> stack = callStack();
  if (stack.empty())
    return "";
  return stack.front().location.file + ":" + std::to_string(stack.front().location.line);
}

namespace {

/// Whether \p file is code of an installed package or of the standard
/// library, not of the user's program.
bool isInstalledLibraryFile(llvm::StringRef file) {
  if (file.contains("/site-packages/") || file.contains("/dist-packages/"))
    return true;
  static const std::string stdlib = [] {
    PyRef os = PyRef::steal(PyImport_ImportModule("os"));
    PyRef path = os ? PyRef::steal(PyObject_GetAttrString(os.get(), "__file__")) : PyRef();
    PyErr_Clear();
    std::optional<std::string> text = path ? python::utf8Of(path.get()) : std::nullopt;
    return text ? llvm::StringRef(*text).rsplit('/').first.str() + "/" : std::string();
  }();
  return !stdlib.empty() && file.starts_with(stdlib);
}

} // namespace

llvm::Error Interpreter::noteContainerMutation(const ValuePtr& container, const llvm::Twine& what) {
  // Containers made while capturing are capture's own. A real one read
  // without a source (a class attribute holding tensors, a library's
  // global, a function's default, what an iterator gave) cannot be
  // changed after the graph: no source names it for the rewritten code.
  if (!container->source) {
    if (!container->realContainer)
      return llvm::Error::success();
    // An installed library changing its own state (einops filling its
    // backend cache on a first call): its memo caches are the library's
    // business, filled again by the first call that runs the original code;
    // capture changes its own copy only (docs/capture.md, "Not yet").
    std::vector<CaptureFrame> stack = callStack();
    if (!stack.empty() && isInstalledLibraryFile(stack.front().location.file))
      return llvm::Error::success();
    return captureError(
        what + " on a " + spelling(container->kind) +
        " that exists before the call but was read without a source (a class attribute, a "
        "library's global, a real function's default, an item of a container without "
        "sources): capture would change only its own copy, and the change would not be "
        "replayed on the real " +
        spelling(container->kind) +
        "; keep the state on the instance or pass the container as an argument");
  }
  PyObject* real = container->realContainer.get();
  if (!real || (container->kind != ValueKind::List && container->kind != ValueKind::Dict)) {
    std::string kind =
        container->realObject()
            ? qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(container->realObject())))
            : spelling(container->kind).str();
    return captureError(what + " on " + container->source->str() +
                        " (only exact lists and dicts of the caller's are changed after the "
                        "graph, not a " +
                        kind + "; a side effect outside the graph)");
  }
  for (const MutatedContainer& mutated : mutatedContainers_)
    if (mutated.object.get() == real)
      return llvm::Error::success();
  mutatedContainers_.push_back({PyRef::borrow(real), container, programLine(), sideEffectCount_++});
  return llvm::Error::success();
}

llvm::Error Interpreter::checkCellAssignment(const ValuePtr& cell, llvm::StringRef name) {
  // Cells made while capturing are capture's own; so is an installed
  // library's state, as for its containers (noteContainerMutation).
  if (!cell->object || !PyCell_Check(cell->object.get()))
    return llvm::Error::success();
  std::vector<CaptureFrame> stack = callStack();
  if (!stack.empty() && isInstalledLibraryFile(stack.front().location.file))
    return llvm::Error::success();
  return captureError(
      "assigning free variable '" + name +
      "' of a function that exists before the call (a `nonlocal` of a closure made outside it) "
      "is not supported yet: capture would change only its own copy of the closure cell, which "
      "other functions sharing the cell do not see, and the change would not be replayed on the "
      "real cell after the graph; keep the state on an object or in a global");
}

ValuePtr Interpreter::mutatedContainer(PyObject* real) const {
  for (const MutatedContainer& mutated : mutatedContainers_)
    if (mutated.object.get() == real)
      return mutated.value;
  return nullptr;
}

llvm::Error Interpreter::storeGlobal(PyObject* globals, bool entryGlobals, PyObject* name,
                                     ValuePtr value) {
  std::string text = python::utf8Of(name).value_or("?");
  for (GlobalStore& store : globalStores_)
    if (store.globals.get() == globals && store.name == text) {
      store.value = std::move(value);
      store.where = programLine();
      return llvm::Error::success();
    }
  // The entry module's globals are the rewritten code's own; another
  // module's are reached through sys.modules, as its reads are.
  SourcePtr target;
  if (entryGlobals) {
    target = Source::global(text);
  } else if (PyObject* moduleName = PyDict_GetItemString(globals, "__name__");
             moduleName && PyUnicode_CheckExact(moduleName)) {
    PyRef module = PyRef::steal(PyImport_GetModule(moduleName));
    PyErr_Clear();
    if (module && PyModule_Check(module.get()) && PyModule_GetDict(module.get()) == globals)
      if (std::optional<std::string> moduleText = python::utf8Of(moduleName))
        target = Source::attr(Source::module(*moduleText), text);
  }
  if (!target)
    return captureError("assigning global '" + text +
                        "' of a namespace that is no imported module's (a side effect outside "
                        "the graph)");
  globalStores_.push_back({PyRef::borrow(globals), std::move(text), std::move(target),
                           std::move(value), programLine(), sideEffectCount_++});
  return llvm::Error::success();
}

ValuePtr Interpreter::storedGlobal(PyObject* globals, PyObject* name) const {
  if (globalStores_.empty())
    return nullptr;
  std::string text = python::utf8Of(name).value_or("");
  for (const GlobalStore& store : globalStores_)
    if (store.globals.get() == globals && store.name == text)
      return store.value;
  return nullptr;
}

ValueBuilder::AssignedEntries Interpreter::assignedEntries(PyObject* dict) const {
  std::vector<std::pair<size_t, std::pair<std::string, ValuePtr>>> ordered;
  for (const RealAttrSetting& setting : realAttrSettings_) {
    PyObject** pointer = _PyObject_GetDictPtr(setting.object.get());
    if (pointer && *pointer == dict)
      ordered.push_back({setting.order, {setting.name, setting.value}});
  }
  for (const FreshModuleAttr& attr : freshModuleAttrs_) {
    PyObject** pointer = _PyObject_GetDictPtr(attr.object.get());
    if (pointer && *pointer == dict)
      ordered.push_back({attr.order, {attr.name, attr.value}});
  }
  for (const GlobalStore& store : globalStores_)
    if (store.globals.get() == dict)
      ordered.push_back({store.order, {store.name, store.value}});
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  ValueBuilder::AssignedEntries entries;
  for (auto& [order, entry] : ordered)
    entries.push_back(std::move(entry));
  return entries;
}

std::vector<Interpreter::PendingSideEffect> Interpreter::pendingSideEffects() const {
  std::vector<std::pair<size_t, PendingSideEffect>> ordered;
  for (const RealAttrSetting& setting : realAttrSettings_) {
    // The attribute read before any assignment and assigned back: the
    // value's source is the attribute itself, guarded at entry.
    if (setting.value->source && *setting.value->source == *setting.target)
      continue;
    ordered.push_back(
        {setting.order,
         {{ir::SideEffect::Kind::Set, setting.target->str()}, setting.value, setting.where}});
  }
  for (const GlobalStore& store : globalStores_) {
    if (store.value->source && *store.value->source == *store.target)
      continue;
    ordered.push_back(
        {store.order,
         {{ir::SideEffect::Kind::Set, store.target->str()}, store.value, store.where}});
  }
  // A list whose items the program never read gets what it appended
  // (UnreadLists.cpp), a dict whose entries it never read the entries it
  // assigned (UnreadDicts.cpp); any other container its whole new contents.
  for (const MutatedContainer& mutated : mutatedContainers_) {
    ir::SideEffect::Kind kind = !mutated.value->unreadItems ? ir::SideEffect::Kind::Fill
                                : mutated.value->kind == ValueKind::List
                                    ? ir::SideEffect::Kind::Extend
                                    : ir::SideEffect::Kind::Update;
    ordered.push_back(
        {mutated.order, {{kind, mutated.value->source->str()}, mutated.value, mutated.where}});
  }
  // Calls into the world (WorldCalls.cpp): the value is (args, kwargs).
  for (const WorldCall& call : worldCalls_) {
    ir::SideEffect effect{ir::SideEffect::Kind::Call, call.target};
    effect.method = call.method;
    effect.line = call.line;
    ordered.push_back({call.order, {effect, makeTuple({call.args, call.kwargs}), call.where}});
  }
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<PendingSideEffect> effects;
  for (auto& [order, effect] : ordered)
    effects.push_back(std::move(effect));
  return effects;
}

} // namespace dync::capture
