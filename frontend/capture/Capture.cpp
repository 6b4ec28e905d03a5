//===- Capture.cpp - Capturing one entry function as a graph --------------===//
#include "frontend/capture/Capture.h"

#include "frontend/bytecode/OpcodeTable.h"
#include "frontend/capture/AutocastState.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DeclaredInts.h"
#include "frontend/capture/DictInstances.h"
#include "frontend/capture/EntryFunction.h"
#include "frontend/capture/GlobalStateGuards.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/TorchConstants.h"
#include "frontend/embedding/PyStrings.h"
#include "ir/Verifier.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

namespace dync::capture {

using python::PyRef;

namespace {

llvm::Error inputError(const python::LoadedModule& module, const llvm::Twine& message) {
  // Located in the module's file, without a line: these are about how the
  // entry is called, not about a line of it.
  CaptureFrame frame;
  frame.location.file = module.displayPath;
  return llvm::make_error<CaptureError>(message.str(), std::vector<CaptureFrame>{frame});
}

/// The object `self` is for a `Class.method` entry: --init, else a
/// module-level instance of exactly that class, else `Class()`.
llvm::Expected<PyRef> findSelf(const python::LoadedModule& module,
                               const python::ResolvedEntry& entry, const CaptureOptions& options) {
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

/// The IR's dtype for a torch.dtype object, if it has one.
std::optional<ir::DType> dtypeOf(PyObject* torch, PyObject* dtype) {
  static const std::pair<const char*, ir::DType> names[] = {
      {"float32", ir::DType::F32},   {"float64", ir::DType::F64},   {"float16", ir::DType::F16},
      {"bfloat16", ir::DType::BF16}, {"int64", ir::DType::I64},     {"int32", ir::DType::I32},
      {"int16", ir::DType::I16},     {"int8", ir::DType::I8},       {"uint8", ir::DType::U8},
      {"bool", ir::DType::Bool},     {"complex64", ir::DType::C64}, {"complex128", ir::DType::C128},
  };
  for (const auto& [name, value] : names) {
    PyRef candidate = PyRef::steal(PyObject_GetAttrString(torch, name));
    PyErr_Clear();
    if (candidate.get() == dtype)
      return value;
  }
  return std::nullopt;
}

/// The entry code's local names in localsplus order: arguments and other
/// locals, then cells that are not arguments, then free variables. This is
/// the frame layout guards read L['name'] from.
std::vector<std::string> localNames(PyCodeObject* code) {
  std::vector<std::string> names;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(code->co_localsplusnames); ++i)
    names.push_back(python::utf8Of(PyTuple_GET_ITEM(code->co_localsplusnames, i)).value_or("?"));
  return names;
}

/// Whether a tensor among \p value, or nested in its tuples and lists,
/// requires grad.
llvm::Expected<bool> resultRequiresGrad(const ValuePtr& value) {
  if (value->kind == ValueKind::Tensor) {
    PyRef requiresGrad = PyRef::steal(PyObject_GetAttrString(value->object.get(), "requires_grad"));
    int flag = requiresGrad ? PyObject_IsTrue(requiresGrad.get()) : -1;
    if (flag < 0)
      return pythonError("reading a result's requires_grad");
    return flag == 1;
  }
  if (value->kind == ValueKind::Tuple || value->kind == ValueKind::List)
    for (const ValuePtr& item : value->items) {
      llvm::Expected<bool> inItem = resultRequiresGrad(item);
      if (!inItem || *inItem)
        return inItem;
    }
  if (value->kind == ValueKind::Dict || value->kind == ValueKind::Instance)
    for (const auto& [key, item] : value->entries) {
      llvm::Expected<bool> inItem = resultRequiresGrad(item);
      if (!inItem || *inItem)
        return inItem;
    }
  if (value->kind == ValueKind::Instance && value->contents)
    return resultRequiresGrad(value->contents);
  return false;
}

llvm::Expected<ir::Argument> resultArgument(Interpreter& interp, ir::Context& ctx,
                                            const ValuePtr& value);

//===----------------------------------------------------------------------===//
// Results that are dicts and objects (ResultStructure)
//===----------------------------------------------------------------------===//

/// A constant as the IR spells it, for a returned value or a dict key: a
/// str, an int that fits in 64 bits, a bool, None or a float (what the
/// rewritten code can load as a constant). Only exact str, int and float:
/// a subclass would come back as its base type.
std::optional<ir::Argument> constantArgument(ir::Context& ctx, const ValuePtr& value) {
  if (!value->isConstant())
    return std::nullopt;
  PyObject* object = value->object.get();
  if (object == Py_None)
    return ir::Argument::none();
  if (PyBool_Check(object))
    return ir::Argument::boolean(object == Py_True);
  if (PyLong_CheckExact(object)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(object, &overflow);
    if (!overflow)
      return ir::Argument::sym(ctx.constant(v));
    return std::nullopt;
  }
  if (PyFloat_CheckExact(object))
    return ir::Argument::floating(PyFloat_AsDouble(object));
  if (PyUnicode_CheckExact(object))
    if (std::optional<std::string> text = python::utf8Of(object))
      return ir::Argument::string(std::move(*text));
  return std::nullopt;
}

/// The module and qualified name a returned value's class is imported by.
llvm::Expected<std::pair<std::string, std::string>> importableName(PyObject* type) {
  PyRef module = PyRef::steal(PyObject_GetAttrString(type, "__module__"));
  PyRef qualname = PyRef::steal(PyObject_GetAttrString(type, "__qualname__"));
  std::optional<std::string> moduleName =
      module && PyUnicode_Check(module.get()) ? python::utf8Of(module.get()) : std::nullopt;
  std::optional<std::string> qualifiedName =
      qualname && PyUnicode_Check(qualname.get()) ? python::utf8Of(qualname.get()) : std::nullopt;
  PyErr_Clear();
  if (!moduleName || moduleName->empty() || !qualifiedName || qualifiedName->empty())
    return captureError("the function returns a " + qualifiedTypeName(type) +
                        ", whose type has no __module__ and __qualname__ to rebuild it by");
  return std::make_pair(std::move(*moduleName), std::move(*qualifiedName));
}

/// A returned dict (its keys, in order, and its values) or an object of a
/// class written in Python made while capturing (its type and instance
/// attributes, in the order they were set): the rewritten code builds the
/// same dict, or an object of the same type with the same attributes, around
/// the graph's tensors.
llvm::Expected<ir::Argument> structuredResult(Interpreter& interp, ir::Context& ctx,
                                              const ValuePtr& value) {
  std::vector<ir::Argument> keys, values;
  std::vector<std::string> names;
  bool isObject = value->kind == ValueKind::Instance;
  if (isObject)
    syncAttributes(value);
  for (const auto& [key, item] : value->entries) {
    if (isObject) {
      std::optional<std::string> name = key->isConstant() && PyUnicode_CheckExact(key->object.get())
                                            ? python::utf8Of(key->object.get())
                                            : std::nullopt;
      if (!name)
        return captureError("the function returns an object with an attribute whose name is "
                            "not a str");
      names.push_back(std::move(*name));
    } else {
      std::optional<ir::Argument> spelled = constantArgument(ctx, key);
      if (!spelled) {
        std::string text = "a " + spelling(key->kind).str() + " value";
        if (isKnown(key)) {
          llvm::Expected<PyRef> real = interp.toPython(key);
          if (real)
            text = reprOf(real->get());
          else
            llvm::consumeError(real.takeError());
        }
        return captureError("the function returns a dict with the key " + text +
                            "; returned dicts may have str, int, bool, float and None keys");
      }
      keys.push_back(std::move(*spelled));
    }
    llvm::Expected<ir::Argument> arg = resultArgument(interp, ctx, item);
    if (!arg)
      return arg.takeError();
    values.push_back(std::move(*arg));
  }
  PyObject* type = value->object.get();
  if (!isObject && (!type || type == reinterpret_cast<PyObject*>(&PyDict_Type)))
    return ir::Argument::dict(std::move(keys), std::move(values));
  llvm::Expected<std::pair<std::string, std::string>> name = importableName(type);
  if (!name)
    return name.takeError();
  if (!isObject)
    return ir::Argument::typedDict(std::move(name->first), std::move(name->second), std::move(keys),
                                   std::move(values));
  if (value->contents) {
    // An object of a class deriving from dict: its items too, spelled as a
    // returned dict's (DictInstances.cpp).
    llvm::Expected<ir::Argument> items = structuredResult(interp, ctx, value->contents);
    if (!items)
      return items.takeError();
    return ir::Argument::object(std::move(name->first), std::move(name->second), std::move(names),
                                std::move(values), items->dictKeys(), items->elements());
  }
  return ir::Argument::object(std::move(name->first), std::move(name->second), std::move(names),
                              std::move(values));
}

/// The graph's results: values, symbolic integers and constants, nested in
/// tuples, lists, dicts and objects as the function returned them.
llvm::Expected<ir::Argument> resultArgument(Interpreter& interp, ir::Context& ctx,
                                            const ValuePtr& value) {
  switch (value->kind) {
  case ValueKind::Tensor: {
    // Strides are part of what a program returns (view() depends on them).
    llvm::Expected<PyRef> laidOut = interp.oracle().eagerLayout(value->object.get());
    if (!laidOut)
      return laidOut.takeError();
    std::optional<ir::ValueRef> ref = interp.oracle().valueOf(laidOut->get());
    if (!ref)
      return captureError("the function returns a tensor the graph does not compute");
    return ir::Argument::value(ref->node, ref->index);
  }
  case ValueKind::SymNum: {
    llvm::Expected<ir::SymExpr> expr = interp.oracle().symExprOf(value->object.get());
    if (!expr)
      return expr.takeError();
    return ir::Argument::sym(*expr);
  }
  case ValueKind::Tuple:
  case ValueKind::List: {
    std::vector<ir::Argument> items;
    for (const ValuePtr& item : value->items) {
      llvm::Expected<ir::Argument> arg = resultArgument(interp, ctx, item);
      if (!arg)
        return arg.takeError();
      items.push_back(std::move(*arg));
    }
    if (value->kind == ValueKind::List)
      return ir::Argument::list(std::move(items));
    // A tuple of another type (a structseq like torch.return_types.max,
    // torch.Size, a named tuple) keeps its type's name, so that the
    // rewritten code returns what the function did.
    PyObject* type = value->object.get();
    if (!type || !PyType_Check(type) || type == reinterpret_cast<PyObject*>(&PyTuple_Type))
      return ir::Argument::tuple(std::move(items));
    PyRef module = PyRef::steal(PyObject_GetAttrString(type, "__module__"));
    PyRef qualname = PyRef::steal(PyObject_GetAttrString(type, "__qualname__"));
    std::optional<std::string> moduleName =
        module && PyUnicode_Check(module.get()) ? python::utf8Of(module.get()) : std::nullopt;
    std::optional<std::string> qualifiedName =
        qualname && PyUnicode_Check(qualname.get()) ? python::utf8Of(qualname.get()) : std::nullopt;
    PyErr_Clear();
    if (!moduleName || moduleName->empty() || !qualifiedName || qualifiedName->empty())
      return captureError("the function returns a " + qualifiedTypeName(type) +
                          ", whose type has no __module__ and __qualname__ to rebuild it by");
    return ir::Argument::typedTuple(std::move(*moduleName), std::move(*qualifiedName),
                                    std::move(items));
  }
  case ValueKind::Dict:
  case ValueKind::Instance:
    return structuredResult(interp, ctx, value);
  case ValueKind::Constant:
    if (std::optional<ir::Argument> constant = constantArgument(ctx, value))
      return *constant;
    // A dtype, device, layout or memory format: the rewritten code loads
    // torch's object of that name.
    if (std::optional<TorchConstantKind> kind =
            value->object ? torchConstantKind(value->object.get(), interp.types()) : std::nullopt)
      if (std::optional<ir::Argument> constant = torchConstantArgument(value->object.get(), *kind))
        return *constant;
    break;
  default:
    break;
  }
  return captureError("the function returns a " + spelling(value->kind) +
                      " value, which a graph cannot return");
}

/// What `--dynamic auto` found: for each dimension it made symbolic, one
/// line saying it stayed dynamic or where the program specialized it, then
/// the `--dynamic` spellings that hold.
llvm::Error reportAutoDynamic(Interpreter& interp, oracle::TensorOracle& oracle,
                              const ir::Graph& graph, llvm::ArrayRef<DynamicSpec> autoSpecs,
                              llvm::ArrayRef<std::string> staticInts,
                              std::vector<std::string>& report) {
  std::vector<std::string> holds;
  report.insert(report.end(), staticInts.begin(), staticInts.end());
  // Int arguments: still a symbol, or the constant the program made it.
  for (const DynamicSpec& spec : autoSpecs) {
    if (!spec.intArgument)
      continue;
    for (const ValuePtr& input : interp.values().intInputs()) {
      if (!input->source || *input->source != *Source::local(spec.argument))
        continue;
      llvm::Expected<ir::SymExpr> value = oracle.symExprOf(input->object.get());
      if (!value)
        return value.takeError();
      std::string where = input->source->str();
      if (value->isConstant()) {
        std::string line = where + " is static: the program specialized it to " +
                           std::to_string(value->constantValue());
        auto finding = llvm::find_if(interp.autoFindings(), [&](const auto& f) {
          return f.source == where && !f.where.empty();
        });
        if (finding != interp.autoFindings().end())
          line += " at " + finding->where +
                  (finding->lineText.empty() ? "" : " (" + finding->lineText + ")");
        else
          line += " (decided inside torch)";
        report.push_back(std::move(line));
        continue;
      }
      std::string text;
      llvm::raw_string_ostream os(text);
      value->print(os);
      std::string range;
      if (const ir::SymbolDecl* decl = graph.findSymbol(text)) {
        llvm::raw_string_ostream rs(range);
        decl->range.print(rs);
      }
      report.push_back(where + " is dynamic: " + text + (range.empty() ? "" : " in " + range) +
                       (text != spec.symbol ? " (equal to " + text + ")" : ""));
      if (value->isSymbol())
        holds.push_back("--dynamic '" + spec.argument + "=" + text + range + "'");
    }
  }
  for (const DynamicSpec& spec : autoSpecs)
    for (const ValuePtr& input : interp.values().tensorInputs()) {
      if (spec.intArgument || !input->source || *input->source != *Source::local(spec.argument))
        continue;
      llvm::Expected<ir::Type> type = oracle.typeOf(input->object.get());
      if (!type)
        return type.takeError();
      ir::SymExpr size = type->sizes()[spec.dim];
      std::string where = "dimension " + std::to_string(spec.dim) + " of " + input->source->str();
      if (size.isConstant()) {
        std::string line = where + " is static: the program specialized it to " +
                           std::to_string(size.constantValue());
        for (const Interpreter::AutoFinding& finding : interp.autoFindings())
          if (finding.source == input->source->str() && finding.dim == spec.dim) {
            line += " at " + finding.where;
            if (!finding.lineText.empty())
              line += " (" + finding.lineText + ")";
            break;
          }
        if (line.find(" at ") == std::string::npos)
          line += " (decided inside torch)";
        report.push_back(std::move(line));
        continue;
      }
      std::string text;
      llvm::raw_string_ostream os(text);
      size.print(os);
      std::string spelling = spec.argument + ":" + std::to_string(spec.dim) + "=" + text;
      if (const ir::SymbolDecl* decl = graph.findSymbol(text)) {
        std::string range;
        llvm::raw_string_ostream rs(range);
        decl->range.print(rs);
        spelling += range;
        report.push_back(where + " is dynamic: " + text + " in " + range +
                         (text != spec.symbol ? " (equal to " + text + ")" : ""));
      } else {
        report.push_back(where + " is dynamic: " + text);
      }
      if (size.isSymbol())
        holds.push_back("--dynamic '" + spelling + "'");
    }
  std::string line = "these hold:";
  for (const std::string& spelling : holds)
    line += " " + spelling;
  report.push_back(holds.empty() ? "no dimension stays dynamic" : line);
  return llvm::Error::success();
}

/// One attempt at capturing \p entry into the empty \p graph; what it
/// ran goes to \p functionsRun.
/// Under `--dynamic auto`, \p autoInts says whether int arguments start
/// symbolic too: set when one did; \p staticIntsBecause, when not empty,
/// keeps them constants (a capture with them symbolic failed so).
llvm::Error captureOnce(const python::LoadedModule& module, const python::ResolvedEntry& entry,
                        const CaptureOptions& options, ir::Graph& graph,
                        const OracleFactory& makeOracle, std::vector<FunctionRun>* functionsRun,
                        bool* autoInts, const std::string& staticIntsBecause) {
  llvm::Expected<bytecode::OpcodeTable> opcodes = bytecode::OpcodeTable::fromInterpreter();
  if (!opcodes)
    return opcodes.takeError();
  llvm::Expected<std::unique_ptr<oracle::TensorOracle>> oracle = makeOracle(graph);
  if (!oracle)
    return oracle.takeError();
  GuardSet recorded;
  llvm::Expected<std::unique_ptr<Interpreter>> created =
      Interpreter::create(**oracle, recorded, *opcodes, PyModule_GetDict(module.module.get()));
  if (!created)
    return created.takeError();
  Interpreter& interp = **created;
  interp.setCompilingAnswer(options.assumeCompiling);
  // Every call records the user's line capture is executing when it is made;
  // one made before the entry runs, its `def` line.
  PyCodeObject* entryCode = entry.codeObject();
  ir::Location definition({{python::utf8Of(entryCode->co_filename).value_or(""),
                            static_cast<unsigned>(std::max(entryCode->co_firstlineno, 0)), 0}});
  (*oracle)->builder().setLocationSource([&interp, definition] {
    ir::Location location = interp.nodeLocation();
    return location.empty() ? definition : location;
  });

  // The parameters the example arguments bind to.
  PyCodeObject* code = entry.codeObject();
  std::vector<std::string> parameters;
  for (int i = 0; i < code->co_argcount; ++i)
    parameters.push_back(
        python::utf8Of(PyTuple_GET_ITEM(code->co_localsplusnames, i)).value_or("?"));
  PyRef self;
  switch (entry.kind) {
  case python::EntryKind::Method: {
    llvm::Expected<PyRef> found = findSelf(module, entry, options);
    if (!found)
      return found.takeError();
    self = *found;
    break;
  }
  case python::EntryKind::BoundMethod:
  case python::EntryKind::ClassMethod:
    self = entry.self;
    break;
  default:
    break;
  }
  // A decorator's wrapper (`def wrapper(*args, **kwargs)`, torch.no_grad()'s)
  // receives `self` in its *args, as every positional argument.
  bool selfInVarargs = self && parameters.empty() && (code->co_flags & CO_VARARGS);
  if (self && parameters.empty() && !selfInVarargs)
    return inputError(module, entry.qualname + " takes no 'self' parameter");
  size_t firstExample = self && !selfInVarargs ? 1 : 0;
  llvm::Expected<ExampleCall> examples =
      exampleArguments(module, options, parameters.size() - firstExample);
  if (!examples)
    return examples.takeError();
  PyObject* exampleArgs = examples->args.get();
  PyObject* exampleKwargs = examples->kwargs.get();
  size_t exampleCount = static_cast<size_t>(PyTuple_GET_SIZE(exampleArgs));
  if (firstExample + exampleCount > parameters.size() && !(code->co_flags & CO_VARARGS))
    return inputError(module, "the example inputs are " + llvm::Twine(exampleCount) +
                                  " arguments, but " + entry.qualname + " takes " +
                                  llvm::Twine(parameters.size() - firstExample));

  // Where each example argument binds, as CPython binds the call
  // f(*examples, **keywords): its name (for --dynamic), its source in the
  // frame and its object. Positional arguments past the parameters land in
  // *args, keywords that name no parameter in **kwargs.
  struct ExampleBinding {
    std::string name;
    SourcePtr source;
    PyObject* object;
    bool keyword;
  };
  std::vector<ExampleBinding> bindings;
  size_t kwOnly = static_cast<size_t>(code->co_kwonlyargcount);
  bool hasVarargs = code->co_flags & CO_VARARGS, hasVarkw = code->co_flags & CO_VARKEYWORDS;
  auto localName = [&](size_t i) {
    return python::utf8Of(PyTuple_GET_ITEM(code->co_localsplusnames, i)).value_or("?");
  };
  std::string varargsName = hasVarargs ? localName(parameters.size() + kwOnly) : "";
  std::string varkwName =
      hasVarkw ? localName(parameters.size() + kwOnly + (hasVarargs ? 1 : 0)) : "";
  for (size_t i = 0; i < exampleCount; ++i) {
    PyObject* value = PyTuple_GET_ITEM(exampleArgs, i);
    size_t parameter = firstExample + i;
    if (parameter < parameters.size()) {
      bindings.push_back(
          {parameters[parameter], Source::local(parameters[parameter]), value, false});
    } else {
      // A decorator's wrapper holds `self` first in *args.
      size_t extra = parameter - parameters.size() + (selfInVarargs ? 1 : 0);
      bindings.push_back({varargsName + "_" + std::to_string(extra),
                          Source::index(Source::local(varargsName), static_cast<int64_t>(extra)),
                          value, false});
    }
  }
  std::vector<std::string> extraKeywords;
  {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(exampleKwargs, &pos, &key, &value)) {
      std::string name = python::utf8Of(key).value_or("?");
      size_t index = 0;
      while (index < parameters.size() + kwOnly && localName(index) != name)
        ++index;
      bool named = index < parameters.size() + kwOnly;
      if (named && index < firstExample)
        return inputError(module, examples->kwargsName + "() gives '" + name + "', which is " +
                                      entry.qualname + "'s 'self'");
      if (named && index < static_cast<size_t>(code->co_posonlyargcount))
        return inputError(module, examples->kwargsName + "() gives '" + name +
                                      "', a positional-only parameter of " + entry.qualname +
                                      "; give it in " + examples->argsName + "()");
      if (named && index < firstExample + exampleCount)
        return inputError(module, examples->kwargsName + "() gives '" + name + "', which " +
                                      examples->argsName + "() already gives as argument " +
                                      llvm::Twine(index - firstExample));
      if (!named && !hasVarkw)
        return inputError(module, examples->kwargsName + "() gives '" + name +
                                      "', which is not a parameter of " + entry.qualname);
      if (named) {
        bindings.push_back({name, Source::local(name), value, true});
      } else {
        bindings.push_back({name, Source::key(Source::local(varkwName), name), value, true});
        extraKeywords.push_back(name);
      }
    }
  }
  // A parameter without a default that the examples leave out: say where
  // to give it, rather than letting the call fail.
  PyObject* defaults = PyFunction_Check(entry.function.get())
                           ? PyFunction_GetDefaults(entry.function.get())
                           : nullptr;
  PyObject* kwDefaults = PyFunction_Check(entry.function.get())
                             ? PyFunction_GetKwDefaults(entry.function.get())
                             : nullptr;
  size_t defaultCount = defaults ? static_cast<size_t>(PyTuple_GET_SIZE(defaults)) : 0;
  auto givenByExample = [&](const std::string& name) {
    return llvm::any_of(bindings, [&](const ExampleBinding& b) { return b.name == name; });
  };
  if (PyFunction_Check(entry.function.get())) {
    for (size_t i = firstExample; i < parameters.size() + kwOnly; ++i) {
      std::string name = localName(i);
      bool hasDefault = i < parameters.size()
                            ? i + defaultCount >= parameters.size()
                            : kwDefaults && PyDict_GetItemString(kwDefaults, name.c_str());
      if (!hasDefault && !givenByExample(name))
        return inputError(
            module, entry.qualname + "() needs the " +
                        (i < parameters.size() ? "argument" : "keyword-only argument") + " '" +
                        name + "', which the examples do not give: return it " +
                        (i < parameters.size() && i >= static_cast<size_t>(code->co_posonlyargcount)
                             ? "from " + examples->argsName + "() or " + examples->kwargsName + "()"
                         : i < parameters.size() ? "from " + examples->argsName + "()"
                                                 : "from " + examples->kwargsName + "()"));
    }
    PyErr_Clear();
  }

