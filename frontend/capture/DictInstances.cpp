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
// own move_to_end, popitem and copy are modelled too.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/DictInstances.h"

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/ObjectSemantics.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

namespace dync::capture {

using python::PyRef;

namespace {

using Args = std::vector<ValuePtr>;

/// dict's own `__init__` (a wrapper descriptor), which writes the items
/// directly whatever the class's `__setitem__`.
PyObject* dictInitFunction() { return PyDict_GetItemString(PyDict_Type.tp_dict, "__init__"); }

bool isClassValue(const ValuePtr& value) {
  return value->kind == ValueKind::Object && PyType_Check(value->object.get());
}

/// The receiver's name for messages: its class.
std::string receiverName(BuiltinContext& interp, const ValuePtr& value) {
  llvm::Expected<PyRef> type = interp.pythonType(value);
  if (!type) {
    llvm::consumeError(type.takeError());
    return spelling(value->kind).str();
  }
  return qualifiedTypeName(type->get());
}

/// The Dict value a mutating method of dict changes, or an error saying why
/// there is none.
llvm::Expected<ValuePtr> mutableContents(BuiltinContext& interp, const ValuePtr& receiver,
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
llvm::Expected<std::optional<size_t>> findKey(BuiltinContext& interp, const ValuePtr& dict,
                                              const ValuePtr& key) {
  for (size_t i = 0; i < dict->entries.size(); ++i) {
    const ValuePtr& existing = dict->entries[i].first;
    llvm::Expected<bool> same = sameKey(interp.semantics(), existing, key);
    if (!same)
      return same.takeError();
    if (*same)
      return std::optional<size_t>(i);
  }
  return std::optional<size_t>();
}

//===----------------------------------------------------------------------===//
// The handlers.
//===----------------------------------------------------------------------===//

/// dict.__new__(cls): an empty dict, OrderedDict, or object of a class
/// deriving from them. The items come from __init__.
llvm::Expected<ValuePtr> dictNew(BuiltinContext&, const ValuePtr&, Args& args, KeywordArgs&) {
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

/// Whether storing an item into \p receiver runs Python: an object of a
/// class deriving from OrderedDict whose `__setitem__` is Python code.
/// OrderedDict's `__init__` and `update` store through `__setitem__`
/// (MutableMapping's update), where dict's write the items directly.
bool storesThroughPython(const ValuePtr& receiver) {
  if (receiver->kind != ValueKind::Instance || !receiver->contents || !receiver->object ||
      !PyType_Check(receiver->object.get()))
    return false;
  auto* type = reinterpret_cast<PyTypeObject*>(receiver->object.get());
  PyTypeObject* ordered = orderedDictType();
  if (!ordered || !PyType_IsSubtype(type, ordered))
    return false;
  PyRef name = PyRef::steal(python::newStr("__setitem__"));
  PyObject* setItem = _PyType_Lookup(type, name.get());
  return setItem && PyFunction_Check(setItem);
}

/// OrderedDict's `update(self, *args, **kwargs)` on an object whose class
/// stores through Python: the items are gathered as dict.update gathers
/// them, then stored one by one through the class's `__setitem__`.
llvm::Expected<ValuePtr> updateThroughSetItem(BuiltinContext& interp, const ValuePtr& receiver,
                                              const Args& rest, const KeywordArgs& kwargs) {
  ValuePtr gathered = makeValue(ValueKind::Dict);
  llvm::Expected<ValuePtr> update = interp.getAttr(gathered, "update");
  if (!update)
    return update.takeError();
  llvm::Expected<ValuePtr> done = interp.call(*update, rest, kwargs);
  if (!done)
    return done.takeError();
  for (const auto& [key, value] : gathered->entries) {
    llvm::Expected<ValuePtr> stored =
        callInstanceSpecial(interp.semantics().context(), receiver, "__setitem__", {key, value});
    if (!stored)
      return stored.takeError();
  }
  return makeNone();
}

/// dict.__init__(self, mapping_or_pairs=(), **kwargs): as dict.update.
llvm::Expected<ValuePtr> dictInit(BuiltinContext& interp, const ValuePtr& self, Args& args,
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
  if (self->object.get() != dictInitFunction() && storesThroughPython(args[0]))
    return updateThroughSetItem(interp, args[0], Args(args.begin() + 1, args.end()), kwargs);
  llvm::Expected<ValuePtr> update = interp.getAttr(*contents, "update");
  if (!update)
    return update.takeError();
  llvm::Expected<ValuePtr> done = interp.call(*update, Args(args.begin() + 1, args.end()), kwargs);
  if (!done)
    return done.takeError();
  return makeNone();
}

llvm::Expected<ValuePtr> dictSetItem(BuiltinContext& interp, const ValuePtr&, Args& args,
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

llvm::Expected<ValuePtr> dictDelItem(BuiltinContext& interp, const ValuePtr&, Args& args,
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
    return keyError(interp.semantics().context(), args[1]);
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

llvm::Expected<ValuePtr> dictGetItem(BuiltinContext& interp, const ValuePtr&, Args& args,
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
    // Python's (Counter's) or defaultdict's own (DictInstancesDefault.cpp).
    llvm::Expected<ValuePtr> missing =
        callInstanceSpecial(interp.semantics().context(), args[0], "__missing__", {args[1]});
    if (!missing || *missing)
      return missing;
    return keyError(interp.semantics().context(), args[1]);
  }
  return interp.getItem(readable(args[0]), args[1]);
}

llvm::Expected<ValuePtr> dictContains(BuiltinContext& interp, const ValuePtr&, Args& args,
                                      KeywordArgs& kwargs) {
  if (llvm::Error error = expectArgs(args, kwargs, 2, "__contains__"))
    return error;
  llvm::Expected<bool> in = interp.contains(readable(args[0]), args[1]);
  if (!in)
    return in.takeError();
  return makeBool(*in);
}

llvm::Expected<ValuePtr> dictLen(BuiltinContext& interp, const ValuePtr&, Args& args,
                                 KeywordArgs& kwargs) {
  if (llvm::Error error = expectArgs(args, kwargs, 1, "__len__"))
    return error;
  return interp.length(readable(args[0]));
}

llvm::Expected<ValuePtr> dictIter(BuiltinContext& interp, const ValuePtr&, Args& args,
                                  KeywordArgs& kwargs) {
  if (llvm::Error error = expectArgs(args, kwargs, 1, "__iter__"))
    return error;
  return interp.iter(readable(args[0]));
}

/// OrderedDict's own keys, values, items, get, setdefault, pop, update and
/// clear, called on an OrderedDict or an object of a class deriving from
/// it: dict's method of the same name on the contents.
llvm::Expected<ValuePtr> orderedDictMethod(BuiltinContext& interp, const ValuePtr& self, Args& args,
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
  if (*text == "update" && storesThroughPython(args[0]))
    return updateThroughSetItem(interp, args[0], Args(args.begin() + 1, args.end()), kwargs);
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

//===----------------------------------------------------------------------===//
// OrderedDict's own methods: move_to_end, popitem and copy, on an
// OrderedDict or an object of a class deriving from it. For such an object
// CPython's C code reads, deletes and stores items through the class's
// __getitem__, __delitem__ and __setitem__, which may be Python; so do these.
//===----------------------------------------------------------------------===//

/// The receiver of an OrderedDict method, checked to be one.
llvm::Expected<ValuePtr> orderedReceiver(BuiltinContext& interp, const Args& args,
                                         llvm::StringRef method) {
  if (args.empty())
    return captureError("descriptor '" + method +
                        "' of 'collections.OrderedDict' object needs an argument");
  llvm::Expected<PyRef> type = interp.pythonType(args[0]);
  if (!type)
    return type.takeError();
  if (!PyType_Check(type->get()) ||
      !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(type->get()), orderedDictType()))
    return raiseBuiltin(PyExc_TypeError, "descriptor '" + method +
                                             "' for 'collections.OrderedDict' objects doesn't "
                                             "apply to a '" +
                                             qualifiedTypeName(type->get()) + "' object");
  if (!dictContents(args[0])) {
    // A real OrderedDict the program's state holds (a global, a module's
    // table): reordering or popping it would change it for real.
    if (method != "copy")
      return captureError("calling OrderedDict." + method + "() on a " +
                          receiverName(interp, args[0]) +
                          " that is not a value of the program's run (a side effect outside "
                          "the graph)");
    return captureError("OrderedDict.copy() of a " + receiverName(interp, args[0]) +
                        " that is not a value of the program's run is not supported");
  }
  return args[0];
}

/// The `last` argument of move_to_end and popitem: the one after the
/// receiver's \p position other arguments, or the keyword; true if absent.
llvm::Expected<bool> lastArgument(BuiltinContext& interp, const Args& args,
                                  const KeywordArgs& kwargs, size_t position,
                                  llvm::StringRef method) {
  ValuePtr last;
  if (args.size() > position + 1)
    last = args[position + 1];
  for (const auto& [name, value] : kwargs) {
    if (name != "last" || last)
      return raiseBuiltin(PyExc_TypeError, "OrderedDict." + method +
                                               "() got an unexpected or repeated keyword "
                                               "argument '" +
                                               name + "'");
    last = value;
  }
  if (args.size() > position + 2)
    return raiseBuiltin(PyExc_TypeError, "OrderedDict." + method + "() takes at most " +
                                             llvm::Twine(position + 1) + " arguments");
  if (!last)
    return true;
  return interp.truth(last);
}

llvm::Expected<ValuePtr> orderedMoveToEnd(BuiltinContext& interp, const ValuePtr&, Args& args,
                                          KeywordArgs& kwargs) {
  llvm::Expected<ValuePtr> receiver = orderedReceiver(interp, args, "move_to_end");
  if (!receiver)
    return receiver.takeError();
  if (args.size() < 2)
    return raiseBuiltin(PyExc_TypeError, "move_to_end() missing required argument 'key'");
  llvm::Expected<bool> last = lastArgument(interp, args, kwargs, 1, "move_to_end");
  if (!last)
    return last.takeError();
  llvm::Expected<ValuePtr> contents = mutableContents(interp, *receiver, "move_to_end");
  if (!contents)
    return contents.takeError();
  auto& entries = (*contents)->entries;
  llvm::Expected<std::optional<size_t>> at = findKey(interp, *contents, args[1]);
  if (!at)
    return at.takeError();
  if (!*at)
    return keyError(interp.semantics().context(), args[1]);
  auto entry = entries[**at];
  entries.erase(entries.begin() + **at);
  entries.insert(*last ? entries.end() : entries.begin(), std::move(entry));
  return makeNone();
}

llvm::Expected<ValuePtr> orderedPopItem(BuiltinContext& interp, const ValuePtr&, Args& args,
                                        KeywordArgs& kwargs) {
  llvm::Expected<ValuePtr> receiver = orderedReceiver(interp, args, "popitem");
  if (!receiver)
    return receiver.takeError();
  llvm::Expected<bool> last = lastArgument(interp, args, kwargs, 0, "popitem");
  if (!last)
    return last.takeError();
  llvm::Expected<ValuePtr> contents = mutableContents(interp, *receiver, "popitem");
  if (!contents)
    return contents.takeError();
  auto& entries = (*contents)->entries;
  if (entries.empty())
    return raiseBuiltin(PyExc_KeyError, "dictionary is empty");
  ValuePtr key = *last ? entries.back().first : entries.front().first;
  if ((*receiver)->kind == ValueKind::Instance) {
    llvm::Expected<ValuePtr> value =
        callInstanceSpecial(interp.semantics().context(), *receiver, "__getitem__", {key});
    if (!value)
      return value.takeError();
    llvm::Expected<ValuePtr> deleted =
        callInstanceSpecial(interp.semantics().context(), *receiver, "__delitem__", {key});
    if (!deleted)
      return deleted.takeError();
    if (!*value || !*deleted)
      return captureError("OrderedDict.popitem() on a " + receiverName(interp, *receiver) +
                          " value: its class has no __getitem__ or __delitem__");
    return makeTuple({key, *value});
  }
  ValuePtr value = *last ? entries.back().second : entries.front().second;
  entries.erase(*last ? entries.end() - 1 : entries.begin());
  return makeTuple({key, value});
}

llvm::Expected<ValuePtr> orderedCopy(BuiltinContext& interp, const ValuePtr&, Args& args,
                                     KeywordArgs& kwargs) {
  llvm::Expected<ValuePtr> receiver = orderedReceiver(interp, args, "copy");
  if (!receiver)
    return receiver.takeError();
  if (args.size() != 1 || !kwargs.empty())
    return raiseBuiltin(PyExc_TypeError, "OrderedDict.copy() takes no arguments");
  if ((*receiver)->kind == ValueKind::Dict) {
    ValuePtr copy = makeValue(ValueKind::Dict, (*receiver)->object);
    copy->entries = (*receiver)->entries;
    return copy;
  }
  // An object of a subclass: its class called with no arguments, then each
  // item stored through its __setitem__, as odict_copy does.
  llvm::Expected<PyRef> type = interp.pythonType(*receiver);
  if (!type)
    return type.takeError();
  llvm::Expected<ValuePtr> copy = interp.call(makeValue(ValueKind::Object, *type), {});
  if (!copy)
    return copy.takeError();
  std::vector<ValuePtr> keys;
  for (const auto& entry : (*receiver)->contents->entries)
    keys.push_back(entry.first);
  for (const ValuePtr& key : keys) {
    llvm::Expected<ValuePtr> value =
        callInstanceSpecial(interp.semantics().context(), *receiver, "__getitem__", {key});
    if (!value)
      return value.takeError();
    if (!*value || (*copy)->kind != ValueKind::Instance)
      return captureError("OrderedDict.copy() of a " + receiverName(interp, *receiver) +
                          " value is not supported");
    llvm::Expected<ValuePtr> stored =
        callInstanceSpecial(interp.semantics().context(), *copy, "__setitem__", {key, *value});
    if (!stored)
      return stored.takeError();
  }
  return *copy;
}

/// Whether \p value stands for an object CPython can hash and compare as
/// it is: a constant, a real object, or a tuple of those.
bool realKey(const ValuePtr& value) {
  if (value->isConstant() || value->kind == ValueKind::Object)
    return true;
  return value->kind == ValueKind::Tuple && llvm::all_of(value->items, realKey);
}

} // namespace

PyObject* pythonMethodOfClass(PyObject* object, llvm::StringRef name) {
  PyRef key = PyRef::steal(python::newStr(name));
  PyObject* method = _PyType_Lookup(Py_TYPE(object), key.get());
  return method && PyFunction_Check(method) ? method : nullptr;
}

namespace {

/// Whether the class of real object \p object writes __eq__ in Python.
bool writesPythonEquality(PyObject* object) { return pythonMethodOfClass(object, "__eq__"); }

/// CPython's hash of a real key (a constant, a real object, a tuple of
/// those), computed as dict computes it: the class's own __hash__, which
/// for a real object may be the program's Python code, run on the real
/// object as `==` on real objects is (ObjectSemantics::compare).
llvm::Expected<Py_hash_t> realHash(SemanticsContext& cx, const ValuePtr& key) {
  PyRef real = key->object;
  if (key->kind == ValueKind::Tuple) {
    llvm::Expected<PyRef> converted = cx.toPython(key);
    if (!converted)
      return converted.takeError();
    real = *converted;
  }
  Py_hash_t hash = PyObject_Hash(real.get());
  if (hash == -1 && PyErr_Occurred())
    return programError("hashing a dict key");
  return hash;
}

/// How dict hashes a key: by identity (object's own __hash__, so only the
/// object itself is the same key), by a value CPython computes (a real
/// key), or by its class's __hash__ written in Python (an object made while
/// capturing), which capture does not run: Python's data model has equal
/// objects hash equal, so `==` alone decides, and the hash, which may be
/// this process's hash of a str, never becomes a value of the graph.
struct KeyHash {
  enum Kind { Identity, Value, ByEquality } kind;
  Py_hash_t value = 0;
};

llvm::Expected<KeyHash> keyHash(SemanticsContext& cx, const ValuePtr& key) {
  // A real object whose class writes __eq__ in Python (a uuid.UUID) is
  // found by that __eq__, run inside capture so that what it reads of the
  // object is guarded; its CPython hash would decide unequal keys with no
  // guard behind the answer.
  if (key->kind == ValueKind::Object && writesPythonEquality(key->object.get()) &&
      PyObject_HashNotImplemented != Py_TYPE(key->object.get())->tp_hash)
    return KeyHash{KeyHash::ByEquality};
  if (realKey(key)) {
    llvm::Expected<Py_hash_t> hash = realHash(cx, key);
    if (!hash)
      return hash.takeError();
    return KeyHash{KeyHash::Value, *hash};
  }
  if (key->kind != ValueKind::Instance)
    return KeyHash{KeyHash::Identity};
  PyRef name = PyRef::steal(python::newStr("__hash__"));
  PyObject* hash = _PyType_Lookup(reinterpret_cast<PyTypeObject*>(key->object.get()), name.get());
  if (hash == Py_None)
    return raiseBuiltin(PyExc_TypeError,
                        "unhashable type: '" + qualifiedTypeName(key->object.get()) + "'");
  if (!hash || !PyFunction_Check(hash))
    return KeyHash{KeyHash::Identity};
  return KeyHash{KeyHash::ByEquality};
}

} // namespace

llvm::Expected<bool> sameKey(ObjectSemantics& semantics, const ValuePtr& a, const ValuePtr& b) {
  SemanticsContext& cx = semantics.context();
  llvm::Expected<bool> same = ObjectSemantics::identical(cx.values(), a, b);
  if (!same)
    return same;
  if (*same) {
    // dict finds the very object by identity, but the program may later
    // pass another object equal to it or not: its __eq__ runs for the
    // guards on what it reads (see keyHash), whatever it answers. Either
    // side may be the one read through a source (a stored key is a
    // constant of the dict's value; the looked-up one a global's).
    if ((a->kind == ValueKind::Object || b->kind == ValueKind::Object) && a->object &&
        writesPythonEquality(a->object.get())) {
      llvm::Expected<ValuePtr> equal = semantics.compare("==", a, b);
      if (!equal)
        return equal.takeError();
    }
    return true;
  }
  bool real = realKey(a) && realKey(b);
  bool object = a->kind == ValueKind::Object || b->kind == ValueKind::Object ||
                a->kind == ValueKind::Instance || b->kind == ValueKind::Instance;
  if (!real && !(object && (realKey(a) || a->kind == ValueKind::Instance) &&
                 (realKey(b) || b->kind == ValueKind::Instance)))
    return false;
  // Constants (and tuples of them) compare as CPython compares them, their
  // hashes agreeing with their equality.
  if (!object) {
    llvm::Expected<PyRef> left = a->kind == ValueKind::Tuple ? cx.toPython(a) : a->object;
    if (!left)
      return left.takeError();
    llvm::Expected<PyRef> right = b->kind == ValueKind::Tuple ? cx.toPython(b) : b->object;
    if (!right)
      return right.takeError();
    int equal = PyObject_RichCompareBool(left->get(), right->get(), Py_EQ);
    if (equal < 0)
      return programError("comparing dict keys");
    return equal == 1;
  }
  // An object key (a uuid.UUID, an object of the program's class with
  // __hash__ and __eq__) is found as dict finds it: equal hashes, then the
  // stored key's __eq__ (its class's Python code inlined for an object
  // made while capturing; see KeyHash for its hash).
  llvm::Expected<KeyHash> hashA = keyHash(cx, a);
  if (!hashA)
    return hashA.takeError();
  llvm::Expected<KeyHash> hashB = keyHash(cx, b);
  if (!hashB)
    return hashB.takeError();
  if (hashA->kind == KeyHash::Identity || hashB->kind == KeyHash::Identity)
    return false;
  if (hashA->kind == KeyHash::Value && hashB->kind == KeyHash::Value &&
      hashA->value != hashB->value)
    return false;
  llvm::Expected<ValuePtr> equal = semantics.compare("==", a, b);
  if (!equal)
    return equal.takeError();
  return semantics.truth(*equal);
}

llvm::Error keyError(SemanticsContext& cx, const ValuePtr& key) {
  if (key->isConstant() || key->kind == ValueKind::Object)
    return raiseWith(PyExc_KeyError, key->object.get(), "KeyError: " + reprOf(key->object.get()));
  if (realKey(key)) {
    llvm::Expected<PyRef> real = cx.toPython(key);
    if (!real)
      return real.takeError();
    return raiseWith(PyExc_KeyError, real->get(), "KeyError: " + reprOf(real->get()));
  }
  return captureError("KeyError: " + spelling(key->kind).str());
}

bool isDictClass(PyTypeObject* type) {
  if (type->tp_new != PyDict_Type.tp_new)
    return false;
  // The builtin the class is laid out as: dict, OrderedDict or defaultdict,
  // whose behaviour is modelled (defaultdict itself included).
  PyTypeObject* base = type;
  while (base && (base->tp_flags & Py_TPFLAGS_HEAPTYPE))
    base = base->tp_base;
  if (base && base == defaultDictType())
    return true;
  if (!(type->tp_flags & Py_TPFLAGS_HEAPTYPE))
    return false;
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

llvm::Expected<ValuePtr> callInstanceSpecial(SemanticsContext& cx, const ValuePtr& instance,
                                             llvm::StringRef name, std::vector<ValuePtr> args) {
  llvm::Expected<ValuePtr> python = cx.callSpecial(instance, name, args);
  if (!python || *python || !instance->contents)
    return python;
  PyRef nameObject = PyRef::steal(python::newStr(name));
  PyObject* attribute =
      _PyType_Lookup(reinterpret_cast<PyTypeObject*>(instance->object.get()), nameObject.get());
  if (!attribute)
    return nullptr;
  llvm::Expected<ValuePtr> method = cx.values().wrapReal(attribute, nullptr);
  if (!method)
    return method.takeError();
  if ((*method)->kind != ValueKind::Builtin)
    return nullptr;
  args.insert(args.begin(), instance);
  return cx.call(*method, std::move(args));
}

void syncAttributes(const ValuePtr& instance) {
  if (instance->attributeDict)
    instance->entries = instance->attributeDict->entries;
}

llvm::Error registerDictInstanceHandlers(BuiltinContext& interp) {
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
  const std::pair<const char*, BuiltinHandler> own[] = {
      {"move_to_end", orderedMoveToEnd}, {"popitem", orderedPopItem}, {"copy", orderedCopy}};
  for (const auto& [name, handler] : own)
    if (PyObject* attribute = PyDict_GetItemString(ordered->tp_dict, name))
      addBuiltin(interp, attribute, handler);
  return registerDefaultDictHandlers(interp);
}

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

} // namespace dync::capture
