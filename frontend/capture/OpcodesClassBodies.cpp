//===- OpcodesClassBodies.cpp - Opcodes of class statements ----------------===//
//
// LOAD_BUILD_CLASS, and the opcodes a class body binds names with: over the
// frame's namespace (Frame::names) rather than fast locals. What
// __build_class__ then does with the body is the interpreter's
// (ClassBodies.cpp).
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/BytecodeMachine.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

namespace dync::capture {

using bytecode::Instruction;
using python::PyRef;

namespace {

PyObject* nameAt(const Frame& f, uint32_t index) {
  return PyTuple_GET_ITEM(f.code->co_names, index);
}

std::string text(PyObject* name) { return python::utf8Of(name).value_or("?"); }

/// The entry of the namespace \p names bound to \p name, or null.
std::pair<ValuePtr, ValuePtr>* findName(const ValuePtr& names, PyObject* name) {
  for (auto& entry : names->entries) {
    PyObject* key = entry.first->object.get();
    if (entry.first->isConstant() && PyUnicode_Check(key) && PyUnicode_Compare(key, name) == 0)
      return &entry;
  }
  PyErr_Clear();
  return nullptr;
}

llvm::Error outsideClassBody(const char* what) {
  return captureError(llvm::Twine("unsupported opcode ") + what +
                      " (names outside a function or class body)");
}

} // namespace

llvm::Error BytecodeMachine::op_LOAD_BUILD_CLASS(Frame& f, const Instruction&) {
  // The frame's builtins, as CPython reads them: __build_class__ is the
  // builtin handler ClassBodies.cpp registers unless the program replaced it, in which case
  // calling it is an ordinary call of whatever it is.
  PyObject* builtins = PyDict_GetItemString(f.globals, "__builtins__");
  if (builtins && PyModule_Check(builtins))
    builtins = PyModule_GetDict(builtins);
  if (!builtins || !PyDict_Check(builtins))
    builtins = PyModule_GetDict(types_.builtinsModule.get());
  PyObject* buildClass = PyDict_GetItemString(builtins, "__build_class__");
  if (!buildClass)
    return captureError("__build_class__ not found");
  llvm::Expected<ValuePtr> value = values_.wrapReal(buildClass, nullptr);
  if (!value)
    return value.takeError();
  f.stack.push_back(*value);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_LOAD_NAME(Frame& f, const Instruction& ins) {
  if (!f.names)
    return outsideClassBody("LOAD_NAME");
  PyObject* name = nameAt(f, ins.arg);
  if (auto* entry = findName(f.names, name)) {
    f.stack.push_back(entry->second);
    return llvm::Error::success();
  }
  // Every class body starts with `__module__ = __name__`: the module's
  // name is fixed with the module itself, so it needs no guard.
  if (text(name) == "__name__") {
    if (PyObject* module = PyDict_GetItemWithError(f.globals, name)) {
      f.stack.push_back(makeConstant(PyRef::borrow(module)));
      return llvm::Error::success();
    }
    PyErr_Clear();
  }
  llvm::Expected<ValuePtr> value = loadGlobal(f, name);
  if (!value)
    return value.takeError();
  f.stack.push_back(*value);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_STORE_NAME(Frame& f, const Instruction& ins) {
  if (!f.names)
    return outsideClassBody("STORE_NAME");
  PyObject* name = nameAt(f, ins.arg);
  ValuePtr value = pop(f);
  if (auto* entry = findName(f.names, name)) {
    entry->second = std::move(value);
    return llvm::Error::success();
  }
  f.names->entries.emplace_back(makeConstant(PyRef::borrow(name)), std::move(value));
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_DELETE_NAME(Frame& f, const Instruction& ins) {
  if (!f.names)
    return outsideClassBody("DELETE_NAME");
  PyObject* name = nameAt(f, ins.arg);
  auto* entry = findName(f.names, name);
  if (!entry)
    return captureError("name '" + text(name) + "' is not defined");
  f.names->entries.erase(f.names->entries.begin() + (entry - f.names->entries.data()));
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_LOAD_CLASSDEREF(Frame& f, const Instruction& ins) {
  if (!f.names)
    return outsideClassBody("LOAD_CLASSDEREF");
  // The namespace first, then the enclosing function's cell.
  PyObject* name = PyTuple_GET_ITEM(f.code->co_localsplusnames, ins.arg);
  if (auto* entry = findName(f.names, name)) {
    f.stack.push_back(entry->second);
    return llvm::Error::success();
  }
  const ValuePtr& cell = f.locals[ins.arg];
  if (!cell || cell->kind != ValueKind::Cell || !cell->cell)
    return captureError("free variable '" + text(name) + "' referenced before assignment");
  f.stack.push_back(cell->cell);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_SETUP_ANNOTATIONS(Frame& f, const Instruction&) {
  if (!f.names)
    return outsideClassBody("SETUP_ANNOTATIONS");
  PyRef name = PyRef::steal(python::newStr("__annotations__"));
  if (!findName(f.names, name.get()))
    f.names->entries.emplace_back(makeConstant(name), makeValue(ValueKind::Dict));
  return llvm::Error::success();
}

} // namespace dync::capture
