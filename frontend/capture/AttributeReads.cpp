//===- AttributeReads.cpp - Reading attributes of symbolic values ---------===//
//
// Attribute reads: of tensors (data descriptors on the fake, methods bound),
// of nn.Modules and user objects (the instance dict, then the class, each
// read guarded through its source), of named tuples, `super()` and every
// other kind of value.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/BuiltinMethods.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DictReads.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/MappingProxies.h"
#include "frontend/capture/MethodBinding.h"
#include "frontend/capture/ModuleHooks.h"
#include "frontend/capture/ObjectSemantics.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/TorchSize.h"
#include "frontend/capture/TypeNames.h"
#include "frontend/capture/WorldCalls.h"
#include "frontend/embedding/PyStrings.h"

#include <structmember.h>

#include <optional>

namespace dync::capture {

using python::PyRef;

namespace {

/// Whether \p classAttr is a `__slots__` member of a Python class: object
/// storage inside the instance, which the guard reads in place the way
/// dync_py_instance_attr does.
bool isObjectSlot(PyObject* classAttr) {
  if (!Py_IS_TYPE(classAttr, &PyMemberDescr_Type))
    return false;
  PyTypeObject* owner = reinterpret_cast<PyDescrObject*>(classAttr)->d_type;
  const PyMemberDef* member = reinterpret_cast<PyMemberDescrObject*>(classAttr)->d_member;
  return (owner->tp_flags & Py_TPFLAGS_HEAPTYPE) &&
         (member->type == T_OBJECT_EX || member->type == T_OBJECT);
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

} // namespace

llvm::Expected<ValuePtr> ObjectSemantics::tensorAttr(const ValuePtr& tensor, llvm::StringRef name) {
  PyRef nameObject = PyRef::steal(python::newStr(name));
  PyObject* attribute =
      _PyType_Lookup(reinterpret_cast<PyTypeObject*>(cx_.types().tensor.get()), nameObject.get());
  if (!attribute)
    return captureError("torch.Tensor has no attribute '" + name + "'");
  // Data descriptors (shape, dtype, T, ...) are read now, on the fake;
  // anything else is a method bound to the tensor.
  if (Py_TYPE(attribute)->tp_descr_set) {
    PyObject* getattrFunction =
        PyDict_GetItemString(PyModule_GetDict(cx_.types().builtinsModule.get()), "getattr");
    return cx_.callOracle(getattrFunction, {tensor, makeConstant(nameObject)}, {});
  }
  // A method capture makes itself (__deepcopy__, TensorDeepcopy.cpp).
  ValueKind kind =
      cx_.builtins().contains(attribute) ? ValueKind::Builtin : ValueKind::TorchCallable;
  ValuePtr method = makeValue(ValueKind::BoundMethod);
  method->items = {tensor, makeValue(kind, PyRef::borrow(attribute))};
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

/// The class's __getattr__ when it is a Python function other than
/// nn.Module's, else null.
PyObject* ObjectSemantics::classGetattr(PyTypeObject* type) {
  PyRef name = PyRef::steal(python::newStr("__getattr__"));
  PyObject* found = name ? _PyType_Lookup(type, name.get()) : nullptr;
  if (!found || !PyFunction_Check(found))
    return nullptr;
  PyRef moduleGetattr =
      PyRef::steal(PyObject_GetAttrString(cx_.types().module.get(), "__getattr__"));
  PyErr_Clear();
  return moduleGetattr && found == moduleGetattr.get() ? nullptr : found;
}

llvm::Expected<ValuePtr> ObjectSemantics::moduleAttr(const ValuePtr& module, llvm::StringRef name) {
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
    cx_.guards().add(typeGuard(module->source, reinterpret_cast<PyObject*>(Py_TYPE(object))));
  // The real hook tables do not hold the hooks the program registered in
  // this call (HookRegistration.cpp).
  if (isForwardHookTable(name) && cx_.hasInstalledHooks(object))
    return captureError("reading " + name + " of " +
                        (module->source ? module->source->str() : typeNameOf(module)) +
                        " after the program registered a hook on it in this call is not "
                        "supported yet: capture keeps that hook in its own table, not in the "
                        "module's");
  auto readReal = [&]() -> llvm::Expected<ValuePtr> {
    PyRef value = PyRef::steal(PyObject_GetAttr(object, nameObject.get()));
    if (!value)
      return programError("reading attribute '" + name + "' of " +
                          (module->source ? module->source->str() : typeNameOf(module)));
    return cx_.values().wrapReal(value.get(), nullptr);
  };
  // The class and the instance dict come first, as Python looks them up.
  PyObject* classAttr = _PyType_Lookup(Py_TYPE(object), nameObject.get());
  // `self.__dict__` (vars(self)): the instance dict itself, which the type
  // guard above says the class's slot gives. It is read through its source,
  // as an object's is, so its keys are guarded and each entry the program
  // reads is the attribute it is (a `__getattr__` of the program's that
  // looks in its own `__dict__` before the tables, as diffusers' models do).
  if (name == "__dict__" && classAttr && Py_IS_TYPE(classAttr, &PyGetSetDescr_Type) && dict &&
      PyDict_CheckExact(dict)) {
    if (std::optional<std::string> table = cx_.values().changedModuleTable(object))
      return captureError("reading __dict__ of " +
                          (module->source ? module->source->str() : typeNameOf(module)) +
                          " after the program changed its " + *table +
                          " in this call is not supported yet: the real module, which capture "
                          "does not change, would answer");
    return cx_.values().wrapReal(dict, module->source ? Source::attr(module->source, "__dict__")
                                                      : nullptr);
  }
  if (llvm::Error error = refuseUnguardedDescriptor(object, name, classAttr))
    return error;
  if (classAttr && PyObject_TypeCheck(classAttr, &PyProperty_Type)) {
    PyRef getter = PyRef::steal(PyObject_GetAttrString(classAttr, "fget"));
    if (!getter)
      return programError("reading property '" + name + "'");
    // The getter is pinned where the class holds it, so that a property
    // replaced on the class misses.
    llvm::Expected<ValuePtr> function = cx_.values().wrapReal(
        getter.get(),
        module->source ? Source::attr(Source::classAttr(module->source, name), "fget") : nullptr);
    if (!function)
      return function.takeError();
    return cx_.call(*function, {module});
  }
  if (classAttr && Py_TYPE(classAttr)->tp_descr_set)
    return readReal();
  // A class of the program's own with its own __getattr__ (a DDP- or
  // EMA-style wrapper forwarding to `self.module`) gets every name that
  // is neither in the instance dict nor on the class, the tables' too: it
  // runs, as Python runs it, and its `super().__getattr__` reads the
  // tables.
  PyObject* ownGetattr = classGetattr(Py_TYPE(object));
  if (dict) {
    llvm::Expected<std::optional<ValuePtr>> found =
        moduleDictRead(module, dict, nameObject.get(), /*tablesOnly=*/false,
                       /*ownOnly=*/ownGetattr != nullptr);
    if (!found)
      return found.takeError();
    if (*found)
      return **found;
  }
  if (classAttr) {
    // Read from the class: the instance must not shadow it, and what the
    // class holds is pinned where a guard can (classReadSource).
    SourcePtr classSource = cx_.values().classReadSource(module->source, name, classAttr);
    if (PyFunction_Check(classAttr)) {
      // A module made in forward (`Block()(x)`) has no source: its methods
      // are pinned through its class's name, as an object's made while
      // capturing are (ClassAttributeSources.cpp).
      llvm::Expected<ValuePtr> function = cx_.values().functionFromReal(
          classAttr,
          module->source ? classSource : cx_.values().classLookupSource(Py_TYPE(object), name));
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
      return cx_.values().wrapReal(bound.get(), nullptr);
    }
    if (Py_TYPE(classAttr)->tp_descr_get)
      return readReal();
    return cx_.values().wrapReal(classAttr, classSource);
  }
  if (ownGetattr) {
    // The name must stay out of the instance dict, which Python reads first.
    if (module->source)
      cx_.guards().add(ir::Guard::absent(Source::attr(module->source, name)));
    llvm::Expected<ValuePtr> function = cx_.values().functionFromReal(
        ownGetattr, cx_.values().classReadSource(module->source, "__getattr__", ownGetattr));
    if (!function)
      return function.takeError();
    return cx_.call(*function, {module, makeConstantSteal(python::newStr(name))});
  }
  // Nothing in the instance dict or the tables as the program left them:
  // nn.Module.__getattr__ raises; the real object may still hold what the
  // program removed, so it is not read.
  if (std::optional<std::string> table = cx_.values().changedModuleTable(object)) {
    PyRef getattrName = PyRef::steal(python::newStr("__getattr__"));
    PyRef moduleGetattr =
        PyRef::steal(PyObject_GetAttrString(cx_.types().module.get(), "__getattr__"));
    PyErr_Clear();
    if (moduleGetattr && _PyType_Lookup(Py_TYPE(object), getattrName.get()) == moduleGetattr.get())
      return raiseBuiltin(PyExc_AttributeError,
                          "'" + qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(object))) +
                              "' object has no attribute '" + name + "'");
    return captureError("reading attribute '" + name + "' of " +
                        (module->source ? module->source->str() : typeNameOf(module)) +
                        " through its class's own __getattr__ after the program changed its " +
                        *table +
                        " in this call: the real module, which capture does not change, would "
                        "answer; not supported yet");
  }
  return readReal();
}

llvm::Expected<std::optional<ValuePtr>>
ObjectSemantics::moduleDictRead(const ValuePtr& module, PyObject* dict, PyObject* name,
                                bool tablesOnly, bool ownOnly) {
  // The instance dict, then nn.Module.__getattr__'s tables in its order,
  // each as the program left it (ChangedState.cpp): a value the program
  // put there is its own value, read without a source and with no guard;
  // one it removed is absent.
  PyObject* object = module->object.get();
  auto read = [&](PyObject* table,
                  const char* tableName) -> llvm::Expected<std::optional<ValuePtr>> {
    llvm::Expected<std::optional<ValuePtr>> changed = cx_.values().changedEntry(table, name);
    if (!changed)
      return changed.takeError();
    if (*changed) {
      if (!**changed)
        return std::nullopt;
      return std::optional<ValuePtr>(**changed);
    }
    PyObject* value = PyDict_GetItem(table, name);
    if (!value)
      return std::nullopt;
    SourcePtr source =
        tableName ? cx_.values().moduleTableSource(module->source, object, tableName, name, value)
                  : cx_.values().instanceDictSource(module->source, object, name, value);
    llvm::Expected<ValuePtr> wrapped = cx_.values().wrapReal(value, source);
    if (!wrapped)
      return wrapped.takeError();
    return std::optional<ValuePtr>(*wrapped);
  };
  if (!tablesOnly) {
    llvm::Expected<std::optional<ValuePtr>> own = read(dict, nullptr);
    if (!own || *own || ownOnly)
      return own;
  }
  for (const char* table : {"_parameters", "_buffers", "_modules"}) {
    PyObject* entries = PyDict_GetItemString(dict, table);
    if (!entries || !PyDict_Check(entries))
      continue;
    llvm::Expected<std::optional<ValuePtr>> found = read(entries, table);
    if (!found || *found)
      return found;
  }
  return std::nullopt;
}

llvm::Expected<ValuePtr> ObjectSemantics::moduleTableAttr(const ValuePtr& module,
                                                          llvm::StringRef name) {
  PyObject* object = module->object.get();
  PyRef nameObject = PyRef::steal(python::newStr(name));
  PyObject** dictPointer = _PyObject_GetDictPtr(object);
  if (PyObject* dict = dictPointer ? *dictPointer : nullptr) {
    llvm::Expected<std::optional<ValuePtr>> found =
        moduleDictRead(module, dict, nameObject.get(), /*tablesOnly=*/true);
    if (!found)
      return found.takeError();
    if (*found)
      return **found;
  }
  // In none of the tables: the function raises, as the real one would. The
  // tables' keys are pinned, so that a module that gains the name later
  // misses rather than raising (a handler may have run on the raise).
  if (cx_.values().changedModuleTable(object))
    return captureError("nn.Module.__getattr__ of " +
                        (module->source ? module->source->str() : typeNameOf(module)) +
                        " for a name in none of its tables, after the program changed one in "
                        "this call, is not supported yet");
  for (const char* table : {"_parameters", "_buffers", "_modules"}) {
    auto [source, entries] = moduleTable(module->source, object, table);
    std::optional<std::vector<ir::DictKey>> keys = entries ? dictKeys(entries) : std::nullopt;
    if (!keys)
      return captureError("nn.Module.__getattr__ of " +
                          (module->source ? module->source->str() : typeNameOf(module)) +
                          " for a name in none of its tables, whose " + table +
                          " no guard can read, is not supported yet");
    cx_.guards().add(ir::Guard::keysAre(source, std::move(*keys)));
  }
  return raiseBuiltin(PyExc_AttributeError,
                      "'" + qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(object))) +
                          "' object has no attribute '" + name + "'");
}

