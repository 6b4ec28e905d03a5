//===- Value.cpp - The symbolic values capture computes with --------------===//
#include "frontend/capture/Value.h"
#include "frontend/capture/SymbolicText.h"

#include "llvm/ADT/STLExtras.h"

namespace dync::capture {

using python::PyRef;

llvm::StringRef spelling(ValueKind kind) {
  switch (kind) {
  case ValueKind::Constant:
    return "constant";
  case ValueKind::Tensor:
    return "tensor";
  case ValueKind::SymNum:
    return "symbolic number";
  case ValueKind::Tuple:
    return "tuple";
  case ValueKind::List:
    return "list";
  case ValueKind::Dict:
    return "dict";
  case ValueKind::Set:
    return "set";
  case ValueKind::Slice:
    return "slice";
  case ValueKind::Range:
    return "range";
  case ValueKind::Iterator:
    return "iterator";
  case ValueKind::Function:
    return "function";
  case ValueKind::BoundMethod:
    return "bound method";
  case ValueKind::NNModule:
    return "nn.Module";
  case ValueKind::Object:
    return "object";
  case ValueKind::Builtin:
    return "builtin";
  case ValueKind::TorchCallable:
    return "torch callable";
  case ValueKind::Cell:
    return "cell";
  case ValueKind::Null:
    return "NULL";
  case ValueKind::Super:
    return "super";
  case ValueKind::Instance:
    return "object made while capturing";
  }
  return "?";
}

PyObject* Value::realObject() const {
  switch (kind) {
  case ValueKind::Constant:
  case ValueKind::Tensor:
  case ValueKind::SymNum:
  case ValueKind::NNModule:
  case ValueKind::Object:
  case ValueKind::Builtin:
  case ValueKind::TorchCallable:
  case ValueKind::Function:
    return object.get();
  default:
    return nullptr;
  }
}

ValuePtr makeValue(ValueKind kind, PyRef object, SourcePtr source) {
  auto value = std::make_shared<Value>(kind);
  value->object = std::move(object);
  value->source = std::move(source);
  return value;
}

ValuePtr makeConstant(PyRef object, SourcePtr source) {
  return makeValue(ValueKind::Constant, std::move(object), std::move(source));
}

ValuePtr makeConstantSteal(PyObject* object) {
  if (!object)
    return nullptr;
  return makeConstant(PyRef::steal(object));
}

ValuePtr makeNone() { return makeConstant(PyRef::borrow(Py_None)); }
ValuePtr makeBool(bool value) { return makeConstant(PyRef::borrow(value ? Py_True : Py_False)); }
ValuePtr makeInt(long long value) { return makeConstantSteal(PyLong_FromLongLong(value)); }

ValuePtr makeTuple(std::vector<ValuePtr> items) {
  ValuePtr value = makeValue(ValueKind::Tuple);
  value->items = std::move(items);
  return value;
}

ValuePtr makeList(std::vector<ValuePtr> items) {
  ValuePtr value = makeValue(ValueKind::List);
  value->items = std::move(items);
  return value;
}

ValuePtr makeIterator(ValuePtr iterable) {
  ValuePtr value = makeValue(ValueKind::Iterator);
  value->iterable = std::move(iterable);
  return value;
}

ValuePtr makeEagerIterator(std::vector<ValuePtr> items) {
  return makeIterator(makeTuple(std::move(items)));
}

ValuePtr makeCell(ValuePtr contents) {
  ValuePtr value = makeValue(ValueKind::Cell);
  value->cell = std::move(contents);
  return value;
}

bool isKnown(const ValuePtr& value) {
  switch (value->kind) {
  case ValueKind::Constant:
  case ValueKind::SymNum:
  case ValueKind::Object:
    return true;
  case ValueKind::Tuple:
  case ValueKind::List:
  case ValueKind::Set:
  case ValueKind::Slice:
    return llvm::all_of(value->items, isKnown);
  case ValueKind::Dict:
    return llvm::all_of(value->entries, [](const auto& entry) {
      return isKnown(entry.first) && isKnown(entry.second);
    });
  default:
    return false;
  }
}

bool holdsSymbolicNumber(const ValuePtr& value) {
  switch (value->kind) {
  case ValueKind::SymNum:
    return true;
  case ValueKind::Tuple:
  case ValueKind::List:
  case ValueKind::Set:
  case ValueKind::Slice:
    return llvm::any_of(value->items, holdsSymbolicNumber);
  case ValueKind::Dict:
    return llvm::any_of(value->entries, [](const auto& entry) {
      return holdsSymbolicNumber(entry.first) || holdsSymbolicNumber(entry.second);
    });
  default:
    return false;
  }
}

bool allConstant(llvm::ArrayRef<ValuePtr> values) {
  for (const ValuePtr& value : values) {
    if (value->kind == ValueKind::Constant)
      continue;
    if ((value->kind == ValueKind::Tuple || value->kind == ValueKind::List) &&
        allConstant(value->items))
      continue;
    return false;
  }
  return true;
}

bool allConstantOrModules(llvm::ArrayRef<ValuePtr> values) {
  for (const ValuePtr& value : values) {
    if (value->kind == ValueKind::Constant || value->kind == ValueKind::NNModule)
      continue;
    if ((value->kind == ValueKind::Tuple || value->kind == ValueKind::List) &&
        allConstantOrModules(value->items))
      continue;
    return false;
  }
  return true;
}

} // namespace dync::capture
