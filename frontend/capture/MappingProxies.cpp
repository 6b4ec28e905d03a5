//===- MappingProxies.cpp - types.MappingProxyType while capturing --------===//
//
// `types.MappingProxyType(params)` (inspect.Signature keeps its parameters
// so) is a read-only view of a dict: reads see the dict as it is at the
// time of the read. A proxy of a dict capture holds is a Dict value of the
// proxy's class whose `iterable` is the dict it views; reading an item,
// iterating, len(), `in`, truth and the read methods (keys, values, items,
// get, copy) go to that dict. Its own entries are a copy made with it, for
// code that reads a dict's entries directly. The proxy has no methods that
// write: assigning through it is refused as it has no such method.
//
//===----------------------------------------------------------------------===//
#include "frontend/capture/CaptureError.h"
#include "frontend/capture/Exceptions.h"
#include "frontend/capture/Interpreter.h"

#include "llvm/ADT/STLExtras.h"

namespace dync::capture {

using python::PyRef;

ValuePtr mappingProxyTarget(const ValuePtr& value) {
  if (value->kind != ValueKind::Dict ||
      value->object.get() != reinterpret_cast<PyObject*>(&PyDictProxy_Type) || !value->iterable)
    return nullptr;
  return value->iterable;
}

bool isMappingProxyRead(llvm::StringRef name) {
  return llvm::is_contained({"keys", "values", "items", "get", "copy", "__getitem__",
                             "__contains__", "__len__", "__iter__"},
                            name);
}

llvm::Expected<ValuePtr> Interpreter::makeMappingProxy(std::vector<ValuePtr> args,
                                                       const KeywordArgs& kwargs) {
  if (args.size() != 1 || !kwargs.empty())
    return raiseBuiltin(PyExc_TypeError, "mappingproxy() takes exactly one argument");
  ValuePtr viewed = args.front();
  if (ValuePtr inner = mappingProxyTarget(viewed))
    viewed = inner;
  if (viewed->kind != ValueKind::Dict)
    return captureError("a mappingproxy of a " + spelling(viewed->kind) +
                        " value is not supported: only of a dict the program made");
  ValuePtr proxy =
      makeValue(ValueKind::Dict, PyRef::borrow(reinterpret_cast<PyObject*>(&PyDictProxy_Type)));
  proxy->iterable = viewed;
  proxy->entries = viewed->entries;
  return proxy;
}

} // namespace dync::capture