  // --dynamic auto: every dimension of every tensor argument, named
  // ARG_DIM, without a range; specializations are noted, not errors.
  std::vector<DynamicSpec> dynamic = options.dynamic;
  std::vector<DynamicSpec> autoSpecs;
  if (options.autoDynamic)
    for (const ExampleBinding& binding : bindings) {
      if (PyObject_IsInstance(binding.object, interp.types().tensor.get()) != 1)
        continue;
      PyRef shape = PyRef::steal(PyObject_GetAttrString(binding.object, "shape"));
      Py_ssize_t rank = shape ? PyObject_Length(shape.get()) : -1;
      if (rank < 0)
        return pythonError("reading the shape of '" + binding.name + "'");
      for (Py_ssize_t d = 0; d < rank; ++d) {
        if (llvm::any_of(dynamic, [&](const DynamicSpec& s) {
              return s.argument == binding.name && s.path.empty() &&
                     s.dim == static_cast<unsigned>(d);
            }))
          continue;
        if (PyLong_AsLongLong(PyTuple_GET_ITEM(shape.get(), d)) < 2)
          continue; // torch specializes 0 and 1
        DynamicSpec spec;
        spec.argument = binding.name;
        spec.dim = static_cast<unsigned>(d);
        spec.symbol = binding.name + "_" + std::to_string(d);
        spec.text = binding.name + ":" + std::to_string(d) + "=" + spec.symbol;
        autoSpecs.push_back(spec);
        dynamic.push_back(std::move(spec));
      }
    }
  // --- Int arguments under --dynamic auto: each exact int of 2 or more
  // not declared otherwise, named after its argument ---
  std::vector<std::string> staticInts;
  if (options.autoDynamic)
    for (const ExampleBinding& binding : bindings) {
      if (!PyLong_CheckExact(binding.object) ||
          llvm::any_of(dynamic, [&](const DynamicSpec& s) { return s.argument == binding.name; }))
        continue;
      int overflow = 0;
      long long example = PyLong_AsLongLongAndOverflow(binding.object, &overflow);
      if (overflow || example < 2)
        continue; // torch specializes 0 and 1; a negative int is no size
      if (!staticIntsBecause.empty()) {
        staticInts.push_back(binding.source->str() +
                             " is static: with it symbolic, capture "
                             "stopped: " +
                             staticIntsBecause);
        continue;
      }
      DynamicSpec spec;
      spec.argument = binding.name;
      spec.intArgument = true;
      spec.symbol = binding.name;
      while (llvm::any_of(dynamic, [&](const DynamicSpec& s) { return s.symbol == spec.symbol; }))
        spec.symbol += "_int";
      spec.text = binding.name + "=" + spec.symbol;
      if (autoInts)
        *autoInts = true;
      autoSpecs.push_back(spec);
      dynamic.push_back(std::move(spec));
    }
  // --- end of int arguments under --dynamic auto ---
  auto isAuto = [&](const DynamicSpec& spec) {
    return llvm::any_of(autoSpecs, [&](const DynamicSpec& a) { return a.text == spec.text; });
  };

