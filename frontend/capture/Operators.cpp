//===- Operators.cpp - Operators, comparisons, identity and `in` ----------===//
//
// Binary and unary operators and rich comparisons: constants and SymInts
// through CPython's own C API, tensors through the oracle with the
// `operator` module function, sequences structurally, objects made while
// capturing through their special methods; identity and membership.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DictInstances.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/MappingProxies.h"
#include "frontend/capture/NumpyConstants.h"
#include "frontend/capture/ObjectSemantics.h"
#include "frontend/capture/TensorNumbers.h"
#include "frontend/capture/TypeNames.h"
#include "frontend/capture/ValueBuilder.h"

#include <algorithm>

namespace dync::capture {

using python::PyRef;

namespace {

bool isNumberLike(const ValuePtr& value) {
  return value->kind == ValueKind::Constant || value->kind == ValueKind::SymNum;
}

/// A torch.SymFloat or SymBool: arithmetic on one is a node of the graph
/// (the oracle records it), since the IR's symbolic integers cannot hold
/// it; a SymInt's stays a symbolic integer.
bool isSymbolicScalar(const SemanticsContext& cx, const ValuePtr& value) {
  if (value->kind != ValueKind::SymNum)
    return false;
  PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(value->object.get()));
  return type == cx.types().symFloat.get() || type == cx.types().symBool.get();
}

bool isFloatConstant(const ValuePtr& value) {
  return value->kind == ValueKind::Constant && value->object && PyFloat_Check(value->object.get());
}

/// Whether \p a and \p b are an int computed from tensor data (item()'s
/// `u0`) and a Python float: Python's arithmetic or comparison on them is a
/// float or a bool, which torch keeps as an expression no node computes
/// (`0.5*ToFloat(u0)`), so the oracle records it as a node. A symbolic size
/// with a float stays torch's expression (docs/tensor-oracle.md, "Float
/// arithmetic on sizes").
llvm::Expected<bool> isDataIntWithFloat(SemanticsContext& cx, const ValuePtr& a,
                                        const ValuePtr& b) {
  const ValuePtr* symbolic = a->kind == ValueKind::SymNum && isFloatConstant(b)   ? &a
                             : b->kind == ValueKind::SymNum && isFloatConstant(a) ? &b
                                                                                  : nullptr;
  if (!symbolic || isSymbolicScalar(cx, *symbolic))
    return false;
  return isDataNumber(cx.oracle(), *symbolic);
}

/// Whether Python arithmetic on \p a and \p b goes through the oracle as a
/// recorded scalar node: a float or bool operand from the oracle, a
/// division or a float power of a symbolic integer, which makes a float,
/// or an int from tensor data with a float.
llvm::Expected<bool> recordsScalar(SemanticsContext& cx, llvm::StringRef symbol, const ValuePtr& a,
                                   const ValuePtr& b) {
  if (isSymbolicScalar(cx, a) || isSymbolicScalar(cx, b))
    return true;
  bool arithmetic =
      llvm::is_contained({"+", "-", "*", "//", "%", "+=", "-=", "*=", "//=", "%="}, symbol);
  if (arithmetic)
    return isDataIntWithFloat(cx, a, b);
  bool division = symbol == "/" || symbol == "/=";
  bool symbolic = a->kind == ValueKind::SymNum || b->kind == ValueKind::SymNum;
  if (division)
    return symbolic;
  // `n ** 0.5` and `n ** -1` of a symbolic integer make a float too.
  if (symbolic && (symbol == "**" || symbol == "**=")) {
    auto floatOrNegative = [](const ValuePtr& v) {
      PyObject* o = v->object.get();
      return v->kind == ValueKind::Constant && o &&
             (PyFloat_Check(o) || (PyLong_Check(o) && !PyBool_Check(o) && _PyLong_Sign(o) < 0));
    };
    return (a->kind == ValueKind::Constant && PyFloat_Check(a->object.get())) || floatOrNegative(b);
  }
  return false;
}

/// A class, typing's alias of one (`Callable[[int], bool]`, `list[int]`),
/// or None: what `|` joins into a union in an annotation, which a function
/// defined inside another evaluates when it is made.
bool isAnnotation(const ValuePtr& value) {
  PyObject* object = value->object.get();
  if (object == Py_None)
    return true;
  if ((value->kind != ValueKind::Object && value->kind != ValueKind::Constant) || !object)
    return false;
  if (PyType_Check(object))
    return true;
  PyRef module = PyRef::steal(
      PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(object)), "__module__"));
  if (!module || !PyUnicode_Check(module.get())) {
    PyErr_Clear();
    return false;
  }
  llvm::StringRef name = PyUnicode_AsUTF8(module.get());
  return name == "typing" || name == "types" || name == "collections.abc" ||
         name == "_collections_abc";
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
llvm::Expected<ValuePtr> compareInstances(ObjectSemantics& semantics, const CompareRow& row,
                                          const ValuePtr& a, const ValuePtr& b) {
  for (bool reflected : {false, true}) {
    const ValuePtr& self = reflected ? b : a;
    const ValuePtr& other = reflected ? a : b;
    if (self->kind != ValueKind::Instance)
      continue;
    llvm::Expected<ValuePtr> result =
        semantics.context().callSpecial(self, reflected ? row.reflected : row.special, {other});
    if (!result || (*result && !isNotImplemented(*result)))
      return result;
    // object.__ne__ is the negation of __eq__.
    if (row.op != Py_NE || *result)
      continue;
    llvm::Expected<ValuePtr> equal = semantics.context().callSpecial(self, "__eq__", {other});
    if (!equal)
      return equal.takeError();
    if (!*equal || isNotImplemented(*equal))
      continue;
    llvm::Expected<bool> truth = semantics.truth(*equal);
    if (!truth)
      return truth.takeError();
    return makeBool(!*truth);
  }
  return nullptr;
}

