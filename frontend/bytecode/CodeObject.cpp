//===- CodeObject.cpp - Between PyCodeObject and the toolkit --------------===//
#include "frontend/bytecode/CodeObject.h"

#include "frontend/embedding/PyRef.h"
#include "frontend/embedding/PythonError.h"

#include <algorithm>
#include <limits>

namespace dync::bytecode {

using python::PyRef;

namespace {

llvm::Expected<std::vector<uint8_t>> bytesOf(PyObject* object, const char* field) {
  if (!object || !PyBytes_Check(object))
    return llvm::createStringError("%s is not bytes", field);
  const auto* data = reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(object));
  return std::vector<uint8_t>(data, data + PyBytes_GET_SIZE(object));
}

PyRef newBytes(const std::vector<uint8_t>& data) {
  return PyRef::steal(PyBytes_FromStringAndSize(reinterpret_cast<const char*>(data.data()),
                                                static_cast<Py_ssize_t>(data.size())));
}

/// \p existing itself if it holds exactly \p data, else new bytes.
PyRef sharedBytes(PyObject* existing, const std::vector<uint8_t>& data) {
  if (existing && PyBytes_Check(existing) && size_t(PyBytes_GET_SIZE(existing)) == data.size() &&
      std::equal(data.begin(), data.end(),
                 reinterpret_cast<const uint8_t*>(PyBytes_AS_STRING(existing))))
    return PyRef::borrow(existing);
  return newBytes(data);
}

} // namespace

llvm::Expected<RawCode> readRawCode(PyCodeObject* code) {
  if (!code || !PyCode_Check(reinterpret_cast<PyObject*>(code)))
    return llvm::createStringError("not a code object");
  RawCode raw;
  // co_code as Python shows it: caches zeroed and specialized instructions
  // turned back into the ones the compiler wrote.
  PyRef bytecode = PyRef::steal(PyCode_GetCode(code));
  if (!bytecode)
    return python::takePythonError("reading co_code");
  auto codeBytes = bytesOf(bytecode.get(), "co_code");
  if (!codeBytes)
    return codeBytes.takeError();
  raw.code = std::move(*codeBytes);
  auto exceptionTable = bytesOf(code->co_exceptiontable, "co_exceptiontable");
  if (!exceptionTable)
    return exceptionTable.takeError();
  raw.exceptionTable = std::move(*exceptionTable);
  auto lineTable = bytesOf(code->co_linetable, "co_linetable");
  if (!lineTable)
    return lineTable.takeError();
  raw.lineTable = std::move(*lineTable);
  raw.firstLine = code->co_firstlineno;
  raw.stackSize = code->co_stacksize;
  return raw;
}

llvm::Expected<PyObject*> buildCodeObject(PyCodeObject* original, const RawCode& raw) {
  if (!original || !PyCode_Check(reinterpret_cast<PyObject*>(original)))
    return llvm::createStringError("not a code object");
  return buildCodeObject(original, raw, original->co_consts, original->co_names);
}

llvm::Expected<PyObject*> buildCodeObject(PyCodeObject* original, const RawCode& raw,
                                          PyObject* consts, PyObject* names) {
  if (!original || !PyCode_Check(reinterpret_cast<PyObject*>(original)))
    return llvm::createStringError("not a code object");
  if (!consts || !PyTuple_Check(consts) || !names || !PyTuple_Check(names))
    return llvm::createStringError("co_consts and co_names must be tuples");
  if (raw.code.size() > size_t(std::numeric_limits<Py_ssize_t>::max()))
    return llvm::createStringError("code too large");
  PyRef code = newBytes(raw.code);
  PyRef exceptionTable = sharedBytes(original->co_exceptiontable, raw.exceptionTable);
  PyRef lineTable = sharedBytes(original->co_linetable, raw.lineTable);
  if (!code || !exceptionTable || !lineTable)
    return python::takePythonError("allocating code object fields");
  // The constructor takes the three kinds of local names separately and
  // merges them into co_localsplusnames again (a cell that is also an
  // argument stays one slot), which gives back the original layout.
  PyRef varnames = PyRef::steal(PyCode_GetVarnames(original));
  PyRef cellvars = PyRef::steal(PyCode_GetCellvars(original));
  PyRef freevars = PyRef::steal(PyCode_GetFreevars(original));
  if (!varnames || !cellvars || !freevars)
    return python::takePythonError("reading the local names of a code object");

  PyCodeObject* result = PyCode_NewWithPosOnlyArgs(
      original->co_argcount, original->co_posonlyargcount, original->co_kwonlyargcount,
      original->co_nlocals, raw.stackSize, original->co_flags, code.get(), consts, names,
      varnames.get(), freevars.get(), cellvars.get(), original->co_filename, original->co_name,
      original->co_qualname, raw.firstLine, lineTable.get(), exceptionTable.get());
  if (!result)
    return python::takePythonError("building a code object");
  // The constructor always makes a fresh co_localsplusnames; share the
  // original's when equal, as the compiler shares equal name tuples across a
  // module. The new object is not visible to anyone else yet.
  int equal =
      PyObject_RichCompareBool(result->co_localsplusnames, original->co_localsplusnames, Py_EQ);
  if (equal < 0) {
    Py_DECREF(result);
    return python::takePythonError("comparing local names");
  }
  if (equal)
    Py_SETREF(result->co_localsplusnames, Py_NewRef(original->co_localsplusnames));
  return reinterpret_cast<PyObject*>(result);
}

} // namespace dync::bytecode
