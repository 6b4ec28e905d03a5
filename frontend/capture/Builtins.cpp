//===- Builtins.cpp - Python builtins over symbolic values ----------------===//
//
// The builtins capture implements itself, as a table keyed by the builtin
// object: len, range, isinstance, ... over symbolic values, applying CPython
// to constants. Builtins that act on the world (print, open, input) stop
// capture with a reason instead of being guessed at.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/BuiltinMethods.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/SymbolicText.h"
#include "frontend/capture/TensorNumbers.h"
#include "frontend/capture/TorchSize.h"
#include "frontend/capture/TypeNames.h"
#include "frontend/embedding/PyStrings.h"

#include <functional>

namespace dync::capture {

using python::PyRef;

namespace {

using Args = std::vector<ValuePtr>;

llvm::Error arity(llvm::StringRef name, const Args& args, size_t min, size_t max) {
  if (args.size() >= min && args.size() <= max)
    return llvm::Error::success();
  return captureError(
      name + "() takes " +
      (min == max ? llvm::Twine(min) : llvm::Twine(min) + " to " + llvm::Twine(max)) +
      " arguments (" + llvm::Twine(args.size()) + " given)");
}

llvm::Error noKeywords(llvm::StringRef name, const KeywordArgs& kwargs) {
  if (kwargs.empty())
    return llvm::Error::success();
  return captureError(name + "() got an unexpected keyword argument '" + kwargs.front().first +
                      "'");
}

/// Calls \p object (a builtin) on constants in CPython.
llvm::Expected<ValuePtr> applyToConstants(BuiltinContext& interp, PyObject* object,
                                          const Args& args) {
  PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(args.size())));
  for (size_t i = 0; i < args.size(); ++i) {
    llvm::Expected<PyRef> arg = interp.toPython(args[i]);
    if (!arg)
      return arg.takeError();
    PyTuple_SET_ITEM(tuple.get(), i, arg->release());
  }
  PyRef result = PyRef::steal(PyObject_Call(object, tuple.get(), nullptr));
  if (!result)
    return programError("calling " + describeObject(object));
  return interp.wrapFake(result.get());
}

/// A builtin's __name__, or \p fallback.
std::string nameOf(PyObject* object, const char* fallback) {
  PyRef name = PyRef::steal(PyObject_GetAttrString(object, "__name__"));
  if (!name) {
    PyErr_Clear();
    return fallback;
  }
  return python::utf8Of(name.get()).value_or(fallback);
}

bool numeric(const ValuePtr& v) {
  return v->kind == ValueKind::Constant || v->kind == ValueKind::SymNum;
}

//===----------------------------------------------------------------------===//

llvm::Expected<ValuePtr> builtinLen(BuiltinContext& interp, const ValuePtr&, Args& args,
                                    KeywordArgs& kwargs) {
  if (auto e = arity("len", args, 1, 1))
    return e;
  if (auto e = noKeywords("len", kwargs))
    return e;
  return interp.length(args[0]);
}

llvm::Expected<ValuePtr> builtinIsinstance(BuiltinContext& interp, const ValuePtr&, Args& args,
                                           KeywordArgs& kwargs) {
  if (auto e = arity("isinstance", args, 2, 2))
    return e;
  if (auto e = noKeywords("isinstance", kwargs))
    return e;
  llvm::Expected<PyRef> type = interp.pythonType(args[0]);
  if (!type)
    return type.takeError();
  llvm::Expected<PyRef> classes = interp.toPython(args[1]);
  if (!classes)
    return classes.takeError();
  int result = PyObject_IsSubclass(type->get(), classes->get());
  if (result < 0)
    return pythonError("isinstance()");
  if (args[0]->source)
    interp.guards().add(typeGuard(args[0]->source, type->get()));
  return makeBool(result == 1);
}

/// The real class a value stands for, or null. A class is never symbolic,
/// whatever kind capture gives it: `int` and `tuple` are builtins capture
/// implements, `torch.Tensor` a torch callable, a user's class an object.
/// An Instance's `object` is its class, not the instance, so it is none.
PyObject* realClass(const ValuePtr& v) {
  switch (v->kind) {
  case ValueKind::Constant:
  case ValueKind::Object:
  case ValueKind::Builtin:
  case ValueKind::TorchCallable:
    return v->object && PyType_Check(v->object.get()) ? v->object.get() : nullptr;
  default:
    return nullptr;
  }
}

/// issubclass's second operand as Python takes it: a class, or a tuple of
/// them (nested tuples too); null when a part is not a real class.
PyRef realClassInfo(const ValuePtr& v) {
  if (PyObject* cls = realClass(v))
    return PyRef::borrow(cls);
  if (v->kind != ValueKind::Tuple)
    return PyRef();
  PyRef tuple = PyRef::steal(PyTuple_New(static_cast<Py_ssize_t>(v->items.size())));
  for (size_t i = 0; i < v->items.size(); ++i) {
    PyRef item = realClassInfo(v->items[i]);
    if (!item)
      return PyRef();
    PyTuple_SET_ITEM(tuple.get(), static_cast<Py_ssize_t>(i), item.release());
  }
  return tuple;
}

llvm::Expected<ValuePtr> builtinIssubclass(BuiltinContext& interp, const ValuePtr& self, Args& args,
                                           KeywordArgs& kwargs) {
  if (auto e = noKeywords("issubclass", kwargs))
    return e;
  if (auto e = arity("issubclass", args, 2, 2))
    return e;
  PyObject* cls = realClass(args[0]);
  PyRef classInfo = realClassInfo(args[1]);
  if (!cls || !classInfo) {
    if (!allConstant(args) && !llvm::all_of(args, [](const ValuePtr& v) {
          return v->kind == ValueKind::Object || v->kind == ValueKind::Tuple;
        }))
      return captureError("issubclass() of a symbolic value");
    return applyToConstants(interp, self->object.get(), args);
  }
  int result = PyObject_IsSubclass(cls, classInfo.get());
  if (result < 0)
    return pythonError("issubclass()");
  return makeBool(result == 1);
}

llvm::Expected<ValuePtr> builtinGetattr(BuiltinContext& interp, const ValuePtr&, Args& args,
                                        KeywordArgs& kwargs) {
  if (auto e = arity("getattr", args, 2, 3))
    return e;
  if (auto e = noKeywords("getattr", kwargs))
    return e;
  if (!args[1]->isConstant() || !PyUnicode_Check(args[1]->object.get()))
    return captureError("getattr() with an attribute name that is not a constant string");
  std::string name = python::utf8Of(args[1]->object.get()).value_or("");
  llvm::Expected<ValuePtr> value = interp.getAttr(args[0], name);
  if (value || args.size() == 2)
    return value;
  // With a default, only a missing attribute falls back to it.
  llvm::Error error = value.takeError();
  if (catchRaised(error, PyExc_AttributeError))
    return args[2];
  if (error.isA<RaisedException>())
    return error;
  std::string message = llvm::toString(std::move(error));
  if (message.find("AttributeError") != std::string::npos ||
      message.find("has no attribute") != std::string::npos)
    return args[2];
  return captureError(message);
}

llvm::Expected<ValuePtr> builtinSideEffect(BuiltinContext&, const ValuePtr& self, Args&,
                                           KeywordArgs&);

