//===- Instances.cpp - Objects of Python classes made while capturing -----===//
//
// `Options(batch=4)`, `dataclasses.replace(options, ...)`, a named tuple of
// results: objects the program builds from its own classes. Capture never
// makes the real object. It runs the class's __new__ and __init__ inlined
// over an Instance value whose attributes are symbolic values, so a tensor
// or a symbolic size can be an attribute, and __init__ assigning attributes
// is not a side effect: nothing outside capture can see the object.
//
// Only classes written in Python qualify: the instance layout must be
// `object`'s (or `tuple`'s, for named tuples) and every special method that
// construction or attribute access runs must be Python code or `object`'s
// own. Anything else stops capture naming the class.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DictInstances.h"
#include "frontend/capture/DispatchExclusion.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/ListInstances.h"
#include "frontend/capture/MethodBinding.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/TypeAttribute.h"
#include "frontend/embedding/PyStrings.h"

namespace dync::capture {

using python::PyRef;

namespace {

PyTypeObject* typeOf(const ValuePtr& instance) {
  return reinterpret_cast<PyTypeObject*>(instance->object.get());
}

/// What `object` itself provides; a class that inherits these has no
/// behaviour of its own there.
PyObject* objectSlot(const char* name) {
  return PyDict_GetItemString(PyBaseObject_Type.tp_dict, name);
}

/// The function a staticmethod holds, or null.
PyObject* staticFunction(PyObject* attribute) {
  if (!attribute || !Py_IS_TYPE(attribute, &PyStaticMethod_Type))
    return nullptr;
  PyRef function = PyRef::steal(PyObject_GetAttrString(attribute, "__func__"));
  if (!function) {
    PyErr_Clear();
    return nullptr;
  }
  return PyFunction_Check(function.get()) ? function.get() : nullptr;
}

std::string className(PyTypeObject* type) {
  return qualifiedTypeName(reinterpret_cast<PyObject*>(type));
}

bool sameName(const ValuePtr& key, llvm::StringRef name) {
  return key->isConstant() && PyUnicode_Check(key->object.get()) &&
         python::utf8Of(key->object.get()).value_or("") == name;
}

} // namespace

llvm::Expected<ValuePtr> Interpreter::construct(const ValuePtr& cls, std::vector<ValuePtr> args,
                                                KeywordArgs kwargs) {
  auto* type = reinterpret_cast<PyTypeObject*>(cls->object.get());
  // torch's dispatch-exclusion guards: a stand-in (DispatchExclusion.h).
  if (isDispatchExclusionClass(cls->object.get()) && args.empty() && kwargs.empty()) {
    llvm::Expected<PyRef> standIn = makeDispatchExclusionStandIn();
    if (!standIn)
      return standIn.takeError();
    return makeValue(ValueKind::Object, *standIn);
  }
  std::string name = className(type);
  auto unsupported = [&](const llvm::Twine& why) {
    return captureError("constructing an object of class '" + name + "' is not supported: " + why);
  };
  PyObject* newAttr = typeAttribute(type, "__new__");
  // dict's __new__ makes an object holding items besides its attributes
  // (DictInstances.cpp).
  bool dictClass = newAttr == dictNewFunction() && isDictClass(type);
  // list's __new__ makes a list value of the class (ListInstances.cpp).
  bool listClass = isListClass(type);
  // A generator of the program's own (diffusers' seeded sampling) would be
  // state no graph holds; the default generator, seeded by the program,
  // is (docs/capture.md, "Random operators and the generator's state").
  if (name == "torch._C.Generator")
    return captureError("making a torch.Generator in the captured function is not supported: a "
                        "generator is state no graph holds, so draws from it cannot be "
                        "compiled; seed torch's default generator instead "
                        "(torch.manual_seed(seed)) and draw without generator=, or draw the "
                        "noise outside the function and pass it in");
  if (newAttr != objectSlot("__new__") && !staticFunction(newAttr) && !dictClass && !listClass)
    return unsupported("its __new__ is not written in Python");
  if (listClass)
    if (std::string special = ownSpecialMethod(type); !special.empty())
      return unsupported("it derives from list and defines " + special +
                         ", which capture does not run on a list");
  // A metaclass may decide what calling the class does (enums do).
  if (typeAttribute(Py_TYPE(type), "__call__") != typeAttribute(&PyType_Type, "__call__"))
    return unsupported("its metaclass defines __call__");

  // What construction runs is read through the class by name, so that a
  // __new__ or __init__ replaced (or added) after export misses; object's
  // own leave the Python classes of the MRO pinned not to hold them
  // (ClassAttributeSources.cpp).
  SourcePtr newSource = values_.classLookupSource(type, "__new__");

  ValuePtr self;
  if (dictClass) {
    self = newDictInstance(cls);
  } else if (listClass) {
    self = newListInstance(cls);
  } else if (newAttr == objectSlot("__new__")) {
    // object.__new__ refuses arguments unless __init__ takes them.
    if ((!args.empty() || !kwargs.empty()) &&
        typeAttribute(type, "__init__") == objectSlot("__init__"))
      return captureError(name + "() takes no arguments");
    self = makeValue(ValueKind::Instance, cls->object);
  } else {
    PyObject* function = staticFunction(newAttr);
    llvm::Expected<ValuePtr> callee =
        values_.functionFromReal(function, values_.wrappedFunctionSource(newSource, newAttr));
    if (!callee)
      return callee.takeError();
    std::vector<ValuePtr> newArgs = args;
    newArgs.insert(newArgs.begin(), cls);
    llvm::Expected<ValuePtr> made = call(*callee, std::move(newArgs), kwargs);
    if (!made)
      return made.takeError();
    self = *made;
  }

  // __init__ runs only on an instance of the class, as type.__call__ does.
  llvm::Expected<PyRef> madeType = pythonType(self);
  if (!madeType) {
    llvm::consumeError(madeType.takeError());
    return self;
  }
  if (!PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(madeType->get()), type))
    return self;
  PyObject* init = typeAttribute(type, "__init__");
  SourcePtr initSource = values_.classLookupSource(type, "__init__");
  if (init == objectSlot("__init__"))
    return self;
  if (init && (dictClass || listClass) && builtins_.contains(init)) {
    // dict's, OrderedDict's, defaultdict's or list's own __init__: the
    // items given.
    args.insert(args.begin(), self);
    llvm::Expected<ValuePtr> result = call(makeValue(ValueKind::Builtin, PyRef::borrow(init)),
                                           std::move(args), std::move(kwargs));
    if (!result)
      return result.takeError();
    return self;
  }
  if (!init || !PyFunction_Check(init))
    return unsupported("its __init__ is not written in Python");
  llvm::Expected<ValuePtr> initializer = values_.functionFromReal(init, initSource);
  if (!initializer)
    return initializer.takeError();
  args.insert(args.begin(), self);
  llvm::Expected<ValuePtr> result = call(*initializer, std::move(args), std::move(kwargs));
  if (!result)
    return result.takeError();
  if (!(*result)->isNone())
    return captureError("__init__() should return None, not a " + spelling((*result)->kind));
  return self;
}

