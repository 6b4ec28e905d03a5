//===- ClassAttributeSources.cpp - Guarding what a class gives its objects -===//
//
// An object made while capturing (a named tuple, a dataclass) has no source,
// yet what its class holds (`_fields`, `_asdict`, a class constant, a
// method) is state the program can change after export: `Out._fields = ...`
// or `Out.scale = 3.0` keeps the class the same object with other contents.
// Such a read is therefore made through the class itself, named as guards
// can reach it (`G['Out']` in the entry module, `M['pkg.mod'].Out`
// elsewhere), so that the value found is pinned as any other attribute
// read, and the classes the MRO passes on the way are pinned not to hold
// the name.
//
//===----------------------------------------------------------------------===//

#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/ValueBuilder.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace dync::capture {

using ir::Guard;
using ir::Source;
using python::PyRef;

namespace {

/// The str attribute \p name of class \p type (its __module__ or
/// __qualname__), read from the type's own dict or slots; empty if it has
/// none.
std::string classString(PyTypeObject* type, const char* name) {
  PyRef value = PyRef::steal(PyObject_GetAttrString(reinterpret_cast<PyObject*>(type), name));
  if (!value || !PyUnicode_Check(value.get())) {
    PyErr_Clear();
    return {};
  }
  std::optional<std::string> text = python::utf8Of(value.get());
  return text ? *text : std::string();
}

/// What the instance dict of \p object holds under \p name, without running
/// any descriptor (borrowed; null when absent).
PyObject* ownDictItem(PyObject* object, llvm::StringRef name) {
  PyObject** pointer = _PyObject_GetDictPtr(object);
  PyObject* dict = pointer ? *pointer : nullptr;
  if (!dict || !PyDict_Check(dict))
    return nullptr;
  PyRef key = PyRef::steal(python::newStr(name));
  PyObject* held = key ? PyDict_GetItemWithError(dict, key.get()) : nullptr;
  if (!held)
    PyErr_Clear();
  return held;
}

} // namespace

SourcePtr ValueBuilder::sourceOfClass(PyTypeObject* type) {
  // Classes written in C cannot change; only a Python class needs a source.
  if (!(type->tp_flags & Py_TPFLAGS_HEAPTYPE))
    return nullptr;
  std::string module = classString(type, "__module__");
  std::string qualname = classString(type, "__qualname__");
  // A class defined inside a function is reachable by no name.
  if (module.empty() || qualname.empty() || llvm::StringRef(qualname).contains('<'))
    return nullptr;
  // Capture's own stand-ins (an autograd.Function's context, in the
  // embedded modules `dync_*` compiled into the binary) exist only while
  // exporting: no guard could read them when the artifact runs, and the
  // program cannot change them.
  if (llvm::StringRef(module).starts_with("dync_"))
    return nullptr;
  llvm::SmallVector<llvm::StringRef, 4> parts;
  llvm::StringRef(qualname).split(parts, '.');
  // The entry module's globals are read as the rewritten code reads them;
  // another module's through sys.modules, as its functions' globals are.
  PyObject* holder = nullptr;
  SourcePtr source;
  PyObject* entryName = entryGlobals_ ? PyDict_GetItemString(entryGlobals_, "__name__") : nullptr;
  std::optional<std::string> entryModule =
      entryName && PyUnicode_Check(entryName) ? python::utf8Of(entryName) : std::nullopt;
  if (entryModule && *entryModule == module) {
    holder = PyDict_GetItemString(entryGlobals_, parts.front().str().c_str());
    source = Source::global(parts.front());
  } else {
    PyRef moduleName = PyRef::steal(python::newStr(module));
    PyRef imported = moduleName ? PyRef::steal(PyImport_GetModule(moduleName.get())) : PyRef();
    PyErr_Clear();
    if (!imported || !PyModule_Check(imported.get()))
      return nullptr;
    holder = ownDictItem(imported.get(), parts.front());
    source = Source::attr(Source::module(module), parts.front());
  }
  // A nested class (`Outer.Inner`) is read through its outer classes.
  for (llvm::StringRef part : llvm::ArrayRef(parts).drop_front()) {
    if (!holder || !PyType_Check(holder))
      return nullptr;
    holder = ownDictItem(holder, part);
    source = Source::attr(source, part);
  }
  if (holder != reinterpret_cast<PyObject*>(type))
    return nullptr;
  // The name must go on naming this class: reads through it are guarded by
  // value, and a class of the same name with the same contents computes
  // the same.
  guards_.add(classGuard(source, holder));
  return source;
}

