//===- Semantics.cpp - Python's operations over symbolic values ------------===//
//
// Attribute and item access, truth, iteration, operators and identity, each
// decided by the kinds of its operands: constants and SymInts go through
// CPython's own C API, tensors through the oracle, containers are handled
// structurally here.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/BuiltinMethods.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DictInstances.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/TorchSize.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/StringSwitch.h"

#include <structmember.h>

#include <optional>

namespace dync::capture {

using python::PyRef;

namespace {

bool isNumberLike(const ValuePtr& value) {
  return value->kind == ValueKind::Constant || value->kind == ValueKind::SymNum;
}

std::string typeNameOf(const ValuePtr& value) {
  if (value->object && (value->kind == ValueKind::Constant || value->kind == ValueKind::Object ||
                        value->kind == ValueKind::NNModule))
    return qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(value->object.get())));
  return spelling(value->kind).str();
}

/// A binary operator: CPython's C API function for constants and SymInts,
/// and the `operator` module function torch is called with for tensors.
struct BinaryRow {
  const char* symbol;
  const char* operatorName;
  PyObject* (*apply)(PyObject*, PyObject*);
};

PyObject* power(PyObject* a, PyObject* b) { return PyNumber_Power(a, b, Py_None); }
PyObject* inPlacePower(PyObject* a, PyObject* b) { return PyNumber_InPlacePower(a, b, Py_None); }

const BinaryRow BinaryRows[] = {
    {"+", "add", PyNumber_Add},
    {"&", "and_", PyNumber_And},
    {"//", "floordiv", PyNumber_FloorDivide},
    {"<<", "lshift", PyNumber_Lshift},
    {"@", "matmul", PyNumber_MatrixMultiply},
    {"*", "mul", PyNumber_Multiply},
    {"%", "mod", PyNumber_Remainder},
    {"|", "or_", PyNumber_Or},
    {"**", "pow", power},
    {">>", "rshift", PyNumber_Rshift},
    {"-", "sub", PyNumber_Subtract},
    {"/", "truediv", PyNumber_TrueDivide},
    {"^", "xor", PyNumber_Xor},
    {"+=", "iadd", PyNumber_InPlaceAdd},
    {"&=", "iand", PyNumber_InPlaceAnd},
    {"//=", "ifloordiv", PyNumber_InPlaceFloorDivide},
    {"<<=", "ilshift", PyNumber_InPlaceLshift},
    {"@=", "imatmul", PyNumber_InPlaceMatrixMultiply},
    {"*=", "imul", PyNumber_InPlaceMultiply},
    {"%=", "imod", PyNumber_InPlaceRemainder},
    {"|=", "ior", PyNumber_InPlaceOr},
    {"**=", "ipow", inPlacePower},
    {">>=", "irshift", PyNumber_InPlaceRshift},
    {"-=", "isub", PyNumber_InPlaceSubtract},
    {"/=", "itruediv", PyNumber_InPlaceTrueDivide},
    {"^=", "ixor", PyNumber_InPlaceXor},
};

const BinaryRow* binaryRow(llvm::StringRef symbol) {
  for (const BinaryRow& row : BinaryRows)
    if (symbol == row.symbol)
      return &row;
  return nullptr;
}

struct CompareRow {
  const char* symbol;
  const char* operatorName;
  int op;
  /// The special method, and the one of the right operand tried next.
  const char* special;
  const char* reflected;
};

const CompareRow CompareRows[] = {
    {"<", "lt", Py_LT, "__lt__", "__gt__"},  {"<=", "le", Py_LE, "__le__", "__ge__"},
    {"==", "eq", Py_EQ, "__eq__", "__eq__"}, {"!=", "ne", Py_NE, "__ne__", "__ne__"},
    {">", "gt", Py_GT, "__gt__", "__lt__"},  {">=", "ge", Py_GE, "__ge__", "__le__"},
};

bool isNotImplemented(const ValuePtr& value) {
  return value->isConstant() && value->object.get() == Py_NotImplemented;
}

/// A comparison with an object made while capturing, through the special
/// methods its class defines in Python; null when none answers, so the
/// default (identity for == and !=) applies.
llvm::Expected<ValuePtr> compareInstances(Interpreter& interp, const CompareRow& row,
                                          const ValuePtr& a, const ValuePtr& b) {
  for (bool reflected : {false, true}) {
    const ValuePtr& self = reflected ? b : a;
    const ValuePtr& other = reflected ? a : b;
    if (self->kind != ValueKind::Instance)
      continue;
    llvm::Expected<ValuePtr> result =
        interp.callSpecial(self, reflected ? row.reflected : row.special, {other});
    if (!result || (*result && !isNotImplemented(*result)))
      return result;
    // object.__ne__ is the negation of __eq__.
    if (row.op != Py_NE || *result)
      continue;
    llvm::Expected<ValuePtr> equal = interp.callSpecial(self, "__eq__", {other});
    if (!equal)
      return equal.takeError();
    if (!*equal || isNotImplemented(*equal))
      continue;
    llvm::Expected<bool> truth = interp.truth(*equal);
    if (!truth)
      return truth.takeError();
    return makeBool(!*truth);
  }
  return nullptr;
}