llvm::Expected<ValuePtr> Interpreter::instanceAttr(const ValuePtr& instance, llvm::StringRef name) {
  PyTypeObject* type = typeOf(instance);
  if (name == "__class__")
    return makeValue(ValueKind::Object, instance->object);
  syncAttributes(instance);
  // A real object of a dict class the program holds (ValueBuilderDicts.cpp)
  // has its instance attributes read through sources; one of the class's
  // read instead is guarded absent from the instance, as an object's is.
  bool realObject = instance->source != nullptr;
  if (realObject && name == "__dict__")
    return captureError("reading __dict__ of " + instance->source->str() +
                        ", an object of a dict class the program holds, is not supported yet");
  // `self.__dict__`: one Dict value, from then on where the attributes live
  // (setInstanceAttr keeps it in step), so that what the program stores
  // through it is what later reads see.
  if (name == "__dict__" && type->tp_dictoffset != 0 && typeAttribute(type, "__dict__") &&
      Py_IS_TYPE(typeAttribute(type, "__dict__"), &PyGetSetDescr_Type)) {
    if (!instance->attributeDict) {
      instance->attributeDict = makeValue(ValueKind::Dict);
      instance->attributeDict->entries = instance->entries;
    }
    return instance->attributeDict;
  }
  // Python's order: data descriptors of the class, then the instance's own
  // attributes, then everything else the class has. What the class of a
  // real object gives is pinned, present or not.
  if (realObject)
    values_.guardDictClassRead(instance, name);
  PyObject* classAttr = typeAttribute(type, name);
  bool slot = classAttr && Py_IS_TYPE(classAttr, &PyMemberDescr_Type);
  if (classAttr && PyObject_TypeCheck(classAttr, &PyProperty_Type)) {
    PyRef getter = PyRef::steal(PyObject_GetAttrString(classAttr, "fget"));
    if (!getter)
      return pythonError("reading property '" + name + "'");
    if (getter.get() == Py_None)
      return captureError("property '" + name + "' of '" + className(type) + "' has no getter");
    // The getter is pinned where the class holds the property (through the
    // class's name for an object made while capturing,
    // ClassAttributeSources.cpp), so that a property replaced on the class
    // after export misses rather than serve the old getter's graph.
    SourcePtr classRead = realObject ? Source::classAttr(instance->source, name)
                                     : values_.classLookupSource(type, name);
    SourcePtr getterSource = classRead && Py_IS_TYPE(classAttr, &PyProperty_Type)
                                 ? Source::attr(classRead, "fget")
                                 : nullptr;
    llvm::Expected<ValuePtr> function = values_.functionFromReal(getter.get(), getterSource);
    if (!function)
      return function.takeError();
    return call(*function, {instance});
  }
  if (classAttr && !slot && Py_TYPE(classAttr)->tp_descr_set)
    return captureError("reading attribute '" + name + "' of an object of class '" +
                        className(type) + "': its descriptor " + describeObject(classAttr) +
                        " is not supported");
  for (const auto& [key, value] : instance->entries)
    if (sameName(key, name))
      return value;
  if (realObject && type->tp_dictoffset != 0)
    guards_.add(ir::Guard::absent(Source::attr(instance->source, name)));
  if (classAttr && !slot) {
    // What the class gives is read through the class, so that a method or
    // constant changed on it after export misses (ClassAttributeSources.cpp);
    // a real object's class read is pinned above.
    SourcePtr classRead = realObject ? nullptr : values_.classLookupSource(type, name);
    if (PyFunction_Check(classAttr)) {
      llvm::Expected<ValuePtr> function = values_.functionFromReal(classAttr, classRead);
      if (!function)
        return function.takeError();
      ValuePtr method = makeValue(ValueKind::BoundMethod);
      method->items = {instance, *function};
      return method;
    }
    if (PyObject* function = staticFunction(classAttr))
      return values_.functionFromReal(function,
                                      values_.wrappedFunctionSource(classRead, classAttr));
    if (Py_IS_TYPE(classAttr, &PyClassMethod_Type)) {
      PyRef function = PyRef::steal(PyObject_GetAttrString(classAttr, "__func__"));
      if (!function)
        return pythonError("reading classmethod '" + name + "'");
      llvm::Expected<ValuePtr> callee =
          values_.wrapReal(function.get(), values_.wrappedFunctionSource(classRead, classAttr));
      if (!callee)
        return callee.takeError();
      ValuePtr method = makeValue(ValueKind::BoundMethod);
      method->items = {makeValue(ValueKind::Object, instance->object), *callee};
      return method;
    }
    if (builtins_.contains(classAttr)) {
      ValuePtr method = makeValue(ValueKind::BoundMethod);
      method->items = {instance, makeValue(ValueKind::Builtin, PyRef::borrow(classAttr))};
      return method;
    }
    // A non-data descriptor whose class is written in Python (torch.
    // distributions' lazy_property): its __get__ runs inlined, as Python
    // would call it.
    if (PyObject* getter = typeAttribute(Py_TYPE(classAttr), "__get__");
        getter && PyFunction_Check(getter) && !PyType_Check(classAttr)) {
      llvm::Expected<ValuePtr> function = values_.functionFromReal(getter, nullptr);
      if (!function)
        return function.takeError();
      llvm::Expected<ValuePtr> descriptor = values_.wrapReal(classAttr, nullptr);
      if (!descriptor)
        return descriptor.takeError();
      llvm::Expected<ValuePtr> owner = values_.wrapReal(reinterpret_cast<PyObject*>(type), nullptr);
      if (!owner)
        return owner.takeError();
      return call(*function, {*descriptor, instance, *owner});
    }
    if (Py_TYPE(classAttr)->tp_descr_get && !PyType_Check(classAttr))
      return captureError("reading attribute '" + name + "' of an object of class '" +
                          className(type) + "': binding " + describeObject(classAttr) +
                          " to it is not supported");
    // A plain class attribute: a default, a table, a nested class.
    return values_.wrapClassAttribute(classAttr, classRead);
  }
  if (PyObject* fallback = typeAttribute(type, "__getattr__");
      fallback && PyFunction_Check(fallback)) {
    llvm::Expected<ValuePtr> function = values_.functionFromReal(fallback, nullptr);
    if (!function)
      return function.takeError();
    return call(*function, {instance, makeConstantSteal(python::newStr(name))});
  }
  return raiseBuiltin(PyExc_AttributeError,
                      "'" + className(type) + "' object has no attribute '" + name + "'");
}