SourcePtr ValueBuilder::classLookupSource(PyTypeObject* type, llvm::StringRef name,
                                          PyObject* after) {
  PyObject* mro = type->tp_mro;
  if (!mro || !PyTuple_Check(mro))
    return nullptr;
  PyRef key = PyRef::steal(python::newStr(name));
  if (!key) {
    PyErr_Clear();
    return nullptr;
  }
  // super(after, obj) looks from the class after `after` on.
  Py_ssize_t first = 0;
  if (after) {
    while (first < PyTuple_GET_SIZE(mro) && PyTuple_GET_ITEM(mro, first) != after)
      ++first;
    if (first == PyTuple_GET_SIZE(mro))
      return nullptr;
    ++first;
  }
  // Python's lookup: the first class of the MRO whose own dict holds the
  // name. Each Python class passed on the way must go on not holding it.
  llvm::SmallVector<SourcePtr, 4> passed;
  for (Py_ssize_t i = first; i < PyTuple_GET_SIZE(mro); ++i) {
    auto* base = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i));
    PyObject* dict = base->tp_dict;
    PyObject* held = dict ? PyDict_GetItemWithError(dict, key.get()) : nullptr;
    if (!held)
      PyErr_Clear();
    bool python = base->tp_flags & Py_TPFLAGS_HEAPTYPE;
    SourcePtr baseSource = python ? sourceOfClass(base) : nullptr;
    // A Python class no guard can reach: what it holds, or not, is assumed
    // unchanged.
    if (python && !baseSource)
      return nullptr;
    if (held) {
      // Which classes the lookup visits is the MRO's business: a base
      // class's name still naming the same class says nothing of whether
      // `type` still derives from it (`Sub.__bases__ = (Other,)`).
      if (!pinMroPrefix(type, i))
        return nullptr;
      for (const SourcePtr& earlier : passed)
        guards_.add(Guard::absent(Source::attr(earlier, name)));
      // What a class written in C holds cannot change, but a Python class
      // before it in the MRO may come to shadow it (`Config.__init__ =
      // ...` on a class that inherited object's).
      return python ? Source::attr(baseSource, name) : nullptr;
    }
    if (python)
      passed.push_back(baseSource);
  }
  return nullptr;
}

bool ValueBuilder::pinMroPrefix(PyTypeObject* type, Py_ssize_t last) {
  if (last == 0)
    return true;
  PyObject* mro = type->tp_mro;
  // A class written in C has the MRO it was built with.
  if (!(type->tp_flags & Py_TPFLAGS_HEAPTYPE))
    return true;
  SourcePtr typeSource = sourceOfClass(type);
  if (!typeSource)
    return false;
  SourcePtr mroSource = Source::attr(typeSource, "__mro__");
  for (Py_ssize_t i = 1; i <= last; ++i)
    guards_.add(classGuard(Source::index(mroSource, i), PyTuple_GET_ITEM(mro, i)));
  return true;
}

SourcePtr ValueBuilder::wrappedFunctionSource(const SourcePtr& descriptorSource,
                                              PyObject* descriptor) {
  if (!descriptorSource)
    return nullptr;
  // The descriptor stays the kind it was (a classmethod binds to the class,
  // a staticmethod to nothing); the function it wraps is its __func__
  // member, which guards read in place.
  guards_.add(typeGuard(descriptorSource, reinterpret_cast<PyObject*>(Py_TYPE(descriptor))));
  return Source::attr(descriptorSource, "__func__");
}

llvm::Expected<ValuePtr> ValueBuilder::wrapClassAttribute(PyObject* value,
                                                          const SourcePtr& source) {
  return wrapReal(value, source && keepsClassReadSource(value) ? source : nullptr);
}

} // namespace dync::capture
