//===- ItemReads.cpp - Subscripting symbolic values -----------------------===//
//
// Item access: tensors through the oracle, containers structurally,
// slices of sequences, instances through __getitem__, and subscripts that
// only build a type annotation.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DictInstances.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/MappingProxies.h"
#include "frontend/capture/NumpyConstants.h"
#include "frontend/capture/ObjectSemantics.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/TensorNumbers.h"
#include "frontend/capture/TypeNames.h"
#include "frontend/embedding/PyStrings.h"

#include <optional>

namespace dync::capture {

using python::PyRef;

namespace {

/// Whether the tuple subclass \p type has a __getitem__ of its own, which
/// then decides the type of its slices.
bool slicesItself(PyObject* type) {
  PyRef name = PyRef::steal(python::newStr("__getitem__"));
  PyObject* own = _PyType_Lookup(reinterpret_cast<PyTypeObject*>(type), name.get());
  return own && own != _PyType_Lookup(&PyTuple_Type, name.get());
}

/// Normalized [start, stop) with step for a slice of constants over a
/// sequence of \p length.
llvm::Expected<std::vector<size_t>> sliceIndices(PyObject* slice, size_t length) {
  Py_ssize_t start, stop, step;
  if (PySlice_Unpack(slice, &start, &stop, &step) < 0)
    return programError("slicing");
  Py_ssize_t count = PySlice_AdjustIndices(static_cast<Py_ssize_t>(length), &start, &stop, step);
  std::vector<size_t> indices;
  for (Py_ssize_t i = 0, index = start; i < count; ++i, index += step)
    indices.push_back(static_cast<size_t>(index));
  return indices;
}

/// Whether subscripting \p object only builds a type annotation: a typing
/// construct (`typing.List`, `typing.Optional`, `types.GenericAlias`) or a
/// class with __class_getitem__ (`list`, `tuple`, `dict`).
bool isAnnotationFactory(PyObject* object) {
  if (PyType_Check(object))
    return PyObject_HasAttrString(object, "__class_getitem__");
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(object));
  PyRef module = PyRef::steal(PyObject_GetAttrString(type, "__module__"));
  if (!module) {
    PyErr_Clear();
    return false;
  }
  std::optional<std::string> name = python::utf8Of(module.get());
  return name && (*name == "typing" || *name == "types");
}

/// Whether \p key is made of constants only, slices and tuples of them
/// included (`a[1:-1, :]`): such a key indexes an object made while
/// capturing (a NumPy array of constants) as CPython would.
bool isConstantKey(const ValuePtr& key) {
  if (key->isConstant())
    return true;
  if (key->kind == ValueKind::Slice)
    return allConstant(key->items);
  if (key->kind == ValueKind::Tuple && !key->object)
    return llvm::all_of(key->items, isConstantKey);
  return false;
}

/// \p key with each tensor bounding a slice (`h[i, :length]`, `length` an
/// item of a tensor of lengths) replaced by the int its `__index__` gives,
/// read by the oracle: one read from data is then an unbacked symbol the
/// slice's size is computed from, as torch.export slices, where indexing
/// with the tensor itself would ask for its value.
llvm::Expected<ValuePtr> sliceBoundsAsInts(SemanticsContext& cx, const ValuePtr& key) {
  auto hasTensorBound = [](const ValuePtr& part) {
    return part->kind == ValueKind::Slice &&
           llvm::any_of(part->items, [](const ValuePtr& bound) { return bound->isTensor(); });
  };
  bool inTuple = key->kind == ValueKind::Tuple && !key->object;
  if (!hasTensorBound(key) && !(inTuple && llvm::any_of(key->items, hasTensorBound)))
    return key;
  llvm::Expected<PyRef> index = scalarsFunction("index_of_tensor");
  if (!index)
    return index.takeError();
  auto convert = [&](const ValuePtr& part) -> llvm::Expected<ValuePtr> {
    if (!hasTensorBound(part))
      return part;
    ValuePtr slice = makeValue(ValueKind::Slice);
    for (const ValuePtr& bound : part->items) {
      if (!bound->isTensor()) {
        slice->items.push_back(bound);
        continue;
      }
      llvm::Expected<ValuePtr> read = cx.callOracle(index->get(), {bound}, {});
      if (!read)
        return read.takeError();
      slice->items.push_back(*read);
    }
    return slice;
  };
  if (!inTuple)
    return convert(key);
  std::vector<ValuePtr> parts;
  for (const ValuePtr& part : key->items) {
    llvm::Expected<ValuePtr> converted = convert(part);
    if (!converted)
      return converted.takeError();
    parts.push_back(*converted);
  }
  return makeTuple(std::move(parts));
}

} // namespace