/// The position a named tuple's field descriptor reads, or none when
/// \p attribute is not one. The descriptor (collections' `_tuplegetter`)
/// says it only through its pickled form: `(type, (index, doc))`.
llvm::Expected<std::optional<size_t>> namedTupleField(PyObject* attribute) {
  // A structseq's fields (torch.return_types.max's `values`) are member
  // descriptors reading the tuple's item slots.
  if (Py_IS_TYPE(attribute, &PyMemberDescr_Type)) {
    PyTypeObject* owner = reinterpret_cast<PyDescrObject*>(attribute)->d_type;
    const PyMemberDef* member = reinterpret_cast<PyMemberDescrObject*>(attribute)->d_member;
    Py_ssize_t first = offsetof(PyTupleObject, ob_item);
    if (!PyType_IsSubtype(owner, &PyTuple_Type) || member->type != T_OBJECT ||
        member->offset < first || (member->offset - first) % Py_ssize_t(sizeof(PyObject*)) != 0)
      return std::nullopt;
    return static_cast<size_t>((member->offset - first) / Py_ssize_t(sizeof(PyObject*)));
  }
  if (llvm::StringRef(Py_TYPE(attribute)->tp_name) != "_collections._tuplegetter")
    return std::nullopt;
  PyRef reduced = PyRef::steal(PyObject_CallMethod(attribute, "__reduce__", nullptr));
  if (!reduced)
    return programError("reading a named tuple field");
  PyObject* arguments = PyTuple_Check(reduced.get()) && PyTuple_GET_SIZE(reduced.get()) == 2
                            ? PyTuple_GET_ITEM(reduced.get(), 1)
                            : nullptr;
  if (!arguments || !PyTuple_Check(arguments) || PyTuple_GET_SIZE(arguments) < 1 ||
      !PyLong_Check(PyTuple_GET_ITEM(arguments, 0)))
    return captureError("a named tuple field descriptor of an unknown form");
  return static_cast<size_t>(PyLong_AsSsize_t(PyTuple_GET_ITEM(arguments, 0)));
}

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

} // namespace

//===----------------------------------------------------------------------===//
// Attributes.
//===----------------------------------------------------------------------===//

llvm::Expected<ValuePtr> Interpreter::tensorAttr(const ValuePtr& tensor, llvm::StringRef name) {
  PyRef nameObject = PyRef::steal(python::newStr(name));
  PyObject* attribute =
      _PyType_Lookup(reinterpret_cast<PyTypeObject*>(types_.tensor.get()), nameObject.get());
  if (!attribute)
    return captureError("torch.Tensor has no attribute '" + name + "'");
  // Data descriptors (shape, dtype, T, ...) are read now, on the fake;
  // anything else is a method bound to the tensor.
  if (Py_TYPE(attribute)->tp_descr_set) {
    PyObject* getattrFunction =
        PyDict_GetItemString(PyModule_GetDict(types_.builtinsModule.get()), "getattr");
    return callOracle(getattrFunction, {tensor, makeConstant(nameObject)}, {});
  }
  ValuePtr method = makeValue(ValueKind::BoundMethod);
  method->items = {tensor, makeValue(ValueKind::TorchCallable, PyRef::borrow(attribute))};
  return method;
}

/// A data descriptor on an nn.Module's class decides what reading \p name
/// gives, before the instance dict. A property whose getter is a Python
/// function runs symbolically, so what it reads is guarded; any other (a
/// property over a built-in getter, a __slots__ member, a descriptor class)
/// would be read for real into a constant that no guard can check, so the
/// read is refused rather than assumed unchanged.
static llvm::Error refuseUnguardedDescriptor(PyObject* object, llvm::StringRef name,
                                             PyObject* classAttr) {
  if (!classAttr || !Py_TYPE(classAttr)->tp_descr_set)
    return llvm::Error::success();
  // object's own `__class__` gives type(object), which the type guard every
  // module read installs already pins.
  if (name == "__class__" &&
      classAttr == _PyType_Lookup(&PyBaseObject_Type, PyRef::steal(python::newStr(name)).get()))
    return llvm::Error::success();
  // A read-only member of a C type (functools.partial's `func`, `args`) is
  // set when the object is made and no program can assign it afterwards.
  if (Py_IS_TYPE(classAttr, &PyMemberDescr_Type) &&
      (reinterpret_cast<PyMemberDescrObject*>(classAttr)->d_member->flags & READONLY))
    return llvm::Error::success();
  std::string kind;
  if (PyObject_TypeCheck(classAttr, &PyProperty_Type)) {
    PyRef getter = PyRef::steal(PyObject_GetAttrString(classAttr, "fget"));
    if (!getter)
      return pythonError("reading property '" + name + "'");
    if (PyFunction_Check(getter.get()))
      return llvm::Error::success();
    kind = getter.get() == Py_None
               ? std::string("a property without a getter")
               : "a property whose getter is not a Python function (a '" +
                     qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(getter.get()))) + "')";
  } else {
    kind = "a data descriptor of type '" +
           qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(classAttr))) + "'";
  }
  return captureError("attribute '" + name + "' of '" +
                      qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(object))) + "' is " +
                      kind +
                      ": its value read for real would be a constant that no guard checks, "
                      "which is not supported; make it a property with a Python getter or a "
                      "plain attribute");
}

/// Whether \p classAttr is enum's own descriptor for a member's `name` or
/// `value` and \p object is an enum member: what it gives was fixed when
/// the enum class was made.
static bool isEnumMemberProperty(PyObject* object, PyObject* classAttr) {
  PyObject* enumModule = PyImport_GetModule(PyRef::steal(python::newStr("enum")).get());
  if (!enumModule) {
    PyErr_Clear();
    return false;
  }
  PyRef module = PyRef::steal(enumModule);
  PyRef enumClass = PyRef::steal(PyObject_GetAttrString(module.get(), "Enum"));
  PyRef property = PyRef::steal(PyObject_GetAttrString(module.get(), "property"));
  if (!enumClass || !property) {
    PyErr_Clear();
    return false;
  }
  return Py_TYPE(classAttr) == reinterpret_cast<PyTypeObject*>(property.get()) &&
         PyObject_TypeCheck(object, reinterpret_cast<PyTypeObject*>(enumClass.get()));
}

