//===- CaptureInputs.cpp - The entry's inputs: examples bound, arguments --===//
//
// The first phases of a capture attempt (CapturePhases.h): the example call
// bound to the entry's parameters as CPython binds `f(*examples,
// **keywords)`, with a clear error for every way the examples and the
// signature disagree; then, once what is dynamic is declared, the entry's
// arguments as values with their sources, and the guards on what the call
// left in *args and **kwargs.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CapturePhases.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DeclaredInts.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

namespace dync::capture {

using python::PyRef;

llvm::Error inputError(const python::LoadedModule& module, const llvm::Twine& message) {
  // Located in the module's file, without a line: these are about how the
  // entry is called, not about a line of it.
  CaptureFrame frame;
  frame.location.file = module.displayPath;
  return llvm::make_error<CaptureError>(message.str(), std::vector<CaptureFrame>{frame});
}

namespace {

/// The object `self` is for a `Class.method` entry: --init, else a
/// module-level instance of exactly that class, else `Class()`.
llvm::Expected<PyRef> findSelf(const python::LoadedModule& module,
                               const python::ResolvedEntry& entry, const CaptureOptions& options) {
  // The object a warm-up call ran on (warmUpEntry), so capture sees the
  // state the call left.
  if (options.self)
    return options.self;
  PyObject* globals = PyModule_GetDict(module.module.get());
  if (!options.init.empty()) {
    PyRef value = PyRef::steal(PyRun_String(options.init.c_str(), Py_eval_input, globals, globals));
    if (!value)
      return inputError(module,
                        llvm::toString(pythonError("evaluating --init '" + options.init + "'")));
    return value;
  }
  PyRef owner = module.module;
  llvm::SmallVector<llvm::StringRef, 4> parts;
  llvm::StringRef(entry.ownerPath).split(parts, '.');
  for (llvm::StringRef part : parts) {
    owner = PyRef::steal(PyObject_GetAttrString(owner.get(), part.str().c_str()));
    if (!owner)
      return inputError(module, llvm::toString(pythonError("resolving " + entry.ownerPath)));
  }
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(globals, &pos, &key, &value))
    if (reinterpret_cast<PyObject*>(Py_TYPE(value)) == owner.get())
      return PyRef::borrow(value);
  PyRef made = PyRef::steal(PyObject_CallNoArgs(owner.get()));
  if (!made)
    return inputError(module, llvm::toString(pythonError("no instance of " + entry.className +
                                                         " at module level, and constructing " +
                                                         entry.className + "()")) +
                                  "; pass --init 'EXPR' to say how to build one");
  return made;
}

/// The example call: positional arguments from --example's function or
/// example_inputs(), keyword arguments from the function of the same name
/// with `_kwargs` in place of `_inputs` (example_kwargs()), or with
/// `_kwargs` appended for a name that does not end in `_inputs`.
struct ExampleCall {
  PyRef args;   ///< a tuple
  PyRef kwargs; ///< a dict with str keys, possibly empty
  std::string argsName, kwargsName;
};

/// The name of the keyword-argument function paired with \p positional.
std::string kwargsFunctionName(llvm::StringRef positional) {
  if (positional.consume_back("_inputs"))
    return (positional + "_kwargs").str();
  return (positional + "_kwargs").str();
}

llvm::Expected<ExampleCall> exampleArguments(const python::LoadedModule& module,
                                             const CaptureOptions& options, size_t wanted) {
  ExampleCall example;
  example.argsName = options.example.empty() ? "example_inputs" : options.example;
  example.kwargsName = kwargsFunctionName(example.argsName);
  PyObject* globals = PyModule_GetDict(module.module.get());
  PyObject* function = PyDict_GetItemString(globals, example.argsName.c_str());
  PyObject* kwFunction = PyDict_GetItemString(globals, example.kwargsName.c_str());
  example.kwargs = PyRef::steal(PyDict_New());
  if (kwFunction) {
    PyRef kwargs = PyRef::steal(PyObject_CallNoArgs(kwFunction));
    if (!kwargs)
      return inputError(module,
                        llvm::toString(pythonError("calling " + example.kwargsName + "()")));
    if (!PyDict_Check(kwargs.get()))
      return inputError(module,
                        example.kwargsName + "() returned a " +
                            qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(kwargs.get()))) +
                            "; it must return a dict of keyword arguments by "
                            "parameter name, such as {\"attention_mask\": mask}");
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(kwargs.get(), &pos, &key, &value)) {
      if (!PyUnicode_Check(key))
        return inputError(module, example.kwargsName + "() returned a dict with the key " +
                                      reprOf(key) + "; keyword arguments are named by str keys");
      if (PyDict_SetItem(example.kwargs.get(), key, value) < 0)
        return pythonError("copying " + example.kwargsName + "()");
    }
  }
  if (!function) {
    // Keywords alone are a whole example call.
    if (kwFunction || (wanted == 0 && options.example.empty())) {
      example.args = PyRef::steal(PyTuple_New(0));
      return example;
    }
    return inputError(module, options.example.empty()
                                  ? llvm::Twine("no example inputs: define example_inputs() in "
                                                "the module returning the positional arguments "
                                                "as a tuple (and example_kwargs() returning the "
                                                "keyword arguments as a dict), or name a "
                                                "function with --example")
                                  : llvm::Twine("--example names '" + example.argsName +
                                                "', which the module does not define"));
  }
  PyRef result = PyRef::steal(PyObject_CallNoArgs(function));
  if (!result)
    return inputError(module, llvm::toString(pythonError("calling " + example.argsName + "()")));
  if (PyList_Check(result.get()))
    result = PyRef::steal(PyList_AsTuple(result.get()));
  if (!PyTuple_Check(result.get()))
    result = PyRef::steal(PyTuple_Pack(1, result.get()));
  example.args = std::move(result);
  return example;
}

