//===- ListInstances.cpp - Objects of classes deriving from list ----------===//
//
// `Layers([self.a, self.b])` in forward, or such an object held by a module:
// a List value whose `object` is its class, so `type()`, `isinstance` and
// attribute reads see the class (its Python methods inlined with the list
// as `self`), while list's methods, iteration and subscripts act on the
// items as on any list (BuiltinMethods.cpp). What a list subclass does like
// a list (concatenation, slices) gives plain lists, as CPython's does.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/ListInstances.h"

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/embedding/PyStrings.h"

namespace dync::capture {

using python::PyRef;

namespace {

using Args = std::vector<ValuePtr>;

PyObject* listSlot(const char* name) { return PyDict_GetItemString(PyList_Type.tp_dict, name); }

/// list.__init__(self, iterable=()): the items become the iterable's.
llvm::Expected<ValuePtr> listInit(BuiltinContext& interp, const ValuePtr&, Args& args,
                                  KeywordArgs& kwargs) {
  if (args.empty() || args[0]->kind != ValueKind::List)
    return captureError("list.__init__() on a value capture does not model as a list");
  if (!kwargs.empty())
    return raiseBuiltin(PyExc_TypeError, "list() takes no keyword arguments");
  if (args.size() > 2)
    return raiseBuiltin(PyExc_TypeError,
                        "list expected at most 1 argument, got " + llvm::Twine(args.size() - 1));
  std::vector<ValuePtr> items;
  if (args.size() == 2) {
    llvm::Expected<std::vector<ValuePtr>> unpacked = interp.unpack(args[1]);
    if (!unpacked)
      return unpacked.takeError();
    items = std::move(*unpacked);
  }
  if (llvm::Error error = interp.noteContainerMutation(args[0], "calling __init__()"))
    return error;
  args[0]->items = std::move(items);
  return makeNone();
}

} // namespace

bool isListClass(PyTypeObject* type) {
  return (type->tp_flags & Py_TPFLAGS_HEAPTYPE) && PyType_IsSubtype(type, &PyList_Type) &&
         type->tp_new == PyList_Type.tp_new;
}

std::string ownSpecialMethod(PyTypeObject* type) {
  // What a class statement puts in every class's dict, __init__, which
  // capture runs, and __call__, which list lacks, so that defining it adds
  // calling the object (Hugging Face's LogitsProcessorList) without
  // changing anything a list does; any other special method would change
  // what a list value does.
  static const llvm::StringRef allowed[] = {
      "__module__",        "__qualname__",      "__doc__",         "__dict__",
      "__weakref__",       "__init__",          "__annotations__", "__orig_bases__",
      "__parameters__",    "__slots__",         "__firstlineno__", "__static_attributes__",
      "__class_getitem__", "__init_subclass__", "__call__"};
  for (PyTypeObject* base = type; base && base != &PyList_Type; base = base->tp_base) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(base->tp_dict, &pos, &key, &value)) {
      std::optional<std::string> name = PyUnicode_Check(key) ? python::utf8Of(key) : std::nullopt;
      if (!name || name->size() < 4 || !llvm::StringRef(*name).starts_with("__") ||
          !llvm::StringRef(*name).ends_with("__"))
        continue;
      if (!llvm::is_contained(allowed, llvm::StringRef(*name)))
        return *name;
    }
  }
  return "";
}

bool readsAsList(PyTypeObject* type) {
  for (const char* name : {"__getitem__", "__len__", "__iter__", "__setitem__"}) {
    PyRef key = PyRef::steal(python::newStr(name));
    if (_PyType_Lookup(type, key.get()) != listSlot(name))
      return false;
  }
  return true;
}

ValuePtr newListInstance(const ValuePtr& cls) {
  ValuePtr list = makeList({});
  list->object = cls->object;
  return list;
}

llvm::Error registerListInstanceHandlers(BuiltinContext& interp) {
  PyObject* init = listSlot("__init__");
  if (!init)
    return captureError("list has no __init__");
  addBuiltin(interp, init, listInit);
  return llvm::Error::success();
}

} // namespace dync::capture