/// The comparison \p name that the class of the real object \p self writes
/// in Python, as a function capture can run (null when the class has none,
/// or inherits a builtin one).
llvm::Expected<ValuePtr> pythonComparison(SemanticsContext& cx, const ValuePtr& self,
                                          llvm::StringRef name) {
  if (self->kind != ValueKind::Object || !self->object)
    return nullptr;
  PyObject* method = pythonMethodOfClass(self->object.get(), name);
  if (!method)
    return nullptr;
  return cx.values().functionFromReal(method, nullptr);
}

/// A comparison of real objects whose class writes it in Python (a
/// uuid.UUID, a config class's __eq__): the method runs inside capture, as
/// for objects made while capturing, so what it reads of the objects (their
/// fields, through their sources) is guarded. Comparing the real objects
/// in CPython would bake in an answer no guard checks: rebinding a global
/// to an unequal object would keep the old one. Null when neither class
/// writes the comparison in Python.
llvm::Expected<ValuePtr> compareRealObjects(ObjectSemantics& semantics, const CompareRow& row,
                                            const ValuePtr& a, const ValuePtr& b) {
  SemanticsContext& cx = semantics.context();
  for (bool reflected : {false, true}) {
    const ValuePtr& self = reflected ? b : a;
    const ValuePtr& other = reflected ? a : b;
    llvm::StringRef name = reflected ? row.reflected : row.special;
    llvm::Expected<ValuePtr> method = pythonComparison(cx, self, name);
    if (!method)
      return method.takeError();
    bool negate = false;
    // object.__ne__ is the negation of __eq__.
    if (!*method && row.op == Py_NE) {
      method = pythonComparison(cx, self, "__eq__");
      if (!method)
        return method.takeError();
      negate = true;
    }
    if (!*method)
      continue;
    llvm::Expected<ValuePtr> result = cx.call(*method, {self, other});
    if (!result)
      return result.takeError();
    if (isNotImplemented(*result))
      continue;
    if (!negate)
      return result;
    llvm::Expected<bool> truth = semantics.truth(*result);
    if (!truth)
      return truth.takeError();
    return makeBool(!*truth);
  }
  return nullptr;
}

/// CPython's comparison of two lists or two tuples, item by item, for
/// sequences holding values capture does not know (tensors, instances):
/// a pair of items is equal when identical or when `==` on them is true (on
/// tensors, a decision on their data, as it is in eager); the first pair
/// that differs decides, else the lengths do. Comparing them by identity
/// instead would call `[2, n] == [2, 2]` false for a tensor `n` equal to 2.
llvm::Expected<ValuePtr> compareSequences(ObjectSemantics& semantics, const CompareRow& row,
                                          const ValuePtr& a, const ValuePtr& b) {
  size_t sizeA = a->items.size(), sizeB = b->items.size();
  bool equality = row.op == Py_EQ || row.op == Py_NE;
  if (equality && sizeA != sizeB)
    return makeBool(row.op == Py_NE);
  for (size_t i = 0; i < std::min(sizeA, sizeB); ++i) {
    const ValuePtr& x = a->items[i];
    const ValuePtr& y = b->items[i];
    llvm::Expected<bool> same = semantics.identical(x, y);
    if (!same)
      return same.takeError();
    if (*same)
      continue;
    llvm::Expected<ValuePtr> equal = semantics.compare("==", x, y);
    if (!equal)
      return equal.takeError();
    llvm::Expected<bool> truth = semantics.truth(*equal);
    if (!truth)
      return truth.takeError();
    if (*truth)
      continue;
    if (equality)
      return makeBool(row.op == Py_NE);
    return semantics.compare(row.symbol, x, y);
  }
  switch (row.op) {
  case Py_EQ:
    return makeBool(true);
  case Py_NE:
    return makeBool(false);
  case Py_LT:
    return makeBool(sizeA < sizeB);
  case Py_LE:
    return makeBool(sizeA <= sizeB);
  case Py_GT:
    return makeBool(sizeA > sizeB);
  default:
    return makeBool(sizeA >= sizeB);
  }
}