/// The object a method entry runs on: findSelf's for `Class.method`, the
/// bound object for a bound method or class method; none for a function.
llvm::Expected<PyRef> entrySelf(const python::LoadedModule& module,
                                const python::ResolvedEntry& entry, const CaptureOptions& options) {
  switch (entry.kind) {
  case python::EntryKind::Method:
    return findSelf(module, entry, options);
  case python::EntryKind::BoundMethod:
  case python::EntryKind::ClassMethod:
    return entry.self;
  default:
    return PyRef();
  }
}

} // namespace

bool EntryInputs::givenByExample(const std::string& name) const {
  return llvm::any_of(bindings, [&](const ExampleBinding& b) { return b.name == name; });
}

namespace {

/// The name of local \p i of \p code.
std::string localName(PyCodeObject* code, size_t i) {
  return python::utf8Of(PyTuple_GET_ITEM(code->co_localsplusnames, i)).value_or("?");
}

/// Binds the positional example arguments to the parameters, as CPython
/// binds f(*examples): those past the parameters land in *args.
void bindPositionalExamples(EntryInputs& inputs) {
  const std::vector<std::string>& parameters = inputs.parameters;
  for (size_t i = 0; i < inputs.exampleCount; ++i) {
    PyObject* value = PyTuple_GET_ITEM(inputs.exampleArgs.get(), i);
    size_t parameter = inputs.firstExample + i;
    if (parameter < parameters.size()) {
      inputs.bindings.push_back(
          {parameters[parameter], Source::local(parameters[parameter]), value, false});
    } else {
      // A decorator's wrapper holds `self` first in *args.
      size_t extra = parameter - parameters.size() + (inputs.selfInVarargs ? 1 : 0);
      inputs.bindings.push_back(
          {inputs.varargsName + "_" + std::to_string(extra),
           Source::index(Source::local(inputs.varargsName), static_cast<int64_t>(extra)), value,
           false});
    }
  }
}

/// Binds the keyword example arguments, as CPython binds f(**keywords):
/// keywords that name no parameter land in **kwargs; one that names self, a
/// positional-only parameter or one given positionally is an error.
llvm::Error bindKeywordExamples(const python::LoadedModule& module,
                                const python::ResolvedEntry& entry, const ExampleCall& examples,
                                EntryInputs& inputs) {
  PyCodeObject* code = inputs.code;
  size_t named = inputs.parameters.size() + inputs.kwOnly;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(inputs.exampleKwargs.get(), &pos, &key, &value)) {
    std::string name = python::utf8Of(key).value_or("?");
    size_t index = 0;
    while (index < named && localName(code, index) != name)
      ++index;
    bool isParameter = index < named;
    if (isParameter && index < inputs.firstExample)
      return inputError(module, examples.kwargsName + "() gives '" + name + "', which is " +
                                    entry.qualname + "'s 'self'");
    if (isParameter && index < static_cast<size_t>(code->co_posonlyargcount))
      return inputError(module, examples.kwargsName + "() gives '" + name +
                                    "', a positional-only parameter of " + entry.qualname +
                                    "; give it in " + examples.argsName + "()");
    // Only a positional parameter can be given positionally: a keyword-only
    // one (after *args) takes its value from the keywords however many
    // positional examples there are.
    if (isParameter && index < inputs.parameters.size() &&
        index < inputs.firstExample + inputs.exampleCount)
      return inputError(module, examples.kwargsName + "() gives '" + name + "', which " +
                                    examples.argsName + "() already gives as argument " +
                                    llvm::Twine(index - inputs.firstExample));
    if (!isParameter && !inputs.hasVarkw)
      return inputError(module, examples.kwargsName + "() gives '" + name +
                                    "', which is not a parameter of " + entry.qualname);
    if (isParameter) {
      inputs.bindings.push_back({name, Source::local(name), value, true});
    } else {
      inputs.bindings.push_back(
          {name, Source::key(Source::local(inputs.varkwName), name), value, true});
      inputs.extraKeywords.push_back(name);
    }
  }
  return llvm::Error::success();
}