  // --dynamic names arguments, positional or keyword; check them against
  // the examples first.
  // --- Ints held on self (`--dynamic self.window=w[1,32]`) ---
  // `self` is no example argument, but an int the method reads from its
  // instance __dict__ is declared by its path as one inside an argument.
  std::optional<ExampleBinding> selfBinding;
  if (self && firstExample == 1)
    selfBinding = ExampleBinding{parameters[0], Source::local(parameters[0]), self.get(), false};
  // --- end of ints held on self ---
  for (const DynamicSpec& spec : dynamic) {
    auto it =
        llvm::find_if(bindings, [&](const ExampleBinding& b) { return b.name == spec.argument; });
    // --- Ints held on self ---
    if (it == bindings.end() && selfBinding && spec.argument == selfBinding->name) {
      if (spec.path.empty())
        return inputError(module, "--dynamic '" + spec.text + "': '" + spec.argument +
                                      "' is the object " + entry.qualname +
                                      " runs on, not an int or a tensor: declare an int it "
                                      "holds by its path, as in --dynamic '" +
                                      spec.argument + ".window=w[1,32]'");
      if (llvm::Error error =
              declareIntInside(interp, spec, selfBinding->object, selfBinding->source,
                               options.sizeHints, options.sizeHints.empty(), options.splitRanges))
        return inputError(module, llvm::toString(std::move(error)));
      continue;
    }
    // --- end of ints held on self ---
    if (it == bindings.end())
      return inputError(module, "--dynamic '" + spec.text + "' names '" + spec.argument +
                                    "', which is not an example argument of " + entry.qualname);
    PyObject* value = it->object;
    // --- Ints inside arguments (`--dynamic cfg.n=n[1,64]`) ---
    if (!spec.path.empty()) {
      if (llvm::Error error = declareIntInside(interp, spec, value, it->source, options.sizeHints,
                                               options.sizeHints.empty(), options.splitRanges))
        return inputError(module, llvm::toString(std::move(error)));
      continue;
    }
    // --- Symbolic int arguments (`--dynamic n=n[1,64]`) ---
    bool isTensor = PyObject_IsInstance(value, interp.types().tensor.get()) == 1;
    if (spec.intArgument || (!isTensor && PyLong_Check(value) && !PyBool_Check(value))) {
      if (isTensor)
        return inputError(module, "--dynamic '" + spec.text + "': argument '" + spec.argument +
                                      "' is a tensor: name one of its dimensions, as in "
                                      "--dynamic '" +
                                      spec.argument + ":0=" + spec.symbol + "'");
      if (!spec.intArgument)
        return inputError(module, "--dynamic '" + spec.text + "': argument '" + spec.argument +
                                      "' is an int, which has no dimensions: declare it as "
                                      "--dynamic '" +
                                      spec.argument + "=" + spec.symbol + "'");
      if (!PyLong_CheckExact(value))
        return inputError(module, "--dynamic '" + spec.text + "': argument '" + spec.argument +
                                      "' is a " + Py_TYPE(value)->tp_name +
                                      ", not an int; only an int argument can be a symbolic int");
      int overflow = 0;
      long long example = PyLong_AsLongLongAndOverflow(value, &overflow);
      if (overflow)
        return inputError(module, "--dynamic '" + spec.text + "': the example's '" + spec.argument +
                                      "' does not fit in 64 bits");
      if (auto hint = options.sizeHints.find(spec.symbol); hint != options.sizeHints.end())
        example = hint->second;
      if (!spec.range.contains(example))
        return inputError(module, "--dynamic '" + spec.text + "': the example's '" + spec.argument +
                                      "' is " + llvm::Twine(example) + ", outside the range");
      continue;
    }
    // --- end of symbolic int arguments ---
    if (!isTensor)
      return inputError(module, "--dynamic '" + spec.text + "': argument '" + spec.argument +
                                    "' is not a tensor");
    PyRef shape = PyRef::steal(PyObject_GetAttrString(value, "shape"));
    Py_ssize_t rank = shape ? PyObject_Length(shape.get()) : -1;
    if (rank < 0)
      return pythonError("reading the shape of '" + spec.argument + "'");
    if (spec.dim >= static_cast<unsigned>(rank))
      return inputError(module, "--dynamic '" + spec.text + "': '" + spec.argument + "' has " +
                                    llvm::Twine(rank) + " dimensions");
    long long size = PyLong_AsLongLong(PyTuple_GET_ITEM(shape.get(), spec.dim));
    if (auto hint = options.sizeHints.find(spec.symbol); hint != options.sizeHints.end())
      size = hint->second;
    if (!spec.range.contains(size))
      return inputError(module, "--dynamic '" + spec.text + "': the example's size " +
                                    llvm::Twine(size) + " of '" + spec.argument + "' dimension " +
                                    llvm::Twine(spec.dim) + " is outside the range");
  }