/// setattr(obj, "name", value) with a constant name is `obj.name = value`
/// (torch's old weight_norm pre-hook sets the module's weight this way):
/// an object made while capturing changes in capture, a module's or a real
/// object's attribute is kept and replayed after the graph as STORE_ATTR
/// keeps it (RealAttributes.cpp); anything else is refused there.
llvm::Expected<ValuePtr> builtinSetattr(BuiltinContext& interp, const ValuePtr& self, Args& args,
                                        KeywordArgs& kwargs) {
  if (auto e = arity("setattr", args, 3, 3))
    return e;
  if (auto e = noKeywords("setattr", kwargs))
    return e;
  const ValuePtr& base = args[0];
  if (!args[1]->isConstant() || !PyUnicode_Check(args[1]->object.get()) ||
      (base->kind != ValueKind::Instance && base->kind != ValueKind::Object &&
       base->kind != ValueKind::NNModule))
    return builtinSideEffect(interp, self, args, kwargs);
  std::string name = python::utf8Of(args[1]->object.get()).value_or("");
  llvm::Error error = base->kind == ValueKind::Instance
                          ? interp.setInstanceAttr(base, name, args[2])
                          : interp.setRealAttr(base, name, args[2]);
  if (error)
    return error;
  return makeNone();
}

llvm::Expected<ValuePtr> builtinHasattr(BuiltinContext& interp, const ValuePtr&, Args& args,
                                        KeywordArgs& kwargs) {
  if (auto e = arity("hasattr", args, 2, 2))
    return e;
  if (auto e = noKeywords("hasattr", kwargs))
    return e;
  if (!args[1]->isConstant() || !PyUnicode_Check(args[1]->object.get()))
    return captureError("hasattr() with an attribute name that is not a constant string");
  std::string name = python::utf8Of(args[1]->object.get()).value_or("");
  llvm::Expected<ValuePtr> value = interp.getAttr(args[0], name);
  if (value)
    return makeBool(true);
  llvm::Error error = value.takeError();
  if (catchRaised(error, PyExc_AttributeError))
    return makeBool(false);
  if (error.isA<RaisedException>())
    return error;
  std::string message = llvm::toString(std::move(error));
  if (message.find("AttributeError") != std::string::npos ||
      message.find("has no attribute") != std::string::npos)
    return makeBool(false);
  return captureError(message);
}

/// min and max of ints among which is a symbolic one (a size, or an int
/// read from tensor data): torch.sym_min and sym_max folded over them, the
/// symbolic minimum, as torch.export reads Python's min and max of sizes.
/// CPython's would compare them, guarding each to the side the example
/// takes (`min(s, 16)` would assume s <= 16 and contradict a --dynamic
/// range past 16), and an int from data has no side to guard on. Null where
/// that does not apply: floats or bools among them (Python's result keeps
/// the chosen item's type), or no symbolic int.
llvm::Expected<ValuePtr> symbolicMinMax(BuiltinContext& interp, const std::string& name,
                                        const Args& items) {
  PyObject* symInt = interp.types().symInt.get();
  bool symbolic = false;
  for (const ValuePtr& item : items) {
    PyObject* object = item->object.get();
    if (item->kind == ValueKind::SymNum &&
        Py_TYPE(object) == reinterpret_cast<PyTypeObject*>(symInt))
      symbolic = true;
    else if (item->kind != ValueKind::Constant || !PyLong_CheckExact(object))
      return nullptr;
  }
  if (!symbolic)
    return nullptr;
  PyRef fold = PyRef::steal(
      PyObject_GetAttrString(interp.types().torch.get(), name == "min" ? "sym_min" : "sym_max"));
  if (!fold)
    return pythonError("torch.sym_" + name);
  ValuePtr result = items.front();
  for (size_t i = 1; i < items.size(); ++i) {
    llvm::Expected<ValuePtr> next = applyToConstants(interp, fold.get(), {result, items[i]});
    if (!next)
      return next.takeError();
    result = *next;
  }
  return result;
}

/// Python's min or max of \p items made as CPython makes it: each item
/// compared with the best so far (`<` for min, `>` for max), each
/// comparison's truth decided as a branch on data is (DataBranches.cpp): on
/// the example's side, checked when the graph runs. \p what names the items
/// in a refusal, \p instead what the program may write instead.
llvm::Expected<ValuePtr> minMaxByDecisions(BuiltinContext& interp, const std::string& name,
                                           const Args& items, const std::string& what,
                                           const std::string& instead) {
  ValuePtr best = items.front();
  for (size_t i = 1; i < items.size(); ++i) {
    llvm::Expected<ValuePtr> better = interp.compare(name == "min" ? "<" : ">", items[i], best);
    if (!better)
      return better.takeError();
    llvm::Expected<bool> taken = interp.truth(*better);
    if (!taken)
      return llvm::handleErrors(taken.takeError(), [&](const CaptureError& e) -> llvm::Error {
        return llvm::make_error<CaptureError>(name + "() of " + what +
                                                  " decides which to return by the truth of a "
                                                  "comparison of their data: " +
                                                  e.reason() + " (" + instead + ")",
                                              e.stack());
      });
    if (*taken)
      best = items[i];
  }
  return best;
}

/// min and max: over constants and SymInts by CPython (torch's SymInt
/// semantics; ints with a symbolic one among them by symbolicMinMax), over
/// tensors and numbers read from tensor data by decisions on the data
/// (minMaxByDecisions; torch.min/max of two tensors is not what Python's
/// min does).
llvm::Expected<ValuePtr> builtinMinMax(BuiltinContext& interp, const ValuePtr& self, Args& args,
                                       KeywordArgs& kwargs) {
  std::string name = nameOf(self->object.get(), "min");
  if (auto e = noKeywords(name, kwargs))
    return e;
  Args items = args;
  if (args.size() == 1) {
    llvm::Expected<std::vector<ValuePtr>> unpacked = interp.unpack(args[0]);
    if (!unpacked)
      return unpacked.takeError();
    items = std::move(*unpacked);
  }
  if (items.empty())
    return captureError(name + "() arg is an empty sequence");
  // Python's max(a, b) returns a or b as `b > a` decides: for tensors a
  // decision on their data (torch.maximum is another operation: it
  // broadcasts, promotes, propagates NaN and splits ties' gradients).
  if (llvm::any_of(items, [](const ValuePtr& item) { return item->isTensor(); })) {
    if (auto other = llvm::find_if_not(
            items, [](const ValuePtr& item) { return item->isTensor() || numeric(item); });
        other != items.end())
      return captureError(name + "() of a tensor and a '" + typeNameOf(*other) +
                          "' value is not supported: only of tensors and numbers");
    return minMaxByDecisions(interp, name, items, "tensors",
                             std::string("torch.") + (name == "min" ? "minimum" : "maximum") +
                                 " is the graph's elementwise " + name);
  }
  // Other values (objects of the program's classes with __lt__ or __gt__,
  // as torch.distributions' _Match picks the most specific KL rule; strs,
  // tuples) compare as CPython compares them, each comparison followed.
  if (auto other = llvm::find_if_not(items, numeric); other != items.end()) {
    if (allConstant(items))
      return applyToConstants(interp, self->object.get(), items);
    return minMaxByDecisions(interp, name, items, "'" + typeNameOf(*other) + "' values",
                             "compare numbers or tensors they hold instead");
  }
  if (llvm::Expected<ValuePtr> folded = symbolicMinMax(interp, name, items); !folded || *folded)
    return folded;
  // A float or bool read from tensor data among them (`max(s, 1.0)` with
  // `s = t.item()`): which item Python returns, and so its type, is a
  // decision on the data, as for tensors.
  for (const ValuePtr& item : items) {
    llvm::Expected<bool> data = isDataNumber(interp.oracle(), item);
    if (!data)
      return data.takeError();
    if (*data)
      return minMaxByDecisions(interp, name, items, "numbers computed from tensor data",
                               std::string("torch.") + (name == "min" ? "minimum" : "maximum") +
                                   " of the tensors they were read from is the graph's own " +
                                   name);
  }
  return applyToConstants(interp, self->object.get(), items);
}