/// A parameter without a default that the examples leave out: say where
/// to give it, rather than letting the call fail.
llvm::Error checkRequiredParameters(const python::LoadedModule& module,
                                    const python::ResolvedEntry& entry, const ExampleCall& examples,
                                    const EntryInputs& inputs) {
  if (!PyFunction_Check(entry.function.get()))
    return llvm::Error::success();
  PyCodeObject* code = inputs.code;
  size_t positional = inputs.parameters.size();
  for (size_t i = inputs.firstExample; i < positional + inputs.kwOnly; ++i) {
    std::string name = localName(code, i);
    bool hasDefault =
        i < positional ? i + inputs.defaultCount >= positional
                       : inputs.kwDefaults && PyDict_GetItemString(inputs.kwDefaults, name.c_str());
    if (!hasDefault && !inputs.givenByExample(name))
      return inputError(
          module, entry.qualname + "() needs the " +
                      (i < positional ? "argument" : "keyword-only argument") + " '" + name +
                      "', which the examples do not give: return it " +
                      (i < positional && i >= static_cast<size_t>(code->co_posonlyargcount)
                           ? "from " + examples.argsName + "() or " + examples.kwargsName + "()"
                       : i < positional ? "from " + examples.argsName + "()"
                                        : "from " + examples.kwargsName + "()"));
  }
  PyErr_Clear();
  return llvm::Error::success();
}

} // namespace

