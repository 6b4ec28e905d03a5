//===- Interpreter.cpp - Creating the interpreter; where the program is ---===//
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/Exceptions.h"

#include "frontend/bytecode/CodeObject.h"
#include "frontend/bytecode/Codec.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/Path.h"

#include <functional>

namespace dync::capture {

using python::PyRef;

llvm::Expected<std::unique_ptr<Interpreter>>
Interpreter::create(oracle::TensorOracle& oracle, GuardSet& guards,
                    const bytecode::OpcodeTable& opcodes, PyObject* entryGlobals) {
  std::unique_ptr<Interpreter> interp(new Interpreter(oracle, guards, opcodes));
  interp->values_.setEntryGlobals(entryGlobals);
  if (llvm::Error error = interp->machine_.bindOpcodes())
    return error;
  if (llvm::Error error = interp->readTypes())
    return error;
  if (llvm::Error error = registerBuiltinHandlers(*interp))
    return error;
  interp->trackState();
  interp->machine_.trackState();
  interp->values_.setChangedContainers(
      [raw = interp.get()](PyObject* real) { return raw->mutatedContainer(real); });
  interp->values_.setAssignedEntries(
      [raw = interp.get()](PyObject* dict) { return raw->assignedEntries(dict); });
  return interp;
}

llvm::Error Interpreter::readTypes() {
  struct Row {
    PyRef TorchTypes::* field;
    const char* name;
  };
  const Row rows[] = {
      {&TorchTypes::torch, "torch"},
      {&TorchTypes::tensor, "torch.Tensor"},
      {&TorchTypes::module, "torch.nn.Module"},
      {&TorchTypes::parameter, "torch.nn.Parameter"},
      {&TorchTypes::dtype, "torch.dtype"},
      {&TorchTypes::device, "torch.device"},
      {&TorchTypes::layout, "torch.layout"},
      {&TorchTypes::memoryFormat, "torch.memory_format"},
      {&TorchTypes::size, "torch.Size"},
      {&TorchTypes::symInt, "torch.SymInt"},
      {&TorchTypes::symFloat, "torch.SymFloat"},
      {&TorchTypes::symBool, "torch.SymBool"},
      {&TorchTypes::opOverload, "torch._ops.OpOverload"},
      {&TorchTypes::opOverloadPacket, "torch._ops.OpOverloadPacket"},
      {&TorchTypes::operatorModule, "operator"},
      {&TorchTypes::builtinsModule, "builtins"},
      {&TorchTypes::orderedDict, "collections.OrderedDict"},
      {&TorchTypes::legacyVariableBase, "torch._C._LegacyVariableBase"},
      {&TorchTypes::floatTensor, "torch.FloatTensor"},
      {&TorchTypes::variableFunctions, "torch._C._VariableFunctions"},
  };
  for (const Row& row : rows) {
    llvm::Expected<PyRef> object = importObject(row.name);
    if (!object)
      return object.takeError();
    types_.*row.field = std::move(*object);
  }
  for (const char* name :
       {"torch.no_grad", "torch.enable_grad", "torch.set_grad_enabled", "torch.inference_mode"}) {
    llvm::Expected<PyRef> object = importObject(name);
    if (!object)
      return object.takeError();
    types_.gradModeManagers.push_back(std::move(*object));
  }
  for (const char* name : {"torch.finfo", "torch.iinfo", "torch.device", "torch.Size",
                           "builtins.complex", "builtins.frozenset", "builtins.bytes"}) {
    llvm::Expected<PyRef> object = importObject(name);
    if (!object)
      return object.takeError();
    types_.pureClasses.push_back(std::move(*object));
  }
  return llvm::Error::success();
}

bool Interpreter::isGradModeManager(PyObject* object) const {
  PyObject* type = PyType_Check(object) ? object : reinterpret_cast<PyObject*>(Py_TYPE(object));
  return llvm::any_of(types_.gradModeManagers,
                      [&](const PyRef& manager) { return manager.get() == type; });
}

PyObject* Interpreter::operatorFunction(llvm::StringRef name) {
  PyObject* dict = PyModule_GetDict(types_.operatorModule.get());
  return PyDict_GetItemString(dict, name.str().c_str());
}

bool insideTorchPackage(PyObject* globals) {
  PyObject* name =
      globals && PyDict_Check(globals) ? PyDict_GetItemString(globals, "__name__") : nullptr;
  if (!name || !PyUnicode_Check(name))
    return false;
  std::optional<std::string> text = python::utf8Of(name);
  return text && (*text == "torch" || llvm::StringRef(*text).starts_with("torch."));
}

bool Interpreter::answerCompilerQuery() {
  // The program's own line, not torch's wrappers of the query
  // (torch._dynamo.is_compiling calls torch.compiler.is_compiling).
  const std::vector<Frame*>& frames = machine_.frames();
  for (auto it = frames.rbegin(); it != frames.rend() && firstCompilerQuery_.empty(); ++it) {
    const Frame& frame = **it;
    if (insideTorchPackage(frame.globals) || frame.pc >= frame.decoded->instructions.size())
      continue;
    firstCompilerQuery_ =
        frame.filename + ":" + std::to_string(frame.decoded->instructions[frame.pc].position.line);
  }
  return compilingAnswer_;
}

std::string Interpreter::locatedErrorNote() const {
  // Stopping on the eager path that an is_compiling() answer chose is
  // often what the compiled path exists to avoid (a branch on a mask's
  // values): say so where an error is first located.
  if (compilingAnswer_ || firstCompilerQuery_.empty())
    return "";
  return " (note: torch.compiler.is_compiling() at " + firstCompilerQuery_ +
         " answered False, eager's answer; if the program computes the same on both paths, "
         "--assume-compiling captures its compiled path)";
}

//===----------------------------------------------------------------------===//
// Where the program is.
//===----------------------------------------------------------------------===//

void Interpreter::reportLocation() {
  // The line that matters to the user is in their own module: the innermost
  // frame running the entry module's code, else the innermost frame.
  const std::vector<Frame*>& frames = machine_.frames();
  const Frame* chosen = nullptr;
  for (auto it = frames.rbegin(); it != frames.rend() && !chosen; ++it)
    if ((*it)->entryGlobals)
      chosen = *it;
  if (!chosen && !frames.empty())
    chosen = frames.back();
  if (!chosen || chosen->pc >= chosen->decoded->instructions.size())
    return;
  int line = chosen->decoded->instructions[chosen->pc].position.line;
  oracle_.setLocation(llvm::sys::path::filename(chosen->filename).str() + ":" +
                      std::to_string(line));
}

llvm::Error Interpreter::checkDynamic() {
  for (DynamicWatch& watch : watches_) {
    if (watch.spec.empty())
      continue; // a noted specialization, reported once
    // A SymInt's expression reads through the ShapeEnv's replacements, so
    // once a decision pinned the symbol it is a number.
    PyRef shape = watch.intArgument
                      ? PyRef()
                      : PyRef::steal(PyObject_GetAttrString(watch.fake.get(), "shape"));
    PyRef size = watch.intArgument ? watch.fake
                 : shape           ? PyRef::steal(PySequence_GetItem(shape.get(), watch.dim))
                                   : PyRef();
    if (!size) {
      PyErr_Clear();
      continue;
    }
    if (!PyObject_TypeCheck(size.get(), reinterpret_cast<PyTypeObject*>(types_.symInt.get())))
      continue;
    PyRef node = PyRef::steal(PyObject_GetAttrString(size.get(), "node"));
    PyRef expr = node ? PyRef::steal(PyObject_GetAttrString(node.get(), "expr")) : PyRef();
    PyRef isNumber = expr ? PyRef::steal(PyObject_GetAttrString(expr.get(), "is_number")) : PyRef();
    if (!isNumber) {
      PyErr_Clear();
      continue;
    }
    if (isNumber.get() == Py_True && watch.noteOnly) {
      // The line that matters is the innermost one in the entry's module.
      AutoFinding finding{watch.source, watch.dim, reprOf(expr.get()), "", ""};
      for (const CaptureFrame& frame : callStack())
        if (frame.location.line > 0) {
          finding.where = llvm::sys::path::filename(frame.location.file).str() + ":" +
                          std::to_string(frame.location.line);
          finding.lineText = llvm::StringRef(frame.location.lineText).trim().str();
          if (!machine_.frames().empty() &&
              frame.location.file == machine_.frames().front()->filename)
            break;
        }
      autoFindings_.push_back(std::move(finding));
      watch.spec.clear();
      continue;
    }
    if (isNumber.get() == Py_True)
      return captureError(
          "--dynamic '" + watch.spec +
          "' contradicts the program: this line "
          "specializes " +
          (watch.intArgument ? std::string() : "dimension " + std::to_string(watch.dim) + " of ") +
          watch.source + " to " + reprOf(expr.get()));
    // The ShapeEnv's range for the symbol: a decision such as `if n > 4`
    // narrows it. Torch's own lower bound of 2 (sizes 0 and 1 are
    // specialized) is not the program's doing.
    PyRef shapeEnv = PyRef::steal(PyObject_GetAttrString(node.get(), "shape_env"));
    PyRef ranges =
        shapeEnv ? PyRef::steal(PyObject_GetAttrString(shapeEnv.get(), "var_to_range")) : PyRef();
    PyObject* range = ranges && PyDict_Check(ranges.get())
                          ? PyDict_GetItemWithError(ranges.get(), expr.get())
                          : nullptr;
    if (!range) {
      PyErr_Clear();
      continue;
    }
    auto bound = [&](const char* name) -> std::optional<int64_t> {
      PyRef value = PyRef::steal(PyObject_GetAttrString(range, name));
      PyRef finite =
          value ? PyRef::steal(PyObject_GetAttrString(value.get(), "is_finite")) : PyRef();
      if (!finite || finite.get() != Py_True) {
        PyErr_Clear();
        return std::nullopt;
      }
      PyRef asInt = PyRef::steal(PyNumber_Long(value.get()));
      if (!asInt) {
        PyErr_Clear();
        return std::nullopt;
      }
      return PyLong_AsLongLong(asInt.get());
    };
    std::optional<int64_t> lo = bound("lower"), hi = bound("upper");
    int64_t wantedLo = std::max<int64_t>(watch.range.lo.value_or(2), 2);
    // Without a declared range any range the program needs is accepted.
    bool declared = watch.range.lo || watch.range.hi;
    bool narrowed = declared && !watch.cutAllowed &&
                    ((lo && *lo > wantedLo) || (watch.range.hi && hi && *hi < *watch.range.hi));
    if (narrowed)
      return captureError(
          "--dynamic '" + watch.spec +
          "' contradicts the program: this line "
          "assumes " +
          (watch.intArgument ? std::string() : "dimension " + std::to_string(watch.dim) + " of ") +
          watch.source + " is in [" + (lo ? llvm::Twine(*lo) : llvm::Twine("-inf")) + ", " +
          (hi ? llvm::Twine(*hi) : llvm::Twine("inf")) + "]");
  }
  return llvm::Error::success();
}

} // namespace dync::capture
