//===- TensorMetaSchema.cpp - Where each TensorMeta field is --------------===//
#include "frontend/oracle/TensorMetaSchema.h"

#include "frontend/embedding/PyStrings.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace dync::oracle {

llvm::Expected<TensorMetaSchema> readTensorMetaSchema(PyObject* fields) {
  auto mismatch = [](const std::string& why) {
    return llvm::createStringError("the tensor oracle's TensorMeta.FIELDS does not match what "
                                   "the C++ side reads: " +
                                   why);
  };
  if (!fields || !PyTuple_CheckExact(fields))
    return mismatch("it is not a tuple of field names");
  TensorMetaSchema schema;
  std::pair<llvm::StringLiteral, unsigned*> wanted[] = {
      {"id", &schema.id},         {"dtype", &schema.dtype},
      {"sizes", &schema.sizes},   {"strides", &schema.strides},
      {"device", &schema.device}, {"requires_grad", &schema.requiresGrad},
      {"sparse", &schema.sparse},
  };
  bool seen[std::size(wanted)] = {};
  Py_ssize_t count = PyTuple_GET_SIZE(fields);
  for (Py_ssize_t i = 0; i < count; ++i) {
    std::optional<std::string> name = python::utf8Of(PyTuple_GET_ITEM(fields, i));
    if (!name) {
      PyErr_Clear();
      return mismatch("field " + std::to_string(i) + " is not a str");
    }
    auto it = llvm::find_if(wanted, [&](const auto& field) { return field.first == *name; });
    if (it == std::end(wanted))
      return mismatch("field '" + *name + "' is not one it knows");
    size_t which = it - std::begin(wanted);
    if (seen[which])
      return mismatch("field '" + *name + "' appears twice");
    seen[which] = true;
    *it->second = static_cast<unsigned>(i);
  }
  for (size_t which = 0; which < std::size(wanted); ++which)
    if (!seen[which])
      return mismatch("field '" + wanted[which].first.str() + "' is missing");
  schema.size = static_cast<unsigned>(count);
  return schema;
}

} // namespace dync::oracle
