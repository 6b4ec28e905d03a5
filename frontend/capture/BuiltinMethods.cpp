//===- BuiltinMethods.cpp - Methods of builtin types over symbolic values -===//
//
// Every method of the table (BuiltinMethods.def) runs through CPython's own
// method object on real objects standing for the values capture holds, so
// that what `dict.pop`, `list.sort` or `str.split` computes is CPython's,
// not a copy of it written here. A `Realizer` makes the real objects for one
// call and reads the result back:
//
// - constants (and symbolic numbers, whose comparisons torch's ShapeEnv
//   records) are passed as they are;
// - tuples, lists, sets and dicts become new real containers of their items,
//   each made once per call, so that a container reached twice is one object;
// - everything else (a tensor, a module, an object made while capturing, a
//   function) becomes a stand-in: an object of a small class whose
//   comparisons, hash, truth, length, iteration and calls come back to the
//   interpreter, which runs them as the program would (a comparison of
//   tensors asks the oracle and its truth is a data-dependent branch; a key
//   function is inlined).
//
// Reading back maps every stand-in and every container made for the call to
// the value it was made for, so identity survives the trip: `d.setdefault(k,
// [])` gives back the very list value. A method that changes its receiver
// (the table says which) changes the real container made for it; its items
// are then written back into the receiver's own value.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/BuiltinMethods.h"

#include "frontend/capture/BuiltinContext.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/CaptureObjects.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/SymbolicText.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/ScopeExit.h"

#include <map>
#include <memory>

namespace dync::capture {

using python::PyRef;

namespace {

using Args = std::vector<ValuePtr>;

//===----------------------------------------------------------------------===//
// The table.
//===----------------------------------------------------------------------===//

enum class MethodEffect : uint8_t { Pure, MutatesReceiver, Refused };

struct MethodRow {
  std::string type;
  std::string name;
  MethodEffect effect;
  std::string reason;

