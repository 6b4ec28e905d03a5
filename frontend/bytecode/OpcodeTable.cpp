//===- OpcodeTable.cpp - CPython opcodes as read from the interpreter -----===//
//
// Everything here comes from the interpreter's `opcode` module; the only
// knowledge written in C++ is which attribute holds what.
//
//===----------------------------------------------------------------------===//
#include "frontend/bytecode/OpcodeTable.h"

#include "frontend/embedding/ModuleAttributes.h"
#include "frontend/embedding/PyRef.h"
#include "frontend/embedding/PyStrings.h"
#include "frontend/embedding/PythonError.h"

#include "llvm/ADT/Twine.h"

#include <Python.h>

namespace dync::bytecode {

using python::moduleAttribute;
using python::PyRef;
using python::sequenceAttribute;

namespace {

llvm::Expected<long> toLong(PyObject* value, const llvm::Twine& what) {
  long result = PyLong_AsLong(value);
  if (result == -1 && PyErr_Occurred())
    return python::takePythonError("reading " + what);
  return result;
}

llvm::Expected<long> intAttribute(PyObject* module, const char* name) {
  auto value = moduleAttribute(module, name);
  if (!value)
    return value.takeError();
  return toLong(value->get(), llvm::Twine("opcode.") + name);
}

/// An opcode number from the interpreter, checked to fit a byte.
llvm::Expected<uint8_t> toOpcode(PyObject* value, const llvm::Twine& what) {
  auto number = toLong(value, what);
  if (!number)
    return number.takeError();
  if (*number < 0 || *number > 255)
    return llvm::createStringError("%s: opcode %ld does not fit in a byte", what.str().c_str(),
                                   *number);
  return static_cast<uint8_t>(*number);
}

llvm::Expected<std::vector<uint8_t>> opcodeListAttribute(PyObject* module, const char* name) {
  auto items = sequenceAttribute(module, name);
  if (!items)
    return items.takeError();
  std::vector<uint8_t> codes;
  for (const PyRef& item : *items) {
    auto code = toOpcode(item.get(), llvm::Twine("opcode.") + name);
    if (!code)
      return code.takeError();
    codes.push_back(*code);
  }
  return codes;
}

llvm::Expected<std::string> toText(PyObject* value, const llvm::Twine& what) {
  std::optional<std::string> text = python::utf8Of(value);
  if (!text)
    return llvm::createStringError("%s is not a str", what.str().c_str());
  return *text;
}

/// Which `opcode.has*` list gives which argument kind. An opcode in two of
/// them would be ambiguous, so that is an error rather than a choice.
struct ArgKindList {
  const char* attribute;
  ArgKind kind;
};
constexpr ArgKindList kArgKindLists[] = {
    {"hasconst", ArgKind::Const}, {"hasname", ArgKind::Name},       {"haslocal", ArgKind::Local},
    {"hasfree", ArgKind::Free},   {"hascompare", ArgKind::Compare}, {"hasjrel", ArgKind::Jump},
    {"hasjabs", ArgKind::Jump},
};

/// dis's own test for a backward relative jump.
constexpr llvm::StringLiteral kBackwardJumpMarker = "JUMP_BACKWARD";

} // namespace

llvm::Expected<OpcodeTable> OpcodeTable::fromInterpreter() {
  PyRef module = PyRef::steal(PyImport_ImportModule("opcode"));
  if (!module)
    return python::takePythonError("importing the opcode module");
  PyObject* opcodeModule = module.get();

  OpcodeTable table;

  auto opmap = moduleAttribute(opcodeModule, "opmap");
  if (!opmap)
    return opmap.takeError();
  if (!PyDict_Check(opmap->get()))
    return llvm::createStringError("opcode.opmap is not a dict");
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  Py_ssize_t position = 0;
  while (PyDict_Next(opmap->get(), &position, &key, &value)) {
    auto name = toText(key, "a key of opcode.opmap");
    if (!name)
      return name.takeError();
    auto code = toOpcode(value, "opcode.opmap['" + *name + "']");
    if (!code)
      return code.takeError();
    if (table.defined_[*code])
      return llvm::createStringError("opcode.opmap maps both %s and %s to %u",
                                     table.infos_[*code].name.c_str(), name->c_str(), *code);
    table.defined_[*code] = true;
    table.infos_[*code].name = std::move(*name);
    table.infos_[*code].code = *code;
  }

  // opname must agree with opmap wherever opmap defines an opcode.
  auto opname = sequenceAttribute(opcodeModule, "opname");
  if (!opname)
    return opname.takeError();
  if (opname->size() != 256)
    return llvm::createStringError("opcode.opname has %zu entries, not 256", opname->size());
  for (unsigned code = 0; code < 256; ++code) {
    if (!table.defined_[code])
      continue;
    auto name = toText((*opname)[code].get(), "opcode.opname[" + llvm::Twine(code) + "]");
    if (!name)
      return name.takeError();
    if (*name != table.infos_[code].name)
      return llvm::createStringError("opcode.opname[%u] is %s but opcode.opmap says %s", code,
                                     name->c_str(), table.infos_[code].name.c_str());
  }

  auto haveArgument = intAttribute(opcodeModule, "HAVE_ARGUMENT");
  if (!haveArgument)
    return haveArgument.takeError();
  for (unsigned code = 0; code < 256; ++code)
    table.infos_[code].argKind = code < *haveArgument ? ArgKind::None : ArgKind::Plain;

  for (const ArgKindList& list : kArgKindLists) {
    auto codes = opcodeListAttribute(opcodeModule, list.attribute);
    if (!codes)
      return codes.takeError();
    for (uint8_t code : *codes) {
      OpcodeInfo& info = table.infos_[code];
      if (!table.defined_[code])
        return llvm::createStringError("opcode.%s lists %u, which opcode.opmap does not define",
                                       list.attribute, code);
      if (info.argKind != ArgKind::Plain)
        return llvm::createStringError("opcode %s is in opcode.%s but takes no argument or is "
                                       "already in another has* list",
                                       info.name.c_str(), list.attribute);
      info.argKind = list.kind;
      if (list.kind != ArgKind::Jump)
        continue;
      if (llvm::StringRef(list.attribute) == "hasjabs")
        info.jump = JumpDirection::Absolute;
      else if (llvm::StringRef(info.name).contains(kBackwardJumpMarker))
        info.jump = JumpDirection::Backward;
      else
        info.jump = JumpDirection::Forward;
    }
  }

  auto caches = sequenceAttribute(opcodeModule, "_inline_cache_entries");
  if (!caches)
    return caches.takeError();
  if (caches->size() != 256)
    return llvm::createStringError("opcode._inline_cache_entries has %zu entries, not 256",
                                   caches->size());
  for (unsigned code = 0; code < 256; ++code) {
    auto count = toLong((*caches)[code].get(), "opcode._inline_cache_entries");
    if (!count)
      return count.takeError();
    if (*count < 0 || *count > 255)
      return llvm::createStringError("opcode._inline_cache_entries[%u] is %ld", code, *count);
    table.infos_[code].cacheEntries = static_cast<uint8_t>(*count);
  }

  auto extendedArg = moduleAttribute(opcodeModule, "EXTENDED_ARG");
  if (!extendedArg)
    return extendedArg.takeError();
  auto extendedArgCode = toOpcode(extendedArg->get(), "opcode.EXTENDED_ARG");
  if (!extendedArgCode)
    return extendedArgCode.takeError();
  table.extendedArg_ = *extendedArgCode;

  std::optional<uint8_t> cache = table.byName("CACHE");
  if (!cache)
    return llvm::createStringError("opcode.opmap has no CACHE opcode");
  table.cache_ = *cache;

  auto compareOps = python::stringsAttribute(opcodeModule, "cmp_op");
  if (!compareOps)
    return compareOps.takeError();
  table.compareOps_ = std::move(*compareOps);

  // _nb_ops is a list of (NB_NAME, symbol) pairs in BINARY_OP argument order.
  auto binaryOps = python::stringsAttribute(opcodeModule, "_nb_ops", /*field=*/1);
  if (!binaryOps)
    return binaryOps.takeError();
  table.binaryOps_ = std::move(*binaryOps);

  return table;
}

std::optional<uint8_t> OpcodeTable::byName(llvm::StringRef name) const {
  for (unsigned code = 0; code < 256; ++code)
    if (defined_[code] && infos_[code].name == name)
      return static_cast<uint8_t>(code);
  return std::nullopt;
}

std::vector<const OpcodeInfo*> OpcodeTable::all() const {
  std::vector<const OpcodeInfo*> result;
  for (unsigned code = 0; code < 256; ++code)
    if (defined_[code])
      result.push_back(&infos_[code]);
  return result;
}

} // namespace dync::bytecode