/// abs, int, float, bool, round, divmod, pow, str, hash of numbers: CPython
/// applied to constants and SymInts.
llvm::Expected<ValuePtr> builtinNumeric(BuiltinContext& interp, const ValuePtr& self, Args& args,
                                        KeywordArgs& kwargs) {
  // The name only for the message: describing a callable may ask torch.
  if (!kwargs.empty())
    if (auto e = noKeywords(describeObject(self->object.get()), kwargs))
      return e;
  if (args.size() == 1) {
    // float(t), bool(t), int(t) of a tensor, and of numbers computed from
    // tensor data, are graph values, not decisions.
    llvm::Expected<ValuePtr> number = numberFromData(interp, self->object.get(), args[0]);
    if (!number || *number)
      return number;
  }
  PyObject* builtins = PyEval_GetBuiltins();
  // divmod(a, b) of numbers computed from tensor data (TensorNumbers.h).
  if (self->object.get() == PyDict_GetItemString(builtins, "divmod"))
    if (llvm::Expected<ValuePtr> pair = divmodOfDataNumbers(interp, args); !pair || *pair)
      return pair;
  // round(s), pow(s, 2) of numbers computed from tensor data.
  if (llvm::any_of(llvm::ArrayRef<const char*>{"round", "pow"}, [&](const char* name) {
        return self->object.get() == PyDict_GetItemString(builtins, name);
      }))
    if (llvm::Expected<ValuePtr> number = functionOfDataNumbers(interp, self->object.get(), args);
        !number || *number)
      return number;
  if (self->object.get() == reinterpret_cast<PyObject*>(&PyBool_Type) && args.size() == 1) {
    llvm::Expected<bool> value = interp.truth(args[0]);
    if (!value)
      return value.takeError();
    return makeBool(*value);
  }
  if (PyCFunction_Check(self->object.get()) && args.size() == 1 && args[0]->isTensor()) {
    // abs(tensor) is the tensor's __abs__.
    return interp.callOracle(self->object.get(), args, {});
  }
  // The text of a class (`str(model.__class__)`, a registry's key) is its
  // qualified name: type's own __repr__, no code of the program.
  if (self->object.get() == reinterpret_cast<PyObject*>(&PyUnicode_Type) && args.size() == 1 &&
      args[0]->kind == ValueKind::Object && PyType_Check(args[0]->object.get()) &&
      Py_TYPE(args[0]->object.get())->tp_repr == PyType_Type.tp_repr)
    return applyToConstants(interp, self->object.get(), args);
  // The text of an exception (`str(error)` in a handler) when its class
  // writes no __str__ in Python: BaseException's own, on its arguments.
  if (self->object.get() == reinterpret_cast<PyObject*>(&PyUnicode_Type) && args.size() == 1 &&
      args[0]->kind == ValueKind::Object && PyExceptionInstance_Check(args[0]->object.get())) {
    PyRef strName = PyRef::steal(python::newStr("__str__"));
    PyObject* method = _PyType_Lookup(Py_TYPE(args[0]->object.get()), strName.get());
    if (method && !PyFunction_Check(method))
      return applyToConstants(interp, self->object.get(), args);
  }
  // The text of a container (`str(x.shape)` as a cache key, `str([h, w])`
  // in a message) is CPython's, on the value made real as repr's is: the
  // text of a tensor or of a symbolic size inside is refused there.
  if (self->object.get() == reinterpret_cast<PyObject*>(&PyUnicode_Type) && args.size() == 1 &&
      llvm::is_contained({ValueKind::Tuple, ValueKind::List, ValueKind::Dict, ValueKind::Set},
                         args[0]->kind)) {
    if (holdsSymbolicNumber(args[0]))
      return captureError(SymbolicTextRefusal);
    return callWithRealValues(interp, self->object.get(), args, kwargs, /*makesText=*/true);
  }
  if (!llvm::all_of(args, numeric))
    return captureError(describeObject(self->object.get()) + " of a non-constant value");
  // str(s) of a symbolic size would be the symbol's name.
  if (self->object.get() == reinterpret_cast<PyObject*>(&PyUnicode_Type) &&
      llvm::any_of(args, holdsSymbolicNumber))
    return captureError(SymbolicTextRefusal);
  return applyToConstants(interp, self->object.get(), args);
}

llvm::Expected<ValuePtr> builtinTuple(BuiltinContext& interp, const ValuePtr&, Args& args,
                                      KeywordArgs& kwargs) {
  if (auto e = arity("tuple", args, 0, 1))
    return e;
  if (auto e = noKeywords("tuple", kwargs))
    return e;
  if (args.empty())
    return makeTuple({});
  llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(args[0]);
  if (!items)
    return items.takeError();
  return makeTuple(std::move(*items));
}

llvm::Expected<ValuePtr> builtinList(BuiltinContext& interp, const ValuePtr&, Args& args,
                                     KeywordArgs& kwargs) {
  if (auto e = arity("list", args, 0, 1))
    return e;
  if (auto e = noKeywords("list", kwargs))
    return e;
  if (args.empty())
    return makeList({});
  llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(args[0]);
  if (!items)
    return items.takeError();
  return makeList(std::move(*items));
}

llvm::Expected<ValuePtr> builtinDict(BuiltinContext& interp, const ValuePtr&, Args& args,
                                     KeywordArgs& kwargs) {
  if (auto e = arity("dict", args, 0, 1))
    return e;
  ValuePtr dict = makeValue(ValueKind::Dict);
  if (!args.empty()) {
    if (args[0]->kind == ValueKind::Dict) {
      dict->entries = args[0]->entries;
    } else if (args[0]->kind == ValueKind::Instance && args[0]->contents) {
      // An object of a dict class (a defaultdict): CPython copies its items
      // directly unless the class iterates otherwise.
      PyRef iterName = PyRef::steal(python::newStr("__iter__"));
      PyObject* iter =
          _PyType_Lookup(reinterpret_cast<PyTypeObject*>(args[0]->object.get()), iterName.get());
      if (iter && PyFunction_Check(iter))
        return captureError("dict() of an object whose class defines __iter__ is not supported");
      dict->entries = args[0]->contents->entries;
    } else {
      llvm::Expected<std::vector<ValuePtr>> pairs = interp.unpack(args[0]);
      if (!pairs)
        return pairs.takeError();
      for (const ValuePtr& pair : *pairs) {
        llvm::Expected<std::vector<ValuePtr>> kv = interp.unpack(pair);
        if (!kv)
          return kv.takeError();
        if (kv->size() != 2)
          return captureError("dict() sequence element has length " + llvm::Twine(kv->size()) +
                              "; 2 is required");
        dict->entries.emplace_back((*kv)[0], (*kv)[1]);
      }
    }
  }
  for (auto& [name, value] : kwargs)
    dict->entries.emplace_back(makeConstantSteal(python::newStr(name)), value);
  return dict;
}