  std::string spelling() const { return type + "." + name + "()"; }
};

struct RowSpec {
  const char* type;
  const char* name;
  MethodEffect effect;
  const char* reason;
};

const RowSpec RowSpecs[] = {
#define DYNC_METHOD(TYPE, NAME, EFFECT) {#TYPE, #NAME, MethodEffect::EFFECT, ""},
#define DYNC_REFUSED_METHOD(TYPE, NAME, REASON) {#TYPE, #NAME, MethodEffect::Refused, REASON},
#include "frontend/capture/BuiltinMethods.def"
};

/// The types the table covers; `bool` is covered through `int`.
PyTypeObject* const TableTypes[] = {&PyDict_Type, &PyList_Type,      &PyTuple_Type,
                                    &PySet_Type,  &PyFrozenSet_Type, &PyUnicode_Type,
                                    &PyLong_Type, &PyFloat_Type};

/// The rows, by the attribute object in the type's dict and by the C method
/// definition behind it (which a method bound to an object or to a class
/// shares with the descriptor). Types are immortal, so this is built once
/// per process.
struct MethodTable {
  std::vector<std::unique_ptr<MethodRow>> rows;
  std::map<PyObject*, const MethodRow*> byAttribute;
  std::map<const PyMethodDef*, const MethodRow*> byMethodDef;
};

MethodTable& methodTable() {
  static MethodTable* table = new MethodTable;
  return *table;
}

/// The C method definition behind a method, class method or static method
/// of a builtin type; null for data attributes.
const PyMethodDef* methodDefOf(PyObject* attribute) {
  if (Py_IS_TYPE(attribute, &PyMethodDescr_Type) || Py_IS_TYPE(attribute, &PyClassMethodDescr_Type))
    return reinterpret_cast<PyMethodDescrObject*>(attribute)->d_method;
  if (Py_IS_TYPE(attribute, &PyStaticMethod_Type)) {
    PyRef function = PyRef::steal(PyObject_GetAttrString(attribute, "__func__"));
    if (!function) {
      PyErr_Clear();
      return nullptr;
    }
    if (PyCFunction_Check(function.get()))
      return reinterpret_cast<PyCFunctionObject*>(function.get())->m_ml;
  }
  return nullptr;
}

llvm::Error buildMethodTable() {
  MethodTable& table = methodTable();
  if (!table.rows.empty())
    return llvm::Error::success();
  auto add = [&](PyObject* attribute, MethodRow row) {
    table.rows.push_back(std::make_unique<MethodRow>(std::move(row)));
    const MethodRow* added = table.rows.back().get();
    table.byAttribute[attribute] = added;
    if (const PyMethodDef* def = methodDefOf(attribute))
      table.byMethodDef[def] = added;
  };
  for (const RowSpec& spec : RowSpecs) {
    PyTypeObject* type = nullptr;
    for (PyTypeObject* candidate : TableTypes)
      if (llvm::StringRef(candidate->tp_name) == spec.type)
        type = candidate;
    PyObject* attribute = type ? PyDict_GetItemString(type->tp_dict, spec.name) : nullptr;
    if (!attribute)
      return captureError(llvm::Twine("the builtin method table names ") + spec.type + "." +
                          spec.name + ", which this Python does not define");
    add(attribute, {spec.type, spec.name, spec.effect, spec.reason});
  }
  // A public attribute the table does not list (one a later Python adds) is
  // refused where it is called, never guessed at.
  for (PyTypeObject* type : TableTypes) {
    PyObject *key, *attribute;
    Py_ssize_t position = 0;
    while (PyDict_Next(type->tp_dict, &position, &key, &attribute)) {
      std::string name = python::utf8Of(key).value_or("_");
      if (llvm::StringRef(name).starts_with("_") || table.byAttribute.count(attribute))
        continue;
      add(attribute, {type->tp_name, name, MethodEffect::Refused,
                      "capture's table of builtin methods does not list it"});
    }
  }
  return llvm::Error::success();
}

llvm::Error refusal(const MethodRow& row) {
  return captureError("method '" + row.name + "' of " + row.type +
                      " is not supported: " + row.reason);
}

bool isContainer(const ValuePtr& value) {
  return value->kind == ValueKind::List || value->kind == ValueKind::Dict ||
         value->kind == ValueKind::Set;
}

//===----------------------------------------------------------------------===//
// Real objects for one call.
//===----------------------------------------------------------------------===//

class Realizer;

/// The realizers of the calls in progress, innermost last: a stand-in's
/// special methods find the one that made it.
std::vector<Realizer*>& activeRealizers() {
  static std::vector<Realizer*> active;
  return active;
}

/// The stand-in class and the exception that stops a call, made once.
struct StandInClasses {
  PyObject* standIn = nullptr;
  PyObject* stopped = nullptr;
};
llvm::Expected<StandInClasses> standInClasses();

class Realizer {
public:
  /// \p sizesAsText: the call makes text (a str method), so symbolic numbers
  /// are stand-ins too, whose text is refused rather than spelled as the
  /// symbol.
  Realizer(BuiltinContext& interp, bool sizesAsText) : interp_(interp), sizesAsText_(sizesAsText) {
    activeRealizers().push_back(this);
  }
  ~Realizer() {
    activeRealizers().pop_back();
    llvm::consumeError(std::move(pending_));
  }
  Realizer(const Realizer&) = delete;
  Realizer& operator=(const Realizer&) = delete;

  BuiltinContext& interp() { return interp_; }

  llvm::Expected<PyRef> toReal(const ValuePtr& value);
  llvm::Expected<ValuePtr> fromReal(PyObject* object);
  /// Rebuilds \p receiver's items from the real container made for it.
  llvm::Error writeBack(const ValuePtr& receiver);

  /// The value stand-in \p object was made for, or null.
  ValuePtr standsFor(PyObject* object) const {
    auto it = valueOf_.find(object);
    return it == valueOf_.end() ? nullptr : it->second;
  }

