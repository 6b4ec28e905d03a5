//===- TruthAndIteration.cpp - Truth, iteration and length of values ------===//
//
// What `if`, `for`, unpacking and `len` see: the truth of a value, its
// items as an unpacked sequence, its iterator and its length, decided by
// its kind.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DictInstances.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/MappingProxies.h"
#include "frontend/capture/ObjectSemantics.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/TypeNames.h"

#include <optional>

namespace dync::capture {

using python::PyRef;

namespace {

/// The truth of a tensor whose value fake mode knows from plain numbers
/// alone (oracle_scalars.py, known_truth), or nullopt.
llvm::Expected<std::optional<bool>> knownTruth(const ValuePtr& tensor) {
  PyRef module = PyRef::steal(PyImport_ImportModule("dync_oracle_scalars"));
  PyRef known =
      module ? PyRef::steal(PyObject_GetAttrString(module.get(), "known_truth")) : PyRef();
  if (!known)
    return pythonError("the oracle's known_truth");
  PyRef result = PyRef::steal(PyObject_CallOneArg(known.get(), tensor->object.get()));
  if (!result)
    return pythonError("the oracle's known_truth");
  if (result.get() == Py_None)
    return std::nullopt;
  return result.get() == Py_True;
}

} // namespace

llvm::Expected<bool> ObjectSemantics::truth(const ValuePtr& value) {
  if (ValuePtr viewed = mappingProxyTarget(value))
    return truth(viewed);
  switch (value->kind) {
  case ValueKind::Tensor: {
    // A value made from the program's own numbers (`Normal(0, 1)` checking
    // its arguments) is no decision on data: its truth is known.
    llvm::Expected<std::optional<bool>> known = knownTruth(value);
    if (!known)
      return known.takeError();
    if (*known)
      return **known;
    // The two ways a graph decides on values: selecting elementwise, or
    // running one of two captured functions when it runs.
    // Without --data-branches=refuse, the side the example takes, checked
    // when the graph runs (DataBranches.cpp).
    return cx_.decideOnExample(
        value, "data-dependent branch: the condition depends on a tensor's values, which are "
               "not known while capturing, so capture cannot decide it (nor can torch.export): "
               "keep the decision in tensors (torch.where(cond, a, b)) or branch with "
               "torch.cond(cond, true_fn, false_fn, operands)");
  }
  case ValueKind::Constant:
  case ValueKind::SymNum:
  case ValueKind::Object:
  case ValueKind::NNModule: {
    // bool() of a SymBool asks torch's ShapeEnv, which records the decision
    // as a guard on the symbols.
    if (value->kind == ValueKind::SymNum) {
      if (llvm::Error refused = cx_.recorder().irreversible("deciding a symbolic condition"))
        return refused;
      cx_.reportLocation();
    }
    // A module container's truth is its length, which its tables give.
    if (PyTypeObject* type = Py_TYPE(value->object.get());
        (type->tp_as_number && type->tp_as_number->nb_bool) ||
        (type->tp_as_mapping && type->tp_as_mapping->mp_length) ||
        (type->tp_as_sequence && type->tp_as_sequence->sq_length))
      if (llvm::Error refused = cx_.values().refuseChangedModuleRead(*value, "the truth of"))
        return refused;
    int result = PyObject_IsTrue(value->object.get());
    if (result < 0) {
      // A condition on a data-dependent value (`if n > 0:` with n from
      // item()) is one torch will not decide: say so in plain words.
      if (value->kind == ValueKind::SymNum)
        if (std::optional<std::string> plain = cx_.oracle().explainUndecidableBranch())
          return cx_.decideOnExample(value, *plain);
      return programError("deciding a condition");
    }
    if (value->kind == ValueKind::SymNum)
      if (llvm::Error error = cx_.checkDynamic())
        return error;
    return result == 1;
  }
  case ValueKind::Tuple:
  case ValueKind::List:
  case ValueKind::Set:
    return !value->items.empty();
  case ValueKind::Dict:
    return !value->entries.empty();
  case ValueKind::Null:
  case ValueKind::Cell:
    return captureError("truth of a " + spelling(value->kind) + " value");
  case ValueKind::Instance:
    // __bool__, else __len__, else true, as CPython decides.
    for (const char* special : {"__bool__", "__len__"}) {
      llvm::Expected<ValuePtr> result = cx_.callSpecial(value, special, {});
      if (!result)
        return result.takeError();
      if (*result)
        return truth(*result);
    }
    // An object of a dict class without __bool__ or __len__ of its own.
    if (value->contents)
      return truth(value->contents);
    return true;
  default:
    return true;
  }
}

llvm::Expected<std::vector<ValuePtr>> ObjectSemantics::unpack(const ValuePtr& value) {
  if (ValuePtr viewed = mappingProxyTarget(value))
    return unpack(viewed);
  if (value->kind == ValueKind::Instance) {
    llvm::Expected<ValuePtr> iterator = callInstanceSpecial(cx_, value, "__iter__", {});
    if (!iterator)
      return iterator.takeError();
    if (*iterator)
      return unpack(*iterator);
  }
  switch (value->kind) {
  case ValueKind::Tuple:
  case ValueKind::List:
  case ValueKind::Set:
    return value->items;
  case ValueKind::Dict: {
    std::vector<ValuePtr> keys;
    for (const auto& entry : value->entries)
      keys.push_back(entry.first);
    return keys;
  }
  case ValueKind::Iterator: {
    std::vector<ValuePtr> items;
    while (true) {
      llvm::Expected<ValuePtr> item = next(value);
      if (!item)
        return item.takeError();
      if (!*item)
        return items;
      items.push_back(*item);
    }
  }
  case ValueKind::Tensor: {
    PyObject* len = PyDict_GetItemString(PyModule_GetDict(cx_.types().builtinsModule.get()), "len");
    llvm::Expected<ValuePtr> size = cx_.callOracle(len, {value}, {});
    if (!size)
      // The oracle's reason names `len`, which the program did not call
      // (a `for` over a tensor of data-dependent length): say what it did.
      return llvm::handleErrors(size.takeError(), [](const CaptureError& e) -> llvm::Error {
        return llvm::make_error<CaptureError>("iterating over a tensor: " + e.reason(), e.stack());
      });
    if (!(*size)->isConstant())
      return captureError("iterating over a tensor whose first dimension is symbolic");
    long long n = PyLong_AsLongLong((*size)->object.get());
    std::vector<ValuePtr> items;
    for (long long i = 0; i < n; ++i) {
      llvm::Expected<ValuePtr> item = getItem(value, makeInt(i));
      if (!item)
        return item.takeError();
      items.push_back(*item);
    }
    return items;
  }
  case ValueKind::NNModule: {
    // A slice of a container iterates the children capture read for it.
    if (value->slicedContainer)
      return value->items;
    if (llvm::Error refused = cx_.values().refuseChangedModuleRead(*value, "iterating over"))
      return refused;
    // Module containers iterate their children (ModuleList, Sequential) or
    // keys (ModuleDict); children are named by the table entry at their
    // position.
    PyObject* object = value->object.get();
    PyRef moduleDictType, parameterListType;
    if (auto t = importObject("torch.nn.ModuleDict"))
      moduleDictType = *t;
    else
      return t.takeError();
    PyRef iterator = PyRef::steal(PyObject_GetIter(object));
    if (!iterator)
      return programError("iterating over " +
                          (value->source ? value->source->str() : typeNameOf(value)));
    bool keyed = PyObject_IsInstance(object, moduleDictType.get()) == 1;
    // Iteration is the container class's: pin it, and the entries it walks.
    if (value->source)
      cx_.guards().add(typeGuard(value->source, reinterpret_cast<PyObject*>(Py_TYPE(object))));
    cx_.values().guardModuleTableKeys(value);
    std::vector<ValuePtr> items;
    long long index = 0;
    while (PyRef item = PyRef::steal(PyIter_Next(iterator.get()))) {
      SourcePtr source;
      if (value->source && !keyed) {
        PyRef position = PyRef::steal(PyLong_FromLongLong(index));
        source =
            cx_.values().containerItemSource(value->source, object, position.get(), item.get());
      }
      llvm::Expected<ValuePtr> wrapped = cx_.values().wrapReal(item.get(), source);
      if (!wrapped)
        return wrapped.takeError();
      items.push_back(*wrapped);
      ++index;
    }
    if (PyErr_Occurred())
      return programError("iterating over a module");
    return items;
  }
  case ValueKind::Constant:
  case ValueKind::Object: {
    PyRef iterator = PyRef::steal(PyObject_GetIter(value->object.get()));
    if (!iterator)
      return programError("iterating over " + typeNameOf(value));
    std::vector<ValuePtr> items;
    while (PyRef item = PyRef::steal(PyIter_Next(iterator.get()))) {
      // What an object's iterator gives is not a read `[i]` spells (that
      // is an item of an exact list or tuple): no source.
      llvm::Expected<ValuePtr> wrapped = cx_.values().wrapReal(item.get(), nullptr);
      if (!wrapped)
        return wrapped.takeError();
      items.push_back(*wrapped);
    }
    if (PyErr_Occurred())
      return programError("iterating");
    return items;
  }
  default:
    return captureError("iterating over a " + spelling(value->kind) + " value");
  }
}

llvm::Expected<ValuePtr> ObjectSemantics::iter(const ValuePtr& value) {
  if (value->kind == ValueKind::Iterator)
    return value;
  if (value->kind == ValueKind::List)
    return makeIterator(value);
  llvm::Expected<std::vector<ValuePtr>> items = unpack(value);
  if (!items)
    return items.takeError();
  return makeEagerIterator(std::move(*items));
}

llvm::Expected<ValuePtr> ObjectSemantics::next(const ValuePtr& iterator) {
  if (iterator->kind != ValueKind::Iterator)
    return captureError("next() of a " + spelling(iterator->kind) + " value");
  const ValuePtr& iterable = iterator->iterable;
  if (iterator->position >= iterable->items.size())
    return nullptr;
  return iterable->items[iterator->position++];
}

llvm::Expected<ValuePtr> ObjectSemantics::length(const ValuePtr& value) {
  if (ValuePtr viewed = mappingProxyTarget(value))
    return length(viewed);
  if (value->kind == ValueKind::Instance) {
    llvm::Expected<ValuePtr> special = callInstanceSpecial(cx_, value, "__len__", {});
    if (!special || *special)
      return special;
  }
  switch (value->kind) {
  case ValueKind::Tuple:
  case ValueKind::List:
  case ValueKind::Set:
    return makeInt(static_cast<long long>(value->items.size()));
  case ValueKind::Dict:
    return makeInt(static_cast<long long>(value->entries.size()));
  case ValueKind::Tensor: {
    // A length computed from tensor data is its symbol (oracle_scalars.py).
    PyRef module = PyRef::steal(PyImport_ImportModule("dync_oracle_scalars"));
    PyRef len =
        module ? PyRef::steal(PyObject_GetAttrString(module.get(), "length_of_tensor")) : PyRef();
    if (!len)
      return pythonError("the oracle's length_of_tensor");
    return cx_.callOracle(len.get(), {value}, {});
  }
  case ValueKind::Constant:
  case ValueKind::NNModule:
  case ValueKind::Object: {
    if (llvm::Error refused = cx_.values().refuseChangedModuleRead(*value, "len() of"))
      return refused;
    if (value->kind == ValueKind::NNModule)
      cx_.values().guardModuleTableKeys(value);
    Py_ssize_t size = PyObject_Length(value->object.get());
    if (size < 0)
      return programError("len()");
    return makeInt(size);
  }
  default:
    return captureError("len() of a " + spelling(value->kind) + " value");
  }
}

} // namespace dync::capture