llvm::Expected<ValuePtr> builtinSet(BuiltinContext& interp, const ValuePtr&, Args& args,
                                    KeywordArgs& kwargs) {
  if (auto e = arity("set", args, 0, 1))
    return e;
  if (auto e = noKeywords("set", kwargs))
    return e;
  ValuePtr set = makeValue(ValueKind::Set);
  if (args.empty())
    return set;
  llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(args[0]);
  if (!items)
    return items.takeError();
  for (ValuePtr& item : *items) {
    if (llvm::Error error = interp.addToSet(set, std::move(item)))
      return error;
  }
  return set;
}

/// \p value, a symbolic int, as the example's int, with the guard that
/// it equals it recorded at the program's line (the value itself when it
/// is not symbolic).
llvm::Expected<ValuePtr> specializeSymbolicCount(BuiltinContext& interp, const ValuePtr& value) {
  if (value->kind != ValueKind::SymNum ||
      !PyObject_TypeCheck(value->object.get(),
                          reinterpret_cast<PyTypeObject*>(interp.types().symInt.get())))
    return value;
  PyRef node = PyRef::steal(PyObject_GetAttrString(value->object.get(), "node"));
  PyRef hint = node ? PyRef::steal(PyObject_GetAttrString(node.get(), "hint")) : PyRef();
  if (!hint || !PyLong_Check(hint.get())) {
    PyErr_Clear();
    return captureError("range() over a symbolic bound whose example value torch does not "
                        "know: the loop's trip count would depend on a dynamic size");
  }
  ValuePtr example = makeConstant(hint);
  llvm::Expected<ValuePtr> same = interp.compare("==", value, example);
  if (!same)
    return same.takeError();
  llvm::Expected<bool> holds = interp.truth(*same);
  if (!holds)
    return llvm::handleErrors(holds.takeError(), [](const CaptureError& e) -> llvm::Error {
      if (!llvm::StringRef(e.reason()).contains("contradicts the program"))
        return llvm::make_error<CaptureError>(e.reason(), e.stack());
      return llvm::make_error<CaptureError>(
          e.reason() +
              " (range() unrolls the Python loop at the example's trip count, as torch.export "
              "does: keep that dimension static, or loop in the graph over tensors with "
              "torch._higher_order_ops.while_loop)",
          e.stack());
    });
  if (!*holds)
    return captureError("range() over a symbolic bound: its example value is not its value");
  return example;
}

llvm::Expected<ValuePtr> builtinRange(BuiltinContext& interp, const ValuePtr& self, Args& args,
                                      KeywordArgs& kwargs) {
  if (auto e = arity("range", args, 1, 3))
    return e;
  if (auto e = noKeywords("range", kwargs))
    return e;
  if (!allConstant(args)) {
    // A bound read from tensor data is known only when the graph runs: the
    // loop must then be the graph's own, a while_loop over tensors; or,
    // by default, the example's trip count, checked when the graph runs.
    for (ValuePtr& arg : args) {
      llvm::Expected<bool> fromData = isDataNumber(interp.oracle(), arg);
      if (!fromData)
        return fromData.takeError();
      if (!*fromData)
        continue;
      std::string refusal =
          "range() over a number computed from tensor data: the loop's trip count is known "
          "only when the graph runs, while capture unrolls Python loops, so it cannot be "
          "captured (torch.export refuses it too): loop in the graph with torch's while_loop "
          "over tensors (torch._higher_order_ops.while_loop(cond_fn, body_fn, carried)), or "
          "compute the iterations with tensor operations";
      llvm::Expected<ValuePtr> known = interp.specializeIntOnExample(arg, refusal);
      if (!known)
        return known.takeError();
      if (!*known)
        return captureError(refusal);
      arg = *known;
    }
    // A bound computed from declared sizes (a count of chunks) is decided
    // as a branch on it is: the example's count, guarded, so the graph
    // serves the sizes with that count and export captures the others
    // apart; a bound that is a declared size itself pins it, which
    // contradicts the declaration at this line.
    for (ValuePtr& arg : args) {
      llvm::Expected<ValuePtr> count = specializeSymbolicCount(interp, arg);
      if (!count)
        return count.takeError();
      arg = *count;
    }
  }
  return applyToConstants(interp, self->object.get(), args);
}

llvm::Expected<ValuePtr> builtinEnumerate(BuiltinContext& interp, const ValuePtr&, Args& args,
                                          KeywordArgs& kwargs) {
  if (auto e = arity("enumerate", args, 1, 2))
    return e;
  long long start = 0;
  ValuePtr startValue = args.size() == 2 ? args[1] : nullptr;
  for (auto& [name, value] : kwargs)
    if (name == "start")
      startValue = value;
  if (startValue) {
    if (!startValue->isConstant() || !PyLong_Check(startValue->object.get()))
      return captureError("enumerate() start must be a constant int");
    start = PyLong_AsLongLong(startValue->object.get());
  }
  llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(args[0]);
  if (!items)
    return items.takeError();
  std::vector<ValuePtr> pairs;
  for (size_t i = 0; i < items->size(); ++i)
    pairs.push_back(makeTuple({makeInt(start + static_cast<long long>(i)), (*items)[i]}));
  return makeEagerIterator(std::move(pairs));
}

llvm::Expected<ValuePtr> builtinZip(BuiltinContext& interp, const ValuePtr&, Args& args,
                                    KeywordArgs& kwargs) {
  bool strict = false;
  for (auto& [name, value] : kwargs) {
    if (name != "strict")
      return captureError("zip() got an unexpected keyword argument '" + name + "'");
    llvm::Expected<bool> flag = interp.truth(value);
    if (!flag)
      return flag.takeError();
    strict = *flag;
  }
  std::vector<std::vector<ValuePtr>> columns;
  size_t shortest = SIZE_MAX;
  for (const ValuePtr& arg : args) {
    llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(arg);
    if (!items)
      return items.takeError();
    if (strict && shortest != SIZE_MAX && items->size() != shortest)
      return captureError("zip() arguments have different lengths");
    shortest = std::min(shortest, items->size());
    columns.push_back(std::move(*items));
  }
  if (columns.empty())
    shortest = 0;
  std::vector<ValuePtr> rows;
  for (size_t i = 0; i < shortest; ++i) {
    std::vector<ValuePtr> row;
    for (const auto& column : columns)
      row.push_back(column[i]);
    rows.push_back(makeTuple(std::move(row)));
  }
  return makeEagerIterator(std::move(rows));
}

llvm::Expected<ValuePtr> builtinReversed(BuiltinContext& interp, const ValuePtr&, Args& args,
                                         KeywordArgs&) {
  if (auto e = arity("reversed", args, 1, 1))
    return e;
  llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(args[0]);
  if (!items)
    return items.takeError();
  std::reverse(items->begin(), items->end());
  return makeEagerIterator(std::move(*items));
}