  // The frame's arguments, each with its source.
  std::vector<ValuePtr> args;
  KeywordArgs keywords;
  if (self) {
    SourcePtr selfSource =
        selfInVarargs ? Source::index(Source::local(varargsName), 0) : Source::local(parameters[0]);
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
    args.push_back(*value);
  }
  for (const ExampleBinding& binding : bindings) {
    llvm::Expected<ValuePtr> arg = [&]() -> llvm::Expected<ValuePtr> {
      // --- Symbolic int arguments: a SymInt, the graph's int input ---
      auto intSpec = llvm::find_if(dynamic, [&](const DynamicSpec& spec) {
        return spec.intArgument && spec.path.empty() && spec.argument == binding.name;
      });
      if (intSpec != dynamic.end()) {
        std::optional<int64_t> hint;
        if (auto it = options.sizeHints.find(intSpec->symbol); it != options.sizeHints.end())
          hint = it->second;
        // As for a dimension: capturing at the example's own value lets
        // torch pin the symbol, which --dynamic auto reports.
        if (isAuto(*intSpec))
          hint = PyLong_AsLongLong(binding.object);
        // Torch makes sizes 0 and 1 constants: so does this specialization.
        if (hint && (*hint == 0 || *hint == 1)) {
          PyRef constant = PyRef::steal(PyLong_FromLongLong(*hint));
          if (!constant)
            return pythonError("making the int " + llvm::Twine(*hint));
          return interp.values().wrapReal(constant.get(), binding.source);
        }
        llvm::Expected<ValuePtr> symInt = interp.values().intInput(
            binding.object, binding.source, {0, intSpec->symbol, intSpec->range, hint});
        if (symInt && options.sizeHints.empty()) {
          Interpreter::DynamicWatch watch{
              (*symInt)->object, 0,     intSpec->text,      binding.source->str(),
              intSpec->range,    false, options.splitRanges};
          watch.intArgument = true;
          watch.noteOnly = isAuto(*intSpec);
          interp.watchDynamic(std::move(watch));
        }
        return symInt;
      }
      // --- end of symbolic int arguments ---
      if (PyObject_IsInstance(binding.object, interp.types().tensor.get()) == 1) {
        std::vector<oracle::DynamicDim> dims;
        for (const DynamicSpec& spec : dynamic)
          if (spec.argument == binding.name && spec.path.empty()) {
            std::optional<int64_t> hint;
            if (auto it = options.sizeHints.find(spec.symbol); it != options.sizeHints.end())
              hint = it->second;
            // Capturing at the example's own size lets torch pin the
            // symbol, which --dynamic auto reports rather than refuses.
            if (isAuto(spec)) {
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
                                   spec.range, isAuto(spec), options.splitRanges});
        return tensor;
      }
      return interp.values().wrapReal(binding.object, binding.source);
    }();
    // Nothing has run yet: the error is about the example, placed at the
    // module.
    if (!arg)
      return inputError(module, llvm::toString(arg.takeError()));
    if (binding.keyword)
      keywords.emplace_back(binding.name, *arg);
    else
      args.push_back(*arg);
  }
  // *args and **kwargs are what the call left over: their length and keys
  // decide what the program iterates and finds there, so a call with other
  // extra arguments misses.
  if (hasVarargs) {
    recorded.add(typeGuard(Source::local(varargsName), reinterpret_cast<PyObject*>(&PyTuple_Type)));
    recorded.add(
        Guard::lengthIs(Source::local(varargsName),
                        static_cast<int64_t>((selfInVarargs ? 1 : 0) +
                                             (firstExample + exampleCount > parameters.size()
                                                  ? firstExample + exampleCount - parameters.size()
                                                  : 0))));
  }
  if (hasVarkw) {
    recorded.add(typeGuard(Source::local(varkwName), reinterpret_cast<PyObject*>(&PyDict_Type)));
    recorded.add(Guard::keysAre(Source::local(varkwName), extraKeywords));
  }
  // Parameters the examples leave to their defaults are read from the frame
  // like the others, so that they are guarded: a call that passes a mask
  // must not run a graph captured without one.
  if (PyFunction_Check(entry.function.get())) {
    for (size_t i = firstExample + exampleCount; i < parameters.size(); ++i) {
      if (i + defaultCount < parameters.size() || givenByExample(parameters[i]))
        continue;
      llvm::Expected<ValuePtr> arg =
          interp.values().wrapReal(PyTuple_GET_ITEM(defaults, i + defaultCount - parameters.size()),
                                   Source::local(parameters[i]));
      if (!arg)
        return arg.takeError();
      // Positional-only parameters cannot be passed by name; they come
      // first, so the ones left to their defaults follow the examples.
      if (i < static_cast<size_t>(code->co_posonlyargcount))
        args.push_back(*arg);
      else
        keywords.emplace_back(parameters[i], *arg);
    }
    for (size_t i = 0; kwDefaults && i < kwOnly; ++i) {
      PyObject* name = PyTuple_GET_ITEM(code->co_localsplusnames, code->co_argcount + i);
      std::string text = python::utf8Of(name).value_or("?");
      PyObject* value = PyDict_GetItemWithError(kwDefaults, name);
      if (!value || givenByExample(text))
        continue;
      llvm::Expected<ValuePtr> arg = interp.values().wrapReal(value, Source::local(text));
      if (!arg)
        return arg.takeError();
      keywords.emplace_back(text, *arg);
    }
    PyErr_Clear();
  }