  /// Stops the CPython call in progress: keeps \p error, which the call's
  /// caller reports, and raises an exception to unwind CPython.
  PyObject* stop(llvm::Error error) {
    if (pending_)
      llvm::consumeError(std::move(error));
    else
      pending_ = std::move(error);
    llvm::Expected<StandInClasses> classes = standInClasses();
    if (!classes) {
      llvm::consumeError(classes.takeError());
      PyErr_SetString(PyExc_RuntimeError, "capture stopped");
      return nullptr;
    }
    PyErr_SetString(classes->stopped, "capture stopped");
    return nullptr;
  }
  /// The error of a call that returned \p result (null when it raised).
  llvm::Error outcome(PyObject* result, const llvm::Twine& what) {
    if (pending_) {
      PyErr_Clear();
      return std::move(pending_);
    }
    if (!result)
      return programError(what);
    return llvm::Error::success();
  }

private:
  llvm::Expected<PyRef> standIn(const ValuePtr& value);
  llvm::Expected<PyRef> realTuple(const ValuePtr& value);

  BuiltinContext& interp_;
  bool sizesAsText_;
  /// Containers made for values, by value.
  std::map<const Value*, PyRef> made_;
  /// Stand-ins, by the real object the value stands for (a fake tensor, a
  /// module), else by the value: one stand-in per Python identity.
  std::map<const void*, PyRef> standIns_;
  /// Every object made for a value, to the value.
  std::map<PyObject*, ValuePtr> valueOf_;
  llvm::Error pending_ = llvm::Error::success();
};

llvm::Expected<PyRef> Realizer::standIn(const ValuePtr& value) {
  const void* key = value->realObject() ? static_cast<const void*>(value->realObject())
                                        : static_cast<const void*>(value.get());
  if (auto it = standIns_.find(key); it != standIns_.end())
    return it->second;
  llvm::Expected<StandInClasses> classes = standInClasses();
  if (!classes)
    return classes.takeError();
  PyRef object = PyRef::steal(PyObject_CallNoArgs(classes->standIn));
  if (!object)
    return pythonError("making a stand-in object");
  standIns_[key] = object;
  valueOf_[object.get()] = value;
  return object;
}

llvm::Expected<PyRef> Realizer::realTuple(const ValuePtr& value) {
  PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(value->items.size())));
  if (!tuple)
    return pythonError("building a tuple");
  for (size_t i = 0; i < value->items.size(); ++i) {
    llvm::Expected<PyRef> item = toReal(value->items[i]);
    if (!item)
      return item.takeError();
    PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), item->release());
  }
  PyObject* type = value->object.get();
  if (!type || !PyType_Check(type) || type == reinterpret_cast<PyObject*>(&PyTuple_Type))
    return tuple;
  // A tuple subclass keeps its type (torch.Size, a named tuple, which takes
  // its fields as separate arguments: `_make` builds one from an iterable).
  PyRef make = PyRef::steal(PyObject_GetAttrString(type, "_make"));
  if (!make)
    PyErr_Clear();
  PyRef typed = PyRef::steal(PyObject_CallOneArg(make ? make.get() : type, tuple.get()));
  if (!typed)
    return pythonError("making a " + qualifiedTypeName(type));
  return typed;
}

