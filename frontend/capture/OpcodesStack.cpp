//===- OpcodesStack.cpp - Stack, locals, attributes, containers -----------===//
#include "frontend/capture/BytecodeMachine.h"
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DictInstances.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/SymbolicText.h"
#include "frontend/capture/TensorDataAssignment.h"
#include "frontend/capture/TensorIndexStore.h"
#include "frontend/capture/TensorNumbers.h"
#include "frontend/capture/TypeNames.h"
#include "frontend/embedding/PyStrings.h"

#include <algorithm>

namespace dync::capture {

using bytecode::Instruction;
using python::PyRef;

namespace {

std::string nameAt(PyObject* tuple, uint32_t index) {
  if (!tuple || index >= PyTuple_GET_SIZE(tuple))
    return "?";
  return python::utf8Of(PyTuple_GET_ITEM(tuple, index)).value_or("?");
}

std::string localName(const Frame& f, uint32_t index) {
  return nameAt(f.code->co_localsplusnames, index);
}

/// `items[a:b] = values` (and `items[a:b:c]`) on a list value, as CPython's
/// list_ass_slice does it: a plain slice is replaced by the values, whose
/// count may differ (PointNet++'s `view_shape[1:] = [1] * (n - 1)`); an
/// extended slice takes exactly as many values as it selects.
llvm::Error assignListSlice(ObjectSemantics& semantics, ValuePtr& list, const ValuePtr& key,
                            const ValuePtr& value) {
  llvm::Expected<PyRef> slice = semantics.context().toPython(key);
  if (!slice)
    return slice.takeError();
  llvm::Expected<std::vector<ValuePtr>> values = semantics.unpack(value);
  if (!values)
    return values.takeError();
  Py_ssize_t start, stop, step;
  if (PySlice_Unpack(slice->get(), &start, &stop, &step) < 0)
    return programError("assigning a slice");
  Py_ssize_t size = static_cast<Py_ssize_t>(list->items.size());
  Py_ssize_t count = PySlice_AdjustIndices(size, &start, &stop, step);
  std::vector<ValuePtr>& items = list->items;
  if (step == 1) {
    stop = std::max(start, stop);
    items.erase(items.begin() + start, items.begin() + stop);
    items.insert(items.begin() + start, values->begin(), values->end());
    return llvm::Error::success();
  }
  if (static_cast<Py_ssize_t>(values->size()) != count)
    return raiseBuiltin(PyExc_ValueError,
                        "attempt to assign sequence of size " + std::to_string(values->size()) +
                            " to extended slice of size " + std::to_string(count));
  for (Py_ssize_t i = 0; i < count; ++i)
    items[static_cast<size_t>(start + i * step)] = (*values)[static_cast<size_t>(i)];
  return llvm::Error::success();
}

} // namespace

ValuePtr BytecodeMachine::popUnread(Frame& f) {
  ValuePtr value = std::move(f.stack.back());
  f.stack.pop_back();
  return value;
}

void BytecodeMachine::readWhole(const ValuePtr& value) {
  llvm::Error error = values_.readAllUnread(value);
  if (!error)
    return;
  if (readError_)
    llvm::consumeError(std::move(error));
  else
    readError_.emplace(std::move(error));
}

llvm::Error BytecodeMachine::takeReadError() {
  if (!readError_)
    return llvm::Error::success();
  llvm::Error error = std::move(*readError_);
  readError_.reset();
  return error;
}

ValuePtr BytecodeMachine::pop(Frame& f) {
  ValuePtr value = popUnread(f);
  readWhole(value);
  return value;
}

std::vector<ValuePtr> BytecodeMachine::popN(Frame& f, size_t n) {
  std::vector<ValuePtr> values(f.stack.end() - static_cast<ptrdiff_t>(n), f.stack.end());
  f.stack.resize(f.stack.size() - n);
  for (const ValuePtr& value : values)
    readWhole(value);
  return values;
}

llvm::Error BytecodeMachine::op_NOP(Frame&, const Instruction&) { return llvm::Error::success(); }
llvm::Error BytecodeMachine::op_RESUME(Frame&, const Instruction&) {
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_POP_TOP(Frame& f, const Instruction&) {
  popUnread(f);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_PUSH_NULL(Frame& f, const Instruction&) {
  f.stack.push_back(makeValue(ValueKind::Null));
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_COPY(Frame& f, const Instruction& ins) {
  f.stack.push_back(f.stack[f.stack.size() - ins.arg]);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_SWAP(Frame& f, const Instruction& ins) {
  std::swap(f.stack.back(), f.stack[f.stack.size() - ins.arg]);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_LOAD_CONST(Frame& f, const Instruction& ins) {
  PyObject* constant = PyTuple_GET_ITEM(f.code->co_consts, ins.arg);
  // Constants of the code are part of the program, not inputs: no source,
  // no guard. Tuples of constants stay constants.
  if (PyTuple_CheckExact(constant) || PyFrozenSet_CheckExact(constant)) {
    llvm::Expected<ValuePtr> value = values_.wrapReal(constant, nullptr);
    if (!value)
      return value.takeError();
    f.stack.push_back(*value);
    return llvm::Error::success();
  }
  f.stack.push_back(makeConstant(PyRef::borrow(constant)));
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_LOAD_FAST(Frame& f, const Instruction& ins) {
  const ValuePtr& value = f.locals[ins.arg];
  if (!value)
    return raiseBuiltin(PyExc_UnboundLocalError, "local variable '" + localName(f, ins.arg) +
                                                     "' referenced before assignment");
  f.stack.push_back(value);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_STORE_FAST(Frame& f, const Instruction& ins) {
  f.locals[ins.arg] = popUnread(f);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_DELETE_FAST(Frame& f, const Instruction& ins) {
  f.locals[ins.arg] = nullptr;
  return llvm::Error::success();
}

llvm::Expected<ValuePtr> BytecodeMachine::loadGlobal(Frame& f, PyObject* name) {
  // What the program assigned while capturing (SideEffects.cpp).
  if (ValuePtr stored = context_.storedGlobal(f.globals, name))
    return stored;
  std::string text = python::utf8Of(name).value_or("?");
  PyObject* value = PyDict_GetItemWithError(f.globals, name);
  // A global of another module (a helper module's, torch's) is read through
  // sys.modules: guards pin it where they can (moduleReadSource).
  SourcePtr source = f.entryGlobals ? Source::global(text) : nullptr;
  if (!f.entryGlobals && value)
    source = values_.moduleGlobalSource(f.globals, text, value);
  if (!value) {
    if (PyErr_Occurred())
      return programError("reading global '" + text + "'");
    PyObject* builtins = PyDict_GetItemString(f.globals, "__builtins__");
    if (builtins && PyModule_Check(builtins))
      builtins = PyModule_GetDict(builtins);
    if (!builtins)
      builtins = PyModule_GetDict(types_.builtinsModule.get());
    value = PyDict_GetItemWithError(builtins, name);
    if (!value)
      return captureError("name '" + text + "' is not defined");
    source = nullptr;
  }
  return values_.wrapReal(value, source);
}

llvm::Error BytecodeMachine::op_LOAD_GLOBAL(Frame& f, const Instruction& ins) {
  if (ins.arg & 1)
    f.stack.push_back(makeValue(ValueKind::Null));
  ValueBuilder::UnreadListReads unread(values_);
  llvm::Expected<ValuePtr> value = loadGlobal(f, PyTuple_GET_ITEM(f.code->co_names, ins.arg >> 1));
  if (!value)
    return value.takeError();
  f.stack.push_back(*value);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_STORE_GLOBAL(Frame& f, const Instruction& ins) {
  // Kept by capture and replayed after the graph (SideEffects.cpp).
  ValuePtr value = pop(f);
  return context_.storeGlobal(f.globals, f.entryGlobals,
                              PyTuple_GET_ITEM(f.code->co_names, ins.arg), std::move(value));
}

llvm::Error BytecodeMachine::op_MAKE_CELL(Frame& f, const Instruction& ins) {
  f.locals[ins.arg] = makeCell(f.locals[ins.arg]);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_COPY_FREE_VARS(Frame& f, const Instruction& ins) {
  // The frame's function value put its closure cells in place already when
  // the frame was made (see inlineFunction); nothing to copy here.
  (void)f;
  (void)ins;
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_LOAD_CLOSURE(Frame& f, const Instruction& ins) {
  f.stack.push_back(f.locals[ins.arg]);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_LOAD_DEREF(Frame& f, const Instruction& ins) {
  const ValuePtr& cell = f.locals[ins.arg];
  if (!cell || cell->kind != ValueKind::Cell || !cell->cell)
    return captureError("free variable '" + localName(f, ins.arg) +
                        "' referenced before assignment");
  f.stack.push_back(cell->cell);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_STORE_DEREF(Frame& f, const Instruction& ins) {
  ValuePtr value = popUnread(f);
  ValuePtr& cell = f.locals[ins.arg];
  if (!cell || cell->kind != ValueKind::Cell)
    cell = makeCell(nullptr);
  if (llvm::Error refused = context_.checkCellAssignment(cell, localName(f, ins.arg)))
    return refused;
  cell->cell = std::move(value);
  return context_.syncRealCell(cell);
}

llvm::Error BytecodeMachine::op_DELETE_DEREF(Frame& f, const Instruction& ins) {
  if (f.locals[ins.arg] && f.locals[ins.arg]->kind == ValueKind::Cell) {
    if (llvm::Error refused =
            context_.checkCellAssignment(f.locals[ins.arg], localName(f, ins.arg)))
      return refused;
    f.locals[ins.arg]->cell = nullptr;
    return context_.syncRealCell(f.locals[ins.arg]);
  }
  return llvm::Error::success();
}

/// Reads \p base whole when it is a list with unread items and \p name is
/// anything but the appending methods; what else \p base holds is read
/// when what the attribute gives is (UnreadLists.cpp).
static llvm::Error readForAttribute(ValueBuilder& values, const ValuePtr& base,
                                    llvm::StringRef name) {
  // A dict's get() reads one entry when called with a constant key
  // (OpcodesControl.cpp's getOfUnread); the bound method holds the dict,
  // which any other use of it reads whole.
  if (base->unreadItems && base->kind == ValueKind::Dict && name == "get")
    return llvm::Error::success();
  if (base->unreadItems &&
      (base->kind != ValueKind::List || (name != "append" && name != "extend")))
    return values.readUnread(base);
  return llvm::Error::success();
}

/// The code of the Python getter of the property \p name on the class of
/// \p base, or null: what it returns is the attribute, pushed on the
/// stack, so a dict it returns is left unread (UnreadDicts.cpp).
static PyObject* propertyGetterCode(const ValuePtr& base, llvm::StringRef name) {
  PyObject* type = nullptr;
  if (base->kind == ValueKind::NNModule || base->kind == ValueKind::Object)
    type = base->object ? reinterpret_cast<PyObject*>(Py_TYPE(base->object.get())) : nullptr;
  else if (base->kind == ValueKind::Instance && base->object && PyType_Check(base->object.get()))
    type = base->object.get();
  if (!type)
    return nullptr;
  PyRef nameObject = PyRef::steal(python::newStr(name));
  PyObject* attribute =
      nameObject ? _PyType_Lookup(reinterpret_cast<PyTypeObject*>(type), nameObject.get())
                 : nullptr;
  PyErr_Clear();
  if (!attribute || !Py_IS_TYPE(attribute, &PyProperty_Type))
    return nullptr;
  PyRef getter = PyRef::steal(PyObject_GetAttrString(attribute, "fget"));
  PyErr_Clear();
  // The property holds its getter, which holds its code.
  return getter && PyFunction_Check(getter.get()) ? PyFunction_GET_CODE(getter.get()) : nullptr;
}

llvm::Error BytecodeMachine::op_LOAD_ATTR(Frame& f, const Instruction& ins) {
  ValuePtr base = popUnread(f);
  // One attribute of a dict object with unread entries is read alone.
  llvm::Expected<ValuePtr> own =
      values_.readUnreadAttribute(base, nameAt(f.code->co_names, ins.arg));
  if (!own)
    return own.takeError();
  if (*own) {
    f.stack.push_back(*own);
    return llvm::Error::success();
  }
  if (llvm::Error error = readForAttribute(values_, base, nameAt(f.code->co_names, ins.arg)))
    return error;
  ValueBuilder::UnreadListReads unread(values_);
  unreadReturnCode_ = propertyGetterCode(base, nameAt(f.code->co_names, ins.arg));
  llvm::Expected<ValuePtr> value = semantics_.getAttr(base, nameAt(f.code->co_names, ins.arg));
  if (!value)
    return value.takeError();
  f.stack.push_back(*value);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_LOAD_METHOD(Frame& f, const Instruction& ins) {
  // Always the unbound form: NULL, then the bound attribute. CALL treats
  // both forms alike.
  ValuePtr base = popUnread(f);
  llvm::Expected<ValuePtr> own =
      values_.readUnreadAttribute(base, nameAt(f.code->co_names, ins.arg));
  if (!own)
    return own.takeError();
  if (*own) {
    f.stack.push_back(makeValue(ValueKind::Null));
    f.stack.push_back(*own);
    return llvm::Error::success();
  }
  if (llvm::Error error = readForAttribute(values_, base, nameAt(f.code->co_names, ins.arg)))
    return error;
  ValueBuilder::UnreadListReads unread(values_);
  unreadReturnCode_ = propertyGetterCode(base, nameAt(f.code->co_names, ins.arg));
  llvm::Expected<ValuePtr> value = semantics_.getAttr(base, nameAt(f.code->co_names, ins.arg));
  if (!value)
    return value.takeError();
  f.stack.push_back(makeValue(ValueKind::Null));
  f.stack.push_back(*value);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_STORE_ATTR(Frame& f, const Instruction& ins) {
  ValuePtr base = pop(f);
  ValuePtr value = pop(f);
  std::string name = nameAt(f.code->co_names, ins.arg);
  // Objects made while capturing are capture's own: assigning their
  // attributes is visible to nothing else.
  if (base->kind == ValueKind::Instance)
    return context_.setInstanceAttr(base, name, std::move(value));
  // A library's state object or a module: kept in capture's state, and
  // assigned to the real object after the graph (RealAttributes.cpp).
  if (base->kind == ValueKind::Object || base->kind == ValueKind::NNModule)
    return context_.setRealAttr(base, name, std::move(value));
  std::string target = base->source ? base->source->str() : "a " + spelling(base->kind).str();
  // `w.data *= mask` assigns back the alias it wrote in place.
  if (base->isTensor() && name == "data")
    return assignTensorData(base, value, target);
  // `p.requires_grad = False` (a GAN step freezing its critic) is torch's
  // own setter run by the oracle, which records the flag it changed as
  // requires_grad_() does (docs/capture.md, "Grad mode and autograd").
  if (base->isTensor() && name == "requires_grad") {
    PyObject* setattrFunction =
        PyDict_GetItemString(PyModule_GetDict(types_.builtinsModule.get()), "setattr");
    llvm::Expected<ValuePtr> set = context_.callOracle(
        setattrFunction, {base, makeConstant(PyRef::steal(python::newStr(name))), value}, {});
    return set ? llvm::Error::success() : set.takeError();
  }
  return captureError("assigning attribute '" + name + "' of " + target +
                      " (a side effect outside the graph)");
}

llvm::Error BytecodeMachine::op_BINARY_SUBSCR(Frame& f, const Instruction&) {
  ValuePtr key = pop(f);
  // An item of a container reads that item only: a list with unread items
  // it holds is read when the item taken is.
  ValuePtr base = popUnread(f);
  ValueBuilder::UnreadListReads unread(values_);
  // One entry of a dict with unread entries (`d['k']`, `vars(obj)[k]`) is
  // guarded alone (UnreadDicts.cpp).
  llvm::Expected<ValuePtr> entry = values_.readUnreadEntry(base, key);
  if (!entry)
    return entry.takeError();
  if (*entry) {
    f.stack.push_back(*entry);
    return llvm::Error::success();
  }
  if (llvm::Error error = values_.readUnread(base))
    return error;
  llvm::Expected<ValuePtr> value = semantics_.getItem(base, key);
  if (!value)
    return value.takeError();
  f.stack.push_back(*value);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_STORE_SUBSCR(Frame& f, const Instruction&) {
  ValuePtr key = pop(f);
  // An entry assigned by a constant key in a dict whose entries are unread
  // leaves the others unread: the assignment is replayed after the graph as
  // an update (UnreadDicts.cpp).
  ValuePtr base = popUnread(f);
  if (!storesIntoUnreadDict(base, key))
    readWhole(base);
  ValuePtr value = pop(f);
  if (base->isTensor()) {
    // A 0-d integer tensor index, whose value eager reads (TensorIndexStore.h).
    llvm::Expected<bool> stored = storeAtTensorIndex(context_, base, key, value);
    if (!stored)
      return stored.takeError();
    if (*stored)
      return llvm::Error::success();
    llvm::Expected<ValuePtr> result =
        context_.callOracle(context_.operatorFunction("setitem"), {base, key, value}, {});
    return result ? llvm::Error::success() : result.takeError();
  }
  if (base->kind == ValueKind::Instance) {
    llvm::Expected<ValuePtr> special =
        callInstanceSpecial(semantics_.context(), base, "__setitem__", {key, value});
    if (!special)
      return special.takeError();
    if (*special)
      return llvm::Error::success();
  }
  if (base->source && base->kind != ValueKind::List && base->kind != ValueKind::Dict)
    return captureError("assigning an item of " + base->source->str() +
                        " (mutating an input is a side effect outside the graph)");
  if (llvm::Error error = context_.noteContainerMutation(base, "assigning an item"))
    return error;
  if (base->kind == ValueKind::List && key->isConstant() && PyLong_Check(key->object.get())) {
    long long index = PyLong_AsLongLong(key->object.get());
    long long size = static_cast<long long>(base->items.size());
    if (index < 0)
      index += size;
    if (index < 0 || index >= size)
      return raiseBuiltin(PyExc_IndexError, "list assignment index out of range");
    base->items[index] = value;
    return llvm::Error::success();
  }
  bool constantSlice = (key->kind == ValueKind::Slice && allConstant(key->items)) ||
                       (key->isConstant() && PySlice_Check(key->object.get()));
  if (base->kind == ValueKind::List && constantSlice)
    return assignListSlice(semantics_, base, key, value);
  if (base->kind == ValueKind::Dict) {
    for (auto& [k, v] : base->entries) {
      llvm::Expected<bool> same = sameKey(semantics_, k, key);
      if (!same)
        return same.takeError();
      if (*same) {
        v = value;
        return llvm::Error::success();
      }
    }
    base->entries.emplace_back(key, value);
    return llvm::Error::success();
  }
  // A real object's items (a NumPy array made while capturing) would change
  // behind speculation's back.
  return captureError("item assignment on a " + typeNameOf(base) + " value is not supported");
}

llvm::Error BytecodeMachine::op_DELETE_SUBSCR(Frame& f, const Instruction&) {
  ValuePtr key = pop(f);
  ValuePtr base = pop(f);
  if (base->kind == ValueKind::Instance) {
    llvm::Expected<ValuePtr> special =
        callInstanceSpecial(semantics_.context(), base, "__delitem__", {key});
    if (!special)
      return special.takeError();
    if (*special)
      return llvm::Error::success();
  }
  // A list or dict of the caller's: refilled after the graph
  // (SideEffects.cpp).
  if (base->source && (base->kind == ValueKind::Dict || base->kind == ValueKind::List))
    if (llvm::Error error = context_.noteContainerMutation(base, "deleting an item"))
      return error;
  if (base->kind == ValueKind::Dict && key->isConstant()) {
    for (auto it = base->entries.begin(); it != base->entries.end(); ++it)
      if (it->first->isConstant() &&
          PyObject_RichCompareBool(it->first->object.get(), key->object.get(), Py_EQ) == 1) {
        base->entries.erase(it);
        return llvm::Error::success();
      }
    return raiseWith(PyExc_KeyError, key->object.get(), "KeyError: " + reprOf(key->object.get()));
  }
  if (base->kind == ValueKind::List && key->isConstant() && PyLong_Check(key->object.get())) {
    long long index = PyLong_AsLongLong(key->object.get());
    long long size = static_cast<long long>(base->items.size());
    if (index < 0)
      index += size;
    if (index < 0 || index >= size)
      return raiseBuiltin(PyExc_IndexError, "list assignment index out of range");
    base->items.erase(base->items.begin() + index);
    return llvm::Error::success();
  }
  return captureError("deleting an item of a " + spelling(base->kind) + " value");
}

//===----------------------------------------------------------------------===//
// Operators.
//===----------------------------------------------------------------------===//

llvm::Error BytecodeMachine::applyTwoOperands(Frame& f, const Instruction& ins,
                                              llvm::StringRef opname,
                                              llvm::ArrayRef<std::string> spellings,
                                              OperandsApplier apply) {
  ValuePtr b = pop(f);
  ValuePtr a = pop(f);
  if (ins.arg >= spellings.size())
    return captureError(opname + " with unknown operator " + llvm::Twine(ins.arg));
  llvm::Expected<ValuePtr> value = (semantics_.*apply)(spellings[ins.arg], a, b);
  if (!value)
    return value.takeError();
  f.stack.push_back(*value);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_BINARY_OP(Frame& f, const Instruction& ins) {
  return applyTwoOperands(f, ins, "BINARY_OP", opcodes_.binaryOps(), &ObjectSemantics::binary);
}

llvm::Error BytecodeMachine::op_COMPARE_OP(Frame& f, const Instruction& ins) {
  return applyTwoOperands(f, ins, "COMPARE_OP", opcodes_.compareOps(), &ObjectSemantics::compare);
}

llvm::Error BytecodeMachine::op_IS_OP(Frame& f, const Instruction& ins) {
  // Identity reads nothing of a list.
  ValuePtr b = popUnread(f);
  ValuePtr a = popUnread(f);
  llvm::Expected<bool> same = semantics_.identical(a, b);
  if (!same)
    return same.takeError();
  f.stack.push_back(makeBool(*same != (ins.arg == 1)));
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_CONTAINS_OP(Frame& f, const Instruction& ins) {
  ValuePtr container = popUnread(f);
  ValuePtr item = pop(f);
  // A constant key of a dict whose entries are unread: that key only.
  if (std::optional<bool> known = values_.containsUnread(container, item)) {
    f.stack.push_back(makeBool(*known != (ins.arg == 1)));
    return llvm::Error::success();
  }
  if (llvm::Error error = values_.readAllUnread(container))
    return error;
  llvm::Expected<bool> in = semantics_.contains(container, item);
  if (!in)
    return in.takeError();
  f.stack.push_back(makeBool(*in != (ins.arg == 1)));
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::unaryOperator(Frame& f, llvm::StringRef name) {
  ValuePtr a = pop(f);
  llvm::Expected<ValuePtr> value = semantics_.unary(name, a);
  if (!value)
    return value.takeError();
  f.stack.push_back(*value);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_UNARY_NEGATIVE(Frame& f, const Instruction&) {
  return unaryOperator(f, "neg");
}
llvm::Error BytecodeMachine::op_UNARY_POSITIVE(Frame& f, const Instruction&) {
  return unaryOperator(f, "pos");
}
llvm::Error BytecodeMachine::op_UNARY_INVERT(Frame& f, const Instruction&) {
  return unaryOperator(f, "invert");
}
llvm::Error BytecodeMachine::op_UNARY_NOT(Frame& f, const Instruction&) {
  return unaryOperator(f, "not_");
}

//===----------------------------------------------------------------------===//
// Containers and strings.
//===----------------------------------------------------------------------===//

llvm::Error BytecodeMachine::op_BUILD_TUPLE(Frame& f, const Instruction& ins) {
  f.stack.push_back(makeTuple(popN(f, ins.arg)));
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_BUILD_LIST(Frame& f, const Instruction& ins) {
  f.stack.push_back(makeList(popN(f, ins.arg)));
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_BUILD_SET(Frame& f, const Instruction& ins) {
  ValuePtr set = makeValue(ValueKind::Set);
  for (ValuePtr& item : popN(f, ins.arg)) {
    if (llvm::Error error = semantics_.addToSet(set, std::move(item)))
      return error;
  }
  f.stack.push_back(set);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_BUILD_MAP(Frame& f, const Instruction& ins) {
  std::vector<ValuePtr> items = popN(f, 2 * ins.arg);
  ValuePtr dict = makeValue(ValueKind::Dict);
  f.stack.push_back(dict);
  for (size_t i = 0; i < items.size(); i += 2) {
    f.stack.push_back(items[i + 1]);
    f.stack.push_back(dict);
    f.stack.push_back(items[i]);
    if (llvm::Error error = op_STORE_SUBSCR(f, ins))
      return error;
  }
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_BUILD_CONST_KEY_MAP(Frame& f, const Instruction& ins) {
  ValuePtr keys = pop(f);
  std::vector<ValuePtr> values = popN(f, ins.arg);
  ValuePtr dict = makeValue(ValueKind::Dict);
  for (size_t i = 0; i < values.size() && i < keys->items.size(); ++i)
    dict->entries.emplace_back(keys->items[i], values[i]);
  f.stack.push_back(dict);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_BUILD_SLICE(Frame& f, const Instruction& ins) {
  ValuePtr slice = makeValue(ValueKind::Slice);
  slice->items = popN(f, ins.arg);
  if (slice->items.size() == 2)
    slice->items.push_back(makeNone());
  f.stack.push_back(slice);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_BUILD_STRING(Frame& f, const Instruction& ins) {
  std::vector<ValuePtr> parts = popN(f, ins.arg);
  PyRef list = PyRef::steal(PyList_New(0));
  for (const ValuePtr& part : parts) {
    if (!part->isConstant() || !PyUnicode_Check(part->object.get()))
      return captureError("building a string from a " + spelling(part->kind) + " value");
    PyList_Append(list.get(), part->object.get());
  }
  PyRef empty = PyRef::steal(PyUnicode_FromString(""));
  ValuePtr value = makeConstantSteal(PyUnicode_Join(empty.get(), list.get()));
  if (!value)
    return pythonError("building a string");
  f.stack.push_back(value);
  return llvm::Error::success();
}

llvm::Expected<ValuePtr> BytecodeMachine::formattedTensorInt(const ValuePtr& tensor) {
  llvm::Expected<PyRef> fake = context_.toPython(tensor);
  if (!fake)
    return fake.takeError();
  // Only a 0-dim tensor of an integer dtype formats as an int; floats and
  // bools from data are not specialized here.
  PyRef dim = PyRef::steal(PyObject_CallMethod(fake->get(), "dim", nullptr));
  PyRef dtype = PyRef::steal(PyObject_GetAttrString(fake->get(), "dtype"));
  PyRef floating =
      dtype ? PyRef::steal(PyObject_GetAttrString(dtype.get(), "is_floating_point")) : PyRef();
  PyRef complex = dtype ? PyRef::steal(PyObject_GetAttrString(dtype.get(), "is_complex")) : PyRef();
  PyRef boolean = PyRef::steal(PyObject_GetAttrString(
      PyImport_AddModule("torch") ? PyImport_AddModule("torch") : Py_None, "bool"));
  PyErr_Clear();
  if (!dim || !PyLong_Check(dim.get()) || PyLong_AsLong(dim.get()) != 0 || !floating ||
      floating.get() != Py_False || !complex || complex.get() != Py_False ||
      dtype.get() == boolean.get()) {
    PyErr_Clear();
    return nullptr;
  }
  PyRef item = PyRef::steal(PyObject_GetAttrString(context_.types().tensor.get(), "item"));
  if (!item)
    return pythonError("reading torch.Tensor.item");
  llvm::Expected<ValuePtr> number = context_.callOracle(item.get(), {tensor}, {});
  if (!number)
    return number.takeError();
  if ((*number)->kind != ValueKind::SymNum)
    return *number;
  std::string refusal =
      "formatting a tensor's value as a string: the text depends on tensor data, known only "
      "when the graph runs, so it cannot be captured (torch.export refuses it too); select by "
      "the tensor instead (index a stacked tensor or a ModuleList with tensor operations), or "
      "format it outside the exported function";
  llvm::Expected<ValuePtr> known = context_.specializeIntOnExample(*number, refusal);
  if (!known)
    return known.takeError();
  if (!*known)
    return captureError(refusal);
  return *known;
}

llvm::Error BytecodeMachine::op_FORMAT_VALUE(Frame& f, const Instruction& ins) {
  ValuePtr spec = (ins.arg & 0x04) ? pop(f) : makeConstantSteal(PyUnicode_FromString(""));
  ValuePtr value = pop(f);
  // A tensor of one integer formats as its number: Tensor.__format__ runs
  // `self.item().__format__(spec)` for a 0-dim tensor (a router's
  // `self[f"expert_{idx[0]}"]`). That int is read from data, and is
  // specialized to the example's value with a fall-back check, as an int
  // from data that capture needs as a number is.
  // An int read from data (`f"{n.item()}"`) is specialized the same way: its
  // symbol's name is not the text eager gives.
  if (value->kind == ValueKind::SymNum) {
    llvm::Expected<bool> fromData = isDataNumber(context_.oracle(), value);
    if (!fromData)
      return fromData.takeError();
    if (*fromData) {
      std::string refusal =
          "formatting a number computed from tensor data as a string: the text is known only "
          "when the graph runs, so it cannot be captured (torch.export refuses it too); format "
          "it outside the exported function";
      llvm::Expected<ValuePtr> known = context_.specializeIntOnExample(value, refusal);
      if (!known)
        return known.takeError();
      if (!*known)
        return captureError(refusal);
      value = *known;
    }
  }
  if (value->kind == ValueKind::Tensor && (ins.arg & 0x03) == 0) {
    llvm::Expected<ValuePtr> number = formattedTensorInt(value);
    if (!number)
      return number.takeError();
    if (*number)
      value = *number;
  }
  // What is known while capturing formats as CPython would format it:
  // constants and containers of them (a warning's `f"{tuple(x.shape)}"`).
  // A symbolic size's text would be its symbol's name, not each call's
  // number; a tensor's text depends on its values.
  if (holdsSymbolicNumber(value))
    return captureError(SymbolicTextRefusal);
  if (!isKnown(value))
    return captureError(
        "formatting a " + spelling(value->kind) +
        " value as a string (an f-string, str() or format()): its text depends on tensor data, "
        "known only when the graph runs, so it cannot be captured (torch.export refuses it "
        "too); format it outside the exported function, or format what is known while "
        "capturing (its shape, dtype) instead");
  llvm::Expected<PyRef> known = context_.toPython(value);
  if (!known)
    return known.takeError();
  PyRef object = *known;
  switch (ins.arg & 0x03) {
  case 1:
    object = PyRef::steal(PyObject_Str(object.get()));
    break;
  case 2:
    object = PyRef::steal(PyObject_Repr(object.get()));
    break;
  case 3:
    object = PyRef::steal(PyObject_ASCII(object.get()));
    break;
  default:
    break;
  }
  if (!object)
    return pythonError("formatting a value");
  ValuePtr result = makeConstantSteal(PyObject_Format(object.get(), spec->object.get()));
  if (!result)
    return pythonError("formatting a value");
  f.stack.push_back(result);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_LIST_APPEND(Frame& f, const Instruction& ins) {
  ValuePtr item = pop(f);
  f.stack[f.stack.size() - ins.arg]->items.push_back(std::move(item));
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_LIST_EXTEND(Frame& f, const Instruction& ins) {
  ValuePtr iterable = pop(f);
  llvm::Expected<std::vector<ValuePtr>> items = semantics_.unpack(iterable);
  if (!items)
    return items.takeError();
  ValuePtr& list = f.stack[f.stack.size() - ins.arg];
  list->items.insert(list->items.end(), items->begin(), items->end());
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_LIST_TO_TUPLE(Frame& f, const Instruction&) {
  ValuePtr list = pop(f);
  f.stack.push_back(makeTuple(list->items));
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_SET_ADD(Frame& f, const Instruction& ins) {
  ValuePtr item = pop(f);
  ValuePtr set = f.stack[f.stack.size() - ins.arg];
  return semantics_.addToSet(set, std::move(item));
}

llvm::Error BytecodeMachine::op_SET_UPDATE(Frame& f, const Instruction& ins) {
  ValuePtr iterable = pop(f);
  llvm::Expected<std::vector<ValuePtr>> items = semantics_.unpack(iterable);
  if (!items)
    return items.takeError();
  ValuePtr set = f.stack[f.stack.size() - ins.arg];
  for (ValuePtr& item : *items) {
    if (llvm::Error error = semantics_.addToSet(set, std::move(item)))
      return error;
  }
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_MAP_ADD(Frame& f, const Instruction& ins) {
  ValuePtr value = pop(f);
  ValuePtr key = pop(f);
  ValuePtr dict = f.stack[f.stack.size() - ins.arg];
  f.stack.push_back(value);
  f.stack.push_back(dict);
  f.stack.push_back(key);
  return op_STORE_SUBSCR(f, ins);
}

llvm::Expected<ValuePtr> BytecodeMachine::mappingItems(const ValuePtr& mapping) {
  if (mapping->kind == ValueKind::Dict)
    return mapping;
  if (mapping->kind != ValueKind::Instance)
    return captureError("updating a dict from a " + spelling(mapping->kind) + " value");
  // What CPython's dict merge does: a dict subclass that keeps dict's own
  // iteration gives its items as stored; any other mapping (an OrderedDict
  // subclass such as transformers' ModelOutput) is read through its keys()
  // and __getitem__, which the class may override.
  auto* type = reinterpret_cast<PyTypeObject*>(mapping->object.get());
  if (mapping->contents && PyType_Check(mapping->object.get()) &&
      type->tp_iter == PyDict_Type.tp_iter)
    return mapping->contents;
  llvm::Expected<ValuePtr> keysMethod = semantics_.getAttr(mapping, "keys");
  if (!keysMethod)
    return llvm::handleErrors(keysMethod.takeError(), [&](const CaptureError& e) -> llvm::Error {
      std::string reason = "updating a dict from a value that is not a mapping: " + e.reason();
      return llvm::make_error<CaptureError>(reason, e.stack());
    });
  llvm::Expected<ValuePtr> keys = context_.call(*keysMethod, {});
  if (!keys)
    return keys.takeError();
  llvm::Expected<std::vector<ValuePtr>> keyList = semantics_.unpack(*keys);
  if (!keyList)
    return keyList.takeError();
  ValuePtr items = makeValue(ValueKind::Dict);
  for (const ValuePtr& key : *keyList) {
    llvm::Expected<ValuePtr> value = semantics_.getItem(mapping, key);
    if (!value)
      return value.takeError();
    items->entries.emplace_back(key, *value);
  }
  return items;
}

llvm::Error BytecodeMachine::op_DICT_UPDATE(Frame& f, const Instruction& ins) {
  llvm::Expected<ValuePtr> items = mappingItems(pop(f));
  if (!items)
    return items.takeError();
  ValuePtr other = *items;
  ValuePtr dict = f.stack[f.stack.size() - ins.arg];
  for (const auto& [key, value] : other->entries) {
    f.stack.push_back(value);
    f.stack.push_back(dict);
    f.stack.push_back(key);
    if (llvm::Error error = op_STORE_SUBSCR(f, ins))
      return error;
  }
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_DICT_MERGE(Frame& f, const Instruction& ins) {
  if (llvm::Error error = values_.readAllUnread(f.stack.back()))
    return error;
  llvm::Expected<ValuePtr> items = mappingItems(f.stack.back());
  if (!items)
    return items.takeError();
  ValuePtr other = *items;
  f.stack.back() = other;
  ValuePtr dict = f.stack[f.stack.size() - 1 - ins.arg];
  for (const auto& [key, value] : other->entries)
    for (const auto& [existing, unused] : dict->entries)
      if (existing->isConstant() && key->isConstant() &&
          PyObject_RichCompareBool(existing->object.get(), key->object.get(), Py_EQ) == 1)
        return captureError("got multiple values for keyword argument " +
                            reprOf(key->object.get()));
  return op_DICT_UPDATE(f, ins);
}

llvm::Error BytecodeMachine::op_UNPACK_SEQUENCE(Frame& f, const Instruction& ins) {
  ValuePtr sequence = pop(f);
  llvm::Expected<std::vector<ValuePtr>> items = semantics_.unpack(sequence);
  if (!items)
    return items.takeError();
  if (items->size() != ins.arg)
    return captureError(items->size() > ins.arg
                            ? "too many values to unpack (expected " + llvm::Twine(ins.arg) + ")"
                            : "not enough values to unpack (expected " + llvm::Twine(ins.arg) +
                                  ", got " + llvm::Twine(items->size()) + ")");
  for (auto it = items->rbegin(); it != items->rend(); ++it)
    f.stack.push_back(*it);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_UNPACK_EX(Frame& f, const Instruction& ins) {
  ValuePtr sequence = pop(f);
  llvm::Expected<std::vector<ValuePtr>> items = semantics_.unpack(sequence);
  if (!items)
    return items.takeError();
  size_t before = ins.arg & 0xFF, after = ins.arg >> 8;
  if (items->size() < before + after)
    return captureError("not enough values to unpack (expected at least " +
                        llvm::Twine(before + after) + ", got " + llvm::Twine(items->size()) + ")");
  std::vector<ValuePtr> pushed(items->begin(), items->begin() + before);
  pushed.push_back(makeList(std::vector<ValuePtr>(items->begin() + before, items->end() - after)));
  pushed.insert(pushed.end(), items->end() - after, items->end());
  for (auto it = pushed.rbegin(); it != pushed.rend(); ++it)
    f.stack.push_back(*it);
  return llvm::Error::success();
}

llvm::Error BytecodeMachine::op_GET_LEN(Frame& f, const Instruction&) {
  if (llvm::Error error = values_.readAllUnread(f.stack.back()))
    return error;
  llvm::Expected<ValuePtr> value = semantics_.length(f.stack.back());
  if (!value)
    return value.takeError();
  f.stack.push_back(*value);
  return llvm::Error::success();
}

} // namespace dync::capture