llvm::Expected<EntryInputs> bindInputs(const python::LoadedModule& module,
                                       const python::ResolvedEntry& entry,
                                       const CaptureOptions& options) {
  EntryInputs inputs;
  // The parameters the example arguments bind to.
  PyCodeObject* code = entry.codeObject();
  inputs.code = code;
  std::vector<std::string>& parameters = inputs.parameters;
  for (int i = 0; i < code->co_argcount; ++i)
    parameters.push_back(localName(code, static_cast<size_t>(i)));
  llvm::Expected<PyRef> found = entrySelf(module, entry, options);
  if (!found)
    return found.takeError();
  inputs.self = *found;
  // A decorator's wrapper (`def wrapper(*args, **kwargs)`, torch.no_grad()'s)
  // receives `self` in its *args, as every positional argument.
  inputs.selfInVarargs = inputs.self && parameters.empty() && (code->co_flags & CO_VARARGS);
  if (inputs.self && parameters.empty() && !inputs.selfInVarargs)
    return inputError(module, entry.qualname + " takes no 'self' parameter");
  inputs.firstExample = inputs.self && !inputs.selfInVarargs ? 1 : 0;
  llvm::Expected<ExampleCall> examples =
      exampleArguments(module, options, parameters.size() - inputs.firstExample);
  if (!examples)
    return examples.takeError();
  inputs.exampleArgs = examples->args;
  inputs.exampleKwargs = examples->kwargs;
  inputs.exampleCount = static_cast<size_t>(PyTuple_GET_SIZE(examples->args.get()));
  if (inputs.firstExample + inputs.exampleCount > parameters.size() &&
      !(code->co_flags & CO_VARARGS))
    return inputError(module, "the example inputs are " + llvm::Twine(inputs.exampleCount) +
                                  " arguments, but " + entry.qualname + " takes " +
                                  llvm::Twine(parameters.size() - inputs.firstExample));

  // Where each example argument binds, as CPython binds the call
  // f(*examples, **keywords): its name (for --dynamic), its source in the
  // frame and its object.
  inputs.kwOnly = static_cast<size_t>(code->co_kwonlyargcount);
  inputs.hasVarargs = code->co_flags & CO_VARARGS;
  inputs.hasVarkw = code->co_flags & CO_VARKEYWORDS;
  if (inputs.hasVarargs)
    inputs.varargsName = localName(code, parameters.size() + inputs.kwOnly);
  if (inputs.hasVarkw)
    inputs.varkwName =
        localName(code, parameters.size() + inputs.kwOnly + (inputs.hasVarargs ? 1 : 0));
  bindPositionalExamples(inputs);
  if (llvm::Error error = bindKeywordExamples(module, entry, *examples, inputs))
    return error;

  if (PyFunction_Check(entry.function.get())) {
    inputs.defaults = PyFunction_GetDefaults(entry.function.get());
    inputs.kwDefaults = PyFunction_GetKwDefaults(entry.function.get());
  }
  inputs.defaultCount =
      inputs.defaults ? static_cast<size_t>(PyTuple_GET_SIZE(inputs.defaults)) : 0;
  if (llvm::Error error = checkRequiredParameters(module, entry, *examples, inputs))
    return error;
  // --- Ints held on self (`--dynamic self.window=w[1,32]`) ---
  // `self` is no example argument, but an int the method reads from its
  // instance __dict__ is declared by its path as one inside an argument.
  if (inputs.self && inputs.firstExample == 1)
    inputs.selfBinding = ExampleBinding{inputs.parameters[0], Source::local(inputs.parameters[0]),
                                        inputs.self.get(), false};
  // --- end of ints held on self ---
  return inputs;
}

namespace {

/// The entry's `self`, read from the frame (or its *args when the method
/// takes self there); a module or object is guarded by its type, and a
/// module's `training` read so that it is guarded too.
llvm::Expected<ValuePtr> selfArgument(Interpreter& interp, GuardSet& recorded,
                                      const EntryInputs& inputs) {
  const PyRef& self = inputs.self;
  SourcePtr selfSource = inputs.selfInVarargs ? Source::index(Source::local(inputs.varargsName), 0)
                                              : Source::local(inputs.parameters[0]);
  llvm::Expected<ValuePtr> value = interp.values().wrapReal(self.get(), selfSource);
  if (!value)
    return value.takeError();
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(self.get()));
  if ((*value)->kind == ValueKind::NNModule || (*value)->kind == ValueKind::Object) {
    recorded.add(typeGuard((*value)->source, type));
    if ((*value)->kind == ValueKind::NNModule) {
      llvm::Expected<ValuePtr> training = interp.getAttr(*value, "training");
      if (!training)
        return training.takeError();
    }
  }
  return value;
}