/// PEP 584's `a | b` of dict \p a: a copy of \p a updated by dict \p b (so
/// of a's type, as CPython's dict and OrderedDict make it); `a |= b`
/// updates \p a itself, from any mapping or pairs `update` takes. Both run
/// dict's own methods, which capture already follows (keys guarded,
/// mutations of held dicts noted). Null when \p b is not a dict for `|`,
/// which CPython refuses too.
llvm::Expected<ValuePtr> mergeDicts(ObjectSemantics& semantics, const ValuePtr& a,
                                    const ValuePtr& b, bool inPlace) {
  if (!inPlace && b->kind != ValueKind::Dict)
    return nullptr;
  ValuePtr target = a;
  if (!inPlace) {
    llvm::Expected<ValuePtr> copy = semantics.getAttr(a, "copy");
    if (!copy)
      return copy.takeError();
    llvm::Expected<ValuePtr> copied = semantics.context().call(*copy, {});
    if (!copied)
      return copied.takeError();
    target = *copied;
  }
  llvm::Expected<ValuePtr> update = semantics.getAttr(target, "update");
  if (!update)
    return update.takeError();
  llvm::Expected<ValuePtr> done = semantics.context().call(*update, {b});
  if (!done)
    return done.takeError();
  return target;
}

} // namespace

