//===- Capture.cpp - Capturing one entry function as a graph --------------===//
#include "frontend/capture/Capture.h"
#include "frontend/capture/CapturePhases.h"

#include "frontend/bytecode/OpcodeTable.h"
#include "frontend/capture/AutocastState.h"
#include "frontend/capture/AutogradGrad.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DataBranches.h"
#include "frontend/capture/DeclaredInts.h"
#include "frontend/capture/DictInstances.h"
#include "frontend/capture/EntryFunction.h"
#include "frontend/capture/GlobalStateGuards.h"
#include "frontend/capture/GuardsKeepApart.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/ModuleHooks.h"
#include "frontend/capture/NamedObjects.h"
#include "frontend/capture/NumpyConstants.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/ReturnedSizes.h"
#include "frontend/capture/TorchConstants.h"
#include "frontend/embedding/PyStrings.h"
#include "ir/Verifier.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Path.h"

namespace dync::capture {

using python::PyRef;

namespace {

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
llvm::Expected<bool> anyResultTensor(const ValuePtr& value,
                                     llvm::function_ref<llvm::Expected<bool>(PyObject*)> is) {
  if (value->kind == ValueKind::Tensor)
    return is(value->object.get());
  if (value->kind == ValueKind::Tuple || value->kind == ValueKind::List)
    for (const ValuePtr& item : value->items) {
      llvm::Expected<bool> inItem = anyResultTensor(item, is);
      if (!inItem || *inItem)
        return inItem;
    }
  if (value->kind == ValueKind::Dict || value->kind == ValueKind::Instance)
    for (const auto& [key, item] : value->entries) {
      llvm::Expected<bool> inItem = anyResultTensor(item, is);
      if (!inItem || *inItem)
        return inItem;
    }
  if (value->kind == ValueKind::Instance && value->contents)
    return anyResultTensor(value->contents, is);
  return false;
}

/// Whether a tensor \p value returns, in any container, requires grad.
llvm::Expected<bool> resultRequiresGrad(const ValuePtr& value) {
  return anyResultTensor(value, [](PyObject* tensor) -> llvm::Expected<bool> {
    PyRef requiresGrad = PyRef::steal(PyObject_GetAttrString(tensor, "requires_grad"));
    int flag = requiresGrad ? PyObject_IsTrue(requiresGrad.get()) : -1;
    if (flag < 0)
      return pythonError("reading a result's requires_grad");
    return flag == 1;
  });
}

/// Whether a tensor \p value returns has autograd history (a grad_fn).
llvm::Expected<bool> resultHasHistory(const ValuePtr& value) {
  return anyResultTensor(value, [](PyObject* tensor) -> llvm::Expected<bool> {
    PyRef gradFn = PyRef::steal(PyObject_GetAttrString(tensor, "grad_fn"));
    if (!gradFn)
      return pythonError("reading a result's grad_fn");
    return gradFn.get() != Py_None;
  });
}

/// Whether a tensor \p value returns is an inference tensor: one a
/// `torch.inference_mode()` block of the program made (capture itself never
/// runs in inference mode). The graph runs outside inference mode and
/// cannot make one.
llvm::Expected<bool> resultIsInference(const ValuePtr& value) {
  return anyResultTensor(value, [](PyObject* tensor) -> llvm::Expected<bool> {
    PyRef inference = PyRef::steal(PyObject_CallMethod(tensor, "is_inference", nullptr));
    int flag = inference ? PyObject_IsTrue(inference.get()) : -1;
    if (flag < 0)
      return pythonError("reading a result's is_inference()");
    return flag == 1;
  });
}

llvm::Expected<ir::Argument> resultArgument(Interpreter& interp, ir::Context& ctx,
                                            const ValuePtr& value);

llvm::Error returnError(Interpreter& interp, const python::LoadedModule& module,
                        const python::ResolvedEntry& entry, const llvm::Twine& reason);

/// torch.autograd.grad without retain_graph frees what the nodes its
/// backward ran saved, and eager's later backward through them raises
/// ("Trying to backward through the graph a second time"). The graph's
/// forward calls save them again when it runs and its backward calls do
/// not free them, so a tensor leaving the function (returned, or left on
/// the caller's objects) with such a node in its history is refused.
llvm::Error checkNoFreedHistoryLeaves(Interpreter& interp, const python::LoadedModule& module,
                                      const python::ResolvedEntry& entry, const ValuePtr& result) {
  std::string node;
  auto freed = [&](PyObject* tensor) -> llvm::Expected<bool> {
    llvm::Expected<std::string> found = freedHistoryNode(tensor);
    if (!found)
      return found.takeError();
    node = std::move(*found);
    return !node.empty();
  };
  llvm::Expected<bool> returned = anyResultTensor(result, freed);
  if (!returned)
    return returned.takeError();
  bool left = false;
  if (!*returned)
    for (const Interpreter::PendingSideEffect& pending : interp.pendingSideEffects()) {
      llvm::Expected<bool> leaves = anyResultTensor(pending.value, freed);
      if (!leaves)
        return leaves.takeError();
      if ((left = *leaves))
        break;
    }
  if (!*returned && !left)
    return llvm::Error::success();
  return returnError(
      interp, module, entry,
      llvm::Twine("the function ") + (left ? "leaves on an object" : "returns") +
          " a tensor whose history torch.autograd.grad went through without "
          "retain_graph=True, which freed what its " +
          node +
          " saved: eager's backward through that tensor raises, where the compiled graph's "
          "would not; pass retain_graph=True to torch.autograd.grad, or detach() the tensor");
}

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

/// A dict key as the IR spells it: a constant constantArgument spells, or a
/// plain tuple of such keys (`outputs[("disp", scale)]`, built by the program
/// or a literal of its code), which the rewritten code builds as a tuple.
std::optional<ir::Argument> dictKeyArgument(Interpreter& interp, ir::Context& ctx,
                                            const ValuePtr& key) {
  if (std::optional<ir::Argument> spelled = constantArgument(ctx, key))
    return spelled;
  std::vector<ValuePtr> items;
  if (key->kind == ValueKind::Tuple &&
      (!key->object || key->object.get() == reinterpret_cast<PyObject*>(&PyTuple_Type))) {
    items = key->items;
  } else if (key->isConstant() && PyTuple_CheckExact(key->object.get())) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(key->object.get()); ++i) {
      llvm::Expected<ValuePtr> item =
          static_cast<BuiltinContext&>(interp).wrapFake(PyTuple_GET_ITEM(key->object.get(), i));
      if (!item) {
        llvm::consumeError(item.takeError());
        return std::nullopt;
      }
      items.push_back(*item);
    }
  } else {
    return std::nullopt;
  }
  std::vector<ir::Argument> spelled;
  for (const ValuePtr& item : items) {
    std::optional<ir::Argument> one = dictKeyArgument(interp, ctx, item);
    if (!one)
      return std::nullopt;
    spelled.push_back(std::move(*one));
  }
  return ir::Argument::tuple(std::move(spelled));
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
  // A hook's handle exists only in capture (HookRegistration.cpp).
  if (isObject && isRemovableHandleClass(value->object.get()))
    return captureError(
        "the function returns a torch.utils.hooks.RemovableHandle, the handle of "
        "a hook registered inside the captured function, which the rewritten "
        "code cannot rebuild (a real handle holds an id from torch's "
        "process-wide counter and a reference to the hook table of the module or tensor); "
        "keep the handle inside the function");
  if (isObject)
    syncAttributes(value);
  // A defaultdict's factory is a slot the rewritten code does not rebuild.
  if (isObject && PyType_Check(value->object.get()) && defaultDictType() &&
      PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(value->object.get()), defaultDictType()))
    return captureError("the function returns a " + qualifiedTypeName(value->object.get()) +
                        " (a defaultdict), which a graph cannot return yet: return "
                        "dict(...) of it instead");
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
      std::optional<ir::Argument> spelled = dictKeyArgument(interp, ctx, key);
      if (!spelled) {
        std::string text = "a " + spelling(key->kind).str() + " value";
        if (isKnown(key)) {
          llvm::Expected<PyRef> real = interp.toPython(key);
          if (real)
            text = reprOf(real->get());
          else
            llvm::consumeError(real.takeError());
        }
        return captureError(
            "the function returns a dict with the key " + text +
            "; returned dicts may have str, int, bool, float and None keys, and tuples of "
            "them");
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
    // A float or bool computed from tensor data is a node's value.
    if (std::optional<ir::ValueRef> ref = interp.oracle().valueOf(value->object.get()))
      return ir::Argument::value(ref->node, ref->index);
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
    // An object of a list subclass would come back as a plain list.
    if (value->kind == ValueKind::List && value->object && PyType_Check(value->object.get()))
      return captureError("the function returns a " + qualifiedTypeName(value->object.get()) +
                          " (a list subclass), which a graph cannot return yet: return "
                          "list(...) of it instead");
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
    if (value->object && isNumpyScalar(value->object.get()))
      return captureError(
          "the function returns a NumPy scalar (" +
          qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(value->object.get()))) +
          "), which a graph cannot return yet: return the Python number "
          "it holds (s.item()) instead");
    break;
  case ValueKind::NNModule:
    // A module made in the call (`nn.GELU()`, a class whose __init__
    // capture followed) exists in capture only: the rewritten code does not
    // make it again, so it may not outlive the call.
    if (!value->source && value->object)
      return captureError(
          "the function returns a module of class '" +
          qualifiedTypeName(reinterpret_cast<PyObject*>(Py_TYPE(value->object.get()))) +
          "' made while capturing, which a graph cannot return: the rewritten "
          "code does not make it again; build the module in __init__");
    break;
  default:
    break;
  }
  // A class, a function, an enum member or a module the program read: the
  // rewritten code imports it again by name (NamedObjects.h).
  bool realObject = value->kind == ValueKind::Object || value->kind == ValueKind::Function ||
                    value->kind == ValueKind::Builtin || value->kind == ValueKind::TorchCallable ||
                    value->kind == ValueKind::Constant;
  if (realObject && value->object) {
    llvm::Expected<std::optional<ir::Argument>> named = namedArgument(value->object.get());
    if (!named)
      return named.takeError();
    if (*named)
      return std::move(**named);
  }
  return captureError("the function returns a " + spelling(value->kind) +
                      " value, which a graph cannot return");
}