  // The entry's own *args tuple and **kwargs dict hold what the call passed
  // beyond its parameters: a call with more arguments, or other keywords (a
  // decorator's wrapper pops one), must miss rather than run this graph.
  if (code->co_flags & CO_VARARGS) {
    SourcePtr source = Source::local(varargsName);
    size_t positional = static_cast<size_t>(code->co_argcount);
    recorded.add(typeGuard(source, reinterpret_cast<PyObject*>(&PyTuple_Type)));
    recorded.add(Guard::lengthIs(
        source, static_cast<int64_t>(args.size() > positional ? args.size() - positional : 0)));
  }
  if (code->co_flags & CO_VARKEYWORDS) {
    size_t slot = static_cast<size_t>(code->co_argcount + code->co_kwonlyargcount) +
                  ((code->co_flags & CO_VARARGS) ? 1 : 0);
    SourcePtr source = Source::local(
        python::utf8Of(PyTuple_GET_ITEM(code->co_localsplusnames, slot)).value_or("kwargs"));
    std::vector<std::string> extra;
    for (const auto& [name, value] : keywords) {
      bool named = false;
      for (int i = 0; i < code->co_argcount + code->co_kwonlyargcount; ++i)
        named |= python::utf8Of(PyTuple_GET_ITEM(code->co_localsplusnames, i)) == name;
      if (!named)
        extra.push_back(name);
    }
    recorded.add(typeGuard(source, reinterpret_cast<PyObject*>(&PyDict_Type)));
    recorded.add(Guard::keysAre(source, extra));
  }

