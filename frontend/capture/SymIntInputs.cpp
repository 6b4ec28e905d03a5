//===- SymIntInputs.cpp - Python int arguments that stay symbolic ---------===//
//
// `--dynamic n=n[1,64]` makes the int argument `n` a symbol rather than a
// constant under an `equals` guard, as torch.export does for an int input
// given a Dim: capture sees a torch.SymInt, the graph takes it as an int
// input, and the `int` guard reads the symbol's value from the frame.
// `--dynamic cfg.n=n` does the same for an int the program reads from an
// argument's attribute or item, whenever it reads it.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DeclaredInts.h"
#include "frontend/capture/ValueBuilder.h"

#include <algorithm>

namespace dync::capture {

using python::PyRef;

llvm::Expected<ValuePtr> ValueBuilder::intInput(PyObject* real, SourcePtr source,
                                                const oracle::DynamicDim& symbol) {
  if (!source)
    return captureError("an int that was not reached from the frame's inputs cannot be a graph "
                        "input");
  // bool is a subclass of int, and an int subclass may override what the
  // program's arithmetic does: only an exact int is a size.
  if (!PyLong_CheckExact(real))
    return captureError(source->str() + " is a " + Py_TYPE(real)->tp_name +
                        ", not an int; only an int argument can be a symbolic int");
  llvm::Expected<PyRef> symInt =
      oracle_.addIntInput(real, source->valueName(), source->str(), symbol);
  if (!symInt)
    return symInt.takeError();
  ValuePtr value = makeValue(ValueKind::SymNum, std::move(*symInt), source);
  intInputOrder_.push_back(value);
  return value;
}

std::optional<llvm::Expected<ValuePtr>> ValueBuilder::declaredIntAt(PyObject* real,
                                                                    const SourcePtr& source) {
  if (declaredInts_.empty() || !source)
    return std::nullopt;
  auto declared = llvm::find_if(
      declaredInts_, [&](const DeclaredInt& d) { return d.source && *d.source == *source; });
  if (declared == declaredInts_.end())
    return std::nullopt;
  // Every read is the one value, so the graph has one input for it.
  if (declared->value)
    return llvm::Expected<ValuePtr>(declared->value);
  // Making a graph input is not taken back by a checkpoint's rollback.
  if (llvm::Error refused = recorder_.irreversible("making the graph's int input " + source->str()))
    return llvm::Expected<ValuePtr>(std::move(refused));
  const std::optional<int64_t>& hint = declared->symbol.hint;
  // A specialization at 0 or 1 holds the constant, as torch would, under
  // an `equals` guard.
  if (hint && (*hint == 0 || *hint == 1)) {
    PyRef constant = PyRef::steal(PyLong_FromLongLong(*hint));
    if (!constant)
      return llvm::Expected<ValuePtr>(captureError("making the int " + std::to_string(*hint)));
    guardConstant(constant.get(), source);
    declared->value = makeConstant(std::move(constant), source);
    return llvm::Expected<ValuePtr>(declared->value);
  }
  llvm::Expected<ValuePtr> value = intInput(real, source, declared->symbol);
  if (!value)
    return llvm::Expected<ValuePtr>(value.takeError());
  declared->value = *value;
  if (declared->onMade)
    declared->onMade(*value);
  return llvm::Expected<ValuePtr>(*value);
}

} // namespace dync::capture

