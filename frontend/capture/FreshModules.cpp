//===- FreshModules.cpp - Modules made in forward, their __init__ followed -===//
//
// `ACT2FN["gelu"]` in forward builds transformers' `GELUActivation()`,
// whose `__init__` calls `super().__init__()` and picks `self.act` from a
// flag; a program's `Block(dim)(x)` stores sizes and submodules. Running
// such an `__init__` for real would do its effects once, in the capturing
// process only (a registry filled, a global counted, a passed-in module
// changed), never again on a served call. So capture follows it, as any
// Python function: what it does is recorded or refused like any other
// code's.
//
// The object itself is real, made by `object.__new__` alone: an nn.Module
// is a C-level object torch's code reads directly (its tables, its hooks),
// and nothing outside capture can see a fresh one. torch's own setup code
// reached from the followed `__init__` runs for real on it: torch's
// classes' `__init__` (nn.Module's, nn.GELU's through `super()`),
// `nn.Module.__setattr__` for constants and modules, `add_module`; that is
// torch's code changing the fresh object only, after checking that it
// would run none of the class's own (ModuleConstructors.h). What exists in
// capture only (a tensor, a symbolic size, a bound method, a list the
// program may change later) is kept in capture's state as the instance
// dict's entry, where reads find it (assignedEntries), and is never set
// on the real object. Parameters and buffers made while capturing are
// refused, as for torch's classes: no graph input names them.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/ModuleConstructors.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/TypeAttribute.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

namespace dync::capture {

using python::PyRef;

namespace {

std::string classOf(PyObject* object) {
  return qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(object)));
}

/// Why torch's code would run hooks of the program's when it registers a
/// submodule (`register_module_module_registration_hook`), or nullopt.
std::optional<std::string> registrationHooks() {
  llvm::Expected<PyRef> hooks =
      importObject("torch.nn.modules.module._global_module_registration_hooks");
  if (!hooks) {
    llvm::consumeError(hooks.takeError());
    return std::nullopt;
  }
  Py_ssize_t count = PyObject_Length(hooks->get());
  if (count < 0) {
    PyErr_Clear();
    return std::string("torch's global module registration hooks cannot be read");
  }
  if (count == 0)
    return std::nullopt;
  return std::string("torch's global module registration hooks, which registering a submodule "
                     "runs, hold functions of the program's");
}

/// The real instance dict of \p module (borrowed), or null.
PyObject* instanceDict(PyObject* module) {
  PyObject** pointer = _PyObject_GetDictPtr(module);
  return pointer && *pointer && PyDict_Check(*pointer) ? *pointer : nullptr;
}

/// Whether one of nn.Module's tables of \p module holds \p key; the table's
/// name, or null.
const char* tableHolding(PyObject* module, PyObject* key) {
  PyObject* dict = instanceDict(module);
  for (const char* table : {"_parameters", "_buffers", "_modules"}) {
    PyObject* entries = dict ? PyDict_GetItemString(dict, table) : nullptr;
    if (entries && PyDict_Check(entries) && PyDict_Contains(entries, key) == 1)
      return table;
  }
  PyErr_Clear();
  return nullptr;
}

} // namespace

std::string Interpreter::buildOnce(llvm::StringRef direct) const {
  if (freshInits_.empty())
    return direct.str();
  // The outermost: the module the captured code itself builds.
  const FreshInit& fresh = freshInits_.front();
  std::string shortName = llvm::StringRef(fresh.className).rsplit('.').second.str();
  if (shortName.empty())
    shortName = fresh.className;
  std::string advice = "this runs in the __init__ of '" + fresh.className + "', which " +
                       fresh.builtIn +
                       " builds while capturing, so it is built anew on every call: ";
  if (fresh.ownerClass.empty())
    return advice + "build the " + shortName + " once, outside " + fresh.builtIn +
           " (in the __init__ of the module that calls it), and call that one";
  // An example attribute name: the class's in snake case.
  std::string attribute;
  for (char c : shortName) {
    if (llvm::isUpper(c) && !attribute.empty() && attribute.back() != '_')
      attribute += '_';
    attribute += llvm::toLower(c);
  }
  return advice + "build the " + shortName + " once in " + fresh.ownerClass + ".__init__ (self." +
         attribute + " = " + shortName + "(...)) and call self." + attribute + " in " +
         fresh.ownerMethod;
}