  // Grad-mode blocks switch the mode for real while capture is inside them;
  // whatever the program leaves it at, it is restored, and the guards name
  // the mode capture started in.
  PyObject* torch = interp.types().torch.get();
  PyRef grad = PyRef::steal(PyObject_CallMethod(torch, "is_grad_enabled", nullptr));
  if (!grad)
    return pythonError("reading torch's grad mode");
  auto restoreGrad = llvm::make_scope_exit([&] {
    PyRef restored = PyRef::steal(PyObject_CallMethod(torch, "set_grad_enabled", "O", grad.get()));
    if (!restored)
      PyErr_Clear();
  });
  // Autocast regions switch autocast for real; one the run does not leave
  // (it stops inside) is left by this (AutocastState.h).
  llvm::Expected<AutocastState> autocast = AutocastState::read(torch);
  if (!autocast)
    return autocast.takeError();
  auto restoreAutocast = llvm::make_scope_exit([&] { autocast->restore(torch); });
  // Global state: what the graph's calls compute depends on it (see
  // GlobalStateGuards.h); read before the run, as grad mode is.
  llvm::Expected<std::vector<Guard>> globalState = readGlobalStateGuards(torch);
  if (!globalState)
    return globalState.takeError();

  // Run it.
  // Its closure cells are read through the frame's free variables.
  llvm::Expected<ValuePtr> function = wrapEntryFunction(interp.values(), entry.function.get());
  if (!function)
    return function.takeError();
  llvm::Expected<ValuePtr> result = interp.call(*function, std::move(args), std::move(keywords));
  if (!result)
    return result.takeError();
  if (llvm::Error error = interp.checkContextVarsRestored())
    return error;