llvm::Expected<PyRef> Realizer::toReal(const ValuePtr& value) {
  switch (value->kind) {
  case ValueKind::Constant:
    return value->object;
  case ValueKind::SymNum:
    if (sizesAsText_)
      return standIn(value);
    return value->object;
  case ValueKind::Tuple:
  case ValueKind::List:
  case ValueKind::Set:
  case ValueKind::Dict: {
    if (auto it = made_.find(value.get()); it != made_.end())
      return it->second;
    PyRef real;
    if (value->kind == ValueKind::Tuple) {
      llvm::Expected<PyRef> tuple = realTuple(value);
      if (!tuple)
        return tuple.takeError();
      real = *tuple;
    } else {
      real = PyRef::steal(value->kind == ValueKind::List  ? PyList_New(0)
                          : value->kind == ValueKind::Set ? PySet_New(nullptr)
                                                          : PyDict_New());
      if (!real)
        return pythonError("building a container");
    }
    // Recorded before the items, so that a container holding itself is one
    // object.
    made_[value.get()] = real;
    valueOf_.emplace(real.get(), value);
    if (value->kind == ValueKind::Tuple)
      return real;
    for (const ValuePtr& item : value->items) {
      llvm::Expected<PyRef> object = toReal(item);
      if (!object)
        return object.takeError();
      int failed = value->kind == ValueKind::List ? PyList_Append(real.get(), object->get())
                                                  : PySet_Add(real.get(), object->get());
      if (failed || pending_)
        return pending_ ? std::move(pending_) : pythonError("building a container");
    }
    for (const auto& [key, item] : value->entries) {
      llvm::Expected<PyRef> k = toReal(key);
      if (!k)
        return k.takeError();
      llvm::Expected<PyRef> v = toReal(item);
      if (!v)
        return v.takeError();
      if (PyDict_SetItem(real.get(), k->get(), v->get()) < 0 || pending_)
        return pending_ ? std::move(pending_) : pythonError("building a dict");
    }
    return real;
  }
  case ValueKind::Slice: {
    PyRef parts[3];
    for (int i = 0; i < 3; ++i) {
      llvm::Expected<PyRef> part = toReal(value->items[i]);
      if (!part)
        return part.takeError();
      parts[i] = *part;
    }
    PyRef slice = PyRef::steal(PySlice_New(parts[0].get(), parts[1].get(), parts[2].get()));
    if (!slice)
      return pythonError("building a slice");
    return slice;
  }
  case ValueKind::Iterator: {
    // A method given an iterator consumes it, as it does in Python.
    llvm::Expected<std::vector<ValuePtr>> items = interp_.unpack(value);
    if (!items)
      return items.takeError();
    llvm::Expected<PyRef> list = toReal(makeList(std::move(*items)));
    if (!list)
      return list.takeError();
    PyRef iterator = PyRef::steal(PyObject_GetIter(list->get()));
    if (!iterator)
      return pythonError("iterating");
    return iterator;
  }
  case ValueKind::Object:
    // Classes, Python modules and other read-only objects are themselves,
    // except those a call would run for real.
    if (PyType_Check(value->object.get()) || !PyCallable_Check(value->object.get())) {
      valueOf_.emplace(value->object.get(), value);
      return value->object;
    }
    return standIn(value);
  default:
    return standIn(value);
  }
}

llvm::Expected<ValuePtr> Realizer::fromReal(PyObject* object) {
  for (auto it = activeRealizers().rbegin(); it != activeRealizers().rend(); ++it)
    if (ValuePtr value = (*it)->standsFor(object))
      return value;
  llvm::Expected<StandInClasses> classes = standInClasses();
  if (!classes)
    return classes.takeError();
  if (Py_TYPE(object) == reinterpret_cast<PyTypeObject*>(classes->standIn))
    return captureError("a stand-in for a symbolic value outlived the call that made it");
  auto items = [&](PyObject* iterable) -> llvm::Expected<std::vector<ValuePtr>> {
    PyRef iterator = PyRef::steal(PyObject_GetIter(iterable));
    if (!iterator)
      return pythonError("iterating a result");
    std::vector<ValuePtr> values;
    while (PyRef item = PyRef::steal(PyIter_Next(iterator.get()))) {
      llvm::Expected<ValuePtr> value = fromReal(item.get());
      if (!value)
        return value.takeError();
      values.push_back(*value);
    }
    if (PyErr_Occurred())
      return pythonError("iterating a result");
    return values;
  };
  bool view = PyDictKeys_Check(object) || PyDictValues_Check(object) || PyDictItems_Check(object);
  if (PyList_CheckExact(object) || PySet_CheckExact(object) || PyTuple_Check(object) || view) {
    llvm::Expected<std::vector<ValuePtr>> values = items(object);
    if (!values)
      return values.takeError();
    // A dict's views are read as a list of what they show now.
    if (PyList_CheckExact(object) || view)
      return makeList(std::move(*values));
    if (PySet_CheckExact(object)) {
      ValuePtr set = makeValue(ValueKind::Set);
      set->items = std::move(*values);
      return set;
    }
    ValuePtr tuple = makeTuple(std::move(*values));
    if (!PyTuple_CheckExact(object))
      tuple->object = PyRef::borrow(reinterpret_cast<PyObject*>(Py_TYPE(object)));
    return tuple;
  }
  if (PyDict_CheckExact(object)) {
    ValuePtr dict = makeValue(ValueKind::Dict);
    PyObject *key, *item;
    Py_ssize_t position = 0;
    while (PyDict_Next(object, &position, &key, &item)) {
      llvm::Expected<ValuePtr> k = fromReal(key);
      if (!k)
        return k.takeError();
      llvm::Expected<ValuePtr> v = fromReal(item);
      if (!v)
        return v.takeError();
      dict->entries.emplace_back(*k, *v);
    }
    return dict;
  }
  if (PyFrozenSet_Check(object)) {
    llvm::Expected<std::vector<ValuePtr>> values = items(object);
    if (!values)
      return values.takeError();
    if (!llvm::all_of(*values, [](const ValuePtr& v) { return v->isConstant(); }))
      return captureError("a frozenset of values that are not constants is not supported");
  }
  return interp_.wrapFake(object);
}