/// What `--dynamic auto` found: for each dimension it made symbolic, one
/// line saying it stayed dynamic or where the program specialized it, then
/// the `--dynamic` spellings that hold. \p argumentSources: where each
/// argument a spec names lives in the frame (`L['n']`, or
/// `L['kwargs']['n']` for a keyword that lands in **kwargs).
llvm::Error reportAutoDynamic(Interpreter& interp, oracle::TensorOracle& oracle,
                              const ir::Graph& graph, llvm::ArrayRef<DynamicSpec> autoSpecs,
                              llvm::ArrayRef<std::string> staticInts,
                              const std::map<std::string, SourcePtr>& argumentSources,
                              std::vector<std::string>& report) {
  auto sourceOfArgument = [&](const std::string& argument) {
    auto it = argumentSources.find(argument);
    return it != argumentSources.end() ? it->second : Source::local(argument);
  };
  std::vector<std::string> holds;
  report.insert(report.end(), staticInts.begin(), staticInts.end());
  // Int arguments: still a symbol, or the constant the program made it.
  for (const DynamicSpec& spec : autoSpecs) {
    if (!spec.intArgument)
      continue;
    for (const ValuePtr& input : interp.values().intInputs()) {
      if (!input->source || *input->source != *sourceOfArgument(spec.argument))
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
      if (spec.intArgument || !input->source || *input->source != *sourceOfArgument(spec.argument))
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

/// An error about what the function returns, at its `return` (where the
/// entry's frame returned), or in the module's file when that is unknown.
llvm::Error returnError(Interpreter& interp, const python::LoadedModule& module,
                        const python::ResolvedEntry& entry, const llvm::Twine& reason) {
  ir::Location where = interp.nodeLocation();
  if (where.empty() || where.innermost().line == 0)
    return inputError(module, entry.qualname + ": " + reason);
  CaptureFrame frame;
  frame.function = entry.qualname;
  frame.location.file = where.innermost().file;
  frame.location.line = where.innermost().line;
  frame.location.column = where.innermost().column;
  frame.location.lineText = sourceLine(frame.location.file, static_cast<int>(frame.location.line));
  return llvm::make_error<CaptureError>(reason.str(), std::vector<CaptureFrame>{frame});
}

/// The phase after the run: the graph's output, what the function
/// returns, and the side effects on the caller's objects the rewritten code
/// replays after the graph.
llvm::Error setGraphOutput(Interpreter& interp, oracle::TensorOracle& oracle, ir::Graph& graph,
                           const python::LoadedModule& module, const python::ResolvedEntry& entry,
                           const CaptureOptions& options, const ValuePtr& result) {
  if (options.noAutograd)
    if (llvm::Expected<bool> recorded = resultRequiresGrad(result); !recorded || *recorded)
      return recorded ? returnError(interp, module, entry,
                                    "the function returns a tensor that requires grad, which "
                                    "a graph that records no autograd cannot give")
                      : recorded.takeError();
  if (options.noHistory)
    if (llvm::Expected<bool> recorded = resultHasHistory(result); !recorded || *recorded) {
      if (recorded && options.refusedHistory)
        *options.refusedHistory = true;
      return recorded ? returnError(interp, module, entry,
                                    "the function returns a tensor autograd recorded with grad "
                                    "mode switched on inside it (an enable_grad() block), "
                                    "which a graph run under no_grad cannot give")
                      : recorded.takeError();
    }
  if (llvm::Expected<bool> inference = resultIsInference(result); !inference || *inference)
    return inference ? returnError(interp, module, entry,
                                   "the function returns a tensor made in a "
                                   "torch.inference_mode() block, which eager returns as an "
                                   "inference tensor and the graph cannot make yet; return a "
                                   "clone() of it, or compute it under torch.no_grad()")
                     : inference.takeError();
  if (interp.runsBackward())
    if (llvm::Error error = checkNoFreedHistoryLeaves(interp, module, entry, result))
      return error;

  // Hooks registered inside the function must be removed by its end
  // (HookRegistration.cpp).
  if (llvm::Error error =
          checkNoHooksLeftInstalled(static_cast<BuiltinContext&>(interp).registeredHooks()))
    return returnError(interp, module, entry, llvm::toString(std::move(error)));
  // The graph returns exactly what the function returns, one value, so the
  // rewritten bytecode can rebuild it: `return x` and `return (x,)` differ.
  llvm::Expected<ir::Argument> output = resultArgument(interp, graph.context(), result);
  if (!output)
    return inputError(module, entry.qualname + ": " + llvm::toString(output.takeError()));
  // --- Side effects on the caller's objects (SideEffects.cpp) ---
  // What the function leaves on objects that existed before the call, in
  // the order it made the changes: the rewritten code replays them after
  // the graph, each value rebuilt as a returned one is.
  std::vector<std::pair<ir::SideEffect, ir::Argument>> sideEffects;
  if (llvm::Error error = interp.checkWorldCallTensors())
    return returnError(interp, module, entry, llvm::toString(std::move(error)));
  // A container refilled or an attribute set holding a list whose items
  // were left unread is rebuilt whole, so that list is read whole first
  // (UnreadLists.cpp); what it appended is then part of its refill.
  // A dict updated with what it assigned has the values assigned read
  // whole, not the dict.
  for (const Interpreter::PendingSideEffect& pending : interp.pendingSideEffects()) {
    if (pending.effect.kind == ir::SideEffect::Kind::Extend)
      continue;
    if (pending.effect.kind == ir::SideEffect::Kind::Update) {
      for (const auto& [key, assigned] : pending.value->entries)
        if (llvm::Error error = interp.values().readAllUnread(assigned))
          return returnError(interp, module, entry, llvm::toString(std::move(error)));
      continue;
    }
    if (llvm::Error error = interp.values().readAllUnread(pending.value))
      return returnError(interp, module, entry, llvm::toString(std::move(error)));
  }
  for (const Interpreter::PendingSideEffect& pending : interp.pendingSideEffects()) {
    // A real list refilled in place keeps its class: its new items are
    // spelled as a plain list's (ListInstances.cpp).
    ValuePtr replayed = pending.value;
    if (pending.effect.kind != ir::SideEffect::Kind::Set && replayed->kind == ValueKind::List &&
        replayed->object)
      replayed = makeList(replayed->items);
    llvm::Expected<ir::Argument> value = resultArgument(interp, graph.context(), replayed);
    if (!value && pending.effect.kind == ir::SideEffect::Kind::Call)
      return returnError(interp, module, entry,
                         "the call of " + pending.effect.target +
                             (pending.effect.method.empty() ? "" : "." + pending.effect.method) +
                             " at " + pending.where +
                             ", made after the graph, is passed a value the rewritten code "
                             "cannot rebuild: " +
                             llvm::toString(value.takeError()));
    if (!value)
      return returnError(
          interp, module, entry,
          "the function leaves " + pending.effect.target +
              (pending.effect.kind == ir::SideEffect::Kind::Set ? " set to" : " holding") +
              " a value the rewritten code cannot rebuild after the graph (changed at " +
              pending.where + "): " + llvm::toString(value.takeError()));
    sideEffects.emplace_back(pending.effect, std::move(*value));
  }
  // Tensor hooks still installed, registered on the tensors the graph hands
  // back, in the order the program made them (TensorHooks.cpp), before the
  // other side effects: a hook function read through a source is the
  // value the source held at the call (a read after the program's own
  // change has no source), which an assignment replayed first would change.
  std::vector<std::pair<ir::SideEffect, ir::Argument>> hookEffects;
  llvm::Expected<std::vector<TensorHookEffect>> hooks = tensorHookEffects(
      static_cast<BuiltinContext&>(interp), static_cast<BuiltinContext&>(interp).registeredHooks());
  if (!hooks)
    return returnError(interp, module, entry, llvm::toString(hooks.takeError()));
  for (TensorHookEffect& hook : *hooks) {
    std::vector<ir::Argument> values;
    // The very tensor the program registered on, not a copy laid out as
    // eager's: the hook goes on its autograd node.
    std::optional<ir::ValueRef> tensor = interp.oracle().valueOf(hook.values[0]->object.get());
    if (!tensor)
      return returnError(interp, module, entry,
                         "Tensor." + hook.effect.hookMethod +
                             " registers a hook on a tensor the graph does not compute");
    values.push_back(ir::Argument::value(tensor->node, tensor->index));
    for (size_t i = 1; i < hook.values.size(); ++i) {
      llvm::Expected<ir::Argument> value = resultArgument(interp, graph.context(), hook.values[i]);
      if (!value)
        return returnError(interp, module, entry,
                           "Tensor." + hook.effect.hookMethod +
                               " registers a function holding a value the rewritten code "
                               "cannot rebuild after the graph: " +
                               llvm::toString(value.takeError()));
      values.push_back(std::move(*value));
    }
    hookEffects.emplace_back(std::move(hook.effect), ir::Argument::tuple(std::move(values)));
  }
  sideEffects.insert(sideEffects.begin(), std::make_move_iterator(hookEffects.begin()),
                     std::make_move_iterator(hookEffects.end()));
  // --- end of side effects ---
  if (llvm::Error error = oracle.finalize())
    return captureError("finishing the shape environment: " + llvm::toString(std::move(error)));
  // Data-dependent sizes returned as ints are read as ints (ReturnedSizes.h).
  std::vector<const ir::Argument*> returned = {&*output};
  for (const auto& [effect, value] : sideEffects)
    returned.push_back(&value);
  if (llvm::Error error = readReturnedSizes(oracle.builder(), returned))
    return returnError(interp, module, entry, llvm::toString(std::move(error)));
  ir::Node* outputNode = oracle.builder().setOutput(std::move(*output));
  for (auto& [effect, value] : sideEffects)
    outputNode->addSideEffect(std::move(effect), std::move(value));
  // Objects the program changes must not be, at a call, what another source
  // reached (SourceIdentity.cpp).
  if (llvm::Error error = interp.values().guardChangedObjectsDistinct(graph))
    return error;
  return llvm::Error::success();
}

/// \p type, a tensor input's type after the run, with the requires_grad
/// the call gave it (its graph input's, \p source): requires_grad_() in
/// the program changes the caller's tensor, and the guard is about the
/// call.
ir::Type asCalledWith(const ir::Graph& graph, const std::string& source, const ir::Type& type) {
  for (const ir::Node& node : graph.nodes()) {
    if (!node.isInput())
      break;
    if (node.source() == source && node.type().isTensor() &&
        node.type().requiresGrad() != type.requiresGrad()) {
      if (type.isSparse())
        return ir::Type::sparseCooTensor(type.dtype(), type.sizes(), type.sparseDim(), type.nnz(),
                                         type.coalesced(), type.device(),
                                         node.type().requiresGrad());
      return ir::Type::tensor(type.dtype(), type.sizes(), type.strides(), type.device(),
                              node.type().requiresGrad());
    }
  }
  return type;
}

/// The last phase: the graph's guards. Tensor inputs first, then what the
/// program's run assumed (\p recorded), then global state (\p gradMode and
/// \p globalState, read before the run) and versions.
llvm::Error addGuards(Interpreter& interp, oracle::TensorOracle& oracle, ir::Graph& graph,
                      const GuardSet& recorded, PyCodeObject* code, bool gradMode,
                      std::vector<Guard> globalState) {
  PyObject* torch = interp.types().torch.get();
  GuardSet& guards = graph.guards();
  guards.localNames() = localNames(code);
  for (const ValuePtr& input : interp.values().tensorInputs()) {
    llvm::Expected<ir::Type> type = oracle.typeOf(input->object.get());
    if (!type)
      return type.takeError();
    ir::Type called = asCalledWith(graph, input->source->str(), *type);
    bool requiresGrad = called.requiresGrad();
    guards.add(Guard::tensor(input->source, std::move(called)));
    // The backward capture ran starts at the inputs (AutogradGrad.cpp).
    if (interp.runsBackward() && requiresGrad)
      guards.add(Guard::autogradLeaf(input->source));
  }
  // Symbolic int arguments: an exact int, binding its symbol.
  for (const ValuePtr& input : interp.values().intInputs()) {
    llvm::Expected<ir::SymExpr> value = oracle.symExprOf(input->object.get());
    if (!value)
      return value.takeError();
    guards.add(Guard::symInt(input->source, *value));
  }
  // `distinct` guards that type and tensor guards already imply are left
  // out (GuardsKeepApart.h).
  GuardsKeepApart keptApart;
  for (const Guard& guard : guards.guards())
    keptApart.note(guard);
  for (const Guard& guard : recorded.guards())
    keptApart.note(guard);
  for (const Guard& guard : recorded.guards())
    if (!keptApart.implied(guard))
      guards.add(guard);
  PyRef dtype = PyRef::steal(PyObject_CallMethod(torch, "get_default_dtype", nullptr));
  PyRef version = PyRef::steal(PyObject_GetAttrString(torch, "__version__"));
  if (!dtype || !version)
    return pythonError("reading torch's global state");
  std::optional<ir::DType> defaultDType = dtypeOf(torch, dtype.get());
  if (!defaultDType)
    return captureError("torch's default dtype " + reprOf(dtype.get()) +
                        " has no spelling in the graph IR");
  guards.add(Guard::gradMode(gradMode));
  guards.add(Guard::defaultDType(*defaultDType));
  for (Guard& guard : globalState)
    guards.add(std::move(guard));
  guards.add(Guard::versionIs("torch", python::strOf(version.get())));
  guards.add(Guard::versionIs("python", llvm::StringRef(Py_GetVersion()).split(' ').first.str()));
  return llvm::Error::success();
}

/// One attempt at capturing \p entry into the empty \p graph; what it
/// ran goes to \p functionsRun.
/// Under `--dynamic auto`, \p autoInts says whether int arguments start
/// symbolic too: set when one did; \p staticIntsBecause, when not empty,
/// keeps them constants (a capture with them symbolic failed so).
/// The phases (CapturePhases.h): the inputs bound, what is dynamic
/// declared, the entry's arguments made values, the run, the output and
/// side effects, the dynamic declarations checked, the guards and the
/// finished graph.
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
  // The entry's globals are what its frame reads them from when the
  // artifact runs (the G of guards): the entry function's own, which are
  // not the exported file's for a method of a library class named through
  // an object of the file (an nn.Sequential's `model.forward`) or of code
  // generated without a module (a torch.fx GraphModule's forward). The
  // file's functions the entry calls then read their globals through
  // sys.modules, as any other module's.
  PyObject* entryGlobals = entry.function && PyFunction_Check(entry.function.get())
                               ? PyFunction_GetGlobals(entry.function.get())
                               : PyModule_GetDict(module.module.get());
  llvm::Expected<std::unique_ptr<Interpreter>> created =
      Interpreter::create(**oracle, recorded, *opcodes, entryGlobals);
  if (!created)
    return created.takeError();
  Interpreter& interp = **created;
  // Told whether the run took a gradient even when capture then fails: the
  // error of a function that needs grad mode is its grad-mode variant's.
  auto tellRunsBackward = llvm::make_scope_exit([&] {
    if (options.runsBackward)
      *options.runsBackward = interp.runsBackward();
  });
  interp.setCompilingAnswer(options.assumeCompiling || options.assumeExporting);
  interp.setExportingAnswer(options.assumeExporting);
  interp.setDataBranches(options.dataBranches);
  // Every call records the user's line capture is executing when it is made;
  // one made before the entry runs, its `def` line.
  PyCodeObject* entryCode = entry.codeObject();
  ir::Location definition({{python::utf8Of(entryCode->co_filename).value_or(""),
                            static_cast<unsigned>(std::max(entryCode->co_firstlineno, 0)), 0}});
  (*oracle)->builder().setLocationSource([&interp, definition] {
    ir::Location location = interp.nodeLocation();
    return location.empty() ? definition : location;
  });

  llvm::Expected<EntryInputs> inputs = bindInputs(module, entry, options);
  if (!inputs)
    return inputs.takeError();
  llvm::Expected<DynamicDeclarations> declared =
      declareDynamic(interp, module, entry, options, *inputs, autoInts, staticIntsBecause);
  if (!declared)
    return declared.takeError();
  llvm::Expected<EntryArguments> arguments =
      makeArguments(interp, recorded, module, entry, options, *inputs, *declared);
  if (!arguments)
    return arguments.takeError();

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
  llvm::Expected<ValuePtr> result =
      interp.call(*function, std::move(arguments->args), std::move(arguments->keywords));
  if (!result)
    return result.takeError();
  if (llvm::Error error = interp.checkContextVarsRestored())
    return error;

  if (llvm::Error error = setGraphOutput(interp, **oracle, graph, module, entry, options, *result))
    return error;
  if (llvm::Error error =
          checkDynamicAfterRun(interp, **oracle, graph, module, entry, options, *inputs, *declared))
    return error;
  if (options.autoDynamic && options.autoReport) {
    std::map<std::string, SourcePtr> argumentSources;
    for (const ExampleBinding& binding : inputs->bindings)
      argumentSources.emplace(binding.name, binding.source);
    if (llvm::Error error =
            reportAutoDynamic(interp, **oracle, graph, declared->autoSpecs, declared->staticInts,
                              argumentSources, *options.autoReport))
      return error;
  }
  if (llvm::Error error = addGuards(interp, **oracle, graph, recorded, inputs->code,
                                    grad.get() == Py_True, std::move(*globalState)))
    return error;

  if (llvm::Error error = runFallBackChecksFirst(graph))
    return error;
  if (llvm::Error error = ir::verify(graph))
    return captureError("the captured graph does not verify: " + llvm::toString(std::move(error)));
  if (options.dataNotes)
    for (const std::string& note : interp.dataNotes())
      if (llvm::find(*options.dataNotes, note) == options.dataNotes->end())
        options.dataNotes->push_back(note);
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