namespace dync::capture {

namespace {

/// What \p step reads from \p base, as the guards read a source: an
/// attribute from the instance `__dict__`, an item from an exact list,
/// tuple or dict. A null result with the reason in \p why.
PyRef readStep(PyObject* base, const Source& step, std::string& why) {
  if (step.kind() == Source::Kind::Attr) {
    PyObject** dict = _PyObject_GetDictPtr(base);
    PyObject* value = dict && *dict ? PyDict_GetItemString(*dict, step.name().c_str()) : nullptr;
    if (!value)
      why = std::string("a ") + Py_TYPE(base)->tp_name + " with no attribute '" + step.name() +
            "' in its instance __dict__ or its class";
    return PyRef::borrow(value);
  }
  if (step.hasIndex()) {
    if (!PyTuple_CheckExact(base) && !PyList_CheckExact(base)) {
      why = std::string("a ") + Py_TYPE(base)->tp_name + ", not a list or tuple";
      return PyRef();
    }
    Py_ssize_t length = PySequence_Length(base), index = step.indexValue();
    if (index < 0)
      index += length;
    if (index < 0 || index >= length) {
      why = std::string("a ") + Py_TYPE(base)->tp_name + " of length " + std::to_string(length);
      return PyRef();
    }
    return PyRef::steal(PySequence_GetItem(base, index));
  }
  if (!PyDict_CheckExact(base)) {
    why = std::string("a ") + Py_TYPE(base)->tp_name + ", not a dict";
    return PyRef();
  }
  PyObject* value = PyDict_GetItemString(base, step.name().c_str());
  if (!value)
    why = "a dict without the key '" + step.name() + "'";
  return PyRef::borrow(value);
}

/// Whether \p step, an attribute read of \p base, is one the class of
/// \p base answers rather than its instance `__dict__`: a class attribute
/// the instance does not shadow, or a data descriptor (a property), which
/// wins over the instance `__dict__`.
bool readFromClass(PyObject* base, const Source& step) {
  if (step.kind() != Source::Kind::Attr)
    return false;
  PyRef name = PyRef::steal(PyUnicode_FromStringAndSize(step.name().data(), step.name().size()));
  PyObject* classAttr = name ? _PyType_Lookup(Py_TYPE(base), name.get()) : nullptr;
  if (!classAttr) {
    PyErr_Clear();
    return false;
  }
  if (Py_TYPE(classAttr)->tp_descr_set)
    return true;
  PyObject** dict = _PyObject_GetDictPtr(base);
  return !(dict && *dict && PyDict_GetItem(*dict, name.get()));
}

/// Whether attribute \p step of \p base, absent from its instance
/// `__dict__`, is found by Python's own read (nn.Module.__getattr__ finds
/// submodules, parameters and buffers in its tables).
bool foundElsewhere(PyObject* base, const Source& step) {
  if (step.kind() != Source::Kind::Attr)
    return false;
  PyObject** dict = _PyObject_GetDictPtr(base);
  if (dict && *dict && PyDict_GetItemString(*dict, step.name().c_str()))
    return false;
  int found = PyObject_HasAttrString(base, step.name().c_str());
  PyErr_Clear();
  return found == 1;
}

/// The int \p steps reach from \p argument read as the program reads it:
/// through capture's own attribute and item reads, on a checkpoint rolled
/// back after, so nothing of it stays (no guard, no value). A class
/// attribute is found where the class holds it (`type(L['cfg']).n`), a
/// property's getter runs symbolically and gives the int it read (its
/// source: `L['self']._window`). The source is where guards and the
/// rewritten bytecode read the int; an int the read computes, or one read
/// from nowhere they can reach, has none and is an error.
llvm::Expected<std::pair<SourcePtr, PyRef>>
intAsProgramReads(Interpreter& interp, const DynamicSpec& spec, PyObject* argument,
                  const SourcePtr& argumentSource, llvm::ArrayRef<const Source*> steps,
                  const SourcePtr& written) {
  Recorder& recorder = interp.recorder();
  Recorder::Checkpoint checkpoint = recorder.checkpoint();
  auto read = [&]() -> llvm::Expected<ValuePtr> {
    llvm::Expected<ValuePtr> value = interp.values().wrapReal(argument, argumentSource);
    for (const Source* step : steps) {
      if (!value)
        return value;
      if (step->kind() == Source::Kind::Attr) {
        value = interp.getAttr(*value, step->name());
        continue;
      }
      PyRef key = PyRef::steal(
          step->hasIndex() ? PyLong_FromLongLong(step->indexValue())
                           : PyUnicode_FromStringAndSize(step->name().data(), step->name().size()));
      if (!key)
        return captureError("making the key of " + step->str());
      value = interp.getItem(*value, makeConstant(std::move(key)));
    }
    return value;
  };
  llvm::Expected<ValuePtr> value = read();
  recorder.rollback(checkpoint);
  std::string prefix = "--dynamic '" + spec.text + "': ";
  if (!value)
    return captureError(prefix + "reading " + written->str() +
                        " as the program does failed: " + llvm::toString(value.takeError()));
  PyObject* real = (*value)->object.get();
  if (!real || !PyLong_CheckExact(real))
    return captureError(
        prefix + "the example's " + written->str() + " is " +
        (real ? std::string("a ") + Py_TYPE(real)->tp_name : std::string("a value capture made")) +
        ", not an int; only an int can be a symbolic int");
  const SourcePtr& source = (*value)->source;
  if (!source)
    return captureError(prefix + written->str() +
                        " is an int its class computes (a property's getter that does "
                        "arithmetic or returns a constant), not one read from an attribute or "
                        "an item, so no guard can read it again: declare the int it is "
                        "computed from");
  return std::make_pair(source, PyRef::borrow(real));
}

} // namespace

llvm::Error declareIntInside(Interpreter& interp, const DynamicSpec& spec, PyObject* argument,
                             const SourcePtr& argumentSource,
                             const std::map<std::string, int64_t>& sizeHints, bool watch,
                             bool splitRanges) {
  SourcePtr source = sourceOf(spec, argumentSource);
  if (!source)
    return captureError("--dynamic '" + spec.text + "': '" + spec.path +
                        "' is not a path of attribute and item reads");
  std::vector<const Source*> steps;
  for (const Source* step = source.get(); step != argumentSource.get() && step->base();
       step = step->base().get())
    steps.push_back(step);
  std::reverse(steps.begin(), steps.end());
  PyRef value = PyRef::borrow(argument);
  for (const Source* step : steps) {
    // --- Ints the class holds or a property gives, or that a read other
    // than the instance __dict__'s finds (an nn.Module's submodule) ---
    if (readFromClass(value.get(), *step) || foundElsewhere(value.get(), *step)) {
      llvm::Expected<std::pair<SourcePtr, PyRef>> found =
          intAsProgramReads(interp, spec, argument, argumentSource, steps, source);
      if (!found)
        return found.takeError();
      source = found->first;
      value = found->second;
      break;
    }
    // --- end of ints the class holds or a property gives ---
    std::string why;
    PyRef next = readStep(value.get(), *step, why);
    if (!next) {
      PyErr_Clear();
      return captureError("--dynamic '" + spec.text + "': the example has no " + step->str() +
                          ": " + step->base()->str() + " is " + why);
    }
    value = std::move(next);
  }
  // Two paths may reach one int (a property and the attribute it reads).
  if (llvm::any_of(interp.values().declaredInts(), [&](const ValueBuilder::DeclaredInt& d) {
        return d.source && *d.source == *source;
      }))
    return captureError("--dynamic '" + spec.text + "': " + source->str() +
                        " is declared by another --dynamic option too (a property or a class "
                        "attribute reads the same int): declare it once");
  if (!PyLong_CheckExact(value.get()))
    return captureError("--dynamic '" + spec.text + "': the example's " + source->str() + " is a " +
                        Py_TYPE(value.get())->tp_name +
                        ", not an int; only an int can be a symbolic int");
  int overflow = 0;
  long long example = PyLong_AsLongLongAndOverflow(value.get(), &overflow);
  if (overflow)
    return captureError("--dynamic '" + spec.text + "': the example's " + source->str() +
                        " does not fit in 64 bits");
  std::optional<int64_t> hint;
  if (auto it = sizeHints.find(spec.symbol); it != sizeHints.end())
    hint = it->second;
  if (!spec.range.contains(hint.value_or(example)))
    return captureError("--dynamic '" + spec.text + "': the example's " + source->str() + " is " +
                        std::to_string(hint.value_or(example)) + ", outside the range");
  if (!hint && (example == 0 || example == 1))
    return captureError("--dynamic '" + spec.text + "': the example's " + source->str() + " is " +
                        std::to_string(example) +
                        "; torch specializes sizes 0 and 1, so a symbolic int needs an example "
                        "of 2 or more");
  ValueBuilder::DeclaredInt declared{source, {0, spec.symbol, spec.range, hint}, nullptr, nullptr};
  if (watch) {
    Interpreter::DynamicWatch watched{PyRef(),    0,     spec.text,  source->str(),
                                      spec.range, false, splitRanges};
    watched.intArgument = true;
    declared.onMade = [&interp, watched](const ValuePtr& value) {
      Interpreter::DynamicWatch made = watched;
      made.fake = value->object;
      interp.watchDynamic(std::move(made));
    };
  }
  interp.values().declareInt(std::move(declared));
  return llvm::Error::success();
}

} // namespace dync::capture