llvm::Expected<ValuePtr> Interpreter::moduleAttr(const ValuePtr& module, llvm::StringRef name) {
  PyObject* object = module->object.get();
  PyRef nameObject = PyRef::steal(python::newStr(name));
  PyObject** dictPointer = _PyObject_GetDictPtr(object);
  PyObject* dict = dictPointer ? *dictPointer : nullptr;
  // Values found by a dictionary read get its source: the instance dict
  // (`.training`), then nn.Module.__getattr__'s tables in its order
  // (`._parameters['weight']`, `._buffers[...]`, `._modules[...]`).
  // Anything else comes from the class (methods, properties, class
  // attributes, descriptors): it is a constant of the graph, and class
  // attributes are assumed unchanged. Which read Python makes depends on
  // the class too, so the module's type is guarded either way.
  if (module->source)
    guards_.add(typeGuard(module->source, reinterpret_cast<PyObject*>(Py_TYPE(object))));
  auto readReal = [&]() -> llvm::Expected<ValuePtr> {
    PyRef value = PyRef::steal(PyObject_GetAttr(object, nameObject.get()));
    if (!value)
      return programError("reading attribute '" + name + "' of " +
                          (module->source ? module->source->str() : typeNameOf(module)));
    return values_.wrapReal(value.get(), nullptr);
  };
  // The class and the instance dict come first, as Python looks them up.
  PyObject* classAttr = _PyType_Lookup(Py_TYPE(object), nameObject.get());
  if (llvm::Error error = refuseUnguardedDescriptor(object, name, classAttr))
    return error;
  if (classAttr && PyObject_TypeCheck(classAttr, &PyProperty_Type)) {
    PyRef getter = PyRef::steal(PyObject_GetAttrString(classAttr, "fget"));
    if (!getter)
      return programError("reading property '" + name + "'");
    // The getter is pinned where the class holds it, so that a property
    // replaced on the class misses.
    llvm::Expected<ValuePtr> function = values_.wrapReal(
        getter.get(),
        module->source ? Source::attr(Source::classAttr(module->source, name), "fget") : nullptr);
    if (!function)
      return function.takeError();
    return call(*function, {module});
  }
  if (classAttr && Py_TYPE(classAttr)->tp_descr_set)
    return readReal();
  if (dict) {
    SourcePtr source;
    PyObject* value = PyDict_GetItem(dict, nameObject.get());
    if (value) {
      source = values_.instanceDictSource(module->source, object, nameObject.get(), value);
    } else {
      for (const char* table : {"_parameters", "_buffers", "_modules"}) {
        PyObject* entries = PyDict_GetItemString(dict, table);
        if (!entries || !PyDict_Check(entries))
          continue;
        if ((value = PyDict_GetItem(entries, nameObject.get()))) {
          source =
              values_.moduleTableSource(module->source, object, table, nameObject.get(), value);
          break;
        }
      }
    }
    if (value)
      return values_.wrapReal(value, source);
  }
  if (classAttr) {
    // Read from the class: the instance must not shadow it, and what the
    // class holds is pinned where a guard can (classReadSource).
    SourcePtr classSource = values_.classReadSource(module->source, name, classAttr);
    if (PyFunction_Check(classAttr)) {
      llvm::Expected<ValuePtr> function = values_.functionFromReal(classAttr, classSource);
      if (!function)
        return function.takeError();
      ValuePtr method = makeValue(ValueKind::BoundMethod);
      method->items = {module, *function};
      return method;
    }
    if (Py_IS_TYPE(classAttr, &PyStaticMethod_Type) || Py_IS_TYPE(classAttr, &PyClassMethod_Type)) {
      PyRef bound = PyRef::steal(PyObject_GetAttr(object, nameObject.get()));
      if (!bound)
        return programError("reading attribute '" + name + "'");
      return values_.wrapReal(bound.get(), nullptr);
    }
    if (Py_TYPE(classAttr)->tp_descr_get)
      return readReal();
    return values_.wrapReal(classAttr, classSource);
  }
  return readReal();
}