// --- Symbolic int arguments: a SymInt, the graph's int input ---
/// An int argument declared dynamic by \p intSpec: a SymInt the graph
/// takes as an input, watched for specialization.
llvm::Expected<ValuePtr> symbolicIntArgument(Interpreter& interp, const CaptureOptions& options,
                                             const DynamicDeclarations& declared,
                                             const DynamicSpec& intSpec,
                                             const ExampleBinding& binding) {
  std::optional<int64_t> hint;
  if (auto it = options.sizeHints.find(intSpec.symbol); it != options.sizeHints.end())
    hint = it->second;
  // As for a dimension: capturing at the example's own value lets
  // torch pin the symbol, which --dynamic auto reports.
  if (declared.isAuto(intSpec))
    hint = PyLong_AsLongLong(binding.object);
  // Torch makes sizes 0 and 1 constants: so does this specialization.
  if (hint && (*hint == 0 || *hint == 1)) {
    PyRef constant = PyRef::steal(PyLong_FromLongLong(*hint));
    if (!constant)
      return pythonError("making the int " + llvm::Twine(*hint));
    return interp.values().wrapReal(constant.get(), binding.source);
  }
  llvm::Expected<ValuePtr> symInt = interp.values().intInput(
      binding.object, binding.source, {0, intSpec.symbol, intSpec.range, hint});
  if (symInt && options.sizeHints.empty()) {
    Interpreter::DynamicWatch watch{
        (*symInt)->object, 0,     intSpec.text,       binding.source->str(),
        intSpec.range,     false, options.splitRanges};
    watch.intArgument = true;
    watch.noteOnly = declared.isAuto(intSpec);
    interp.watchDynamic(std::move(watch));
  }
  return symInt;
}
// --- end of symbolic int arguments ---

/// A tensor argument: a graph input whose declared dimensions are
/// symbolic, each watched for specialization.
llvm::Expected<ValuePtr> tensorArgument(Interpreter& interp, const CaptureOptions& options,
                                        const DynamicDeclarations& declared,
                                        const ExampleBinding& binding) {
  const std::vector<DynamicSpec>& dynamic = declared.dynamic;
  std::vector<oracle::DynamicDim> dims;
  for (const DynamicSpec& spec : dynamic)
    if (spec.argument == binding.name && spec.path.empty()) {
      std::optional<int64_t> hint;
      if (auto it = options.sizeHints.find(spec.symbol); it != options.sizeHints.end())
        hint = it->second;
      // Capturing at the example's own size lets torch pin the
      // symbol, which --dynamic auto reports rather than refuses.
      if (declared.isAuto(spec)) {
        PyRef shape = PyRef::steal(PyObject_GetAttrString(binding.object, "shape"));
        hint = shape ? PyLong_AsLongLong(PyTuple_GET_ITEM(shape.get(), spec.dim)) : 2;
      }
      dims.push_back({spec.dim, spec.symbol, spec.range, hint});
    }
  llvm::Expected<ValuePtr> tensor =
      interp.values().tensorInput(binding.object, binding.source, dims);
  // A specialization may narrow or pin what it was asked to serve.
  if (tensor && options.sizeHints.empty())
    for (const DynamicSpec& spec : dynamic)
      if (spec.argument == binding.name && spec.path.empty())
        interp.watchDynamic({(*tensor)->object, spec.dim, spec.text, binding.source->str(),
                             spec.range, declared.isAuto(spec), options.splitRanges});
  return tensor;
}

/// The value of the example argument \p binding: a symbolic int, a tensor
/// input or any other object read from the frame.
llvm::Expected<ValuePtr> exampleArgument(Interpreter& interp, const CaptureOptions& options,
                                         const DynamicDeclarations& declared,
                                         const ExampleBinding& binding) {
  auto intSpec = llvm::find_if(declared.dynamic, [&](const DynamicSpec& spec) {
    return spec.intArgument && spec.path.empty() && spec.argument == binding.name;
  });
  if (intSpec != declared.dynamic.end())
    return symbolicIntArgument(interp, options, declared, *intSpec, binding);
  if (PyObject_IsInstance(binding.object, interp.types().tensor.get()) == 1)
    return tensorArgument(interp, options, declared, binding);
  // A list argument the program only appends to is not read whole
  // (UnreadLists.cpp).
  ValueBuilder::UnreadListReads unread(interp.values());
  return interp.values().wrapReal(binding.object, binding.source);
}

