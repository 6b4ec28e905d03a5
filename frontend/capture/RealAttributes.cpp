//===- RealAttributes.cpp - Attributes of real objects set while capturing ===//
//
// Libraries keep per-call state on objects of their own: a flag set before
// the call and cleared after it, a collector stored for the layers to find
// (`state.active = collector`, ..., `state.active = None`). Setting the real
// attribute while capturing would change the process, and the value may
// exist only in capture (a dict of tensors). So capture keeps its own
// settings, as it does for ContextVars: an assignment is recorded, reads of
// that attribute see it, and the real object is never touched. What the
// attribute held before is read once, through its source, so the guards pin
// it. When the function returns, every attribute must hold what it held
// before (the same object, or an equal constant): then running the graph
// alone leaves the world as eager mode does. An attribute left changed
// would be a change after the graph the artifact does not make, and stops
// capture (Interpreter::checkRealAttrsRestored).
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

namespace dync::capture {

using python::PyRef;

namespace {

/// Why assigning \p name of \p object cannot be kept in capture's state, or
/// an empty string: only a plain instance-dict assignment can, one that no
/// __setattr__ or descriptor of the class turns into something else.
std::string whyNotPlain(PyObject* object, llvm::StringRef name) {
  PyTypeObject* type = Py_TYPE(object);
  if (PyModule_Check(object) || PyType_Check(object))
    return "assigning module and class attributes is a side effect outside the graph";
  if (type->tp_setattro != PyObject_GenericSetAttr)
    return "its class defines __setattr__";
  if (type->tp_dictoffset == 0)
    return "its class has no instance dict";
  PyRef key = PyRef::steal(python::newStr(name));
  PyObject* classAttr = _PyType_Lookup(type, key.get());
  if (classAttr && Py_TYPE(classAttr)->tp_descr_set)
    return "its class has a descriptor of that name";
  return "";
}

/// Whether the value found before and the one left are the same: the same
/// real object, or equal constants of one type (None, bools, ints, strs).
bool sameValue(const ValuePtr& before, const ValuePtr& after) {
  if (before == after)
    return true;
  PyObject* was = before->realObject();
  PyObject* is = after->realObject();
  if (!was || !is)
    return false;
  if (was == is)
    return true;
  if (!before->isConstant() || !after->isConstant() || Py_TYPE(was) != Py_TYPE(is))
    return false;
  int equal = PyObject_RichCompareBool(was, is, Py_EQ);
  if (equal < 0)
    PyErr_Clear();
  return equal == 1;
}

std::string describeValue(const ValuePtr& value) {
  if (PyObject* object = value->isConstant() ? value->realObject() : nullptr)
    return reprOf(object);
  return "a " + spelling(value->kind).str() + " value";
}

} // namespace

llvm::Error Interpreter::setRealAttr(const ValuePtr& base, llvm::StringRef name, ValuePtr value) {
  PyObject* object = base->object.get();
  std::string target = base->source ? base->source->str() : "a " + spelling(base->kind).str();
  auto refuse = [&](const llvm::Twine& why) {
    return captureError("assigning attribute '" + name + "' of " + target + " (" + why +
                        "; a side effect outside the graph)");
  };
  if (!object || !base->source)
    return refuse("an object capture cannot read back");
  if (std::string why = whyNotPlain(object, name); !why.empty())
    return refuse(why);
  // The program's line, for the error if the attribute is left changed.
  std::string where;
  std::vector<CaptureFrame> stack = callStack();
  if (!stack.empty())
    where = stack.front().location.file + ":" + std::to_string(stack.front().location.line);
  for (RealAttrSetting& setting : realAttrSettings_)
    if (setting.object.get() == object && setting.name == name) {
      setting.value = std::move(value);
      setting.where = std::move(where);
      return llvm::Error::success();
    }
  // What it held before, read as any read is, so that the guards pin it.
  llvm::Expected<ValuePtr> original = getAttr(base, name);
  if (!original) {
    llvm::consumeError(original.takeError());
    return refuse("it has no such attribute before, and capture cannot delete it after");
  }
  realAttrSettings_.push_back(
      {PyRef::borrow(object), name.str(), target, std::move(where), *original, std::move(value)});
  return llvm::Error::success();
}

ValuePtr Interpreter::assignedRealAttr(PyObject* object, llvm::StringRef name) const {
  for (const RealAttrSetting& setting : realAttrSettings_)
    if (setting.object.get() == object && setting.name == name)
      return setting.value;
  return nullptr;
}

llvm::Error Interpreter::checkRealAttrsRestored() const {
  for (const RealAttrSetting& setting : realAttrSettings_)
    if (!sameValue(setting.original, setting.value))
      return captureError("the function leaves attribute '" + setting.name + "' of " +
                          setting.owner + " changed (" + describeValue(setting.original) +
                          " before, " + describeValue(setting.value) + " after, assigned at " +
                          setting.where + "), a change of state outside the graph");
  return llvm::Error::success();
}

} // namespace dync::capture