llvm::Expected<std::optional<ValuePtr>> Interpreter::userObjectClassRead(const ValuePtr& object,
                                                                         llvm::StringRef name) {
  PyObject* real = object->object.get();
  PyTypeObject* type = Py_TYPE(real);
  // Only Python's generic lookup on an instance of a Python class: modules,
  // classes and objects written in C keep the plain read.
  if (PyModule_Check(real) || PyType_Check(real) || type->tp_getattro != PyObject_GenericGetAttr ||
      !(type->tp_flags & Py_TPFLAGS_HEAPTYPE))
    return std::nullopt;
  PyRef nameObject = PyRef::steal(python::newStr(name));
  PyObject* classAttr = _PyType_Lookup(type, nameObject.get());
  if (!classAttr)
    return std::nullopt;
  // The class decides what the read gives; pin it.
  guards_.add(typeGuard(object->source, reinterpret_cast<PyObject*>(type)));
  // Data descriptors are refused as on nn.Modules: read for real, their
  // result would be a constant no guard checks. Exempt are the instance's
  // own `__dict__`/`__weakref__` slots (what they give is pinned by the type
  // guard above) and an enum member's `name`/`value` (fixed when its class
  // was made).
  if (!(Py_IS_TYPE(classAttr, &PyGetSetDescr_Type) &&
        (name == "__dict__" || name == "__weakref__")) &&
      !isEnumMemberProperty(real, classAttr))
    if (llvm::Error error = refuseUnguardedDescriptor(real, name, classAttr))
      return error;
  if (Py_IS_TYPE(classAttr, &PyProperty_Type)) {
    // A property's getter runs symbolically, like an nn.Module's, so what
    // it reads from the object is read through its source and guarded,
    // rather than its result becoming an unguarded constant.
    PyRef fget = PyRef::steal(PyObject_GetAttrString(classAttr, "fget"));
    if (!fget)
      return programError("reading property '" + name + "'");
    if (!PyFunction_Check(fget.get()))
      return std::nullopt;
    // The getter is pinned where the class holds it (the property read
    // through type(object)), so that a property replaced on the class
    // misses.
    llvm::Expected<ValuePtr> function = values_.functionFromReal(
        fget.get(), Source::attr(Source::classAttr(object->source, name), "fget"));
    if (!function)
      return function.takeError();
    llvm::Expected<ValuePtr> result = call(*function, {object});
    if (!result) {
      // Run for real, the getter's result would be a constant that no guard
      // checks (the getter may read anything): refuse rather than assume it.
      std::string reason = llvm::toString(result.takeError());
      return captureError("property '" + name + "' of '" +
                          qualifiedTypeName(reinterpret_cast<PyObject*>(type)) +
                          "' has a getter that cannot be captured (" + reason +
                          "); its result read for real would be an unguarded constant, which is "
                          "not supported: read the attributes it computes from directly");
    }
    return std::optional<ValuePtr>(*result);
  }
  if (!PyFunction_Check(classAttr))
    return std::nullopt;
  // A method: the instance must not shadow it and the class must still hold
  // this function (classReadSource), as for an nn.Module's methods.
  PyObject** dictPointer = _PyObject_GetDictPtr(real);
  if (dictPointer && *dictPointer && PyDict_Check(*dictPointer) &&
      PyDict_GetItem(*dictPointer, nameObject.get()))
    return std::nullopt;
  llvm::Expected<ValuePtr> function =
      values_.functionFromReal(classAttr, values_.classReadSource(object->source, name, classAttr));
  if (!function)
    return function.takeError();
  ValuePtr method = makeValue(ValueKind::BoundMethod);
  method->items = {object, *function};
  return std::optional<ValuePtr>(method);
}