  if (options.noAutograd)
    if (llvm::Expected<bool> recorded = resultRequiresGrad(*result); !recorded || *recorded)
      return recorded ? captureError("the function returns a tensor that requires grad, which "
                                     "a graph that records no autograd cannot give")
                      : recorded.takeError();

  // The graph returns exactly what the function returns, one value, so the
  // rewritten bytecode can rebuild it: `return x` and `return (x,)` differ.
  llvm::Expected<ir::Argument> output = resultArgument(interp, graph.context(), *result);
  if (!output)
    return inputError(module, entry.qualname + ": " + llvm::toString(output.takeError()));
  // --- Side effects on the caller's objects (SideEffects.cpp) ---
  // What the function leaves on objects that existed before the call, in
  // the order it made the changes: the rewritten code replays them after
  // the graph, each value rebuilt as a returned one is.
  std::vector<std::pair<ir::SideEffect, ir::Argument>> sideEffects;
  for (const Interpreter::PendingSideEffect& pending : interp.pendingSideEffects()) {
    llvm::Expected<ir::Argument> value = resultArgument(interp, graph.context(), pending.value);
    if (!value)
      return captureError(
          "the function leaves " + pending.effect.target +
          (pending.effect.kind == ir::SideEffect::Kind::Set ? " set to" : " holding") +
          " a value the rewritten code cannot rebuild after the graph (changed at " +
          pending.where + "): " + llvm::toString(value.takeError()));
    sideEffects.emplace_back(pending.effect, std::move(*value));
  }
  // --- end of side effects ---
  if (llvm::Error error = (*oracle)->finalize())
    return captureError("finishing the shape environment: " + llvm::toString(std::move(error)));
  ir::Node* outputNode = (*oracle)->builder().setOutput(std::move(*output));
  for (auto& [effect, value] : sideEffects)
    outputNode->addSideEffect(std::move(effect), std::move(value));
  // Objects the program changes must not be, at a call, what another source
  // reached (SourceIdentity.cpp).
  if (llvm::Error error = interp.values().guardChangedObjectsDistinct(graph))
    return error;

  // A dimension declared dynamic must still be a symbol, over at least the
  // declared range: otherwise the program decided something about it. A
  // specialization serves only part of the range.
  for (const DynamicSpec& spec :
       options.sizeHints.empty() && !options.autoDynamic ? dynamic : std::vector<DynamicSpec>{}) {
    auto binding =
        llvm::find_if(bindings, [&](const ExampleBinding& b) { return b.name == spec.argument; });
    for (const ValuePtr& input : interp.values().tensorInputs()) {
      if (!input->source || binding == bindings.end() || *input->source != *binding->source)
        continue;
      llvm::Expected<ir::Type> type = (*oracle)->typeOf(input->object.get());
      if (!type)
        return type.takeError();
      ir::SymExpr size = type->sizes()[spec.dim];
      if (size.isConstant())
        return inputError(module, "--dynamic '" + spec.text +
                                      "' contradicts the program: it "
                                      "specialized dimension " +
                                      llvm::Twine(spec.dim) + " of '" + spec.argument +
                                      "' to the constant " + llvm::Twine(size.constantValue()));
      std::string symbol;
      llvm::raw_string_ostream os(symbol);
      size.print(os);
      if (const ir::SymbolDecl* decl = graph.findSymbol(symbol)) {
        // Torch specializes sizes 0 and 1 (a symbolic size is at least 2),
        // so a requested lower bound below 2 is met by 2.
        int64_t wantedLo = std::max<int64_t>(spec.range.lo.value_or(2), 2);
        bool narrower = (decl->range.lo && *decl->range.lo > wantedLo) ||
                        (spec.range.hi && decl->range.hi && *decl->range.hi < *spec.range.hi);
        // The caller splits a range cut at a boundary into graphs.
        if (narrower && (spec.range.lo || spec.range.hi) && !options.splitRanges) {
          std::string range;
          llvm::raw_string_ostream rs(range);
          decl->range.print(rs);
          return inputError(module, "--dynamic '" + spec.text +
                                        "' contradicts the program: it holds only for " + symbol +
                                        " in " + range);
        }
      }
    }
  }