llvm::Expected<std::optional<ValuePtr>> ObjectSemantics::userObjectClassRead(const ValuePtr& object,
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
  cx_.guards().add(typeGuard(object->source, reinterpret_cast<PyObject*>(type)));
  // A `__slots__` member (a dataclass with slots=True) is the object's own
  // storage, as an instance dict entry is: read through its source, so the
  // guard reads the slot in place (dync_py_instance_attr) and checks it.
  if (isObjectSlot(classAttr)) {
    PyRef value = PyRef::steal(PyObject_GetAttr(real, nameObject.get()));
    if (!value)
      return programError("reading attribute '" + name + "' of " + object->source->str());
    llvm::Expected<ValuePtr> read =
        cx_.values().wrapReal(value.get(), Source::attr(object->source, name));
    if (!read)
      return read.takeError();
    return std::optional<ValuePtr>(*read);
  }
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
    llvm::Expected<ValuePtr> function = cx_.values().functionFromReal(
        fget.get(), Source::attr(Source::classAttr(object->source, name), "fget"));
    if (!function)
      return function.takeError();
    llvm::Expected<ValuePtr> result = cx_.call(*function, {object});
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
  llvm::Expected<ValuePtr> function = cx_.values().functionFromReal(
      classAttr, cx_.values().classReadSource(object->source, name, classAttr));
  if (!function)
    return function.takeError();
  ValuePtr method = makeValue(ValueKind::BoundMethod);
  method->items = {object, *function};
  return std::optional<ValuePtr>(method);
}