llvm::Expected<ValuePtr> Interpreter::getAttr(const ValuePtr& base, llvm::StringRef name) {
  // A mappingproxy's reads are its dict's (MappingProxies.cpp).
  if (ValuePtr viewed = mappingProxyTarget(base); viewed && isMappingProxyRead(name))
    return getAttr(viewed, name);
  switch (base->kind) {
  case ValueKind::Tensor:
    return tensorAttr(base, name);
  case ValueKind::NNModule:
    // What the program assigned while capturing (RealAttributes.cpp).
    if (ValuePtr assigned = assignedRealAttr(base->object.get(), name))
      return assigned;
    return moduleAttr(base, name);
  case ValueKind::Instance:
    return instanceAttr(base, name);
  case ValueKind::Constant:
  case ValueKind::Object:
  case ValueKind::Builtin:
  case ValueKind::TorchCallable: {
    // What the program assigned while capturing (RealAttributes.cpp).
    if (base->kind == ValueKind::Object)
      if (ValuePtr assigned = assignedRealAttr(base->object.get(), name))
        return assigned;
    // --- Classes of objects read through sources: `type(SRC).NAME` ---
    // type(obj) and obj.__class__ give the class of an object read through
    // a source; what the program (a method of the object, say) reads from
    // that class is then read as `type(SRC).NAME` and guarded, rather than
    // folded in as an unguarded constant.
    if (base->kind == ValueKind::Object && base->source && !base->classOf && name == "__class__") {
      PyTypeObject* type = Py_TYPE(base->object.get());
      PyRef key = PyRef::steal(python::newStr(name));
      if (key && _PyType_Lookup(type, key.get()) == _PyType_Lookup(&PyBaseObject_Type, key.get())) {
        guards_.add(typeGuard(base->source, reinterpret_cast<PyObject*>(type)));
        ValuePtr classValue =
            makeValue(ValueKind::Object, PyRef::borrow(reinterpret_cast<PyObject*>(type)));
        classValue->classOf = base->source;
        return classValue;
      }
    }
    if (base->kind == ValueKind::Object && base->classOf) {
      PyRef key = PyRef::steal(python::newStr(name));
      PyRef value = PyRef::steal(key ? PyObject_GetAttr(base->object.get(), key.get()) : nullptr);
      if (!value)
        return programError("reading attribute '" + name + "' of a class");
      if (SourcePtr source =
              values_.classOfSource(base->classOf, base->object.get(), name, value.get()))
        return values_.wrapReal(value.get(), source);
    }
    // --- end of classes of objects read through sources ---
    if (base->kind == ValueKind::Object && base->source) {
      llvm::Expected<std::optional<ValuePtr>> read = userObjectClassRead(base, name);
      if (!read)
        return read.takeError();
      if (*read)
        return **read;
    }
    // Methods of str, int, float and frozenset values: the method table.
    if (base->kind == ValueKind::Constant || base->kind == ValueKind::Object)
      if (std::optional<llvm::Expected<ValuePtr>> method = constantMethodAttr(*this, base, name))
        return std::move(*method);
    PyRef nameObject = PyRef::steal(python::newStr(name));
    PyRef value = PyRef::steal(PyObject_GetAttr(base->object.get(), nameObject.get()));
    if (!value)
      return programError("reading attribute '" + name + "' of " +
                          (base->source ? base->source->str() : typeNameOf(base)));
    // A method of an object's C class that capture models (ContextVar.set).
    if (ValuePtr method = boundBuiltinMethod(base, value.get()))
      return method;
    // A Python method bound to the object read: its `self` is that object
    // with its source, so what the method reads of it is guarded and what
    // it assigns can be read back (RealAttributes.cpp).
    if (base->kind == ValueKind::Object && base->source && PyMethod_Check(value.get()) &&
        PyMethod_GET_SELF(value.get()) == base->object.get() &&
        PyFunction_Check(PyMethod_GET_FUNCTION(value.get()))) {
      llvm::Expected<ValuePtr> function =
          values_.wrapReal(PyMethod_GET_FUNCTION(value.get()), nullptr);
      if (!function)
        return function.takeError();
      ValuePtr method = makeValue(ValueKind::BoundMethod, PyRef::borrow(value.get()));
      method->items = {base, *function};
      return method;
    }
    // Only a read of the instance dict (a module's, a class's) has a source;
    // what an object's class gives is a constant, with the class pinned.
    PyObject* object = base->object.get();
    SourcePtr source =
        values_.instanceDictSource(base->source, object, nameObject.get(), value.get());
    if (base->source && !source && base->kind != ValueKind::Constant && !PyModule_Check(object) &&
        !PyType_Check(object)) {
      guards_.add(typeGuard(base->source, reinterpret_cast<PyObject*>(Py_TYPE(object))));
      // A plain class attribute (the object the class holds, as is).
      if (Py_TYPE(object)->tp_getattro == PyObject_GenericGetAttr &&
          _PyType_Lookup(Py_TYPE(object), nameObject.get()) == value.get())
        source = values_.classReadSource(base->source, name, value.get());
    }
    // Methods of constants stay calls on constants (see callObject). What
    // torch's own modules hold is guarded only where it is a function
    // (moduleReadSource).
    if (base->kind == ValueKind::Constant)
      source = nullptr;
    source = values_.moduleReadSource(source, object, value.get());
    return values_.wrapReal(value.get(), source);
  }
  case ValueKind::Function:
    if (base->object) {
      PyRef value = PyRef::steal(PyObject_GetAttrString(base->object.get(), name.str().c_str()));
      if (!value)
        return programError("reading attribute '" + name + "' of a function");
      return values_.wrapReal(value.get(), nullptr);
    }
    break;
  case ValueKind::BoundMethod:
    if (name == "__self__")
      return base->items[0];
    if (name == "__func__")
      return base->items[1];
    break;
  case ValueKind::Slice:
    if (name == "start")
      return base->items[0];
    if (name == "stop")
      return base->items[1];
    if (name == "step")
      return base->items[2];
    break;
  case ValueKind::Tuple:
  case ValueKind::List:
  case ValueKind::Dict:
  case ValueKind::Set: {
    llvm::Expected<PyRef> type = pythonType(base);
    if (!type)
      return type.takeError();
    PyRef nameObject = PyRef::steal(python::newStr(name));
    PyObject* attribute =
        _PyType_Lookup(reinterpret_cast<PyTypeObject*>(type->get()), nameObject.get());
    // OrderedDict overrides these in C with dict's behaviour (order is
    // insertion order for both); its own methods (move_to_end, popitem,
    // copy, which keeps the class) are DictInstances.cpp's.
    if (base->kind == ValueKind::Dict && type->get() == types_.orderedDict.get() &&
        llvm::is_contained({"keys", "values", "items", "get", "setdefault", "pop", "update",
                            "clear", "__contains__", "__getitem__", "__setitem__", "__delitem__",
                            "__len__", "__iter__"},
                           name))
      attribute = _PyType_Lookup(&PyDict_Type, nameObject.get());
    if (attribute && builtins_.contains(attribute)) {
      ValuePtr method = makeValue(ValueKind::BoundMethod);
      method->items = {base, makeValue(ValueKind::Builtin, PyRef::borrow(attribute))};
      return method;
    }
    if (attribute && PyFunction_Check(attribute)) {
      llvm::Expected<ValuePtr> function = values_.functionFromReal(attribute, nullptr);
      if (!function)
        return function.takeError();
      ValuePtr method = makeValue(ValueKind::BoundMethod);
      method->items = {base, *function};
      return method;
    }
    if (base->kind == ValueKind::Tuple && attribute) {
      llvm::Expected<std::optional<size_t>> field = namedTupleField(attribute);
      if (!field)
        return field.takeError();
      if (*field) {
        if (**field >= base->items.size())
          return captureError("named tuple field '" + name + "' is out of range");
        return base->items[**field];
      }
    }
    // Other methods of a tuple of constants (torch.Size.numel, say) are
    // pure: run them on the real tuple.
    if (base->kind == ValueKind::Tuple && allConstant(base->items)) {
      llvm::Expected<PyRef> tuple = toPython(base);
      if (!tuple)
        return tuple.takeError();
      PyRef method = PyRef::steal(PyObject_GetAttrString(tuple->get(), name.str().c_str()));
      if (!method)
        return programError("reading attribute '" + name + "' of " +
                            qualifiedTypeName(type->get()));
      return values_.wrapReal(method.get(), nullptr);
    }
    if (isSymbolicSize(*this, base))
      return symbolicSizeMethod(*this, base, name);
    if (!attribute)
      return raiseBuiltin(PyExc_AttributeError, "'" + qualifiedTypeName(type->get()) +
                                                    "' object has no attribute '" + name + "'");
    return captureError("method '" + name + "' of " + qualifiedTypeName(type->get()) +
                        " is not supported");
  }
  case ValueKind::Super: {
    // Look the name up in the MRO of type(self), after the class super()
    // was given.
    const ValuePtr& self = base->items[0];
    llvm::Expected<PyRef> type = pythonType(self);
    if (!type)
      return type.takeError();
    PyObject* mro = reinterpret_cast<PyTypeObject*>(type->get())->tp_mro;
    Py_ssize_t i = 0, n = PyTuple_GET_SIZE(mro);
    while (i < n && PyTuple_GET_ITEM(mro, i) != base->object.get())
      ++i;
    PyRef nameObject = PyRef::steal(python::newStr(name));
    for (++i; i < n; ++i) {
      PyObject* dict = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i))->tp_dict;
      PyObject* attribute = dict ? PyDict_GetItem(dict, nameObject.get()) : nullptr;
      if (!attribute)
        continue;
      llvm::Expected<ValuePtr> function = values_.wrapReal(attribute, nullptr);
      if (!function)
        return function.takeError();
      // `object`'s methods bind to self like functions do (super().__init__());
      // __new__ is a static method.
      bool binds = (*function)->kind == ValueKind::Function ||
                   ((*function)->kind == ValueKind::Builtin && name != "__new__");
      if (!binds)
        return *function;
      ValuePtr method = makeValue(ValueKind::BoundMethod);
      method->items = {self, *function};
      return method;
    }
    return captureError("'super' object has no attribute '" + name + "'");
  }
  default:
    break;
  }
  return captureError("reading attribute '" + name + "' of a " + spelling(base->kind) +
                      " value is not supported");
}