/// sorted(): CPython's own, on the items made real as a builtin method's
/// arguments are; a key function written in Python runs inlined, and
/// comparing tensors is a data-dependent branch (BuiltinMethods.h).
llvm::Expected<ValuePtr> builtinSorted(BuiltinContext& interp, const ValuePtr& self, Args& args,
                                       KeywordArgs& kwargs) {
  if (auto e = arity("sorted", args, 1, 1))
    return e;
  return callWithRealValues(interp, self->object.get(), args, kwargs);
}

/// repr(): CPython's, on the value made real as a builtin method's
/// arguments are; the text of a tensor or a symbolic size is refused.
llvm::Expected<ValuePtr> builtinRepr(BuiltinContext& interp, const ValuePtr& self, Args& args,
                                     KeywordArgs& kwargs) {
  if (auto e = arity("repr", args, 1, 1))
    return e;
  if (auto e = noKeywords("repr", kwargs))
    return e;
  return callWithRealValues(interp, self->object.get(), args, kwargs, /*makesText=*/true);
}

llvm::Expected<ValuePtr> builtinIter(BuiltinContext& interp, const ValuePtr&, Args& args,
                                     KeywordArgs&) {
  if (auto e = arity("iter", args, 1, 1))
    return e;
  return interp.iter(args[0]);
}

llvm::Expected<ValuePtr> builtinNext(BuiltinContext& interp, const ValuePtr&, Args& args,
                                     KeywordArgs&) {
  if (auto e = arity("next", args, 1, 2))
    return e;
  llvm::Expected<ValuePtr> item = interp.next(args[0]);
  if (!item)
    return item.takeError();
  if (*item)
    return *item;
  if (args.size() == 2)
    return args[1];
  return raiseBuiltin(PyExc_StopIteration, "", "the program raises");
}

llvm::Expected<ValuePtr> builtinAllAny(BuiltinContext& interp, const ValuePtr& self, Args& args,
                                       KeywordArgs&) {
  bool isAll = self->object.get() ==
               PyDict_GetItemString(PyModule_GetDict(interp.types().builtinsModule.get()), "all");
  if (auto e = arity(isAll ? "all" : "any", args, 1, 1))
    return e;
  llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(args[0]);
  if (!items)
    return items.takeError();
  for (const ValuePtr& item : *items) {
    llvm::Expected<bool> value = interp.truth(item);
    if (!value)
      return value.takeError();
    if (*value != isAll)
      return makeBool(!isAll);
  }
  return makeBool(isAll);
}

llvm::Expected<ValuePtr> builtinSum(BuiltinContext& interp, const ValuePtr&, Args& args,
                                    KeywordArgs& kwargs) {
  if (auto e = arity("sum", args, 1, 2))
    return e;
  ValuePtr total = args.size() == 2 ? args[1] : makeInt(0);
  for (auto& [name, value] : kwargs)
    if (name == "start")
      total = value;
  llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(args[0]);
  if (!items)
    return items.takeError();
  for (const ValuePtr& item : *items) {
    llvm::Expected<ValuePtr> next = interp.binary("+", total, item);
    if (!next)
      return next.takeError();
    total = *next;
  }
  return total;
}

/// math.prod(iterable, *, start=1): start times each item in turn, as
/// CPython multiplies them, so that a product of sizes (`math.prod(shape)`)
/// stays an expression in them where the C function would ask each for its
/// value.
llvm::Expected<ValuePtr> mathProd(BuiltinContext& interp, const ValuePtr&, Args& args,
                                  KeywordArgs& kwargs) {
  if (auto e = arity("prod", args, 1, 1))
    return e;
  ValuePtr product = makeInt(1);
  for (auto& [name, value] : kwargs) {
    if (name != "start")
      return captureError("prod() got an unexpected keyword argument '" + name + "'");
    product = value;
  }
  llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(args[0]);
  if (!items)
    return items.takeError();
  for (const ValuePtr& item : *items) {
    llvm::Expected<ValuePtr> next = interp.binary("*", product, item);
    if (!next)
      return next.takeError();
    product = *next;
  }
  return product;
}

llvm::Expected<ValuePtr> builtinMap(BuiltinContext& interp, const ValuePtr&, Args& args,
                                    KeywordArgs&) {
  if (args.size() < 2)
    return captureError("map() must have at least two arguments");
  std::vector<std::vector<ValuePtr>> columns;
  size_t shortest = SIZE_MAX;
  for (size_t i = 1; i < args.size(); ++i) {
    llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(args[i]);
    if (!items)
      return items.takeError();
    shortest = std::min(shortest, items->size());
    columns.push_back(std::move(*items));
  }
  std::vector<ValuePtr> results;
  for (size_t i = 0; i < shortest; ++i) {
    std::vector<ValuePtr> callArgs;
    for (const auto& column : columns)
      callArgs.push_back(column[i]);
    llvm::Expected<ValuePtr> result = interp.call(args[0], std::move(callArgs));
    if (!result)
      return result.takeError();
    results.push_back(*result);
  }
  return makeEagerIterator(std::move(results));
}

/// filter(function, iterable); filter(None, iterable) keeps the true items.
llvm::Expected<ValuePtr> builtinFilter(BuiltinContext& interp, const ValuePtr&, Args& args,
                                       KeywordArgs& kwargs) {
  if (auto e = arity("filter", args, 2, 2))
    return e;
  if (auto e = noKeywords("filter", kwargs))
    return e;
  llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(args[1]);
  if (!items)
    return items.takeError();
  std::vector<ValuePtr> kept;
  for (const ValuePtr& item : *items) {
    ValuePtr decided = item;
    if (!args[0]->isNone()) {
      llvm::Expected<ValuePtr> result = interp.call(args[0], {item});
      if (!result)
        return result.takeError();
      decided = *result;
    }
    llvm::Expected<bool> keep = interp.truth(decided);
    if (!keep)
      return keep.takeError();
    if (*keep)
      kept.push_back(item);
  }
  return makeEagerIterator(std::move(kept));
}

llvm::Expected<ValuePtr> builtinSlice(BuiltinContext&, const ValuePtr&, Args& args, KeywordArgs&) {
  if (auto e = arity("slice", args, 1, 3))
    return e;
  ValuePtr slice = makeValue(ValueKind::Slice);
  if (args.size() == 1)
    slice->items = {makeNone(), args[0], makeNone()};
  else
    slice->items = {args[0], args[1], args.size() == 3 ? args[2] : makeNone()};
  return slice;
}

llvm::Expected<ValuePtr> builtinType(BuiltinContext& interp, const ValuePtr&, Args& args,
                                     KeywordArgs&) {
  if (auto e = arity("type", args, 1, 1))
    return e;
  llvm::Expected<PyRef> type = interp.pythonType(args[0]);
  if (!type)
    return type.takeError();
  if (args[0]->source)
    interp.guards().add(typeGuard(args[0]->source, type->get()));
  ValuePtr value = makeValue(ValueKind::Object, *type);
  // The class of a module or object read through a source: what the program
  // reads from it is read as `type(SRC).NAME`, and guarded.
  if (args[0]->source &&
      (args[0]->kind == ValueKind::Object || args[0]->kind == ValueKind::NNModule))
    value->classOf = args[0]->source;
  return value;
}