Interpreter::FreshInit Interpreter::freshInitOf(PyObject* module) const {
  const std::vector<Frame*>& frames = machine_.frames();
  FreshInit init{
      classOf(module), frames.empty() ? "the function" : frames.back()->qualname, {}, {}};
  // The owner: the innermost method running on a module the program holds
  // (one capture did not build), whose __init__ can build this one once.
  for (auto frame = frames.rbegin(); frame != frames.rend(); ++frame) {
    const Frame& f = **frame;
    if (f.code->co_argcount == 0 || f.locals.empty() || !f.locals[0])
      continue;
    const ValuePtr& self = f.locals[0];
    if (self->kind != ValueKind::NNModule || !self->object || isFreshModule(self->object.get()))
      continue;
    init.ownerClass = Py_TYPE(self->object.get())->tp_name;
    init.ownerMethod = f.qualname;
    break;
  }
  return init;
}

bool Interpreter::isFreshModule(PyObject* object) const {
  return llvm::any_of(freshModules_, [&](const PyRef& module) { return module.get() == object; });
}

llvm::Expected<ValuePtr> Interpreter::constructModuleFollowingInit(const ValuePtr& cls,
                                                                   std::vector<ValuePtr> args,
                                                                   KeywordArgs kwargs) {
  auto* type = reinterpret_cast<PyTypeObject*>(cls->object.get());
  std::string name = "module " + describeObject(cls->object.get());
  auto refuse = [&](const llvm::Twine& why) {
    return captureError("constructing " + name + " while capturing is not supported: " + why +
                        "; " + buildOnce("build the module in __init__"));
  };
  // Calling the class runs its metaclass's __call__ and its __new__, which
  // capture does not follow; only type's and object's make the object
  // without running code of the program's.
  if (Py_TYPE(type) != &PyType_Type)
    return refuse("its metaclass " + qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(type))) +
                  " is not type");
  if (typeAttribute(type, "__new__") != typeAttribute(&PyBaseObject_Type, "__new__"))
    return refuse("its __new__ is not object's, and capture would run it for real");
  // Attribute assignments and reads in __init__ are modelled as
  // nn.Module's and object's make them.
  if (typeAttribute(type, "__getattribute__") !=
      typeAttribute(&PyBaseObject_Type, "__getattribute__"))
    return refuse("its class defines __getattribute__");
  PyObject* moduleSetattr =
      typeAttribute(reinterpret_cast<PyTypeObject*>(types_.module.get()), "__setattr__");
  if (typeAttribute(type, "__setattr__") != moduleSetattr)
    return refuse("its class defines __setattr__, which capture does not follow on a module");
  PyObject* init = typeAttribute(type, "__init__");
  if (!init || !PyFunction_Check(init))
    return refuse("its __init__ is not a Python function");

  PyRef empty = PyRef::steal(PyTuple_New(0));
  PyRef module =
      empty ? PyRef::steal(PyBaseObject_Type.tp_new(type, empty.get(), nullptr)) : PyRef();
  if (!module)
    return programError("constructing " + name);
  // The instance dict exists from the start, so that what the program
  // keeps in capture's state is found in it from its first assignment.
  PyRef dict = PyRef::steal(PyObject_GenericGetDict(module.get(), nullptr));
  if (!dict)
    return pythonError("making the instance dict of " + name);
  freshModules_.push_back(module);
  ValuePtr self = makeValue(ValueKind::NNModule, module);

  llvm::Expected<ValuePtr> initializer = values_.functionFromReal(init, nullptr);
  if (!initializer)
    return initializer.takeError();
  std::vector<ValuePtr> initArgs = args;
  initArgs.insert(initArgs.begin(), self);
  // What its __init__ builds is refused as built in that call, not in an
  // __init__ the program could move it to (buildOnce).
  freshInits_.push_back(freshInitOf(module.get()));
  llvm::Expected<ValuePtr> result = call(*initializer, std::move(initArgs), kwargs);
  freshInits_.pop_back();
  if (!result)
    return result.takeError();
  if (!(*result)->isNone())
    return captureError("__init__() should return None, not a " + spelling((*result)->kind));
  // Without nn.Module's own __init__ the module has no tables, and eager
  // fails on its first call.
  if (!instanceDict(module.get()) || !PyDict_GetItemString(instanceDict(module.get()), "_modules"))
    return refuse("its __init__ did not call nn.Module.__init__, so the module cannot be called");
  if (llvm::Error error = refuseTensorsMadeAnew(module.get(), name, args, kwargs))
    return error;
  return self;
}