//===----------------------------------------------------------------------===//
// Items.
//===----------------------------------------------------------------------===//

namespace {

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

} // namespace

llvm::Expected<ValuePtr> Interpreter::getItem(const ValuePtr& base, const ValuePtr& key) {
  if (ValuePtr viewed = mappingProxyTarget(base))
    return getItem(viewed, key);
  if (base->kind == ValueKind::Instance) {
    llvm::Expected<ValuePtr> special = callInstanceSpecial(*this, base, "__getitem__", {key});
    if (!special || *special)
      return special;
  }
  if (base->isTensor())
    return callOracle(operatorFunction("getitem"), {base, key}, {});
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
      llvm::Expected<PyRef> converted = toPython(key);
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
    return keyError(*this, key);
  }
  // Slices of module containers, and items of those (ModuleContainers.cpp).
  if (base->kind == ValueKind::NNModule) {
    if (base->slicedContainer)
      return itemOfSlicedContainer(base, key);
    bool constantSlice = key->isConstant() && PySlice_Check(key->object.get());
    if (constantSlice || (key->kind == ValueKind::Slice && allConstant(key->items))) {
      llvm::Expected<PyRef> slice = toPython(key);
      if (!slice)
        return slice.takeError();
      return sliceModuleContainer(base, slice->get());
    }
  }
  if ((base->kind == ValueKind::NNModule || base->kind == ValueKind::Object ||
       base->kind == ValueKind::Constant) &&
      (key->isConstant() || key->kind == ValueKind::Object)) {
    PyRef value = PyRef::steal(PyObject_GetItem(base->object.get(), key->object.get()));
    if (!value)
      return programError("indexing " + (base->source ? base->source->str() : typeNameOf(base)));
    // A module container's child is named by the table entry it is;
    // items of other objects (which are not exact lists, tuples or dicts:
    // those are structural values) have no source. What an item is depends
    // on the container's class: it is pinned.
    SourcePtr source;
    if (base->kind == ValueKind::NNModule)
      source = values_.containerItemSource(base->source, base->object.get(), key->object.get(),
                                           value.get());
    if (base->source && base->kind != ValueKind::Constant)
      guards_.add(
          typeGuard(base->source, reinterpret_cast<PyObject*>(Py_TYPE(base->object.get()))));
    // Which entry a position names depends on the entries before it.
    if (base->kind == ValueKind::NNModule && PyLong_Check(key->object.get()))
      values_.guardModuleTableKeys(base);
    return values_.wrapReal(value.get(), source);
  }
  if (base->kind == ValueKind::Constant && key->kind == ValueKind::Slice &&
      allConstant(key->items)) {
    llvm::Expected<PyRef> slice = toPython(key);
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
    llvm::Expected<PyRef> index = toPython(key);
    if (!index)
      return index.takeError();
    PyRef value = PyRef::steal(PyObject_GetItem(real, index->get()));
    if (!value)
      return programError("subscripting " + typeNameOf(base));
    return values_.wrapReal(value.get(), nullptr);
  }
  return captureError("indexing a " + typeNameOf(base) + " with a " + spelling(key->kind) +
                      " value is not supported");
}

//===----------------------------------------------------------------------===//
// Truth, iteration, length.
//===----------------------------------------------------------------------===//