namespace {

/// What `super(start, obj).name` finds: \p name in the `__dict__` of the
/// classes after \p start in \p type's MRO (borrowed), or null.
PyObject* mroAttributeAfter(PyObject* type, PyObject* start, llvm::StringRef name) {
  PyObject* mro = reinterpret_cast<PyTypeObject*>(type)->tp_mro;
  Py_ssize_t i = 0, n = mro ? PyTuple_GET_SIZE(mro) : 0;
  while (i < n && PyTuple_GET_ITEM(mro, i) != start)
    ++i;
  PyRef nameObject = PyRef::steal(python::newStr(name));
  for (++i; i < n; ++i) {
    PyObject* dict = reinterpret_cast<PyTypeObject*>(PyTuple_GET_ITEM(mro, i))->tp_dict;
    if (PyObject* attribute = dict ? PyDict_GetItem(dict, nameObject.get()) : nullptr)
      return attribute;
  }
  return nullptr;
}

/// `super(start, cls).name` for a class \p cls (\p clsValue its value)
/// deriving from \p start: the name looked up in cls's MRO after start, as
/// Python's super does when its second argument is a type. A static method
/// is its function; a class method binds to cls; a plain function or a
/// builtin (`tuple.__new__`) is returned unbound, as `f.__get__(None, cls)`
/// gives it.
llvm::Expected<ValuePtr> superOfClass(ValueBuilder& values, PyObject* cls, const ValuePtr& clsValue,
                                      PyObject* start, llvm::StringRef name) {
  if (PyObject* attribute = mroAttributeAfter(cls, start, name)) {
    bool isStatic = Py_IS_TYPE(attribute, &PyStaticMethod_Type);
    bool isClassMethod = Py_IS_TYPE(attribute, &PyClassMethod_Type);
    PyRef underlying = PyRef::borrow(attribute);
    if (isStatic || isClassMethod) {
      underlying = PyRef::steal(PyObject_GetAttrString(attribute, "__func__"));
      if (!underlying)
        return pythonError("reading the function of '" + name + "' found by super()");
    }
    // Read through the class that holds it, as an attribute of the class
    // is, so that a method replaced on a base or a base class changed after
    // export misses.
    SourcePtr source = values.classLookupSource(reinterpret_cast<PyTypeObject*>(cls), name, start);
    if (source && (isStatic || isClassMethod))
      source = values.wrappedFunctionSource(source, attribute);
    llvm::Expected<ValuePtr> function = values.wrapClassAttribute(underlying.get(), source);
    if (!function || !isClassMethod)
      return function;
    ValuePtr method = makeValue(ValueKind::BoundMethod);
    method->items = {clsValue, *function};
    return method;
  }
  return captureError("'super' object has no attribute '" + name + "'");
}

// --- Classes of objects read through sources: `type(SRC).NAME` ---
/// `type(SRC).NAME`: the class of an object read through a source, and
/// what the program reads from that class, guarded; nothing when \p base
/// is no such class or object.
llvm::Expected<std::optional<ValuePtr>>
classOfSourceAttr(SemanticsContext& cx, const ValuePtr& base, llvm::StringRef name) {
  // type(obj) and obj.__class__ give the class of an object read through
  // a source; what the program (a method of the object, say) reads from
  // that class is then read as `type(SRC).NAME` and guarded, rather than
  // folded in as an unguarded constant.
  if (base->kind == ValueKind::Object && base->source && !base->classOf && name == "__class__") {
    PyTypeObject* type = Py_TYPE(base->object.get());
    PyRef key = PyRef::steal(python::newStr(name));
    if (key && _PyType_Lookup(type, key.get()) == _PyType_Lookup(&PyBaseObject_Type, key.get())) {
      cx.guards().add(typeGuard(base->source, reinterpret_cast<PyObject*>(type)));
      ValuePtr classValue =
          makeValue(ValueKind::Object, PyRef::borrow(reinterpret_cast<PyObject*>(type)));
      classValue->classOf = base->source;
      return std::optional<ValuePtr>(classValue);
    }
  }
  if (base->kind == ValueKind::Object && base->classOf) {
    PyRef key = PyRef::steal(python::newStr(name));
    PyRef value = PyRef::steal(key ? PyObject_GetAttr(base->object.get(), key.get()) : nullptr);
    if (!value)
      return programError("reading attribute '" + name + "' of a class");
    if (SourcePtr source =
            cx.values().classOfSource(base->classOf, base->object.get(), name, value.get())) {
      llvm::Expected<ValuePtr> read = cx.values().wrapReal(value.get(), source);
      if (!read)
        return read.takeError();
      return std::optional<ValuePtr>(*read);
    }
  }
  return std::optional<ValuePtr>();
}
// --- end of classes of objects read through sources ---

/// An attribute of a real object (a constant, an object read, a builtin,
/// a torch callable) read for real: a builtin capture models, a method
/// bound to the object, or the value read with the source it has.
llvm::Expected<ValuePtr> realObjectAttr(SemanticsContext& cx, const ValuePtr& base,
                                        llvm::StringRef name) {
  PyRef nameObject = PyRef::steal(python::newStr(name));
  PyRef value = PyRef::steal(PyObject_GetAttr(base->object.get(), nameObject.get()));
  if (!value)
    return programError("reading attribute '" + name + "' of " +
                        (base->source ? base->source->str() : typeNameOf(base)));
  // A method of an object's C class that capture models (ContextVar.set).
  if (ValuePtr method = cx.boundBuiltinMethod(base, value.get()))
    return method;
  // A Python method bound to the object read: its `self` is that object
  // with its source, so what the method reads of it is guarded and what
  // it assigns can be read back (RealAttributes.cpp). A logger's method
  // a library attached as an lru_cache (`warning_once`) is one too: its
  // call is made after the graph on the logger its source reads
  // (WorldCalls.cpp).
  if (base->kind == ValueKind::Object && base->source && PyMethod_Check(value.get()) &&
      PyMethod_GET_SELF(value.get()) == base->object.get() &&
      (PyFunction_Check(PyMethod_GET_FUNCTION(value.get())) ||
       isLoggingMethod(PyMethod_GET_FUNCTION(value.get())))) {
    llvm::Expected<ValuePtr> function =
        cx.values().wrapReal(PyMethod_GET_FUNCTION(value.get()), nullptr);
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
      cx.values().instanceDictSource(base->source, object, nameObject.get(), value.get());
  // An object's or a module's own namespace (`vars(obj)`, `obj.__dict__`)
  // is read through it, so that what the program indexes in it is guarded
  // as its attributes are; without a source its entries would be constants
  // no guard checks.
  bool namespaceRead = !source && base->source && name == "__dict__" &&
                       base->kind != ValueKind::Constant && PyDict_CheckExact(value.get());
  if (namespaceRead)
    source = Source::attr(base->source, "__dict__");
  if (base->source && !source && base->kind != ValueKind::Constant && !PyModule_Check(object) &&
      !PyType_Check(object)) {
    cx.guards().add(typeGuard(base->source, reinterpret_cast<PyObject*>(Py_TYPE(object))));
    // A plain class attribute (the object the class holds, as is).
    if (Py_TYPE(object)->tp_getattro == PyObject_GenericGetAttr &&
        _PyType_Lookup(Py_TYPE(object), nameObject.get()) == value.get())
      source = cx.values().classReadSource(base->source, name, value.get());
  }
  // Methods of constants stay calls on constants (see callObject). What
  // torch's own modules hold is guarded only where it is a function
  // (moduleReadSource).
  if (base->kind == ValueKind::Constant)
    source = nullptr;
  source = cx.values().moduleReadSource(source, object, value.get());
  // The namespace's entries are read one by one, each guarded as the
  // attribute is, until the program reads it whole (UnreadLists.cpp).
  if (namespaceRead && source)
    return cx.values().unreadNamespace(value.get(), source);
  return cx.values().wrapReal(value.get(), source);
}

/// An attribute of a tuple, list, dict or set value: a method of its
/// type (a builtin capture implements, or a Python function), a named
/// tuple's field, or a pure method of a tuple of constants.
llvm::Expected<ValuePtr> containerAttr(SemanticsContext& cx, const ValuePtr& base,
                                       llvm::StringRef name) {
  llvm::Expected<PyRef> type = cx.pythonType(base);
  if (!type)
    return type.takeError();
  PyRef nameObject = PyRef::steal(python::newStr(name));
  PyObject* attribute =
      _PyType_Lookup(reinterpret_cast<PyTypeObject*>(type->get()), nameObject.get());
  // OrderedDict overrides these in C with dict's behaviour (order is
  // insertion order for both); its own methods (move_to_end, popitem,
  // copy, which keeps the class) are DictInstances.cpp's.
  if (base->kind == ValueKind::Dict && type->get() == cx.types().orderedDict.get() &&
      llvm::is_contained({"keys", "values", "items", "get", "setdefault", "pop", "update", "clear",
                          "__contains__", "__getitem__", "__setitem__", "__delitem__", "__len__",
                          "__iter__"},
                         name))
    attribute = _PyType_Lookup(&PyDict_Type, nameObject.get());
  if (attribute && cx.builtins().contains(attribute)) {
    ValuePtr method = makeValue(ValueKind::BoundMethod);
    method->items = {base, makeValue(ValueKind::Builtin, PyRef::borrow(attribute))};
    return method;
  }
  // What a Python class gives (a named tuple's _asdict and _fields, a
  // constant of its class body) is read through the class, so that a class
  // attribute changed after export misses (ClassAttributeSources.cpp).
  auto* classType = reinterpret_cast<PyTypeObject*>(type->get());
  auto classRead = [&] { return cx.values().classLookupSource(classType, name); };
  if (attribute && PyFunction_Check(attribute)) {
    llvm::Expected<ValuePtr> function = cx.values().functionFromReal(attribute, classRead());
    if (!function)
      return function.takeError();
    ValuePtr method = makeValue(ValueKind::BoundMethod);
    method->items = {base, *function};
    return method;
  }
  // A classmethod of the container's class (a named tuple's _make, which
  // its _replace calls) binds to the class, as Python binds it.
  if (attribute && Py_IS_TYPE(attribute, &PyClassMethod_Type)) {
    PyRef function = PyRef::steal(PyObject_GetAttrString(attribute, "__func__"));
    if (!function)
      return pythonError("reading classmethod '" + name + "'");
    llvm::Expected<ValuePtr> callee = cx.values().wrapReal(
        function.get(), cx.values().wrappedFunctionSource(classRead(), attribute));
    if (!callee)
      return callee.takeError();
    llvm::Expected<ValuePtr> owner = cx.values().wrapReal(type->get(), nullptr);
    if (!owner)
      return owner.takeError();
    ValuePtr method = makeValue(ValueKind::BoundMethod);
    method->items = {*owner, *callee};
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
  // A property of the container's Python class (a computed field of a
  // named tuple): its getter runs symbolically, pinned where the class
  // holds it, so that a property replaced on the class after export misses.
  if (attribute && Py_IS_TYPE(attribute, &PyProperty_Type) &&
      (classType->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
    PyRef getter = PyRef::steal(PyObject_GetAttrString(attribute, "fget"));
    if (!getter)
      return pythonError("reading property '" + name + "'");
    if (getter.get() == Py_None)
      return raiseBuiltin(PyExc_AttributeError, "property '" + name + "' of '" +
                                                    qualifiedTypeName(type->get()) +
                                                    "' object has no getter");
    if (!PyFunction_Check(getter.get()))
      return captureError("property '" + name + "' of " + qualifiedTypeName(type->get()) +
                          " has a getter that is not a Python function; its result read for "
                          "real would be a constant no guard checks, which is not supported");
    SourcePtr classSource = classRead();
    llvm::Expected<ValuePtr> function = cx.values().functionFromReal(
        getter.get(), classSource ? Source::attr(classSource, "fget") : nullptr);
    if (!function)
      return function.takeError();
    return cx.call(*function, {base});
  }
  // A static method, a plain attribute or a nested class of a container's
  // Python class (a named tuple's _fields and _field_defaults, a constant of
  // a NamedTuple's body).
  if (attribute && (classType->tp_flags & Py_TPFLAGS_HEAPTYPE)) {
    if (Py_IS_TYPE(attribute, &PyStaticMethod_Type)) {
      PyRef function = PyRef::steal(PyObject_GetAttrString(attribute, "__func__"));
      if (!function)
        return pythonError("reading staticmethod '" + name + "'");
      return cx.values().wrapReal(function.get(),
                                  cx.values().wrappedFunctionSource(classRead(), attribute));
    }
    if (!Py_TYPE(attribute)->tp_descr_get || PyType_Check(attribute))
      return cx.values().wrapClassAttribute(attribute, classRead());
  }
  // Other methods of a tuple of constants (torch.Size.numel, say) are
  // pure: run them on the real tuple.
  if (base->kind == ValueKind::Tuple && allConstant(base->items)) {
    llvm::Expected<PyRef> tuple = cx.toPython(base);
    if (!tuple)
      return tuple.takeError();
    PyRef method = PyRef::steal(PyObject_GetAttrString(tuple->get(), name.str().c_str()));
    if (!method)
      return programError("reading attribute '" + name + "' of " + qualifiedTypeName(type->get()));
    return cx.values().wrapReal(method.get(), nullptr);
  }
  if (isSymbolicSize(cx, base))
    return symbolicSizeMethod(cx, base, name);
  if (!attribute)
    return raiseBuiltin(PyExc_AttributeError, "'" + qualifiedTypeName(type->get()) +
                                                  "' object has no attribute '" + name + "'");
  return captureError("method '" + name + "' of " + qualifiedTypeName(type->get()) +
                      " is not supported");
}

/// What `super().name` gives when \p attribute, found on a base class of
/// \p selfType, is a descriptor that is neither a function nor a builtin:
/// a property's getter (a Python function) called on \p self, or the
/// `__get__(self, type)` of a descriptor class written in Python (torch's
/// lazy_property), inlined. Nothing for any other attribute.
llvm::Expected<std::optional<ValuePtr>>
superDescriptorRead(SemanticsContext& cx, PyObject* attribute, const ValuePtr& self,
                    PyObject* selfType, llvm::StringRef name) {
  if (PyObject_TypeCheck(attribute, &PyProperty_Type)) {
    PyRef getter = PyRef::steal(PyObject_GetAttrString(attribute, "fget"));
    if (!getter)
      return programError("reading property '" + name + "'");
    if (getter.get() == Py_None)
      return raiseBuiltin(PyExc_AttributeError, "property '" + name + "' of '" +
                                                    qualifiedTypeName(selfType) +
                                                    "' object has no getter");
    if (!PyFunction_Check(getter.get()))
      return captureError("super()." + name +
                          " is a property whose getter is not a Python "
                          "function; its result read for real would be an unguarded constant, "
                          "which is not supported");
    llvm::Expected<ValuePtr> function = cx.values().wrapReal(getter.get(), nullptr);
    if (!function)
      return function.takeError();
    llvm::Expected<ValuePtr> result = cx.call(*function, {self});
    if (!result)
      return result.takeError();
    return std::optional<ValuePtr>(*result);
  }
  PyTypeObject* descriptorType = Py_TYPE(attribute);
  if (!(descriptorType->tp_flags & Py_TPFLAGS_HEAPTYPE) || !descriptorType->tp_descr_get)
    return std::nullopt;
  PyObject* get = _PyType_Lookup(descriptorType, PyRef::steal(python::newStr("__get__")).get());
  if (!get || !PyFunction_Check(get))
    return std::nullopt;
  llvm::Expected<ValuePtr> getFunction = cx.values().wrapReal(get, nullptr);
  llvm::Expected<ValuePtr> descriptor = cx.values().wrapReal(attribute, nullptr);
  llvm::Expected<ValuePtr> owner = cx.values().wrapReal(selfType, nullptr);
  if (!getFunction || !descriptor || !owner)
    return llvm::joinErrors(llvm::joinErrors(getFunction.takeError(), descriptor.takeError()),
                            owner.takeError());
  llvm::Expected<ValuePtr> result = cx.call(*getFunction, {*descriptor, self, *owner});
  if (!result)
    return result.takeError();
  return std::optional<ValuePtr>(*result);
}

/// An attribute of a `super()` value.
llvm::Expected<ValuePtr> superAttr(SemanticsContext& cx, const ValuePtr& base,
                                   llvm::StringRef name) {
  // Look the name up in the MRO of type(self), after the class super()
  // was given.
  const ValuePtr& self = base->items[0];
  llvm::Expected<PyRef> type = cx.pythonType(self);
  if (!type)
    return type.takeError();
  // super(C, cls) with a class for its second argument, as in a __new__
  // or a class method (`super().__new__(cls, ...)` of a named tuple's
  // subclass): the MRO searched is that class's own, and what is found
  // binds to the class, if at all (superOfClass, above).
  PyObject* selfClass =
      self->kind == ValueKind::Object && self->object && PyType_Check(self->object.get()) &&
              PyType_Check(base->object.get()) &&
              PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(self->object.get()),
                               reinterpret_cast<PyTypeObject*>(base->object.get()))
          ? self->object.get()
          : nullptr;
  if (selfClass)
    return superOfClass(cx.values(), selfClass, self, base->object.get(), name);
  if (PyObject* attribute = mroAttributeAfter(type->get(), base->object.get(), name)) {
    // A descriptor found on a base class binds to self as an attribute read
    // does (`super().logits` of a torch.distributions subclass): a
    // property's getter, or a `__get__` written in Python, runs on self.
    llvm::Expected<std::optional<ValuePtr>> described =
        superDescriptorRead(cx, attribute, self, type->get(), name);
    if (!described)
      return described.takeError();
    if (*described)
      return std::move(**described);
    // Read through the class of the MRO that holds it (with the classes
    // before it pinned), as an attribute of a class is.
    SourcePtr source = cx.values().classLookupSource(reinterpret_cast<PyTypeObject*>(type->get()),
                                                     name, base->object.get());
    llvm::Expected<ValuePtr> function = cx.values().wrapClassAttribute(attribute, source);
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

} // namespace

llvm::Expected<ValuePtr> ObjectSemantics::getAttr(const ValuePtr& base, llvm::StringRef name) {
  // A mappingproxy's reads are its dict's (MappingProxies.cpp).
  if (ValuePtr viewed = mappingProxyTarget(base); viewed && isMappingProxyRead(name))
    return getAttr(viewed, name);
  switch (base->kind) {
  case ValueKind::Tensor:
    return tensorAttr(base, name);
  case ValueKind::NNModule:
    // What the program assigned while capturing (RealAttributes.cpp).
    if (ValuePtr assigned = cx_.assignedRealAttr(base->object.get(), name))
      return assigned;
    return moduleAttr(base, name);
  case ValueKind::Instance:
    // A hook's handle exists only in capture, without the attributes a real
    // one has (HookRegistration.cpp): refuse reading them rather than raise
    // an AttributeError eager would not.
    if (isRemovableHandleClass(base->object.get()) &&
        !_PyType_Lookup(reinterpret_cast<PyTypeObject*>(base->object.get()),
                        PyRef::steal(python::newStr(name)).get()))
      return captureError("reading '" + name +
                          "' of a torch.utils.hooks.RemovableHandle returned by a hook "
                          "registration inside the captured function is not supported: the "
                          "handle exists only while capturing, and its id comes from torch's "
                          "process-wide counter, which a graph must not bake in; use the handle "
                          "only to remove the hook (handle.remove() or `with handle:`)");
    return cx_.instanceAttr(base, name);
  case ValueKind::Constant:
  case ValueKind::Object:
  case ValueKind::Builtin:
  case ValueKind::TorchCallable: {
    // What the program assigned while capturing (RealAttributes.cpp).
    if (base->kind == ValueKind::Object)
      if (ValuePtr assigned = cx_.assignedRealAttr(base->object.get(), name))
        return assigned;
    llvm::Expected<std::optional<ValuePtr>> classRead = classOfSourceAttr(cx_, base, name);
    if (!classRead)
      return classRead.takeError();
    if (*classRead)
      return **classRead;
    if (base->kind == ValueKind::Object && base->source) {
      llvm::Expected<std::optional<ValuePtr>> read = userObjectClassRead(base, name);
      if (!read)
        return read.takeError();
      if (*read)
        return **read;
    }
    // Methods of str, int, float and frozenset values: the method table.
    if (base->kind == ValueKind::Constant || base->kind == ValueKind::Object)
      if (std::optional<llvm::Expected<ValuePtr>> method = constantMethodAttr(cx_, base, name))
        return std::move(*method);
    return realObjectAttr(cx_, base, name);
  }
  case ValueKind::Function:
    // The descriptor slot, which binds the function (MethodBinding.cpp).
    if (name == "__get__")
      return functionGetMethod(base);
    if (base->object) {
      PyRef value = PyRef::steal(PyObject_GetAttrString(base->object.get(), name.str().c_str()));
      if (!value)
        return programError("reading attribute '" + name + "' of a function");
      return cx_.values().wrapReal(value.get(), nullptr);
    }
    // A function made while capturing: the names CPython gives it from its
    // code and globals (vmap names the function in its messages). Capture
    // refuses assigning them, so they stay what MAKE_FUNCTION made.
    if (name == "__name__" || name == "__qualname__" || name == "__module__") {
      PyObject* value = nullptr; // borrowed
      if (name == "__name__")
        value = reinterpret_cast<PyCodeObject*>(base->code.get())->co_name;
      else if (name == "__module__")
        value = base->globals ? PyDict_GetItemString(base->globals.get(), "__name__") : nullptr;
      if (name == "__qualname__")
        return makeConstantSteal(python::newStr(base->qualname));
      return makeConstant(PyRef::borrow(value ? value : Py_None));
    }
    // What inspection reads to count a function's parameters (torch's
    // flex_attention tells a mask_mod from a score_mod so): the code
    // MAKE_FUNCTION was given and the defaults it popped, None when there
    // are none, as CPython has them.
    if (name == "__code__")
      return makeConstant(base->code);
    if (name == "__defaults__")
      return base->items.empty() ? makeNone() : makeTuple(base->items);
    if (name == "__kwdefaults__") {
      if (base->entries.empty())
        return makeNone();
      ValuePtr defaults = makeValue(ValueKind::Dict);
      defaults->entries = base->entries;
      return defaults;
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
    return containerAttr(cx_, base, name);
  }
  case ValueKind::Super: {
    return superAttr(cx_, base, name);
  }
  default:
    break;
  }
  return captureError("reading attribute '" + name + "' of a " + spelling(base->kind) +
                      " value is not supported");
}

} // namespace dync::capture