llvm::Error Interpreter::setFreshModuleAttr(const ValuePtr& module, llvm::StringRef name,
                                            ValuePtr value) {
  PyObject* object = module->object.get();
  auto refuse = [&](const llvm::Twine& why) {
    return captureError("assigning attribute '" + name + "' of a module of class '" +
                        classOf(object) + "' made while capturing is not supported: " + why);
  };
  PyRef key = PyRef::steal(python::newStr(name));
  PyObject* classAttr = _PyType_Lookup(Py_TYPE(object), key.get());
  // A property's setter written in Python is followed, as object's
  // assignment would call it.
  if (classAttr && PyObject_TypeCheck(classAttr, &PyProperty_Type)) {
    PyRef setter = PyRef::steal(PyObject_GetAttrString(classAttr, "fset"));
    if (!setter)
      return pythonError("reading the setter of property '" + name + "'");
    if (setter.get() == Py_None)
      return raiseBuiltin(PyExc_AttributeError, "property '" + name + "' of '" + classOf(object) +
                                                    "' object has no setter");
    if (PyFunction_Check(setter.get())) {
      llvm::Expected<ValuePtr> function = values_.functionFromReal(setter.get(), nullptr);
      if (!function)
        return function.takeError();
      llvm::Expected<ValuePtr> result = call(*function, {module, std::move(value)});
      return result ? llvm::Error::success() : result.takeError();
    }
  }
  if (classAttr && Py_TYPE(classAttr)->tp_descr_set)
    return refuse("its class has a descriptor of that name that is not a property written in "
                  "Python, which the assignment would run for real");
  auto dropKept = [&] {
    llvm::erase_if(freshModuleAttrs_, [&](const FreshModuleAttr& attr) {
      return attr.object.get() == object && attr.name == name;
    });
  };
  // A constant or a module is filed for real by torch's own
  // nn.Module.__setattr__: a submodule goes to the module's table, where
  // torch's code (children(), its container classes) finds it.
  if (value->isConstant() || value->kind == ValueKind::NNModule) {
    if (value->kind == ValueKind::NNModule)
      if (std::optional<std::string> hooks = registrationHooks())
        return refuse(*hooks);
    if (llvm::Error error = recorder_.irreversible("assigning attribute '" + name +
                                                   "' of a module made while capturing"))
      return error;
    PyObject* setattr =
        typeAttribute(reinterpret_cast<PyTypeObject*>(types_.module.get()), "__setattr__");
    PyRef done = PyRef::steal(
        PyObject_CallFunctionObjArgs(setattr, object, key.get(), value->object.get(), nullptr));
    if (!done)
      return programError("assigning attribute '" + name + "'");
    dropKept();
    return llvm::Error::success();
  }
  if (value->isTensor() && value->object &&
      PyObject_IsInstance(value->object.get(), types_.parameter.get()) == 1)
    return refuse("the value is a parameter made while capturing, made anew on every call, "
                  "which no graph input names; " +
                  buildOnce("build the module in __init__"));
  PyErr_Clear();
  if (const char* table = tableHolding(object, key.get()))
    return refuse(llvm::Twine("it names an entry of the module's ") + table +
                  ", which nn.Module.__setattr__ would change with a value only capture holds");
  // Anything else nn.Module.__setattr__ puts in the instance dict; the
  // value exists in capture only, so capture keeps it there.
  for (FreshModuleAttr& attr : freshModuleAttrs_)
    if (attr.object.get() == object && attr.name == name) {
      attr.value = std::move(value);
      return llvm::Error::success();
    }
  freshModuleAttrs_.push_back(
      {PyRef::borrow(object), name.str(), std::move(value), sideEffectCount_++});
  return llvm::Error::success();
}

