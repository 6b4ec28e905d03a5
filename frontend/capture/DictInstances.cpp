//===- DictInstances.cpp - Objects of classes deriving from dict ----------===//
//
// `class Output(OrderedDict)` with a dataclass's fields, a __post_init__
// that copies them into the items, and a __setitem__/__setattr__ pair that
// keeps the two in step (the shape of transformers' ModelOutput): capture
// never makes the real object. dict's __new__ gives an Instance whose
// `contents` is a Dict value; the class's Python methods run inlined over
// it, and dict's and OrderedDict's C methods, however the program reaches
// them (the class, super(), the unbound descriptor), are modelled here over
// the contents. OrderedDict keeps insertion order as dict does, so its
// overrides of dict's methods behave as dict's for what is modelled; its
// own extras (move_to_end, popitem(last=False)) are not.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/DictInstances.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

namespace dync::capture {

using python::PyRef;

namespace {

using Args = std::vector<ValuePtr>;

PyTypeObject* orderedDictType() {
  static PyObject* type = [] {
    PyRef module = PyRef::steal(PyImport_ImportModule("collections"));
    PyObject* found = module ? PyObject_GetAttrString(module.get(), "OrderedDict") : nullptr;
    if (!found)
      PyErr_Clear();
    return found; // kept for the process: classes are immortal enough
  }();
  return type && PyType_Check(type) ? reinterpret_cast<PyTypeObject*>(type) : nullptr;
}

bool isClassValue(const ValuePtr& value) {
  return value->kind == ValueKind::Object && PyType_Check(value->object.get());
}

/// The receiver's name for messages: its class.
std::string receiverName(Interpreter& interp, const ValuePtr& value) {
  llvm::Expected<PyRef> type = interp.pythonType(value);
  if (!type) {
    llvm::consumeError(type.takeError());
    return spelling(value->kind).str();
  }
  return qualifiedTypeName(type->get());
}

/// The Dict value a mutating method of dict changes, or an error saying why
/// there is none.
llvm::Expected<ValuePtr> mutableContents(Interpreter& interp, const ValuePtr& receiver,
                                         llvm::StringRef method) {
  ValuePtr contents = dictContents(receiver);
  if (!contents)
    return captureError("dict." + method + "() on a " + receiverName(interp, receiver) +
                        " value, which capture cannot change");
  if (llvm::Error error = interp.noteContainerMutation(contents, "calling " + method + "()"))
    return error;
  return contents;
}

llvm::Error expectArgs(const Args& args, const KeywordArgs& kwargs, size_t count,
                       llvm::StringRef method) {
  if (args.size() != count || !kwargs.empty())
    return captureError("dict." + method + "() takes " + llvm::Twine(count - 1) +
                        " argument(s) besides the dict");
  return llvm::Error::success();
}

/// Where \p key is among \p dict's entries, as dict finds it: the same
/// value, or an equal constant.
llvm::Expected<std::optional<size_t>> findKey(Interpreter& interp, const ValuePtr& dict,
                                              const ValuePtr& key) {
  for (size_t i = 0; i < dict->entries.size(); ++i) {
    const ValuePtr& existing = dict->entries[i].first;
    llvm::Expected<bool> same = interp.identical(existing, key);
    if (!same)
      return same.takeError();
    if (*same)
      return std::optional<size_t>(i);
    if (existing->isConstant() && key->isConstant()) {
      int equal = PyObject_RichCompareBool(existing->object.get(), key->object.get(), Py_EQ);
      if (equal < 0)
        return pythonError("comparing dict keys");
      if (equal)
        return std::optional<size_t>(i);
    }
  }
  return std::optional<size_t>();
}

llvm::Error keyError(const ValuePtr& key) {
  if (key->isConstant() || key->kind == ValueKind::Object)
    return raiseWith(PyExc_KeyError, key->object.get(), "KeyError: " + reprOf(key->object.get()));
  return captureError("KeyError: " + spelling(key->kind).str());
}

//===----------------------------------------------------------------------===//
// The handlers.
//===----------------------------------------------------------------------===//

/// dict.__new__(cls): an empty dict, OrderedDict, or object of a class
/// deriving from them. The items come from __init__.
llvm::Expected<ValuePtr> dictNew(Interpreter&, const ValuePtr&, Args& args, KeywordArgs&) {
  if (args.empty() || !isClassValue(args[0]))
    return captureError("dict.__new__(X): X is not a type object");
  auto* type = reinterpret_cast<PyTypeObject*>(args[0]->object.get());
  if (type == &PyDict_Type)
    return makeValue(ValueKind::Dict);
  if (type == orderedDictType()) {
    ValuePtr dict = makeValue(ValueKind::Dict);
    dict->object = args[0]->object;
    return dict;
  }
  if (!isDictClass(type))
    return captureError("dict.__new__(" + qualifiedTypeName(args[0]->object.get()) +
                        "): it is not a subtype of dict that capture can make");
  return newDictInstance(args[0]);
}

/// dict.__init__(self, mapping_or_pairs=(), **kwargs): as dict.update.
llvm::Expected<ValuePtr> dictInit(Interpreter& interp, const ValuePtr&, Args& args,
                                  KeywordArgs& kwargs) {
  if (args.empty())
    return captureError("descriptor '__init__' of 'dict' object needs an argument");
  if (args.size() > 2)
    return raiseBuiltin(PyExc_TypeError,
                        "dict expected at most 1 argument, got " + llvm::Twine(args.size() - 1));
  llvm::Expected<ValuePtr> contents = mutableContents(interp, args[0], "__init__");
  if (!contents)
    return contents.takeError();
  if (args.size() == 1 && kwargs.empty())
    return makeNone();
  llvm::Expected<ValuePtr> update = interp.getAttr(*contents, "update");
  if (!update)
    return update.takeError();
  llvm::Expected<ValuePtr> done = interp.call(*update, Args(args.begin() + 1, args.end()), kwargs);
  if (!done)
    return done.takeError();
  return makeNone();
}

llvm::Expected<ValuePtr> dictSetItem(Interpreter& interp, const ValuePtr&, Args& args,
                                     KeywordArgs& kwargs) {
  if (llvm::Error error = expectArgs(args, kwargs, 3, "__setitem__"))
    return error;
  llvm::Expected<ValuePtr> contents = mutableContents(interp, args[0], "__setitem__");
  if (!contents)
    return contents.takeError();
  llvm::Expected<std::optional<size_t>> at = findKey(interp, *contents, args[1]);
  if (!at)
    return at.takeError();
  if (*at)
    (*contents)->entries[**at].second = args[2];
  else
    (*contents)->entries.emplace_back(args[1], args[2]);
  return makeNone();
}

llvm::Expected<ValuePtr> dictDelItem(Interpreter& interp, const ValuePtr&, Args& args,
                                     KeywordArgs& kwargs) {
  if (llvm::Error error = expectArgs(args, kwargs, 2, "__delitem__"))
    return error;
  llvm::Expected<ValuePtr> contents = mutableContents(interp, args[0], "__delitem__");
  if (!contents)
    return contents.takeError();
  llvm::Expected<std::optional<size_t>> at = findKey(interp, *contents, args[1]);
  if (!at)
    return at.takeError();
  if (!*at)
    return keyError(args[1]);
  (*contents)->entries.erase((*contents)->entries.begin() + **at);
  return makeNone();
}

/// The pure special methods read the receiver's items: the contents of an
/// object of a dict class, else what the interpreter does for the value
/// (a dict, a real dict object).
ValuePtr readable(const ValuePtr& receiver) {
  ValuePtr contents = dictContents(receiver);
  return contents ? contents : receiver;
}

llvm::Expected<ValuePtr> dictGetItem(Interpreter& interp, const ValuePtr&, Args& args,
                                     KeywordArgs& kwargs) {
  if (llvm::Error error = expectArgs(args, kwargs, 2, "__getitem__"))
    return error;
  // A missing key goes to the class's __missing__, as dict.__getitem__
  // does for a subclass (collections.Counter's gives 0).
  if (args[0]->kind == ValueKind::Instance && args[0]->contents) {
    llvm::Expected<std::optional<size_t>> at = findKey(interp, args[0]->contents, args[1]);
    if (!at)
      return at.takeError();
    if (*at)
      return args[0]->contents->entries[**at].second;
    llvm::Expected<ValuePtr> missing = interp.callSpecial(args[0], "__missing__", {args[1]});
    if (!missing || *missing)
      return missing;
    return keyError(args[1]);
  }
  return interp.getItem(readable(args[0]), args[1]);
}

llvm::Expected<ValuePtr> dictContains(Interpreter& interp, const ValuePtr&, Args& args,
                                      KeywordArgs& kwargs) {
  if (llvm::Error error = expectArgs(args, kwargs, 2, "__contains__"))
    return error;
  llvm::Expected<bool> in = interp.contains(readable(args[0]), args[1]);
  if (!in)
    return in.takeError();
  return makeBool(*in);
}

llvm::Expected<ValuePtr> dictLen(Interpreter& interp, const ValuePtr&, Args& args,
                                 KeywordArgs& kwargs) {
  if (llvm::Error error = expectArgs(args, kwargs, 1, "__len__"))
    return error;
  return interp.length(readable(args[0]));
}

llvm::Expected<ValuePtr> dictIter(Interpreter& interp, const ValuePtr&, Args& args,
                                  KeywordArgs& kwargs) {
  if (llvm::Error error = expectArgs(args, kwargs, 1, "__iter__"))
    return error;
  return interp.iter(readable(args[0]));
}

/// OrderedDict's own keys, values, items, get, setdefault, pop, update and
/// clear, called on an OrderedDict or an object of a class deriving from
/// it: dict's method of the same name on the contents.
llvm::Expected<ValuePtr> orderedDictMethod(Interpreter& interp, const ValuePtr& self, Args& args,
                                           KeywordArgs& kwargs) {
  PyRef name = PyRef::steal(PyObject_GetAttrString(self->object.get(), "__name__"));
  std::optional<std::string> text = name ? python::utf8Of(name.get()) : std::nullopt;
  if (!text)
    return pythonError("reading a method's name");
  if (args.empty())
    return captureError("descriptor '" + *text +
                        "' of 'collections.OrderedDict' object needs an "
                        "argument");
  ValuePtr contents = dictContents(args[0]);
  if (!contents)
    return captureError("OrderedDict." + *text + "() on a " + receiverName(interp, args[0]) +
                        " value is not supported");
  PyObject* method = PyDict_GetItemString(PyDict_Type.tp_dict, text->c_str());
  if (!method)
    return captureError("OrderedDict." + *text + "() has no dict counterpart");
  ValuePtr bound = makeValue(ValueKind::BoundMethod);
  llvm::Expected<ValuePtr> function = interp.values().wrapReal(method, nullptr);
  if (!function)
    return function.takeError();
  bound->items = {contents, *function};
  return interp.call(bound, Args(args.begin() + 1, args.end()), kwargs);
}

} // namespace

bool isDictClass(PyTypeObject* type) {
  if (!(type->tp_flags & Py_TPFLAGS_HEAPTYPE) || type->tp_new != PyDict_Type.tp_new)
    return false;
  // The builtin the class is laid out as: dict or OrderedDict, whose
  // behaviour is modelled; not defaultdict or Counter's own.
  PyTypeObject* base = type;
  while (base && (base->tp_flags & Py_TPFLAGS_HEAPTYPE))
    base = base->tp_base;
  return base == &PyDict_Type || (base && base == orderedDictType());
}

PyObject* dictNewFunction() { return PyDict_GetItemString(PyDict_Type.tp_dict, "__new__"); }

ValuePtr newDictInstance(const ValuePtr& cls) {
  auto* type = reinterpret_cast<PyTypeObject*>(cls->object.get());
  ValuePtr self = makeValue(ValueKind::Instance, cls->object);
  self->contents = makeValue(ValueKind::Dict);
  if (PyTypeObject* ordered = orderedDictType(); ordered && PyType_IsSubtype(type, ordered))
    self->contents->object = PyRef::borrow(reinterpret_cast<PyObject*>(ordered));
  return self;
}

ValuePtr dictContents(const ValuePtr& value) {
  if (value->kind == ValueKind::Dict)
    return value;
  if (value->kind == ValueKind::Instance)
    return value->contents;
  return nullptr;
}

llvm::Expected<ValuePtr> callInstanceSpecial(Interpreter& interp, const ValuePtr& instance,
                                             llvm::StringRef name, std::vector<ValuePtr> args) {
  llvm::Expected<ValuePtr> python = interp.callSpecial(instance, name, args);
  if (!python || *python || !instance->contents)
    return python;
  PyRef nameObject = PyRef::steal(python::newStr(name));
  PyObject* attribute =
      _PyType_Lookup(reinterpret_cast<PyTypeObject*>(instance->object.get()), nameObject.get());
  if (!attribute)
    return nullptr;
  llvm::Expected<ValuePtr> method = interp.values().wrapReal(attribute, nullptr);
  if (!method)
    return method.takeError();
  if ((*method)->kind != ValueKind::Builtin)
    return nullptr;
  args.insert(args.begin(), instance);
  return interp.call(*method, std::move(args));
}

void syncAttributes(const ValuePtr& instance) {
  if (instance->attributeDict)
    instance->entries = instance->attributeDict->entries;
}

llvm::Error registerDictInstanceHandlers(Interpreter& interp) {
  PyTypeObject* ordered = orderedDictType();
  if (!ordered)
    return captureError("collections.OrderedDict cannot be imported");
  const std::pair<const char*, BuiltinHandler> specials[] = {
      {"__init__", dictInit},       {"__setitem__", dictSetItem},   {"__delitem__", dictDelItem},
      {"__getitem__", dictGetItem}, {"__contains__", dictContains}, {"__len__", dictLen},
      {"__iter__", dictIter},
  };
  for (PyTypeObject* type : {&PyDict_Type, ordered})
    for (const auto& [name, handler] : specials)
      // OrderedDict overrides only some of them; the rest it inherits.
      if (PyObject* attribute = PyDict_GetItemString(type->tp_dict, name))
        addBuiltin(interp, attribute, handler);
  PyObject* dictNewAttr = dictNewFunction();
  if (!dictNewAttr)
    return captureError("dict has no __new__");
  addBuiltin(interp, dictNewAttr, dictNew);
  for (const char* name :
       {"keys", "values", "items", "get", "setdefault", "pop", "update", "clear"})
    if (PyObject* attribute = PyDict_GetItemString(ordered->tp_dict, name))
      addBuiltin(interp, attribute, orderedDictMethod);
  return llvm::Error::success();
}

} // namespace dync::capture