llvm::Error Realizer::writeBack(const ValuePtr& receiver) {
  auto it = made_.find(receiver.get());
  if (it == made_.end())
    return captureError("the receiver of a method was not made real");
  PyObject* real = it->second.get();
  if (receiver->kind == ValueKind::Dict) {
    std::vector<std::pair<ValuePtr, ValuePtr>> entries;
    PyObject *key, *item;
    Py_ssize_t position = 0;
    while (PyDict_Next(real, &position, &key, &item)) {
      llvm::Expected<ValuePtr> k = fromReal(key);
      if (!k)
        return k.takeError();
      llvm::Expected<ValuePtr> v = fromReal(item);
      if (!v)
        return v.takeError();
      entries.emplace_back(*k, *v);
    }
    receiver->entries = std::move(entries);
    return llvm::Error::success();
  }
  PyRef iterator = PyRef::steal(PyObject_GetIter(real));
  if (!iterator)
    return pythonError("reading a container back");
  std::vector<ValuePtr> items;
  while (PyRef item = PyRef::steal(PyIter_Next(iterator.get()))) {
    llvm::Expected<ValuePtr> value = fromReal(item.get());
    if (!value)
      return value.takeError();
    items.push_back(*value);
  }
  if (PyErr_Occurred())
    return pythonError("reading a container back");
  receiver->items = std::move(items);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// The stand-in's special methods, which come back to the interpreter.
//===----------------------------------------------------------------------===//

/// The realizer that made stand-in \p object, and the value it stands for.
std::pair<Realizer*, ValuePtr> ownerOf(PyObject* object) {
  for (auto it = activeRealizers().rbegin(); it != activeRealizers().rend(); ++it)
    if (ValuePtr value = (*it)->standsFor(object))
      return {*it, value};
  return {nullptr, nullptr};
}

PyObject* orphan() {
  PyErr_SetString(PyExc_RuntimeError, "a stand-in for a symbolic value outlived its call");
  return nullptr;
}

/// Returns \p value made real by \p realizer, or stops the call.
PyObject* returnReal(Realizer& realizer, llvm::Expected<ValuePtr> value) {
  if (!value)
    return realizer.stop(value.takeError());
  llvm::Expected<PyRef> real = realizer.toReal(*value);
  if (!real)
    return realizer.stop(real.takeError());
  return real->release();
}

PyObject* standInCompare(PyObject*, PyObject* args) {
  PyObject *self, *other;
  int op;
  if (!PyArg_ParseTuple(args, "OOi", &self, &other, &op))
    return nullptr;
  if (op < Py_LT || op > Py_GE) {
    PyErr_SetString(PyExc_ValueError, "not a comparison");
    return nullptr;
  }
  auto [realizer, value] = ownerOf(self);
  if (!realizer)
    return orphan();
  static const char* const Symbols[] = {"<", "<=", "==", "!=", ">", ">="};
  llvm::Expected<ValuePtr> otherValue = realizer->fromReal(other);
  if (!otherValue)
    return realizer->stop(otherValue.takeError());
  return returnReal(*realizer, realizer->interp().compare(Symbols[op], value, *otherValue));
}

PyObject* standInHash(PyObject*, PyObject* self) {
  auto [realizer, value] = ownerOf(self);
  if (!realizer)
    return orphan();
  // Tensors, modules and functions hash by identity, as the stand-in does;
  // an object made while capturing uses its class's __hash__.
  if (value->kind == ValueKind::Instance) {
    PyObject* hash = _PyType_Lookup(reinterpret_cast<PyTypeObject*>(value->object.get()),
                                    PyRef::steal(python::newStr("__hash__")).get());
    if (hash == Py_None) {
      PyErr_Format(PyExc_TypeError, "unhashable type: '%s'",
                   reinterpret_cast<PyTypeObject*>(value->object.get())->tp_name);
      return nullptr;
    }
    if (hash && PyFunction_Check(hash))
      return returnReal(*realizer, realizer->interp().callSpecial(value, "__hash__", {}));
  }
  return PyLong_FromSsize_t(_Py_HashPointer(self));
}

PyObject* standInTruth(PyObject*, PyObject* self) {
  auto [realizer, value] = ownerOf(self);
  if (!realizer)
    return orphan();
  llvm::Expected<bool> truth = realizer->interp().truth(value);
  if (!truth)
    return realizer->stop(truth.takeError());
  return PyBool_FromLong(*truth);
}

PyObject* standInLength(PyObject*, PyObject* self) {
  auto [realizer, value] = ownerOf(self);
  if (!realizer)
    return orphan();
  return returnReal(*realizer, realizer->interp().length(value));
}

PyObject* standInIterate(PyObject*, PyObject* self) {
  auto [realizer, value] = ownerOf(self);
  if (!realizer)
    return orphan();
  llvm::Expected<std::vector<ValuePtr>> items = realizer->interp().unpack(value);
  if (!items)
    return realizer->stop(items.takeError());
  llvm::Expected<PyRef> list = realizer->toReal(makeList(std::move(*items)));
  if (!list)
    return realizer->stop(list.takeError());
  return PyObject_GetIter(list->get());
}

PyObject* standInCall(PyObject*, PyObject* args) {
  PyObject *self, *positional, *keywords;
  if (!PyArg_ParseTuple(args, "OO!O!", &self, &PyTuple_Type, &positional, &PyDict_Type, &keywords))
    return nullptr;
  auto [realizer, value] = ownerOf(self);
  if (!realizer)
    return orphan();
  std::vector<ValuePtr> callArgs;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(positional); ++i) {
    llvm::Expected<ValuePtr> arg = realizer->fromReal(PyTuple_GET_ITEM(positional, i));
    if (!arg)
      return realizer->stop(arg.takeError());
    callArgs.push_back(*arg);
  }
  KeywordArgs callKwargs;
  PyObject *key, *item;
  Py_ssize_t position = 0;
  while (PyDict_Next(keywords, &position, &key, &item)) {
    llvm::Expected<ValuePtr> arg = realizer->fromReal(item);
    if (!arg)
      return realizer->stop(arg.takeError());
    callKwargs.emplace_back(python::utf8Of(key).value_or("?"), *arg);
  }
  return returnReal(*realizer,
                    realizer->interp().call(value, std::move(callArgs), std::move(callKwargs)));
}

