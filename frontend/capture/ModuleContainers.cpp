//===- ModuleContainers.cpp - Slices of nn.Module containers --------------===//
//
// `self.layers[: self.config.num_hidden_layers]`: slicing a ModuleList or a
// Sequential makes a new container of the same class holding some of the
// children. Eager builds it in the container's own __getitem__, and so does
// capture: the class makes the real new container (which only references
// the children), so whatever the class does with a slice is what the
// program sees. But the new container was not read from the frame's inputs:
// reading its children through it would lose their sources, and their
// parameters would be baked into the graph as constants. So the sliced
// container is an NNModule value that lists its children as capture read
// them from the original container (`L['self'].layers[2]`, with the guard
// on the container's entries that positional reads take): iterating it,
// indexing it, slicing it again and calling it (Sequential.forward iterates
// itself) give those values, whose parameters stay graph inputs.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"

namespace dync::capture {

using python::PyRef;

namespace {

std::string describe(const ValuePtr& container) {
  if (container->source)
    return container->source->str();
  return "a " + qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(container->object.get())));
}

} // namespace

llvm::Expected<ValuePtr> Interpreter::sliceModuleContainer(const ValuePtr& base, PyObject* slice) {
  PyObject* object = base->object.get();
  Py_ssize_t length = PyObject_Length(object);
  if (length < 0)
    return programError("len() of " + describe(base));
  Py_ssize_t start = 0, stop = 0, step = 0;
  if (PySlice_Unpack(slice, &start, &stop, &step) < 0)
    return programError("slicing " + describe(base));
  Py_ssize_t count = PySlice_AdjustIndices(length, &start, &stop, step);

  // The class builds the new container, for real (and refuses a slice as
  // in eager: ModuleDict does): it only references the children, and
  // nothing outside capture sees it.
  PyRef made = PyRef::steal(PyObject_GetItem(object, slice));
  if (!made)
    return programError("slicing " + describe(base));
  // The children at the slice's positions, read as `base[i]` reads them:
  // with their sources, and the guard on the entries positions depend on.
  std::vector<ValuePtr> children;
  for (Py_ssize_t i = 0, index = start; i < count; ++i, index += step) {
    llvm::Expected<ValuePtr> child = getItem(base, makeInt(index));
    if (!child)
      return child.takeError();
    children.push_back(*child);
  }

  if (PyObject_IsInstance(made.get(), types_.module.get()) != 1) {
    PyErr_Clear();
    return captureError("slicing " + describe(base) + " gave a " +
                        qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(made.get()))) +
                        ", not a module container: slicing is supported for containers whose "
                        "slice is a container of their children");
  }
  // What the class made must hold exactly the children read above, in
  // order: then iterating it is iterating them.
  PyRef iterator = PyRef::steal(PyObject_GetIter(made.get()));
  if (!iterator)
    return programError("iterating over a slice of " + describe(base));
  size_t position = 0;
  bool same = true;
  while (PyRef item = PyRef::steal(PyIter_Next(iterator.get()))) {
    same = same && position < children.size() && children[position]->object.get() == item.get();
    ++position;
  }
  if (PyErr_Occurred())
    return programError("iterating over a slice of " + describe(base));
  if (!same || position != children.size())
    return captureError("slicing " + describe(base) +
                        " is not supported: its class builds the slice from other modules "
                        "than the children at the slice's positions");
  // What slicing does is the container class's: pin it.
  if (base->source)
    guards_.add(typeGuard(base->source, reinterpret_cast<PyObject*>(Py_TYPE(object))));

  ValuePtr result = makeValue(ValueKind::NNModule, made);
  result->items = std::move(children);
  result->slicedContainer = true;
  return result;
}

llvm::Expected<ValuePtr> Interpreter::itemOfSlicedContainer(const ValuePtr& base,
                                                            const ValuePtr& key) {
  llvm::Expected<PyRef> index = toPython(key);
  if (!index)
    return index.takeError();
  if (PySlice_Check(index->get()))
    return sliceModuleContainer(base, index->get());
  PyRef item = PyRef::steal(PyObject_GetItem(base->object.get(), index->get()));
  if (!item)
    return programError("indexing " + describe(base));
  // A child is the value read for it in the original container.
  for (const ValuePtr& child : base->items)
    if (child->object.get() == item.get())
      return child;
  return values_.wrapReal(item.get(), nullptr);
}

} // namespace dync::capture