  // --- Symbolic int arguments: still a symbol, over the declared range ---
  if (options.sizeHints.empty())
    for (const ValuePtr& input : interp.values().intInputs()) {
      auto spec = llvm::find_if(dynamic, [&](const DynamicSpec& s) {
        auto binding =
            llvm::find_if(bindings, [&](const ExampleBinding& b) { return b.name == s.argument; });
        const ExampleBinding* found = binding != bindings.end() ? &*binding : nullptr;
        if (!found && selfBinding && s.argument == selfBinding->name)
          found = &*selfBinding;
        if (!s.intArgument || !found)
          return false;
        SourcePtr declared = sourceOf(s, found->source);
        return declared && *declared == *input->source;
      });
      if (spec == dynamic.end() || isAuto(*spec))
        continue;
      llvm::Expected<ir::SymExpr> value = (*oracle)->symExprOf(input->object.get());
      if (!value)
        return value.takeError();
      if (value->isConstant())
        return inputError(module, "--dynamic '" + spec->text +
                                      "' contradicts the program: it specialized '" +
                                      spec->argument + spec->path + "' to the constant " +
                                      llvm::Twine(value->constantValue()));
      const ir::SymbolDecl* decl =
          value->isSymbol() ? graph.findSymbol(value->symbolName()) : nullptr;
      if (!decl || options.splitRanges || (!spec->range.lo && !spec->range.hi))
        continue;
      int64_t wantedLo = std::max<int64_t>(spec->range.lo.value_or(2), 2);
      if ((decl->range.lo && *decl->range.lo > wantedLo) ||
          (spec->range.hi && decl->range.hi && *decl->range.hi < *spec->range.hi)) {
        std::string range;
        llvm::raw_string_ostream rs(range);
        decl->range.print(rs);
        return inputError(module, "--dynamic '" + spec->text +
                                      "' contradicts the program: it holds only for " +
                                      value->symbolName() + " in " + range);
      }
    }
  // An int declared inside an argument that the program never read from
  // there would stay whatever the graph assumed: say so.
  for (const ValueBuilder::DeclaredInt& declared : interp.values().declaredInts())
    if (!declared.value && options.sizeHints.empty())
      return inputError(module, "--dynamic: " + entry.qualname + " never reads " +
                                    declared.source->str() +
                                    " (an attribute of an object's instance __dict__ or an item "
                                    "of an exact list, tuple or dict), so it cannot be a "
                                    "symbol; declare an int the program reads");
  // --- end of symbolic int arguments ---

  if (options.autoDynamic && options.autoReport)
    if (llvm::Error error =
            reportAutoDynamic(interp, **oracle, graph, autoSpecs, staticInts, *options.autoReport))
      return error;

  // Guards: tensor inputs first, then what the program's run assumed, then
  // global state and versions.
  GuardSet& guards = graph.guards();
  guards.localNames() = localNames(code);
  for (const ValuePtr& input : interp.values().tensorInputs()) {
    llvm::Expected<ir::Type> type = (*oracle)->typeOf(input->object.get());
    if (!type)
      return type.takeError();
    guards.add(Guard::tensor(input->source, std::move(*type)));
  }
  // Symbolic int arguments: an exact int, binding its symbol.
  for (const ValuePtr& input : interp.values().intInputs()) {
    llvm::Expected<ir::SymExpr> value = (*oracle)->symExprOf(input->object.get());
    if (!value)
      return value.takeError();
    guards.add(Guard::symInt(input->source, *value));
  }
  for (const Guard& guard : recorded.guards())
    guards.add(guard);
  PyRef dtype = PyRef::steal(PyObject_CallMethod(torch, "get_default_dtype", nullptr));
  PyRef version = PyRef::steal(PyObject_GetAttrString(torch, "__version__"));
  if (!dtype || !version)
    return pythonError("reading torch's global state");
  std::optional<ir::DType> defaultDType = dtypeOf(torch, dtype.get());
  if (!defaultDType)
    return captureError("torch's default dtype " + reprOf(dtype.get()) +
                        " has no spelling in the graph IR");
  guards.add(Guard::gradMode(grad.get() == Py_True));
  guards.add(Guard::defaultDType(*defaultDType));
  for (Guard& guard : *globalState)
    guards.add(std::move(guard));
  guards.add(Guard::versionIs("torch", python::strOf(version.get())));
  guards.add(Guard::versionIs("python", llvm::StringRef(Py_GetVersion()).split(' ').first.str()));

  if (llvm::Error error = ir::verify(graph))
    return captureError("the captured graph does not verify: " + llvm::toString(std::move(error)));
  if (functionsRun)
    for (const Interpreter::RanFunction& ran : interp.functionsRun())
      functionsRun->push_back({ran.code, ran.globals, ran.qualname});
  return llvm::Error::success();
}

/// Empties \p graph of what a failed attempt left in it.
void clearGraph(ir::Graph& graph) {
  while (!graph.nodes().empty())
    graph.erase(&graph.nodes().back());
  graph.symbols().clear();
  graph.relations().clear();
  graph.guards() = GuardSet();
}

/// \p error's reason and the line of the entry's file capture stopped at,
/// for a note.
std::string whyCaptureStopped(llvm::Error error, const python::ResolvedEntry& entry) {
  std::string why;
  std::string file = python::utf8Of(entry.codeObject()->co_filename).value_or("");
  llvm::handleAllErrors(
      std::move(error),
      [&](const CaptureError& stopped) {
        why = stopped.reason();
        const CaptureFrame* chosen = nullptr;
        for (const CaptureFrame& frame : stopped.stack())
          if (frame.location.line > 0 && (!chosen || frame.location.file == file)) {
            chosen = &frame;
            if (frame.location.file == file)
              break;
          }
        if (chosen)
          why += " at " + llvm::sys::path::filename(chosen->location.file).str() + ":" +
                 std::to_string(chosen->location.line) + " (" +
                 llvm::StringRef(chosen->location.lineText).trim().str() + ")";
      },
      [&](const llvm::ErrorInfoBase& other) { why = other.message(); });
  why = llvm::StringRef(why).split('\n').first.str();
  return why.empty() ? "an error" : why;
}

} // namespace

llvm::Error captureGraph(const python::LoadedModule& module, const python::ResolvedEntry& entry,
                         const CaptureOptions& options, ir::Graph& graph,
                         const OracleFactory& makeOracle, std::vector<FunctionRun>* functionsRun) {
  // A layout the fusion decompositions chose (channels-last convolutions)
  // is speculation: when the program observes it (its strides, view(),
  // aliasing), the attempt stops, the oracle notes the choices behind what
  // was observed, and capture runs again with those converted back to eager
  // mode's layout. Each retry converts at least one more choice, so this
  // ends; the last attempt's graph is the one kept
  // (frontend/oracle/embedded/oracle.py, "Layout choices").
  //
  // Under --dynamic auto, a capture that fails with int arguments symbolic
  // (`range(n)`, an int the program needs as a Python number) is run again
  // with them constants, as torch would have specialized them, and the
  // report says why.
  std::string staticIntsBecause;
  while (true) {
    if (functionsRun)
      functionsRun->clear();
    bool autoInts = false;
    llvm::Error error = captureOnce(module, entry, options, graph, makeOracle, functionsRun,
                                    &autoInts, staticIntsBecause);
    if (!error)
      return error;
    llvm::Expected<bool> retry = oracle::takeLayoutRetry();
    if (!retry)
      return llvm::joinErrors(std::move(error), retry.takeError());
    if (!*retry && !(autoInts && staticIntsBecause.empty()))
      return error;
    if (!*retry) {
      staticIntsBecause = whyCaptureStopped(std::move(error), entry);
    } else {
      llvm::consumeError(std::move(error));
    }
    clearGraph(graph);
  }
}

} // namespace dync::capture