llvm::Expected<ValuePtr> builtinCallable(BuiltinContext&, const ValuePtr&, Args& args,
                                         KeywordArgs&) {
  if (auto e = arity("callable", args, 1, 1))
    return e;
  switch (args[0]->kind) {
  case ValueKind::Function:
  case ValueKind::BoundMethod:
  case ValueKind::NNModule:
  case ValueKind::Builtin:
  case ValueKind::TorchCallable:
    return makeBool(true);
  case ValueKind::Constant:
  case ValueKind::Object:
    return makeBool(PyCallable_Check(args[0]->object.get()));
  case ValueKind::Instance:
    // An instance is callable when its class defines __call__.
    return makeBool(reinterpret_cast<PyTypeObject*>(args[0]->object.get())->tp_call != nullptr);
  default:
    return makeBool(false);
  }
}

llvm::Expected<ValuePtr> builtinSuper(BuiltinContext& interp, const ValuePtr&, Args& args,
                                      KeywordArgs&) {
  if (args.empty()) {
    // What CPython's super() reads from the calling frame: its first
    // argument and the __class__ cell the compiler made for methods that
    // use super.
    Frame* frame = interp.currentFrame();
    if (!frame || frame->code->co_argcount == 0 || frame->locals.empty())
      return captureError("super(): no arguments");
    ValuePtr self = frame->locals[0];
    if (self && self->kind == ValueKind::Cell)
      self = self->cell;
    PyObject* names = frame->code->co_localsplusnames;
    ValuePtr cls;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names); ++i)
      if (python::utf8Of(PyTuple_GET_ITEM(names, i)).value_or("") == "__class__" &&
          static_cast<size_t>(i) < frame->locals.size() && frame->locals[i] &&
          frame->locals[i]->kind == ValueKind::Cell)
        cls = frame->locals[i]->cell;
    if (!self || !cls)
      return captureError("super(): __class__ cell not found");
    args = {cls, self};
  }
  if (args.size() != 2)
    return captureError("super() takes zero or two arguments");
  if (args[0]->kind != ValueKind::Object || !PyType_Check(args[0]->object.get()))
    return captureError("super() argument 1 must be a type");
  (void)interp;
  ValuePtr value = makeValue(ValueKind::Super, args[0]->object);
  value->items = {args[1]};
  return value;
}

/// Tensors that reach torch functions through capture are fake tensors
/// without __torch_function__ overrides, so the override checks in
/// torch.nn.functional are always false.
llvm::Expected<ValuePtr> builtinHasTorchFunction(BuiltinContext&, const ValuePtr&, Args& args,
                                                 KeywordArgs&) {
  std::vector<ValuePtr> pending(args.begin(), args.end());
  while (!pending.empty()) {
    ValuePtr value = pending.back();
    pending.pop_back();
    if (value->isSequence()) {
      pending.insert(pending.end(), value->items.begin(), value->items.end());
      continue;
    }
    if (value->kind == ValueKind::Object)
      return captureError("__torch_function__ overrides on " + describeObject(value->object.get()) +
                          " are not supported");
  }
  return makeBool(false);
}

/// collections.deque(iterable, maxlen=0): the idiom that runs an iterator
/// to its end for the calls it makes (torch's pytree.tree_map_ does). The
/// deque keeps nothing, so it is a real empty one. Other deques are
/// mutable containers capture does not model.
llvm::Expected<ValuePtr> collectionsDeque(BuiltinContext& interp, const ValuePtr& self, Args& args,
                                          KeywordArgs& kwargs) {
  ValuePtr maxlen = args.size() == 2 ? args[1] : nullptr;
  for (auto& [name, value] : kwargs)
    if (name == "maxlen")
      maxlen = value;
  if (args.size() != 1 + (kwargs.empty() ? 1 : 0) || kwargs.size() > 1 || !maxlen ||
      !maxlen->isConstant() || !PyLong_Check(maxlen->object.get()) ||
      PyLong_AsLong(maxlen->object.get()) != 0)
    return captureError("collections.deque is not supported yet, except deque(iterable, "
                        "maxlen=0), which runs an iterator to its end");
  llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(args[0]);
  if (!items)
    return items.takeError();
  PyRef nothing = PyRef::steal(PyTuple_New(0));
  PyRef empty =
      nothing ? PyRef::steal(PyObject_CallFunction(self->object.get(), "Oi", nothing.get(), 0))
              : PyRef();
  if (!empty)
    return pythonError("making an empty deque");
  return interp.values().wrapReal(empty.get(), nullptr);
}

/// itertools.accumulate(numbers): the running sums, of numbers known while
/// capturing (torch's vmap splits a batch into chunks at them).
llvm::Expected<ValuePtr> itertoolsAccumulate(BuiltinContext& interp, const ValuePtr&, Args& args,
                                             KeywordArgs& kwargs) {
  if (args.size() != 1 || !kwargs.empty())
    return captureError("itertools.accumulate is supported with one iterable only (no function "
                        "and no initial value)");
  llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(args[0]);
  if (!items)
    return items.takeError();
  std::vector<ValuePtr> sums;
  PyRef total;
  for (const ValuePtr& item : *items) {
    if (!item->isConstant())
      return captureError("itertools.accumulate over a " + spelling(item->kind) +
                          " value is not supported");
    total = total ? PyRef::steal(PyNumber_Add(total.get(), item->object.get())) : item->object;
    if (!total)
      return programError("itertools.accumulate");
    sums.push_back(makeConstant(total));
  }
  return makeEagerIterator(std::move(sums));
}

/// itertools.repeat(x, n): n times the same value.
llvm::Expected<ValuePtr> itertoolsRepeat(BuiltinContext&, const ValuePtr&, Args& args,
                                         KeywordArgs& kwargs) {
  ValuePtr times = args.size() == 2 ? args[1] : nullptr;
  for (auto& [name, value] : kwargs)
    if (name == "times")
      times = value;
  if (args.empty() || args.size() > 2)
    return captureError("repeat() takes an object and an optional count");
  if (!times)
    return captureError("itertools.repeat() without a count never ends");
  if (!times->isConstant() || !PyLong_Check(times->object.get()))
    return captureError("itertools.repeat() count must be a constant int");
  long long n = PyLong_AsLongLong(times->object.get());
  return makeEagerIterator(std::vector<ValuePtr>(static_cast<size_t>(std::max(0LL, n)), args[0]));
}

/// itertools.chain(a, b, ...): the items of each in turn.
llvm::Expected<ValuePtr> itertoolsChain(BuiltinContext& interp, const ValuePtr&, Args& args,
                                        KeywordArgs& kwargs) {
  if (auto e = noKeywords("chain", kwargs))
    return e;
  std::vector<ValuePtr> items;
  for (const ValuePtr& arg : args) {
    llvm::Expected<std::vector<ValuePtr>> part = interp.unpack(arg);
    if (!part)
      return part.takeError();
    items.insert(items.end(), part->begin(), part->end());
  }
  return makeEagerIterator(std::move(items));
}

/// A count argument of an itertools function: a constant int >= 0.
llvm::Expected<size_t> itertoolsCount(llvm::StringRef function, llvm::StringRef what,
                                      const ValuePtr& value) {
  if (!value->isConstant() || !PyLong_Check(value->object.get()))
    return captureError("itertools." + function + "() " + what + " must be a constant int");
  long long n = PyLong_AsLongLong(value->object.get());
  if (n < 0)
    return captureError("the program raises ValueError: itertools." + function + "() " + what +
                        " must be non-negative");
  return static_cast<size_t>(n);
}