llvm::Error Interpreter::setInstanceAttr(const ValuePtr& instance, llvm::StringRef name,
                                         ValuePtr value, bool direct) {
  PyTypeObject* type = typeOf(instance);
  // A real object of a dict class the program holds: capture would change
  // only its own copy, and no side effect sets an attribute of it.
  if (instance->source)
    return captureError("assigning attribute '" + name + "' of " + instance->source->str() +
                        ", an object of a dict class the program holds (a side effect outside "
                        "the graph), is not supported yet");
  ValuePtr key = makeConstantSteal(python::newStr(name));
  if (!direct) {
    PyObject* setter = typeAttribute(type, "__setattr__");
    if (setter && PyFunction_Check(setter)) {
      // A frozen dataclass's __setattr__ raises; others may store elsewhere.
      llvm::Expected<ValuePtr> function = values_.functionFromReal(setter, nullptr);
      if (!function)
        return function.takeError();
      llvm::Expected<ValuePtr> result = call(*function, {instance, key, std::move(value)});
      return result ? llvm::Error::success() : result.takeError();
    }
    if (setter != objectSlot("__setattr__"))
      return captureError("assigning attribute '" + name + "' of an object of class '" +
                          className(type) + "': its __setattr__ is not written in Python");
  }
  PyObject* classAttr = typeAttribute(type, name);
  bool slot = classAttr && Py_IS_TYPE(classAttr, &PyMemberDescr_Type);
  if (classAttr && PyObject_TypeCheck(classAttr, &PyProperty_Type)) {
    PyRef setter = PyRef::steal(PyObject_GetAttrString(classAttr, "fset"));
    if (!setter)
      return pythonError("assigning property '" + name + "'");
    if (setter.get() == Py_None)
      return captureError("AttributeError: property '" + name + "' of '" + className(type) +
                          "' object has no setter");
    llvm::Expected<ValuePtr> function = values_.wrapReal(setter.get(), nullptr);
    if (!function)
      return function.takeError();
    llvm::Expected<ValuePtr> result = call(*function, {instance, std::move(value)});
    return result ? llvm::Error::success() : result.takeError();
  }
  if (classAttr && !slot && Py_TYPE(classAttr)->tp_descr_set)
    return captureError("assigning attribute '" + name + "' of an object of class '" +
                        className(type) + "': its descriptor " + describeObject(classAttr) +
                        " is not supported");
  // Without a __dict__, only the slots can be assigned.
  if (!slot && type->tp_dictoffset == 0)
    return captureError("AttributeError: '" + className(type) + "' object has no attribute '" +
                        name + "'");
  syncAttributes(instance);
  auto stored = llvm::find_if(instance->entries,
                              [&](const auto& entry) { return sameName(entry.first, name); });
  if (stored != instance->entries.end())
    stored->second = std::move(value);
  else
    instance->entries.emplace_back(std::move(key), std::move(value));
  if (instance->attributeDict)
    instance->attributeDict->entries = instance->entries;
  return llvm::Error::success();
}