llvm::Expected<ValuePtr> ObjectSemantics::getItem(const ValuePtr& base, const ValuePtr& key) {
  if (ValuePtr viewed = mappingProxyTarget(base))
    return getItem(viewed, key);
  if (base->kind == ValueKind::Instance) {
    llvm::Expected<ValuePtr> special = callInstanceSpecial(cx_, base, "__getitem__", {key});
    if (!special || *special)
      return special;
  }
  if (base->isTensor()) {
    llvm::Expected<ValuePtr> bounds = sliceBoundsAsInts(cx_, key);
    if (!bounds)
      return bounds.takeError();
    return cx_.callOracle(cx_.operatorFunction("getitem"), {base, *bounds}, {});
  }
  if (base->isSequence()) {
    size_t size = base->items.size();
    if (key->isConstant() && PyIndex_Check(key->object.get())) {
      long long index = PyLong_AsLongLong(key->object.get());
      if (index == -1 && PyErr_Occurred())
        return programError("indexing");
      if (index < 0)
        index += static_cast<long long>(size);
      if (index < 0 || index >= static_cast<long long>(size))
        return raiseBuiltin(PyExc_IndexError, spelling(base->kind) + " index out of range");
      return base->items[index];
    }
    PyRef slice;
    if (key->kind == ValueKind::Slice && allConstant(key->items)) {
      llvm::Expected<PyRef> converted = cx_.toPython(key);
      if (!converted)
        return converted.takeError();
      slice = *converted;
    } else if (key->isConstant() && PySlice_Check(key->object.get())) {
      slice = key->object;
    }
    if (slice) {
      llvm::Expected<std::vector<size_t>> indices = sliceIndices(slice.get(), size);
      if (!indices)
        return indices.takeError();
      std::vector<ValuePtr> items;
      for (size_t index : *indices)
        items.push_back(base->items[index]);
      ValuePtr result =
          base->kind == ValueKind::List ? makeList(std::move(items)) : makeTuple(std::move(items));
      // A slice of a tuple subclass is a plain tuple unless the type slices
      // itself (torch.Size gives a torch.Size; named tuples do not).
      if (base->kind == ValueKind::Tuple && base->object && PyType_Check(base->object.get()) &&
          slicesItself(base->object.get()))
        result->object = base->object;
      return result;
    }
    if (key->kind == ValueKind::SymNum)
      return captureError(
          "indexing a " + spelling(base->kind) +
          " with a symbolic number (a size declared dynamic, or a number computed from tensor "
          "data) is not supported: which item it picks is not known while capturing; index a "
          "tensor instead (torch.tensor(items)[i] for numbers), or return the index and pick "
          "the item outside the exported function");
    return captureError("indexing a " + spelling(base->kind) + " with a " + spelling(key->kind) +
                        " value");
  }
  if (base->kind == ValueKind::Dict) {
    for (const auto& [k, v] : base->entries) {
      llvm::Expected<bool> same = sameKey(*this, k, key);
      if (!same)
        return same.takeError();
      if (*same)
        return v;
    }
    return keyError(cx_, key);
  }
  // Slices of module containers, and items of those (ModuleContainers.cpp).
  if (base->kind == ValueKind::NNModule) {
    if (base->slicedContainer)
      return cx_.itemOfSlicedContainer(base, key);
    bool constantSlice = key->isConstant() && PySlice_Check(key->object.get());
    if (constantSlice || (key->kind == ValueKind::Slice && allConstant(key->items))) {
      if (llvm::Error refused = cx_.values().refuseChangedModuleRead(*base, "slicing"))
        return refused;
      llvm::Expected<PyRef> slice = cx_.toPython(key);
      if (!slice)
        return slice.takeError();
      return cx_.sliceModuleContainer(base, slice->get());
    }
  }
  if ((base->kind == ValueKind::NNModule || base->kind == ValueKind::Object ||
       base->kind == ValueKind::Constant) &&
      (key->isConstant() || key->kind == ValueKind::Object ||
       (!base->source && isConstantKey(key)))) {
    if (llvm::Error refused = cx_.values().refuseChangedModuleRead(*base, "indexing"))
      return refused;
    PyRef index = key->object;
    if (!key->isConstant() && key->kind != ValueKind::Object) {
      llvm::Expected<PyRef> converted = cx_.toPython(key);
      if (!converted)
        return converted.takeError();
      index = *converted;
    }
    PyRef value = PyRef::steal(PyObject_GetItem(base->object.get(), index.get()));
    if (!value)
      return programError("indexing " + (base->source ? base->source->str() : typeNameOf(base)));
    // A module container's child is named by the table entry it is;
    // items of other objects (which are not exact lists, tuples or dicts:
    // those are structural values) have no source. What an item is depends
    // on the container's class: it is pinned.
    SourcePtr source;
    if (base->kind == ValueKind::NNModule)
      source = cx_.values().containerItemSource(base->source, base->object.get(), index.get(),
                                                value.get());
    if (base->source && base->kind != ValueKind::Constant)
      cx_.guards().add(
          typeGuard(base->source, reinterpret_cast<PyObject*>(Py_TYPE(base->object.get()))));
    // Which entry a position names depends on the entries before it.
    if (base->kind == ValueKind::NNModule && PyLong_Check(index.get()))
      cx_.values().guardModuleTableKeys(base);
    return cx_.values().wrapReal(value.get(), source);
  }
  if (base->kind == ValueKind::Constant && key->kind == ValueKind::Slice &&
      allConstant(key->items)) {
    llvm::Expected<PyRef> slice = cx_.toPython(key);
    if (!slice)
      return slice.takeError();
    ValuePtr value = makeConstantSteal(PyObject_GetItem(base->object.get(), slice->get()));
    if (!value)
      return programError("slicing");
    return value;
  }
  if (PyObject* real = base->realObject(); real && isAnnotationFactory(real)) {
    // A type annotation evaluated while capturing (`List[int]` in
    // `torch.jit.annotate(List[int], [])`, `Optional[Tensor]`, `list[int]`):
    // subscripting a typing construct or a class's __class_getitem__ builds
    // another annotation and runs no user code, so it is evaluated.
    llvm::Expected<PyRef> index = cx_.toPython(key);
    if (!index)
      return index.takeError();
    PyRef value = PyRef::steal(PyObject_GetItem(real, index->get()));
    if (!value)
      return programError("subscripting " + typeNameOf(base));
    return cx_.values().wrapReal(value.get(), nullptr);
  }
  return captureError("indexing a " + typeNameOf(base) + " with a " + spelling(key->kind) +
                      " value is not supported");
}

} // namespace dync::capture