/// *args and **kwargs are what the call left over: their length and keys
/// decide what the program iterates and finds there, so a call with other
/// extra arguments misses.
void guardLeftoverArguments(GuardSet& recorded, const EntryInputs& inputs) {
  const std::string& varargsName = inputs.varargsName;
  const std::string& varkwName = inputs.varkwName;
  size_t given = inputs.firstExample + inputs.exampleCount;
  size_t parameterCount = inputs.parameters.size();
  if (inputs.hasVarargs) {
    recorded.add(typeGuard(Source::local(varargsName), reinterpret_cast<PyObject*>(&PyTuple_Type)));
    recorded.add(Guard::lengthIs(
        Source::local(varargsName),
        static_cast<int64_t>((inputs.selfInVarargs ? 1 : 0) +
                             (given > parameterCount ? given - parameterCount : 0))));
  }
  if (inputs.hasVarkw) {
    recorded.add(typeGuard(Source::local(varkwName), reinterpret_cast<PyObject*>(&PyDict_Type)));
    recorded.add(Guard::keysAre(Source::local(varkwName), inputs.extraKeywords));
  }
}

/// Parameters the examples leave to their defaults are read from the frame
/// like the others, so that they are guarded: a call that passes a mask
/// must not run a graph captured without one.
llvm::Error addDefaultedArguments(Interpreter& interp, const python::ResolvedEntry& entry,
                                  const EntryInputs& inputs, EntryArguments& made) {
  if (!PyFunction_Check(entry.function.get()))
    return llvm::Error::success();
  PyCodeObject* code = inputs.code;
  const std::vector<std::string>& parameters = inputs.parameters;
  size_t defaultCount = inputs.defaultCount;
  for (size_t i = inputs.firstExample + inputs.exampleCount; i < parameters.size(); ++i) {
    if (i + defaultCount < parameters.size() || inputs.givenByExample(parameters[i]))
      continue;
    llvm::Expected<ValuePtr> arg = interp.values().wrapReal(
        PyTuple_GET_ITEM(inputs.defaults, i + defaultCount - parameters.size()),
        Source::local(parameters[i]));
    if (!arg)
      return arg.takeError();
    // Positional-only parameters cannot be passed by name; they come
    // first, so the ones left to their defaults follow the examples.
    if (i < static_cast<size_t>(code->co_posonlyargcount))
      made.args.push_back(*arg);
    else
      made.keywords.emplace_back(parameters[i], *arg);
  }
  for (size_t i = 0; inputs.kwDefaults && i < inputs.kwOnly; ++i) {
    PyObject* name = PyTuple_GET_ITEM(code->co_localsplusnames, code->co_argcount + i);
    std::string text = python::utf8Of(name).value_or("?");
    PyObject* value = PyDict_GetItemWithError(inputs.kwDefaults, name);
    if (!value || inputs.givenByExample(text))
      continue;
    llvm::Expected<ValuePtr> arg = interp.values().wrapReal(value, Source::local(text));
    if (!arg)
      return arg.takeError();
    made.keywords.emplace_back(text, *arg);
  }
  PyErr_Clear();
  return llvm::Error::success();
}

/// The entry's own *args tuple and **kwargs dict hold what the call passed
/// beyond its parameters: a call with more arguments, or other keywords (a
/// decorator's wrapper pops one), must miss rather than run this graph.
void guardEntryExtraArguments(GuardSet& recorded, const EntryInputs& inputs,
                              const EntryArguments& made) {
  PyCodeObject* code = inputs.code;
  if (code->co_flags & CO_VARARGS) {
    SourcePtr source = Source::local(inputs.varargsName);
    size_t positional = static_cast<size_t>(code->co_argcount);
    recorded.add(typeGuard(source, reinterpret_cast<PyObject*>(&PyTuple_Type)));
    recorded.add(Guard::lengthIs(
        source,
        static_cast<int64_t>(made.args.size() > positional ? made.args.size() - positional : 0)));
  }
  if (code->co_flags & CO_VARKEYWORDS) {
    size_t slot = static_cast<size_t>(code->co_argcount + code->co_kwonlyargcount) +
                  ((code->co_flags & CO_VARARGS) ? 1 : 0);
    SourcePtr source = Source::local(
        python::utf8Of(PyTuple_GET_ITEM(code->co_localsplusnames, slot)).value_or("kwargs"));
    std::vector<std::string> extra;
    for (const auto& [name, value] : made.keywords) {
      bool named = false;
      for (int i = 0; i < code->co_argcount + code->co_kwonlyargcount; ++i)
        named |= python::utf8Of(PyTuple_GET_ITEM(code->co_localsplusnames, i)) == name;
      if (!named)
        extra.push_back(name);
    }
    recorded.add(typeGuard(source, reinterpret_cast<PyObject*>(&PyDict_Type)));
    recorded.add(Guard::keysAre(source, extra));
  }
}

} // namespace