PyObject* standInText(PyObject*, PyObject* self) {
  auto [realizer, value] = ownerOf(self);
  if (!realizer)
    return orphan();
  if (value->isTensor())
    return realizer->stop(captureError("the text of a tensor depends on its values, which are "
                                       "not known while capturing"));
  if (value->kind == ValueKind::SymNum)
    return realizer->stop(captureError(SymbolicTextRefusal));
  return realizer->stop(captureError("the text of a " + spelling(value->kind) +
                                     " value is not known while capturing"));
}

PyMethodDef StandInCallbacks[] = {
    {"_compare", standInCompare, METH_VARARGS, nullptr},
    {"_hash", standInHash, METH_O, nullptr},
    {"_truth", standInTruth, METH_O, nullptr},
    {"_length", standInLength, METH_O, nullptr},
    {"_iterate", standInIterate, METH_O, nullptr},
    {"_call", standInCall, METH_VARARGS, nullptr},
    {"_text", standInText, METH_O, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

llvm::Expected<StandInClasses> standInClasses() {
  static StandInClasses classes;
  if (classes.standIn)
    return classes;
  // SymbolicValue and CaptureStopped (capture_objects.py) hand what they
  // are asked back through the module's callbacks, set before the first
  // stand-in is made.
  llvm::Expected<PyRef> module = captureObjectsModule();
  if (!module)
    return module.takeError();
  for (PyMethodDef* def = StandInCallbacks; def->ml_name; ++def) {
    PyRef function = PyRef::steal(PyCFunction_New(def, nullptr));
    if (!function || PyObject_SetAttrString(module->get(), def->ml_name, function.get()) < 0)
      return pythonError("defining the stand-in class");
  }
  llvm::Expected<PyRef> standIn = captureObject("SymbolicValue");
  if (!standIn)
    return standIn.takeError();
  llvm::Expected<PyRef> stopped = captureObject("CaptureStopped");
  if (!stopped)
    return stopped.takeError();
  // Kept for the life of the process, as the types they stand beside are.
  classes.standIn = Py_NewRef(standIn->get());
  classes.stopped = Py_NewRef(stopped->get());
  return classes;
}

//===----------------------------------------------------------------------===//
// Calls.
//===----------------------------------------------------------------------===//

/// Calls \p callable on \p args made real; \p row, when the callable is a
/// method of the table, says what it does to \p receiver (args[0], or null
/// when the call has none).
llvm::Expected<ValuePtr> runOnRealValues(BuiltinContext& interp, const MethodRow* row,
                                         PyObject* callable, const ValuePtr& receiver,
                                         const Args& args, const KeywordArgs& kwargs,
                                         bool makesText = false) {
  std::string what = row ? row->spelling() : describeObject(callable);
  bool mutates = row && row->effect == MethodEffect::MutatesReceiver;
  if (row && row->effect == MethodEffect::Refused)
    return refusal(*row);
  if (mutates) {
    if (!receiver)
      return captureError("calling " + what + " without a receiver");
    if (llvm::Error error = interp.noteContainerMutation(receiver, "calling " + row->name + "()"))
      return error;
    if (!isContainer(receiver))
      return captureError("calling " + what + " on a " + spelling(receiver->kind) +
                          " value, which capture cannot change");
  }
  Realizer realizer(interp, makesText || (row && row->type == "str"));
  PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  if (!tuple)
    return pythonError("building call arguments");
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::Expected<PyRef> arg = realizer.toReal(args[i]);
    if (!arg)
      return arg.takeError();
    PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), arg->release());
  }
  PyRef dict;
  if (!kwargs.empty()) {
    dict = PyRef::steal(PyDict_New());
    for (const auto& [name, value] : kwargs) {
      llvm::Expected<PyRef> arg = realizer.toReal(value);
      if (!arg)
        return arg.takeError();
      if (PyDict_SetItemString(dict.get(), name.c_str(), arg->get()) < 0)
        return pythonError("building call arguments");
    }
  }
  // A comparison of symbolic sizes inside the call is decided at this line.
  interp.reportLocation();
  PyRef result = PyRef::steal(PyObject_Call(callable, tuple.get(), dict.get()));
  if (llvm::Error error = realizer.outcome(result.get(), what))
    return error;
  if (llvm::Error error = interp.checkDynamic())
    return error;
  if (mutates)
    if (llvm::Error error = realizer.writeBack(receiver))
      return error;
  return realizer.fromReal(result.get());
}