llvm::Expected<bool> Interpreter::truth(const ValuePtr& value) {
  if (ValuePtr viewed = mappingProxyTarget(value))
    return truth(viewed);
  switch (value->kind) {
  case ValueKind::Tensor:
    return captureError("data-dependent branch: the condition depends on a tensor's values, "
                        "which are not known while capturing");
  case ValueKind::Constant:
  case ValueKind::SymNum:
  case ValueKind::Object:
  case ValueKind::NNModule: {
    // bool() of a SymBool asks torch's ShapeEnv, which records the decision
    // as a guard on the symbols.
    if (value->kind == ValueKind::SymNum) {
      if (llvm::Error refused = recorder_.irreversible("deciding a symbolic condition"))
        return refused;
      reportLocation();
    }
    int result = PyObject_IsTrue(value->object.get());
    if (result < 0) {
      // A condition on a data-dependent value (`if n > 0:` with n from
      // item()) is one torch will not decide: say so in plain words.
      if (value->kind == ValueKind::SymNum)
        if (std::optional<std::string> plain = oracle_.explainUndecidableBranch())
          return captureError(*plain);
      return programError("deciding a condition");
    }
    if (value->kind == ValueKind::SymNum)
      if (llvm::Error error = checkDynamic())
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
      llvm::Expected<ValuePtr> result = callSpecial(value, special, {});
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

llvm::Expected<std::vector<ValuePtr>> Interpreter::unpack(const ValuePtr& value) {
  if (ValuePtr viewed = mappingProxyTarget(value))
    return unpack(viewed);
  if (value->kind == ValueKind::Instance) {
    llvm::Expected<ValuePtr> iterator = callInstanceSpecial(*this, value, "__iter__", {});
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
    PyObject* len = PyDict_GetItemString(PyModule_GetDict(types_.builtinsModule.get()), "len");
    llvm::Expected<ValuePtr> size = callOracle(len, {value}, {});
    if (!size)
      return size.takeError();
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
      guards_.add(typeGuard(value->source, reinterpret_cast<PyObject*>(Py_TYPE(object))));
    values_.guardModuleTableKeys(value);
    std::vector<ValuePtr> items;
    long long index = 0;
    while (PyRef item = PyRef::steal(PyIter_Next(iterator.get()))) {
      SourcePtr source;
      if (value->source && !keyed) {
        PyRef position = PyRef::steal(PyLong_FromLongLong(index));
        source = values_.containerItemSource(value->source, object, position.get(), item.get());
      }
      llvm::Expected<ValuePtr> wrapped = values_.wrapReal(item.get(), source);
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
      llvm::Expected<ValuePtr> wrapped = values_.wrapReal(item.get(), nullptr);
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

llvm::Expected<ValuePtr> Interpreter::iter(const ValuePtr& value) {
  if (value->kind == ValueKind::Iterator)
    return value;
  if (value->kind == ValueKind::List)
    return makeIterator(value);
  llvm::Expected<std::vector<ValuePtr>> items = unpack(value);
  if (!items)
    return items.takeError();
  return makeEagerIterator(std::move(*items));
}

llvm::Expected<ValuePtr> Interpreter::next(const ValuePtr& iterator) {
  if (iterator->kind != ValueKind::Iterator)
    return captureError("next() of a " + spelling(iterator->kind) + " value");
  const ValuePtr& iterable = iterator->iterable;
  if (iterator->position >= iterable->items.size())
    return nullptr;
  return iterable->items[iterator->position++];
}

llvm::Expected<ValuePtr> Interpreter::length(const ValuePtr& value) {
  if (ValuePtr viewed = mappingProxyTarget(value))
    return length(viewed);
  if (value->kind == ValueKind::Instance) {
    llvm::Expected<ValuePtr> special = callInstanceSpecial(*this, value, "__len__", {});
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
    PyObject* len = PyDict_GetItemString(PyModule_GetDict(types_.builtinsModule.get()), "len");
    return callOracle(len, {value}, {});
  }
  case ValueKind::Constant:
  case ValueKind::NNModule:
  case ValueKind::Object: {
    if (value->kind == ValueKind::NNModule)
      values_.guardModuleTableKeys(value);
    Py_ssize_t size = PyObject_Length(value->object.get());
    if (size < 0)
      return programError("len()");
    return makeInt(size);
  }
  default:
    return captureError("len() of a " + spelling(value->kind) + " value");
  }
}

//===----------------------------------------------------------------------===//
// Operators and identity.
//===----------------------------------------------------------------------===//

llvm::Expected<ValuePtr> Interpreter::binary(llvm::StringRef symbol, const ValuePtr& a,
                                             const ValuePtr& b) {
  const BinaryRow* row = binaryRow(symbol);
  if (!row)
    return captureError("binary operator '" + symbol + "' is not supported");
  if (a->isTensor() || b->isTensor())
    return callOracle(operatorFunction(row->operatorName), {a, b}, {});
  if (isNumberLike(a) && isNumberLike(b)) {
    PyRef result = PyRef::steal(row->apply(a->object.get(), b->object.get()));
    if (!result)
      return programError("computing '" + symbol + "'");
    return wrapFake(result.get());
  }
  llvm::StringRef plain = symbol.drop_back(symbol.ends_with("=") ? 1 : 0);
  bool inPlace = plain.size() != symbol.size();
  if (a->isSequence() && b->isSequence() && plain == "+") {
    if (inPlace && a->kind == ValueKind::List) {
      if (llvm::Error error = noteContainerMutation(a, "extending with '+='"))
        return error;
      a->items.insert(a->items.end(), b->items.begin(), b->items.end());
      return a;
    }
    if (a->kind != b->kind)
      return captureError("can only concatenate " + spelling(a->kind) + " (not " +
                          spelling(b->kind) + ") to " + spelling(a->kind));
    std::vector<ValuePtr> items = a->items;
    items.insert(items.end(), b->items.begin(), b->items.end());
    return a->kind == ValueKind::List ? makeList(std::move(items)) : makeTuple(std::move(items));
  }
  if (plain == "*" && (a->isSequence() || b->isSequence())) {
    const ValuePtr& sequence = a->isSequence() ? a : b;
    const ValuePtr& count = a->isSequence() ? b : a;
    if (count->isConstant() && PyLong_Check(count->object.get())) {
      std::vector<ValuePtr> items;
      for (long long i = 0, n = PyLong_AsLongLong(count->object.get()); i < n; ++i)
        items.insert(items.end(), sequence->items.begin(), sequence->items.end());
      return sequence->kind == ValueKind::List ? makeList(std::move(items))
                                               : makeTuple(std::move(items));
    }
  }
  if (a->kind == ValueKind::Constant && (b->isSequence() || b->kind == ValueKind::Dict) &&
      plain == "%" && allConstant(b->items)) {
    llvm::Expected<PyRef> converted = toPython(b);
    if (!converted)
      return converted.takeError();
    ValuePtr result = makeConstantSteal(PyNumber_Remainder(a->object.get(), converted->get()));
    if (!result)
      return programError("formatting a string");
    return result;
  }
  return captureError("unsupported operand types for " + symbol + ": '" + typeNameOf(a) +
                      "' and '" + typeNameOf(b) + "'");
}

llvm::Expected<ValuePtr> Interpreter::compare(llvm::StringRef symbol, const ValuePtr& a,
                                              const ValuePtr& b) {
  const CompareRow* row = nullptr;
  for (const CompareRow& candidate : CompareRows)
    if (symbol == candidate.symbol)
      row = &candidate;
  if (!row)
    return captureError("comparison '" + symbol + "' is not supported");
  if (a->isTensor() || b->isTensor())
    return callOracle(operatorFunction(row->operatorName), {a, b}, {});
  if (a->kind == ValueKind::Instance || b->kind == ValueKind::Instance) {
    llvm::Expected<ValuePtr> result = compareInstances(*this, *row, a, b);
    if (!result || *result)
      return result;
  }
  if (isKnown(a) && isKnown(b)) {
    llvm::Expected<PyRef> x = toPython(a);
    if (!x)
      return x.takeError();
    llvm::Expected<PyRef> y = toPython(b);
    if (!y)
      return y.takeError();
    PyRef result = PyRef::steal(PyObject_RichCompare(x->get(), y->get(), row->op));
    if (!result)
      return programError("comparing with '" + symbol + "'");
    return wrapFake(result.get());
  }
  if (row->op == Py_EQ || row->op == Py_NE) {
    llvm::Expected<bool> same = identical(a, b);
    if (!same)
      return same.takeError();
    return makeBool(*same == (row->op == Py_EQ));
  }
  return captureError("comparing '" + typeNameOf(a) + "' " + symbol + " '" + typeNameOf(b) +
                      "' is not supported");
}

llvm::Expected<ValuePtr> Interpreter::unary(llvm::StringRef operatorName, const ValuePtr& a) {
  if (operatorName == "not_") {
    llvm::Expected<bool> value = truth(a);
    if (!value)
      return value.takeError();
    return makeBool(!*value);
  }
  PyObject* function = operatorFunction(operatorName);
  if (a->isTensor())
    return callOracle(function, {a}, {});
  if (isNumberLike(a)) {
    PyRef result = PyRef::steal(PyObject_CallOneArg(function, a->object.get()));
    if (!result)
      return programError("computing " + operatorName);
    return wrapFake(result.get());
  }
  return captureError("bad operand type for unary " + operatorName + ": '" + typeNameOf(a) + "'");
}

llvm::Expected<bool> Interpreter::identical(const ValuePtr& a, const ValuePtr& b) {
  if (a == b)
    return true;
  // A list or dict read from the caller's objects is that real container.
  PyObject* realA = a->realObject() ? a->realObject() : a->realContainer.get();
  PyObject* realB = b->realObject() ? b->realObject() : b->realContainer.get();
  bool same = realA && realA == realB;
  // Two objects read through sources: the answer holds while the guards do
  // (SourceIdentity.cpp).
  if (realA && realB)
    values_.guardIdentity(realA, a->source, realB, b->source, same);
  return same;
}

llvm::Error Interpreter::addToSet(const ValuePtr& set, ValuePtr item) {
  llvm::Expected<bool> present = contains(set, item);
  if (!present)
    return present.takeError();
  if (!*present)
    set->items.push_back(std::move(item));
  return llvm::Error::success();
}

llvm::Expected<bool> Interpreter::contains(const ValuePtr& container, const ValuePtr& item) {
  if (ValuePtr viewed = mappingProxyTarget(container))
    return contains(viewed, item);
  if (container->kind == ValueKind::Instance) {
    llvm::Expected<ValuePtr> special =
        callInstanceSpecial(*this, container, "__contains__", {item});
    if (!special)
      return special.takeError();
    if (*special)
      return truth(*special);
  }
  auto matches = [&](const ValuePtr& candidate) -> llvm::Expected<bool> {
    return sameKey(*this, candidate, item);
  };
  switch (container->kind) {
  case ValueKind::Tuple:
  case ValueKind::List:
  case ValueKind::Set:
    for (const ValuePtr& candidate : container->items) {
      llvm::Expected<bool> match = matches(candidate);
      if (!match || *match)
        return match;
    }
    return false;
  case ValueKind::Dict:
    for (const auto& entry : container->entries) {
      llvm::Expected<bool> match = matches(entry.first);
      if (!match || *match)
        return match;
    }
    return false;
  case ValueKind::Constant:
  case ValueKind::Object:
  case ValueKind::NNModule:
    if (item->isConstant()) {
      int result = PySequence_Contains(container->object.get(), item->object.get());
      if (result < 0)
        return programError("'in'");
      return result == 1;
    }
    break;
  default:
    break;
  }
  return captureError("'in' on a " + typeNameOf(container) + " with a " + spelling(item->kind) +
                      " value is not supported");
}

} // namespace dync::capture