llvm::Expected<ValuePtr> Interpreter::callSpecial(const ValuePtr& self, llvm::StringRef name,
                                                  std::vector<ValuePtr> args) {
  // A real dict object's class decides which method runs: pinned.
  values_.guardDictClassRead(self, name);
  PyObject* method = typeAttribute(typeOf(self), name);
  if (!method || !PyFunction_Check(method))
    return nullptr;
  llvm::Expected<ValuePtr> function = values_.functionFromReal(method, nullptr);
  if (!function)
    return function.takeError();
  args.insert(args.begin(), self);
  return call(*function, std::move(args));
}

//===----------------------------------------------------------------------===//
// `object`'s and `tuple`'s own methods, as the classes above call them.
//===----------------------------------------------------------------------===//

namespace {

using Args = std::vector<ValuePtr>;

bool isClass(const ValuePtr& value) {
  return value->kind == ValueKind::Object && PyType_Check(value->object.get());
}

/// object.__new__(cls): a fresh instance, for a __new__ written in Python
/// that calls `super().__new__(cls)`.
llvm::Expected<ValuePtr> objectNew(BuiltinContext&, const ValuePtr&, Args& args, KeywordArgs&) {
  if (args.empty() || !isClass(args[0]))
    return captureError("object.__new__(X): X is not a type object");
  auto* type = reinterpret_cast<PyTypeObject*>(args[0]->object.get());
  if (typeAttribute(type, "__new__") != objectSlot("__new__") &&
      !staticFunction(typeAttribute(type, "__new__")))
    return captureError("object.__new__(" + className(type) + ") is not safe");
  return makeValue(ValueKind::Instance, args[0]->object);
}

llvm::Expected<ValuePtr> objectInit(BuiltinContext&, const ValuePtr&, Args&, KeywordArgs&) {
  return makeNone();
}

/// object.__setattr__(self, name, value): how frozen dataclasses set their
/// fields in __init__.
llvm::Expected<ValuePtr> objectSetattr(BuiltinContext& interp, const ValuePtr&, Args& args,
                                       KeywordArgs&) {
  if (args.size() != 3)
    return captureError("object.__setattr__() takes 3 arguments");
  if (args[0]->kind != ValueKind::Instance)
    return captureError("object.__setattr__() on a " + spelling(args[0]->kind) +
                        " value (a side effect outside the graph)");
  if (!args[1]->isConstant() || !PyUnicode_Check(args[1]->object.get()))
    return captureError("object.__setattr__() with a name that is not a constant string");
  std::string name = python::utf8Of(args[1]->object.get()).value_or("");
  if (llvm::Error error = interp.setInstanceAttr(args[0], name, args[2], /*direct=*/true))
    return error;
  return makeNone();
}

/// tuple.__new__(cls, iterable): a named tuple's __new__ makes its value so.
llvm::Expected<ValuePtr> tupleNew(BuiltinContext& interp, const ValuePtr&, Args& args,
                                  KeywordArgs& kwargs) {
  if (args.empty() || args.size() > 2 || !kwargs.empty() || !isClass(args[0]))
    return captureError("tuple.__new__(X, iterable) expects a type and at most one iterable");
  std::vector<ValuePtr> items;
  if (args.size() == 2) {
    llvm::Expected<std::vector<ValuePtr>> unpacked = interp.unpack(args[1]);
    if (!unpacked)
      return unpacked.takeError();
    items = std::move(*unpacked);
  }
  ValuePtr tuple = makeTuple(std::move(items));
  if (args[0]->object.get() != reinterpret_cast<PyObject*>(&PyTuple_Type))
    tuple->object = args[0]->object;
  return tuple;
}

} // namespace

llvm::Error registerInstanceHandlers(BuiltinContext& interp) {
  const std::pair<PyObject*, BuiltinHandler> handlers[] = {
      {objectSlot("__new__"), objectNew},
      {objectSlot("__init__"), objectInit},
      {objectSlot("__setattr__"), objectSetattr},
      {PyDict_GetItemString(PyTuple_Type.tp_dict, "__new__"), tupleNew},
  };
  for (const auto& [object, handler] : handlers) {
    if (!object)
      return captureError("object or tuple has no __new__, __init__ or __setattr__");
    addBuiltin(interp, object, handler);
  }
  if (llvm::Error error = registerListInstanceHandlers(interp))
    return error;
  if (llvm::Error error = registerMethodBindingHandlers(interp))
    return error;
  return registerDictInstanceHandlers(interp);
}

} // namespace dync::capture