/// The handler of every attribute of the table registered as a builtin: the
/// method descriptor (the receiver is args[0]), class method descriptor or
/// static method.
llvm::Expected<ValuePtr> tableMethod(BuiltinContext& interp, const ValuePtr& self, Args& args,
                                     KeywordArgs& kwargs) {
  PyObject* attribute = self->object.get();
  const MethodRow& row = *methodTable().byAttribute.at(attribute);
  if (row.effect == MethodEffect::Refused)
    return refusal(row);
  if (Py_IS_TYPE(attribute, &PyStaticMethod_Type))
    return runOnRealValues(interp, &row, attribute, nullptr, args, kwargs);
  if (args.empty())
    return captureError("descriptor '" + row.name + "' of '" + row.type +
                        "' object needs an argument");
  Args callArgs = args;
  // An object of a class deriving from dict: dict's methods act on its
  // items (DictInstances.cpp).
  ValuePtr receiver = args[0];
  if (row.type == "dict" && args[0]->kind == ValueKind::Instance && args[0]->contents &&
      !Py_IS_TYPE(attribute, &PyClassMethodDescr_Type))
    receiver = callArgs[0] = args[0]->contents;
  if (Py_IS_TYPE(attribute, &PyClassMethodDescr_Type) &&
      !(args[0]->kind == ValueKind::Object && PyType_Check(args[0]->object.get()))) {
    // Called through an instance (`{}.fromkeys(...)`): the class receives it.
    llvm::Expected<PyRef> type = interp.pythonType(args[0]);
    if (!type)
      return type.takeError();
    callArgs[0] = makeValue(ValueKind::Object, *type);
  }
  return runOnRealValues(interp, &row, attribute, receiver, callArgs, kwargs);
}

} // namespace