llvm::Expected<ValuePtr> ObjectSemantics::binary(llvm::StringRef symbol, const ValuePtr& a,
                                                 const ValuePtr& b) {
  const BinaryRow* row = binaryRow(symbol);
  if (!row)
    return captureError("binary operator '" + symbol + "' is not supported");
  if (a->isTensor() || b->isTensor())
    return cx_.callOracle(cx_.operatorFunction(row->operatorName), {a, b}, {});
  if (isNumberLike(a) && isNumberLike(b)) {
    llvm::Expected<bool> records = recordsScalar(cx_, symbol, a, b);
    if (!records)
      return records.takeError();
    if (*records)
      return cx_.callOracle(cx_.operatorFunction(row->operatorName), {a, b}, {});
    PyRef result = PyRef::steal(row->apply(a->object.get(), b->object.get()));
    if (!result)
      return programError("computing '" + symbol + "'");
    return cx_.wrapFake(result.get());
  }
  llvm::StringRef plain = symbol.drop_back(symbol.ends_with("=") ? 1 : 0);
  bool inPlace = plain.size() != symbol.size();
  // A union of annotations is a new immutable typing object, made for real.
  if (symbol == "|" && isAnnotation(a) && isAnnotation(b)) {
    PyRef result = PyRef::steal(PyNumber_Or(a->object.get(), b->object.get()));
    if (!result)
      return programError("computing '|'");
    return cx_.wrapFake(result.get());
  }
  // Arrays of constants (`np.array(lengths) // block`) compute in NumPy; not
  // in place, which would change a real object behind speculation's back.
  if (!inPlace && (isConstantArray(a) || isConstantArray(b)) &&
      (isConstantArray(a) || a->kind == ValueKind::Constant) &&
      (isConstantArray(b) || b->kind == ValueKind::Constant)) {
    PyRef result = PyRef::steal(row->apply(a->object.get(), b->object.get()));
    if (!result)
      return programError("computing '" + symbol + "'");
    return cx_.values().wrapReal(result.get(), nullptr);
  }
  if (a->isSequence() && b->isSequence() && plain == "+") {
    if (inPlace && a->kind == ValueKind::List) {
      if (llvm::Error error = cx_.noteContainerMutation(a, "extending with '+='"))
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
  // Set algebra on sets of constants (`valid_keys - keys`): CPython's own,
  // on the real sets they stand for. A new set; `s -= t` rebinds s to it,
  // which only an alias of s could tell apart, so it is not taken here.
  if (a->kind == ValueKind::Set && b->kind == ValueKind::Set && !inPlace &&
      llvm::is_contained({"-", "|", "&", "^"}, plain) && allConstant(a->items) &&
      allConstant(b->items)) {
    llvm::Expected<PyRef> x = cx_.toPython(a);
    if (!x)
      return x.takeError();
    llvm::Expected<PyRef> y = cx_.toPython(b);
    if (!y)
      return y.takeError();
    PyRef result = PyRef::steal(row->apply(x->get(), y->get()));
    if (!result)
      return programError("computing '" + symbol + "' of two sets");
    ValuePtr set = makeValue(ValueKind::Set);
    PyRef iterator = PyRef::steal(PyObject_GetIter(result.get()));
    while (PyRef item = PyRef::steal(iterator ? PyIter_Next(iterator.get()) : nullptr))
      set->items.push_back(makeConstant(item));
    if (PyErr_Occurred())
      return programError("iterating over a set");
    return set;
  }
  if (plain == "|" && a->kind == ValueKind::Dict)
    if (llvm::Expected<ValuePtr> merged = mergeDicts(*this, a, b, inPlace); !merged || *merged)
      return merged;
  if (a->kind == ValueKind::Constant && (b->isSequence() || b->kind == ValueKind::Dict) &&
      plain == "%" && allConstant(b->items)) {
    llvm::Expected<PyRef> converted = cx_.toPython(b);
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

llvm::Expected<ValuePtr> ObjectSemantics::compare(llvm::StringRef symbol, const ValuePtr& a,
                                                  const ValuePtr& b) {
  const CompareRow* row = nullptr;
  for (const CompareRow& candidate : CompareRows)
    if (symbol == candidate.symbol)
      row = &candidate;
  if (!row)
    return captureError("comparison '" + symbol + "' is not supported");
  if (a->isTensor() || b->isTensor())
    return cx_.callOracle(cx_.operatorFunction(row->operatorName), {a, b}, {});
  if (a->kind == ValueKind::Instance || b->kind == ValueKind::Instance) {
    llvm::Expected<ValuePtr> result = compareInstances(*this, *row, a, b);
    if (!result || *result)
      return result;
  }
  if (a->kind == ValueKind::Object || b->kind == ValueKind::Object) {
    llvm::Expected<ValuePtr> result = compareRealObjects(*this, *row, a, b);
    if (!result || *result)
      return result;
  }
  if (isNumberLike(a) && isNumberLike(b)) {
    llvm::Expected<bool> intWithFloat = isDataIntWithFloat(cx_, a, b);
    if (!intWithFloat)
      return intWithFloat.takeError();
    if (*intWithFloat || isSymbolicScalar(cx_, a) || isSymbolicScalar(cx_, b))
      return cx_.callOracle(cx_.operatorFunction(row->operatorName), {a, b}, {});
  }
  if (isKnown(a) && isKnown(b)) {
    llvm::Expected<PyRef> x = cx_.toPython(a);
    if (!x)
      return x.takeError();
    llvm::Expected<PyRef> y = cx_.toPython(b);
    if (!y)
      return y.takeError();
    PyRef result = PyRef::steal(PyObject_RichCompare(x->get(), y->get(), row->op));
    if (!result)
      return programError("comparing with '" + symbol + "'");
    return cx_.wrapFake(result.get());
  }
  if (a->isSequence() && a->kind == b->kind)
    return compareSequences(*this, *row, a, b);
  if (row->op == Py_EQ || row->op == Py_NE) {
    llvm::Expected<bool> same = identical(a, b);
    if (!same)
      return same.takeError();
    return makeBool(*same == (row->op == Py_EQ));
  }
  return captureError("comparing '" + typeNameOf(a) + "' " + symbol + " '" + typeNameOf(b) +
                      "' is not supported");
}

llvm::Expected<ValuePtr> ObjectSemantics::unary(llvm::StringRef operatorName, const ValuePtr& a) {
  if (operatorName == "not_") {
    // `not x` of a number computed from tensor data is a bool the graph
    // computes (`x == 0`), not a decision: only a branch on it is one.
    llvm::Expected<bool> data = isDataNumber(cx_.oracle(), a);
    if (!data)
      return data.takeError();
    if (*data) {
      llvm::Expected<PyRef> negation = scalarsFunction("not_of_number");
      if (!negation)
        return negation.takeError();
      return cx_.callOracle(negation->get(), {a}, {});
    }
    llvm::Expected<bool> value = truth(a);
    if (!value)
      return value.takeError();
    return makeBool(!*value);
  }
  PyObject* function = cx_.operatorFunction(operatorName);
  if (a->isTensor() || isSymbolicScalar(cx_, a))
    return cx_.callOracle(function, {a}, {});
  if (isNumberLike(a)) {
    PyRef result = PyRef::steal(PyObject_CallOneArg(function, a->object.get()));
    if (!result)
      return programError("computing " + operatorName);
    return cx_.wrapFake(result.get());
  }
  return captureError("bad operand type for unary " + operatorName + ": '" + typeNameOf(a) + "'");
}

llvm::Expected<bool> ObjectSemantics::identical(const ValuePtr& a, const ValuePtr& b) {
  return identical(cx_.values(), a, b);
}

llvm::Expected<bool> ObjectSemantics::identical(ValueBuilder& values, const ValuePtr& a,
                                                const ValuePtr& b) {
  if (a == b)
    return true;
  // A list or dict read from the caller's objects is that real container.
  PyObject* realA = a->realObject() ? a->realObject() : a->realContainer.get();
  PyObject* realB = b->realObject() ? b->realObject() : b->realContainer.get();
  bool same = realA && realA == realB;
  // Two objects read through sources: the answer holds while the guards do
  // (SourceIdentity.cpp).
  if (realA && realB)
    values.guardIdentity(realA, a->source, realB, b->source, same);
  return same;
}

llvm::Error ObjectSemantics::addToSet(const ValuePtr& set, ValuePtr item) {
  llvm::Expected<bool> present = contains(set, item);
  if (!present)
    return present.takeError();
  if (!*present)
    set->items.push_back(std::move(item));
  return llvm::Error::success();
}

llvm::Expected<bool> ObjectSemantics::tensorContains(const ValuePtr& tensor, const ValuePtr& item) {
  // What Tensor.__contains__ does: whether any element equals the item,
  // read as a bool, so a decision on the tensor's data (specialized to the
  // example's side as `if (item == t).any():` is).
  PyObject* number = item->kind == ValueKind::Constant ? item->object.get() : nullptr;
  bool numeric = number && !Py_IsNone(number) &&
                 (PyLong_Check(number) || PyFloat_Check(number) || PyComplex_Check(number));
  if (!item->isTensor() && item->kind != ValueKind::SymNum && !numeric)
    return captureError("'in' on a tensor asks whether any element equals the item, which must "
                        "be a tensor or a number, not a " +
                        typeNameOf(item) + " (eager raises RuntimeError too)");
  llvm::Expected<ValuePtr> equal = compare("==", item, tensor);
  if (!equal)
    return equal.takeError();
  llvm::Expected<ValuePtr> any = getAttr(*equal, "any");
  if (!any)
    return any.takeError();
  llvm::Expected<ValuePtr> found = cx_.call(*any, {});
  if (!found)
    return found.takeError();
  return truth(*found);
}

llvm::Expected<bool> ObjectSemantics::contains(const ValuePtr& container, const ValuePtr& item) {
  if (ValuePtr viewed = mappingProxyTarget(container))
    return contains(viewed, item);
  if (container->kind == ValueKind::Instance) {
    llvm::Expected<ValuePtr> special = callInstanceSpecial(cx_, container, "__contains__", {item});
    if (!special)
      return special.takeError();
    if (*special)
      return truth(*special);
  }
  if (container->isTensor())
    return tensorContains(container, item);
  auto matches = [&](const ValuePtr& candidate) -> llvm::Expected<bool> {
    // A symbolic number is never the same key as a constant by identity;
    // CPython's `in` then compares them with ==, a decision on the number
    // (a guard on a size; refused as a data-dependent branch on a value
    // read from tensor data), never a silent False.
    if ((item->kind == ValueKind::SymNum && isNumberLike(candidate)) ||
        (candidate->kind == ValueKind::SymNum && isNumberLike(item))) {
      llvm::Expected<ValuePtr> equal = compare("==", candidate, item);
      if (!equal)
        return equal.takeError();
      return truth(*equal);
    }
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
    // A class is compared by identity (`type(x) in BUILTIN_TYPES`).
    if (item->isConstant() ||
        (item->kind == ValueKind::Object && item->object && PyType_Check(item->object.get()))) {
      if (llvm::Error refused = cx_.values().refuseChangedModuleRead(*container, "'in' on"))
        return refused;
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
