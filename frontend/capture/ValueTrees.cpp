//===- ValueTrees.cpp - Pytrees of capture's values -----------------------===//
#include "frontend/capture/ValueTrees.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/capture/PythonHelpers.h"

namespace dync::capture {

bool TreeShape::operator==(const TreeShape& other) const {
  if (kind != other.kind || children != other.children || keys.size() != other.keys.size())
    return false;
  for (size_t i = 0; i < keys.size(); ++i)
    if (!keys[i]->object || !other.keys[i]->object ||
        PyObject_RichCompareBool(keys[i]->object.get(), other.keys[i]->object.get(), Py_EQ) != 1)
      return false;
  return true;
}

llvm::Expected<TreeShape> flattenTree(llvm::StringRef op, const ValuePtr& value,
                                      std::vector<ValuePtr>& leaves) {
  TreeShape shape;
  switch (value->kind) {
  case ValueKind::Tuple:
  case ValueKind::List:
  case ValueKind::Dict:
    // A Tuple's or Dict's `object` is its class when it is not a plain
    // tuple or dict (a named tuple, torch.Size, an OrderedDict).
    if (value->object && value->kind != ValueKind::List)
      return captureError(op + " over a pytree holding a " +
                          qualifiedTypeName(value->object.get()) +
                          " is not supported yet; plain tuples, lists and dicts are");
    break;
  case ValueKind::Instance:
    return captureError(op + " over a pytree holding an object of class '" +
                        qualifiedTypeName(value->object.get()) +
                        "' is not supported yet; plain tuples, lists and dicts are");
  default:
    leaves.push_back(value);
    return shape;
  }
  if (value->kind == ValueKind::Dict) {
    shape.kind = TreeShape::Kind::Dict;
    for (const auto& [key, item] : value->entries) {
      shape.keys.push_back(key);
      llvm::Expected<TreeShape> child = flattenTree(op, item, leaves);
      if (!child)
        return child.takeError();
      shape.children.push_back(std::move(*child));
    }
    return shape;
  }
  shape.kind = value->kind == ValueKind::Tuple ? TreeShape::Kind::Tuple : TreeShape::Kind::List;
  for (const ValuePtr& item : value->items) {
    llvm::Expected<TreeShape> child = flattenTree(op, item, leaves);
    if (!child)
      return child.takeError();
    shape.children.push_back(std::move(*child));
  }
  return shape;
}

ValuePtr unflattenTree(const TreeShape& shape, llvm::ArrayRef<ValuePtr> leaves, size_t& next) {
  if (shape.kind == TreeShape::Kind::Leaf)
    return leaves[next++];
  std::vector<ValuePtr> items;
  for (const TreeShape& child : shape.children)
    items.push_back(unflattenTree(child, leaves, next));
  switch (shape.kind) {
  case TreeShape::Kind::Tuple:
    return makeTuple(std::move(items));
  case TreeShape::Kind::List:
    return makeList(std::move(items));
  default: {
    ValuePtr dict = makeValue(ValueKind::Dict);
    for (size_t i = 0; i < items.size(); ++i)
      dict->entries.emplace_back(shape.keys[i], items[i]);
    return dict;
  }
  }
}

} // namespace dync::capture