llvm::Expected<EntryArguments>
makeArguments(Interpreter& interp, GuardSet& recorded, const python::LoadedModule& module,
              const python::ResolvedEntry& entry, const CaptureOptions& options,
              const EntryInputs& inputs, const DynamicDeclarations& declared) {
  EntryArguments made;
  // The frame's arguments, each with its source.
  if (inputs.self) {
    llvm::Expected<ValuePtr> self = selfArgument(interp, recorded, inputs);
    if (!self)
      return self.takeError();
    made.args.push_back(*self);
  }
  for (const ExampleBinding& binding : inputs.bindings) {
    llvm::Expected<ValuePtr> arg = exampleArgument(interp, options, declared, binding);
    // Nothing has run yet: the error is about the example, placed at the
    // module.
    if (!arg)
      return inputError(module, llvm::toString(arg.takeError()));
    if (binding.keyword)
      made.keywords.emplace_back(binding.name, *arg);
    else
      made.args.push_back(*arg);
  }
  guardLeftoverArguments(recorded, inputs);
  if (llvm::Error error = addDefaultedArguments(interp, entry, inputs, made))
    return error;
  guardEntryExtraArguments(recorded, inputs, made);
  return made;
}

//===----------------------------------------------------------------------===//
// Warm-up calls (--warmup N): the entry runs for real on its example inputs
// before capture, so a program that fills its own state on its first call
// (a cache keyed by device, grids built when a shape changes, hooks
// installed once) is captured in the state it keeps from then on.
//===----------------------------------------------------------------------===//

llvm::Expected<PyRef> warmUpEntry(const python::LoadedModule& module,
                                  const python::ResolvedEntry& entry,
                                  const CaptureOptions& options) {
  // Found once: the calls and the capture after them see one object, even
  // one that --init or the class's constructor makes.
  llvm::Expected<PyRef> found = entrySelf(module, entry, options);
  if (!found)
    return found.takeError();
  PyRef self = *found;
  for (unsigned call = 0; call < options.warmupCalls; ++call) {
    // Fresh example arguments each time: a call that changes its inputs in
    // place leaves capture's unchanged.
    size_t parameters = static_cast<size_t>(entry.codeObject()->co_argcount);
    size_t wanted = parameters - (self && parameters > 0 ? 1 : 0);
    llvm::Expected<ExampleCall> examples = exampleArguments(module, options, wanted);
    if (!examples)
      return examples.takeError();
    PyRef args = examples->args;
    if (self && entry.kind == python::EntryKind::Method) {
      Py_ssize_t count = PyTuple_GET_SIZE(args.get());
      PyRef withSelf = PyRef::steal(PyTuple_New(count + 1));
      if (!withSelf)
        return pythonError("building the warm-up call");
      PyTuple_SET_ITEM(withSelf.get(), 0, PyRef(self).release());
      for (Py_ssize_t i = 0; i < count; ++i)
        PyTuple_SET_ITEM(withSelf.get(), i + 1,
                         PyRef::borrow(PyTuple_GET_ITEM(args.get(), i)).release());
      args = std::move(withSelf);
    }
    // A bound method or classmethod binds its object itself.
    PyRef callable = entry.function;
    if (self && entry.kind != python::EntryKind::Method) {
      callable = PyRef::steal(PyMethod_New(entry.function.get(), self.get()));
      if (!callable)
        return pythonError("binding the warm-up call");
    }
    PyRef result = PyRef::steal(PyObject_Call(callable.get(), args.get(), examples->kwargs.get()));
    if (!result)
      return inputError(module, "--warmup: calling " + entry.qualname +
                                    " on the example inputs "
                                    "(call " +
                                    llvm::Twine(call + 1) + " of " +
                                    llvm::Twine(options.warmupCalls) +
                                    ") raised: " + llvm::toString(pythonError("the warm-up call")));
  }
  return self;
}

} // namespace dync::capture