llvm::Error registerBuiltinMethods(BuiltinContext& interp) {
  if (llvm::Error error = buildMethodTable())
    return error;
  for (const auto& [attribute, row] : methodTable().byAttribute)
    if (methodDefOf(attribute))
      addBuiltin(interp, attribute, tableMethod);
  return llvm::Error::success();
}

std::optional<llvm::Expected<ValuePtr>>
constantMethodAttr(SemanticsContext& cx, const ValuePtr& base, llvm::StringRef name) {
  PyObject* object = base->object.get();
  PyTypeObject* type = Py_TYPE(object);
  if (name.starts_with("_") ||
      !(type == &PyUnicode_Type || type == &PyLong_Type || type == &PyFloat_Type ||
        type == &PyBool_Type || type == &PyFrozenSet_Type))
    return std::nullopt;
  PyRef nameObject = PyRef::steal(python::newStr(name));
  PyObject* attribute = _PyType_Lookup(type, nameObject.get());
  auto row =
      attribute ? methodTable().byAttribute.find(attribute) : methodTable().byAttribute.end();
  if (row == methodTable().byAttribute.end())
    return std::nullopt;
  if (!methodDefOf(attribute)) {
    // A data attribute (`real`, `numerator`) of an immutable value.
    PyRef value = PyRef::steal(PyObject_GetAttr(object, nameObject.get()));
    if (!value)
      return llvm::Expected<ValuePtr>(programError("reading attribute '" + name + "'"));
    return cx.values().wrapReal(value.get(), nullptr);
  }
  ValuePtr function = makeValue(ValueKind::Builtin, PyRef::borrow(attribute));
  if (Py_IS_TYPE(attribute, &PyStaticMethod_Type))
    return llvm::Expected<ValuePtr>(function);
  ValuePtr method = makeValue(ValueKind::BoundMethod);
  method->items = {base, function};
  return llvm::Expected<ValuePtr>(method);
}

std::optional<llvm::Expected<ValuePtr>> callTableFunction(BuiltinContext& interp,
                                                          PyObject* callable,
                                                          const std::vector<ValuePtr>& args,
                                                          const KeywordArgs& kwargs) {
  if (!PyCFunction_Check(callable))
    return std::nullopt;
  auto it = methodTable().byMethodDef.find(reinterpret_cast<PyCFunctionObject*>(callable)->m_ml);
  if (it == methodTable().byMethodDef.end())
    return std::nullopt;
  const MethodRow& row = *it->second;
  // Bound to a real object, not to a value capture holds: a container the
  // program's state holds would change for real.
  if (row.effect == MethodEffect::MutatesReceiver)
    return llvm::Expected<ValuePtr>(
        captureError("calling " + row.spelling() + " on a " + row.type +
                     " that is not a value of the program's run (a side effect outside the "
                     "graph)"));
  return runOnRealValues(interp, &row, callable, nullptr, args, kwargs);
}

llvm::Expected<ValuePtr> callWithRealValues(BuiltinContext& interp, PyObject* callable,
                                            const std::vector<ValuePtr>& args,
                                            const KeywordArgs& kwargs, bool makesText) {
  return runOnRealValues(interp, nullptr, callable, nullptr, args, kwargs, makesText);
}

} // namespace dync::capture