llvm::Expected<std::optional<ValuePtr>>
Interpreter::callFreshModuleSetup(const ValuePtr& callee, const std::vector<ValuePtr>& args,
                                  const KeywordArgs& kwargs) {
  PyObject* function = callee->object.get();
  // Every call of a method on a module passes here: the cheap test first.
  if (args.empty() || args[0]->kind != ValueKind::NNModule || !args[0]->object ||
      !isFreshModule(args[0]->object.get()) || !function || !isTorchFunction(function))
    return std::nullopt;
  PyObject* module = args[0]->object.get();
  auto* moduleClass = reinterpret_cast<PyTypeObject*>(types_.module.get());
  auto moduleMethod = [&](const char* name) {
    return PyDict_GetItemString(moduleClass->tp_dict, name);
  };
  std::string what = describeObject(function);
  auto refuse = [&](const llvm::Twine& why) {
    return captureError("calling " + what + " on a module of class '" + classOf(module) +
                        "' made while capturing is not supported: " + why + "; " +
                        buildOnce("build the module in __init__"));
  };
  if (function == moduleMethod("__setattr__")) {
    if (args.size() != 3 || !kwargs.empty() || !args[1]->isConstant() ||
        !PyUnicode_Check(args[1]->object.get()))
      return refuse("its arguments are not a constant name and a value");
    std::string name = python::utf8Of(args[1]->object.get()).value_or("");
    if (llvm::Error error = setFreshModuleAttr(args[0], name, args[2]))
      return error;
    return std::optional<ValuePtr>(makeNone());
  }
  if (function == moduleMethod("register_buffer") || function == moduleMethod("register_parameter"))
    return refuse("the tensor it registers is made anew on every call, and no graph input "
                  "names it");
  bool moduleInit = function == moduleMethod("__init__");
  bool registers =
      function == moduleMethod("add_module") || function == moduleMethod("register_module");
  PyObject* functionName = reinterpret_cast<PyFunctionObject*>(function)->func_name;
  bool torchInit =
      PyUnicode_Check(functionName) && python::utf8Of(functionName).value_or("") == "__init__";
  if (!moduleInit && !registers && !torchInit)
    return std::nullopt;
  // torch's code runs for real here, on the fresh module: it must be given
  // what a real call can take, and must not reach code of the class's own.
  std::vector<ValuePtr> rest(args.begin() + 1, args.end());
  if (!allConstantOrModules(rest) ||
      !llvm::all_of(kwargs, [](const auto& kw) { return allConstantOrModules({kw.second}); }))
    return refuse("torch's code runs for real there, and it is given values that are not "
                  "constants or modules");
  std::optional<std::string> programCode =
      moduleInit ? programCodeInModuleInit(Py_TYPE(module), types_.module.get())
                 : programCodeInConstructor(Py_TYPE(module), /*initFollowed=*/true);
  if (!programCode && !moduleInit)
    programCode = registrationHooks();
  if (programCode)
    return refuse(*programCode +
                  ", and capture would run that code for real rather than follow it");
  if (llvm::Error error = recorder_.irreversible("calling " + what +
                                                 " on a module made while "
                                                 "capturing"))
    return error;
  PyObject* dict = instanceDict(module);
  PyRef before = PyRef::steal(dict ? PyDict_Copy(dict) : PyDict_New());
  if (!before)
    return pythonError("reading the instance dict of a module");
  llvm::Expected<PythonCallArguments> call = toPythonArguments(args, kwargs);
  if (!call)
    return call.takeError();
  PyRef result = PyRef::steal(PyObject_Call(function, call->args.get(), call->kwargs.get()));
  if (!result)
    return programError("calling " + what);
  // What torch's code assigned replaces what capture kept under that name,
  // as the assignment would in the instance dict.
  dict = instanceDict(module);
  llvm::erase_if(freshModuleAttrs_, [&](const FreshModuleAttr& attr) {
    if (attr.object.get() != module)
      return false;
    PyRef key = PyRef::steal(python::newStr(attr.name));
    PyObject* now = dict ? PyDict_GetItem(dict, key.get()) : nullptr;
    return (now && now != PyDict_GetItem(before.get(), key.get())) ||
           tableHolding(module, key.get());
  });
  llvm::Expected<ValuePtr> wrapped = values_.wrapReal(result.get(), nullptr);
  if (!wrapped)
    return wrapped.takeError();
  return std::optional<ValuePtr>(*wrapped);
}

} // namespace dync::capture