/// Combinatoric iterators are unrolled like loops; past this many items the
/// program is not one capture should unroll.
constexpr size_t MaxCombinatoricItems = 1 << 16;

llvm::Error tooManyItems(llvm::StringRef function, size_t count) {
  if (count <= MaxCombinatoricItems)
    return llvm::Error::success();
  return captureError("itertools." + function + "() gives more than " +
                      llvm::Twine(MaxCombinatoricItems) +
                      " items, more than capture unrolls; loop over a tensor dimension instead");
}

/// itertools.product(*iterables, repeat=1): the cartesian product, the last
/// pool advancing fastest (sliding-window offsets over every spatial axis).
llvm::Expected<ValuePtr> itertoolsProduct(BuiltinContext& interp, const ValuePtr&, Args& args,
                                          KeywordArgs& kwargs) {
  size_t repeat = 1;
  for (auto& [name, value] : kwargs) {
    if (name != "repeat")
      return captureError("product() got an unexpected keyword argument '" + name + "'");
    llvm::Expected<size_t> n = itertoolsCount("product", "repeat", value);
    if (!n)
      return n.takeError();
    repeat = *n;
  }
  std::vector<std::vector<ValuePtr>> given;
  for (const ValuePtr& arg : args) {
    llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(arg);
    if (!items)
      return items.takeError();
    given.push_back(std::move(*items));
  }
  std::vector<std::vector<ValuePtr>> pools;
  size_t count = 1;
  for (size_t r = 0; r < repeat; ++r)
    for (const auto& pool : given) {
      pools.push_back(pool);
      count = pool.empty() ? 0 : std::min(count * pool.size(), MaxCombinatoricItems + 1);
    }
  if (auto e = tooManyItems("product", count))
    return e;
  std::vector<ValuePtr> rows;
  std::vector<size_t> at(pools.size(), 0);
  for (size_t k = 0; k < count; ++k) {
    std::vector<ValuePtr> row;
    for (size_t i = 0; i < pools.size(); ++i)
      row.push_back(pools[i][at[i]]);
    rows.push_back(makeTuple(std::move(row)));
    for (size_t i = pools.size(); i-- > 0;) {
      if (++at[i] < pools[i].size())
        break;
      at[i] = 0;
    }
  }
  return makeEagerIterator(std::move(rows));
}

/// Index tuples of length r over n items in lexicographic order: strictly
/// increasing (combinations) or all distinct (permutations).
std::vector<std::vector<size_t>> indexTuples(size_t n, size_t r, bool ordered) {
  std::vector<std::vector<size_t>> out;
  std::vector<size_t> current;
  std::vector<bool> used(n, false);
  std::function<void()> extend = [&]() {
    if (current.size() == r) {
      out.push_back(current);
      return;
    }
    for (size_t i = ordered ? 0 : (current.empty() ? 0 : current.back() + 1); i < n; ++i) {
      if (ordered && used[i])
        continue;
      used[i] = true;
      current.push_back(i);
      extend();
      current.pop_back();
      used[i] = false;
      if (out.size() > MaxCombinatoricItems)
        return;
    }
  };
  if (r <= n)
    extend();
  return out;
}

/// itertools.combinations(iterable, r) and permutations(iterable, r=None):
/// tuples of the items, in CPython's order.
llvm::Expected<ValuePtr> itertoolsIndexTuples(BuiltinContext& interp, const ValuePtr& self,
                                              Args& args, KeywordArgs& kwargs) {
  std::string function = nameOf(self->object.get(), "");
  bool ordered = function == "permutations";
  ValuePtr r = args.size() == 2 ? args[1] : nullptr;
  for (auto& [name, value] : kwargs) {
    if (name != "r")
      return captureError(function + "() got an unexpected keyword argument '" + name + "'");
    r = value;
  }
  if (args.empty() || args.size() > 2 || (!ordered && !r))
    return captureError("itertools." + function + "() takes an iterable and " +
                        (ordered ? "an optional length" : "a length"));
  llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(args[0]);
  if (!items)
    return items.takeError();
  size_t length = items->size();
  if (r && !(ordered && r->isNone())) {
    llvm::Expected<size_t> n = itertoolsCount(function, "r", r);
    if (!n)
      return n.takeError();
    length = *n;
  }
  std::vector<std::vector<size_t>> tuples = indexTuples(items->size(), length, ordered);
  if (auto e = tooManyItems(function, tuples.size()))
    return e;
  std::vector<ValuePtr> rows;
  for (const auto& indices : tuples) {
    std::vector<ValuePtr> row;
    for (size_t i : indices)
      row.push_back((*items)[i]);
    rows.push_back(makeTuple(std::move(row)));
  }
  return makeEagerIterator(std::move(rows));
}

/// itertools.pairwise(iterable): each item with the next.
llvm::Expected<ValuePtr> itertoolsPairwise(BuiltinContext& interp, const ValuePtr&, Args& args,
                                           KeywordArgs& kwargs) {
  if (auto e = arity("pairwise", args, 1, 1))
    return e;
  if (auto e = noKeywords("pairwise", kwargs))
    return e;
  llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(args[0]);
  if (!items)
    return items.takeError();
  std::vector<ValuePtr> rows;
  for (size_t i = 1; i < items->size(); ++i)
    rows.push_back(makeTuple({(*items)[i - 1], (*items)[i]}));
  return makeEagerIterator(std::move(rows));
}

/// functools.reduce(function, iterable[, initial]), folding from the left.
llvm::Expected<ValuePtr> functoolsReduce(BuiltinContext& interp, const ValuePtr&, Args& args,
                                         KeywordArgs& kwargs) {
  if (auto e = arity("reduce", args, 2, 3))
    return e;
  if (auto e = noKeywords("reduce", kwargs))
    return e;
  llvm::Expected<std::vector<ValuePtr>> items = interp.unpack(args[1]);
  if (!items)
    return items.takeError();
  size_t next = 0;
  ValuePtr total = args.size() == 3 ? args[2] : nullptr;
  if (!total) {
    if (items->empty())
      return captureError("the program raises TypeError: reduce() of empty iterable with no "
                          "initial value");
    total = (*items)[next++];
  }
  for (; next < items->size(); ++next) {
    llvm::Expected<ValuePtr> folded = interp.call(args[0], {total, (*items)[next]});
    if (!folded)
      return folded.takeError();
    total = *folded;
  }
  return total;
}

llvm::Expected<ValuePtr> builtinReturnsNone(BuiltinContext&, const ValuePtr&, Args&, KeywordArgs&) {
  return makeNone();
}

llvm::Expected<ValuePtr> builtinSideEffect(BuiltinContext&, const ValuePtr& self, Args&,
                                           KeywordArgs&) {
  return captureError("call to " + describeObject(self->object.get()) +
                      " is a side effect outside the graph (it acts on the world, not on "
                      "tensors)");
}

