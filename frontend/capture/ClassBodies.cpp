//===- ClassBodies.cpp - Class statements run while capturing -------------===//
//
// `class Combine(torch.autograd.Function): ...` inside a captured function.
// CPython compiles the statement to LOAD_BUILD_CLASS, the body as a function
// made by MAKE_FUNCTION, and a call `__build_class__(body, name, *bases,
// **keywords)`; the body's code binds names with LOAD_NAME and STORE_NAME
// over a namespace rather than fast locals.
//
// Capture runs the body symbolically, so what it computes (methods, their
// closures, decorators, constants) are values like any other. Then, when
// everything in the namespace can be a real object (RealObjects.cpp), it
// makes the real class with the real metaclass, as __build_class__ would:
// metaclass from the bases, __prepare__, __orig_bases__, __classcell__. The
// result is an ordinary class (an Object value), so constructing it,
// reading its attributes and calling its methods work as they do on the
// program's module-level classes (Instances.cpp).
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include <set>

namespace dync::capture {

using bytecode::Instruction;
using python::PyRef;

namespace {

std::string text(PyObject* name) { return python::utf8Of(name).value_or("?"); }

/// Where the class body \p body binds \p attribute (its first STORE_NAME of
/// that name), as a frame of a capture error.
std::optional<CaptureFrame> firstBinding(const Value& body, const std::string& attribute,
                                         const bytecode::DecodedCode& decoded,
                                         std::optional<uint8_t> storeName) {
  auto* code = reinterpret_cast<PyCodeObject*>(body.code.get());
  for (const Instruction& ins : decoded.instructions) {
    if (!storeName || ins.opcode != *storeName ||
        python::utf8Of(PyTuple_GET_ITEM(code->co_names, ins.arg)).value_or("") != attribute ||
        ins.position.line <= 0)
      continue;
    CaptureFrame frame;
    frame.function = body.qualname;
    python::SourceLocation& location = frame.location;
    location.file = python::utf8Of(code->co_filename).value_or("<unknown>");
    location.line = static_cast<unsigned>(ins.position.line);
    if (ins.position.column >= 0 && ins.position.endLine == ins.position.line) {
      location.column = static_cast<unsigned>(ins.position.column) + 1;
      location.endColumn = static_cast<unsigned>(ins.position.endColumn) + 1;
    }
    location.lineText = sourceLine(location.file, ins.position.line);
    return frame;
  }
  return std::nullopt;
}

llvm::Expected<ValuePtr> buildClassBuiltin(BuiltinContext& interp, const ValuePtr&,
                                           std::vector<ValuePtr>& args, KeywordArgs& kwargs) {
  return interp.buildClass(std::move(args), std::move(kwargs));
}

} // namespace

std::optional<CaptureFrame> Interpreter::bindingFrame(const Value& body,
                                                      const std::string& attribute) {
  llvm::Expected<const bytecode::DecodedCode*> code =
      machine_.decoded(reinterpret_cast<PyCodeObject*>(body.code.get()));
  if (!code) {
    llvm::consumeError(code.takeError());
    return std::nullopt;
  }
  return firstBinding(body, attribute, **code, machine_.opcodes().byName("STORE_NAME"));
}

llvm::Error registerClassHandlers(BuiltinContext& interp) {
  llvm::Expected<PyRef> buildClass = importObject("builtins.__build_class__");
  if (!buildClass)
    return buildClass.takeError();
  addBuiltin(interp, buildClass->get(), buildClassBuiltin);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// __build_class__.
//===----------------------------------------------------------------------===//

llvm::Expected<ValuePtr> Interpreter::buildClass(std::vector<ValuePtr> args, KeywordArgs kwargs) {
  if (args.size() < 2)
    return captureError("__build_class__: not enough arguments");
  const ValuePtr& body = args[0];
  const ValuePtr& nameValue = args[1];
  if (body->kind != ValueKind::Function || !body->code)
    return captureError("__build_class__: the class body is a " + spelling(body->kind) +
                        ", not a function");
  if (!nameValue->isConstant() || !PyUnicode_Check(nameValue->object.get()))
    return captureError("__build_class__: the class name is not a string");
  std::string name = text(nameValue->object.get());
  auto cannotMake = [&](const llvm::Twine& why) {
    return captureError("class '" + name + "' defined while capturing cannot be made: " + why);
  };

  // Bases and keywords go to the real metaclass: they must be real.
  PyRef originalBases = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size() - 2)));
  for (size_t i = 2; i < args.size(); ++i) {
    if (std::optional<std::string> why = whyNotReal(args[i]))
      return cannotMake("base " + llvm::Twine(i - 2) + " is " + *why);
    llvm::Expected<PyRef> base = materialize(args[i]);
    if (!base)
      return base.takeError();
    PyTuple_SET_ITEM(originalBases.get(), static_cast<Py_ssize_t>(i - 2), base->release());
  }
  PyRef metaclass;
  PyRef keywords = PyRef::steal(PyDict_New());
  for (auto& [keyword, value] : kwargs) {
    if (std::optional<std::string> why = whyNotReal(value))
      return cannotMake("keyword '" + keyword + "' is " + *why);
    llvm::Expected<PyRef> real = materialize(value);
    if (!real)
      return real.takeError();
    if (keyword == "metaclass")
      metaclass = *real;
    else if (PyDict_SetItemString(keywords.get(), keyword.c_str(), real->get()) < 0)
      return pythonError("building the keywords of class '" + name + "'");
  }

  // PEP 560: bases that are not classes say what they stand for.
  llvm::Expected<PyRef> resolveBases = importObject("types.resolve_bases");
  if (!resolveBases)
    return resolveBases.takeError();
  PyRef bases = PyRef::steal(PyObject_CallOneArg(resolveBases->get(), originalBases.get()));
  if (!bases)
    return pythonError("resolving the bases of class '" + name + "'");

  // The metaclass: the one given, else the most derived of the bases'.
  bool isClass = !metaclass || PyType_Check(metaclass.get());
  if (!metaclass)
    metaclass =
        PyRef::borrow(PyTuple_GET_SIZE(bases.get()) > 0
                          ? reinterpret_cast<PyObject*>(Py_TYPE(PyTuple_GET_ITEM(bases.get(), 0)))
                          : reinterpret_cast<PyObject*>(&PyType_Type));
  if (isClass) {
    PyTypeObject* winner =
        _PyType_CalculateMetaclass(reinterpret_cast<PyTypeObject*>(metaclass.get()), bases.get());
    if (!winner)
      return pythonError("choosing the metaclass of class '" + name + "'");
    metaclass = PyRef::borrow(reinterpret_cast<PyObject*>(winner));
  }

  // __prepare__ makes the namespace the metaclass will receive. The body
  // runs over a symbolic one; what it binds is stored into the real one
  // afterwards, in the same order, so a __prepare__ namespace that watches
  // assignments (enum's) sees them as it would have.
  PyRef nameObject = nameValue->object;
  PyRef prepared;
  PyRef prepare = PyRef::steal(PyObject_GetAttrString(metaclass.get(), "__prepare__"));
  if (!prepare) {
    PyErr_Clear();
    prepared = PyRef::steal(PyDict_New());
  } else {
    PyRef prepareArgs = PyRef::steal(PyTuple_Pack(2, nameObject.get(), bases.get()));
    prepared = PyRef::steal(PyObject_Call(prepare.get(), prepareArgs.get(), keywords.get()));
    if (!prepared)
      return pythonError("calling __prepare__ of the metaclass of class '" + name + "'");
    if (!PyMapping_Check(prepared.get()))
      return captureError(describeObject(metaclass.get()) +
                          ".__prepare__() must return a "
                          "mapping, not " +
                          describeObject(reinterpret_cast<PyObject*>(Py_TYPE(prepared.get()))));
  }
  ValuePtr names = makeValue(ValueKind::Dict);
  // What __prepare__ put there is in the real namespace already; only what
  // the body binds or rebinds is stored.
  std::set<const Value*> prepopulated;
  if (PyDict_Check(prepared.get())) {
    PyObject *key, *item;
    Py_ssize_t pos = 0;
    while (PyDict_Next(prepared.get(), &pos, &key, &item)) {
      llvm::Expected<ValuePtr> wrapped = values_.wrapReal(item, nullptr);
      if (!wrapped)
        return wrapped.takeError();
      names->entries.emplace_back(makeConstant(PyRef::borrow(key)), *wrapped);
      prepopulated.insert(wrapped->get());
    }
  }

  auto* code = reinterpret_cast<PyCodeObject*>(body->code.get());
  llvm::Expected<ValuePtr> classCell =
      runFunction(body, std::vector<ValuePtr>(static_cast<size_t>(code->co_nlocalsplus)), names);
  if (!classCell)
    return classCell.takeError();

  // Everything the body bound becomes a real attribute. Making these real
  // objects (and the class) is not a side effect: nothing outside capture
  // can reach them, the class is found only through values capture holds.
  for (auto& [key, value] : names->entries) {
    if (prepopulated.count(value.get()))
      continue;
    std::string attribute = key->isConstant() ? python::strOf(key->object.get()) : "?";
    if (std::optional<std::string> why = whyNotReal(value)) {
      // Shown at the line of the class body that binds the attribute.
      std::vector<CaptureFrame> stack = callStack();
      if (std::optional<CaptureFrame> binding = bindingFrame(*body, attribute))
        stack.insert(stack.begin(), std::move(*binding));
      return llvm::make_error<CaptureError>(
          "class '" + name + "' defined while capturing cannot be made: its attribute '" +
              attribute + "' is " + *why +
              "; a class defined while capturing can hold only values known while capturing",
          std::move(stack));
    }
    llvm::Expected<PyRef> realKey = materialize(key);
    if (!realKey)
      return realKey.takeError();
    llvm::Expected<PyRef> realValue = materialize(value);
    if (!realValue)
      return realValue.takeError();
    if (PyObject_SetItem(prepared.get(), realKey->get(), realValue->get()) < 0)
      return pythonError("setting attribute '" + attribute + "' of class '" + name + "'");
  }
  if (bases.get() != originalBases.get() &&
      PyMapping_SetItemString(prepared.get(), "__orig_bases__", originalBases.get()) < 0)
    return pythonError("setting __orig_bases__ of class '" + name + "'");

  // The real metaclass call: type.__new__ (and, for autograd.Function,
  // FunctionMeta.__init__) run as CPython would run them, once, here. Their
  // hooks (__init_subclass__, __set_name__) run once too, as in eager mode.
  PyRef metaArgs = PyRef::steal(PyTuple_Pack(3, nameObject.get(), bases.get(), prepared.get()));
  PyRef cls = PyRef::steal(PyObject_Call(metaclass.get(), metaArgs.get(),
                                         PyDict_Size(keywords.get()) ? keywords.get() : nullptr));
  if (!cls)
    return pythonError("making class '" + name + "'");

  // A body whose methods use super() or __class__ returns the __class__
  // cell, which type.__new__ filled with the new class through the real
  // cell made for it; the symbolic cell gets the class too.
  if ((*classCell)->kind == ValueKind::Cell) {
    auto real = realCells_.find((*classCell).get());
    PyObject* contents = real != realCells_.end() ? PyCell_GET(real->second.second.get()) : nullptr;
    if (contents != cls.get())
      return captureError("__class__ cell of class '" + name +
                          "' was not set by its metaclass (does its __new__ pass "
                          "__classcell__ to type.__new__?)");
    (*classCell)->cell = makeValue(ValueKind::Object, cls);
  }
  localClasses_[cls.get()] = cls;
  return values_.wrapReal(cls.get(), nullptr);
}

bool Interpreter::decoratesLocalClass(const Value& function,
                                      const std::vector<ValuePtr>& args) const {
  // These decorators add methods to the class itself (with setattr, from
  // code they compile with exec): capture cannot run them symbolically, and
  // running them for real changes only a class nothing outside capture can
  // reach.
  if (!function.globals || args.size() != 1 || args[0]->kind != ValueKind::Object ||
      !localClasses_.count(args[0]->object.get()))
    return false;
  PyObject* module = PyDict_GetItemString(function.globals.get(), "__name__");
  std::string moduleName = module ? python::utf8Of(module).value_or("") : "";
  if (moduleName == "dataclasses")
    return true;
  return moduleName == "functools" && function.qualname == "total_ordering";
}

} // namespace dync::capture
