//===- UnreadLists.cpp - Lists the program only appends to ----------------===//
//
// A list in the program's state that each call appends to and nothing
// reads (Lightning's `self.training_step_outputs.append(loss)`, epoch logs
// in a `defaultdict(list)`, `self.history.append(x.detach())`) is not read
// whole when the bytecode reaches it: its type is pinned, and its items are
// left unread (Value::unreadItems). Appends and extends act on a value that
// holds only what the program added, replayed after the graph as one
// `extend` of the real list, so its length is no guard and the next call,
// which finds the list longer, is served as eager would run it.
//
// The first read of the list in any other way (len, an index, iterating,
// `in`, pop, a slice, passing it to a call, returning it, keeping it in
// another container) reads it as it would have been read at the start: its
// length pinned and its items read through their sources, before what was
// appended, so what the program sees and the refill after the graph are
// today's full read. The machine reads its stack through readUnreadLists
// wherever a value leaves it for anything but a local, a cell, or the
// receiver of `append`/`extend` (BytecodeMachine::pop).
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/DictReads.h"
#include "frontend/capture/PythonHelpers.h"
#include "frontend/capture/ValueBuilder.h"
#include "frontend/embedding/PyStrings.h"

#include <algorithm>
#include <set>
#include <utility>

namespace dync::capture {

using ir::Guard;
using python::PyRef;

ValuePtr ValueBuilder::unreadList(PyObject* object, const SourcePtr& source) {
  guards_.add(typeGuard(source, reinterpret_cast<PyObject*>(Py_TYPE(object))));
  for (const auto& [real, list] : unreadLists_)
    if (real.get() == object)
      return list;
  ValuePtr value = makeList({});
  value->source = source;
  value->unreadItems = true;
  // A list the program changed through a read made while its items were
  // read whole is that changed value.
  value = callersContainer(std::move(value), object);
  if (value->unreadItems)
    unreadLists_.emplace_back(PyRef::borrow(object), value);
  return value;
}

ValuePtr ValueBuilder::unreadNamespace(PyObject* object, const SourcePtr& source) {
  guards_.add(typeGuard(source, reinterpret_cast<PyObject*>(Py_TYPE(object))));
  // One value while it is unread; once read whole, each read is made again
  // with the entries the program assigned since (overlayAssignedEntries).
  for (const auto& [real, names] : unreadLists_)
    if (real.get() == object && names->unreadItems)
      return names;
  ValuePtr value = makeValue(ValueKind::Dict, {}, source);
  value->unreadItems = true;
  value = callersContainer(std::move(value), object);
  if (value->unreadItems)
    unreadLists_.emplace_back(PyRef::borrow(object), value);
  return value;
}

llvm::Error ValueBuilder::readUnread(const ValuePtr& value) {
  if (!value || !value->unreadItems)
    return llvm::Error::success();
  // A namespace, a dict or an object of a dict class (UnreadDicts.cpp).
  if (value->kind == ValueKind::Dict || value->kind == ValueKind::Instance)
    return readUnreadDict(value);
  PyObject* object = value->realContainer.get();
  value->unreadItems = false;
  // The guards wrapReal installs for a list read whole, about the call's
  // entry: the real list is unchanged while capturing.
  guards_.add(Guard::lengthIs(value->source, PyList_GET_SIZE(object)));
  std::vector<ValuePtr> items;
  bool previous = unreadListReads_;
  unreadListReads_ = false;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(object); ++i) {
    llvm::Expected<ValuePtr> item =
        wrapReal(PyList_GET_ITEM(object, i), Source::index(value->source, i));
    if (!item) {
      unreadListReads_ = previous;
      return item.takeError();
    }
    items.push_back(*item);
  }
  unreadListReads_ = previous;
  value->items.insert(value->items.begin(), items.begin(), items.end());
  return llvm::Error::success();
}

llvm::Error ValueBuilder::readAllUnread(const ValuePtr& value) {
  if (!value || unreadLists_.empty())
    return llvm::Error::success();
  if (std::none_of(unreadLists_.begin(), unreadLists_.end(),
                   [](const auto& entry) { return entry.second->unreadItems; }))
    return llvm::Error::success();
  std::set<const Value*> seen;
  std::vector<ValuePtr> work{value};
  while (!work.empty()) {
    ValuePtr next = std::move(work.back());
    work.pop_back();
    if (!next || !seen.insert(next.get()).second)
      continue;
    switch (next->kind) {
    case ValueKind::Constant:
    case ValueKind::Tensor:
    case ValueKind::SymNum:
    case ValueKind::NNModule:
    case ValueKind::Object:
    case ValueKind::Builtin:
    case ValueKind::TorchCallable:
    case ValueKind::Null:
      continue;
    default:
      break;
    }
    if (llvm::Error error = readUnread(next))
      return error;
    work.insert(work.end(), next->items.begin(), next->items.end());
    for (const auto& [key, item] : next->entries) {
      work.push_back(key);
      work.push_back(item);
    }
    work.insert(work.end(), next->closure.begin(), next->closure.end());
    for (const ValuePtr& held : {next->iterable, next->cell, next->contents, next->attributeDict})
      work.push_back(held);
  }
  return llvm::Error::success();
}

bool appendsToUnreadList(const ValuePtr& callee) {
  if (!callee || callee->kind != ValueKind::BoundMethod || callee->items.size() != 2 ||
      !callee->items[0]->unreadItems || callee->items[0]->kind != ValueKind::List ||
      callee->items[1]->kind != ValueKind::Builtin)
    return false;
  PyObject* method = callee->items[1]->object.get();
  PyObject* listMethods = PyList_Type.tp_dict;
  return method && (method == PyDict_GetItemString(listMethods, "append") ||
                    method == PyDict_GetItemString(listMethods, "extend"));
}

} // namespace dync::capture