/// operator.xxx(a, b) is the same operation as the operator syntax.
llvm::Expected<ValuePtr> operatorFunction(BuiltinContext& interp, const ValuePtr& self, Args& args,
                                          KeywordArgs&) {
  std::string name = nameOf(self->object.get(), "");
  static const std::pair<const char*, const char*> binaries[] = {
      {"add", "+"}, {"sub", "-"},     {"mul", "*"},     {"truediv", "/"}, {"floordiv", "//"},
      {"mod", "%"}, {"matmul", "@"},  {"pow", "**"},    {"and_", "&"},    {"or_", "|"},
      {"xor", "^"}, {"lshift", "<<"}, {"rshift", ">>"}, {"iadd", "+="},   {"imul", "*="}};
  static const std::pair<const char*, const char*> comparisons[] = {
      {"lt", "<"}, {"le", "<="}, {"eq", "=="}, {"ne", "!="}, {"gt", ">"}, {"ge", ">="}};
  if (args.size() == 2) {
    for (const auto& [fn, symbol] : binaries)
      if (name == fn)
        return interp.binary(symbol, args[0], args[1]);
    for (const auto& [fn, symbol] : comparisons)
      if (name == fn)
        return interp.compare(symbol, args[0], args[1]);
    if (name == "getitem")
      return interp.getItem(args[0], args[1]);
    if (name == "is_") {
      llvm::Expected<bool> same = interp.identical(args[0], args[1]);
      if (!same)
        return same.takeError();
      return makeBool(*same);
    }
    if (name == "contains") {
      llvm::Expected<bool> in = interp.contains(args[0], args[1]);
      if (!in)
        return in.takeError();
      return makeBool(*in);
    }
  }
  if (args.size() == 1 && (name == "neg" || name == "pos" || name == "not_" || name == "invert"))
    return interp.unary(name, args[0]);
  if (args.size() == 1 && name == "index" && args[0]->isConstant())
    return applyToConstants(interp, self->object.get(), args);
  return captureError("operator." + name + " with " + llvm::Twine(args.size()) +
                      " arguments is not supported");
}

struct Row {
  const char* name;
  BuiltinHandler handler;
};

const Row Rows[] = {
    {"builtins.len", builtinLen},
    {"builtins.isinstance", builtinIsinstance},
    {"builtins.issubclass", builtinIssubclass},
    {"builtins.getattr", builtinGetattr},
    {"builtins.hasattr", builtinHasattr},
    {"builtins.min", builtinMinMax},
    {"builtins.max", builtinMinMax},
    {"builtins.abs", builtinNumeric},
    {"builtins.int", builtinNumeric},
    {"builtins.float", builtinNumeric},
    {"builtins.bool", builtinNumeric},
    {"builtins.round", builtinNumeric},
    {"builtins.divmod", builtinNumeric},
    {"builtins.pow", builtinNumeric},
    {"builtins.str", builtinNumeric},
    {"builtins.tuple", builtinTuple},
    {"builtins.list", builtinList},
    {"builtins.dict", builtinDict},
    {"builtins.set", builtinSet},
    {"builtins.range", builtinRange},
    {"builtins.enumerate", builtinEnumerate},
    {"builtins.zip", builtinZip},
    {"builtins.reversed", builtinReversed},
    {"builtins.sorted", builtinSorted},
    {"builtins.repr", builtinRepr},
    {"builtins.iter", builtinIter},
    {"builtins.next", builtinNext},
    {"builtins.all", builtinAllAny},
    {"builtins.any", builtinAllAny},
    {"builtins.sum", builtinSum},
    {"math.prod", mathProd},
    {"builtins.map", builtinMap},
    {"builtins.filter", builtinFilter},
    {"builtins.slice", builtinSlice},
    {"builtins.type", builtinType},
    {"builtins.callable", builtinCallable},
    {"builtins.super", builtinSuper},
    {"builtins.input", builtinSideEffect},
    {"builtins.open", builtinSideEffect},
    {"builtins.exec", builtinSideEffect},
    {"builtins.eval", builtinSideEffect},
    {"builtins.setattr", builtinSetattr},
    {"builtins.delattr", builtinSideEffect},
    {"itertools.repeat", itertoolsRepeat},
    {"itertools.accumulate", itertoolsAccumulate},
    {"collections.deque", collectionsDeque},
    {"itertools.chain", itertoolsChain},
    {"itertools.product", itertoolsProduct},
    {"itertools.combinations", itertoolsIndexTuples},
    {"itertools.permutations", itertoolsIndexTuples},
    {"itertools.pairwise", itertoolsPairwise},
    {"functools.reduce", functoolsReduce},
    {"torch._C._has_torch_function", builtinHasTorchFunction},
    {"torch._C._has_torch_function_unary", builtinHasTorchFunction},
    {"torch._C._has_torch_function_variadic", builtinHasTorchFunction},
    {"torch._C._get_tracing_state", builtinReturnsNone},
    {"operator.add", operatorFunction},
    {"operator.sub", operatorFunction},
    {"operator.mul", operatorFunction},
    {"operator.truediv", operatorFunction},
    {"operator.floordiv", operatorFunction},
    {"operator.mod", operatorFunction},
    {"operator.matmul", operatorFunction},
    {"operator.pow", operatorFunction},
    {"operator.neg", operatorFunction},
    {"operator.not_", operatorFunction},
    {"operator.getitem", operatorFunction},
    {"operator.contains", operatorFunction},
    {"operator.eq", operatorFunction},
    {"operator.ne", operatorFunction},
    {"operator.lt", operatorFunction},
    {"operator.le", operatorFunction},
    {"operator.gt", operatorFunction},
    {"operator.ge", operatorFunction},
    {"operator.index", operatorFunction},
};

} // namespace

ValuePtr Interpreter::boundBuiltinMethod(const ValuePtr& base, PyObject* bound) const {
  if (!PyCFunction_Check(bound) || PyCFunction_GET_SELF(bound) != base->object.get())
    return nullptr;
  PyObject* descriptor =
      builtins_.methodDescriptor(reinterpret_cast<PyCFunctionObject*>(bound)->m_ml);
  if (!descriptor)
    return nullptr;
  ValuePtr method = makeValue(ValueKind::BoundMethod);
  method->items = {base, makeValue(ValueKind::Builtin, PyRef::borrow(descriptor))};
  return method;
}

/// Registers collections.namedtuple, made for real on known arguments
/// (NamedTupleFactory.cpp).
llvm::Error registerNamedTupleFactory(BuiltinContext& interp);

llvm::Error registerBuiltinHandlers(BuiltinContext& interp) {
  for (const Row& row : Rows) {
    llvm::StringRef name(row.name);
    llvm::Expected<PyRef> object = importObject(name);
    if (!object)
      return object.takeError();
    addBuiltin(interp, object->get(), row.handler);
  }
  if (llvm::Error error = registerBuiltinMethods(interp))
    return error;
  if (llvm::Error error = registerContextVarHandlers(interp))
    return error;
  if (llvm::Error error = registerSizeHandlers(interp))
    return error;
  if (llvm::Error error = registerClassHandlers(interp))
    return error;
  if (llvm::Error error = registerIdentityHandlers(interp))
    return error;
  if (llvm::Error error = registerExceptionInfoHandlers(interp))
    return error;
  if (llvm::Error error = registerTensorCopyHandlers(interp))
    return error;
  if (llvm::Error error = registerNamedTupleFactory(interp))
    return error;
  return registerInstanceHandlers(interp);
}

} // namespace dync::capture
