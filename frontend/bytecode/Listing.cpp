//===- Listing.cpp - Human-readable bytecode listings ----------------------===//

#include "frontend/bytecode/Listing.h"

#include "frontend/bytecode/CodeObject.h"
#include "frontend/bytecode/Codec.h"
#include "frontend/embedding/ModuleAttributes.h"
#include "frontend/embedding/PyRef.h"
#include "frontend/embedding/PythonError.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Format.h"

#include <algorithm>

using dync::python::PyRef;
using dync::python::takePythonError;

namespace dync::bytecode {
namespace {

// Column widths of `dis`'s layout.
constexpr unsigned OpnameWidth = 20;
constexpr unsigned ArgWidth = 5;

llvm::Expected<std::string> utf8(PyObject* text) {
  Py_ssize_t size = 0;
  const char* data = PyUnicode_AsUTF8AndSize(text, &size);
  if (!data)
    return takePythonError("reading a string");
  return std::string(data, size);
}

llvm::Expected<std::string> reprOf(PyObject* object) {
  PyRef repr = PyRef::steal(PyObject_Repr(object));
  if (!repr)
    return takePythonError("computing a repr for the listing");
  return utf8(repr.get());
}

/// One line of a listing, with the fields `dis` prints.
struct ListingLine {
  int startsLine = -1;
  bool isJumpTarget = false;
  uint32_t offset = 0;
  llvm::StringRef opname;
  bool hasArg = false;
  int64_t arg = 0;
  std::string argRepr;
};

} // namespace

llvm::Expected<ArgumentSpellings> ArgumentSpellings::fromInterpreter() {
  PyRef dis = PyRef::steal(PyImport_ImportModule("dis"));
  if (!dis)
    return takePythonError("importing dis");
  ArgumentSpellings spellings;
  // FORMAT_VALUE_CONVERTERS holds (converter, spelling) pairs.
  auto conversions = python::stringsAttribute(dis.get(), "FORMAT_VALUE_CONVERTERS", /*field=*/1);
  if (!conversions)
    return conversions.takeError();
  auto flags = python::stringsAttribute(dis.get(), "MAKE_FUNCTION_FLAGS");
  if (!flags)
    return flags.takeError();
  spellings.formatConversions = std::move(*conversions);
  spellings.makeFunctionFlags = std::move(*flags);
  return spellings;
}

llvm::Error ListingPrinter::print(llvm::raw_ostream& os, PyCodeObject* code) const {
  if (llvm::Error error = printOne(os, code))
    return error;
  PyObject* consts = code->co_consts;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(consts); ++i) {
    PyObject* item = PyTuple_GET_ITEM(consts, i);
    if (!PyCode_Check(item))
      continue;
    auto heading = reprOf(item);
    if (!heading)
      return heading.takeError();
    os << "\nDisassembly of " << *heading << ":\n";
    if (llvm::Error error = print(os, reinterpret_cast<PyCodeObject*>(item)))
      return error;
  }
  return llvm::Error::success();
}

llvm::Error ListingPrinter::printOne(llvm::raw_ostream& os, PyCodeObject* code) const {
  auto raw = readRawCode(code);
  if (!raw)
    return raw.takeError();
  auto decoded = decode(*raw, opcodes_);
  if (!decoded)
    return decoded.takeError();
  const std::vector<Instruction>& instructions = decoded->instructions;
  const uint32_t codeBytes = static_cast<uint32_t>(raw->code.size());

  // Jump targets, from jumps and from non-empty exception regions.
  llvm::DenseSet<uint32_t> labels;
  for (const Instruction& instruction : instructions)
    if (instruction.jumpTarget >= 0)
      labels.insert(instructions[instruction.jumpTarget].startOffset);
  for (const ExceptionRegion& region : decoded->exceptionRegions)
    if (region.start < region.end)
      labels.insert(instructions[region.handler].startOffset);

  const auto loadConst = opcodes_.byName("LOAD_CONST");
  const auto loadGlobal = opcodes_.byName("LOAD_GLOBAL");
  const auto formatValue = opcodes_.byName("FORMAT_VALUE");
  const auto makeFunction = opcodes_.byName("MAKE_FUNCTION");
  const auto binaryOp = opcodes_.byName("BINARY_OP");
  const OpcodeInfo* extendedArg = opcodes_.lookup(opcodes_.extendedArg());

  // What `dis` shows after the argument: a constant's repr, a name, a jump
  // target, a comparison, or the spelling of a flag set.
  auto describe = [&](const Instruction& instruction,
                      const OpcodeInfo& info) -> llvm::Expected<std::string> {
    const uint32_t arg = instruction.arg;
    auto tupleItem = [&](PyObject* tuple, Py_ssize_t index) -> llvm::Expected<std::string> {
      if (index >= PyTuple_GET_SIZE(tuple))
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "%s at offset %u: argument %u is out of range",
                                       info.name.c_str(), instruction.opcodeOffset(), arg);
      PyObject* item = PyTuple_GET_ITEM(tuple, index);
      return PyUnicode_Check(item) ? utf8(item) : reprOf(item);
    };
    switch (info.argKind) {
    case ArgKind::Const:
      if (info.code == loadConst) {
        if (arg >= static_cast<uint32_t>(PyTuple_GET_SIZE(code->co_consts)))
          return tupleItem(code->co_consts, arg);
        return reprOf(PyTuple_GET_ITEM(code->co_consts, arg));
      }
      return std::string();
    case ArgKind::Name:
      if (info.code == loadGlobal) {
        auto name = tupleItem(code->co_names, arg / 2);
        if (name && (arg & 1))
          return "NULL + " + *name;
        return name;
      }
      return tupleItem(code->co_names, arg);
    case ArgKind::Local:
    case ArgKind::Free:
      return tupleItem(code->co_localsplusnames, arg);
    case ArgKind::Compare:
      if (arg >= opcodes_.compareOps().size())
        break;
      return opcodes_.compareOps()[arg];
    case ArgKind::Jump:
      return "to " + std::to_string(instructions[instruction.jumpTarget].startOffset);
    case ArgKind::None:
    case ArgKind::Plain:
      break;
    }
    if (info.code == formatValue && !spellings_.formatConversions.empty()) {
      std::string text = spellings_.formatConversions[arg & 0x3];
      if (arg & 0x4)
        text += text.empty() ? "with format" : ", with format";
      return text;
    }
    if (info.code == makeFunction) {
      std::string text;
      for (size_t bit = 0; bit < spellings_.makeFunctionFlags.size(); ++bit)
        if (arg & (1u << bit))
          text += (text.empty() ? "" : ", ") + spellings_.makeFunctionFlags[bit];
      return text;
    }
    if (info.code == binaryOp && arg < opcodes_.binaryOps().size())
      return opcodes_.binaryOps()[arg];
    return std::string();
  };

  std::vector<ListingLine> lines;
  int lastLine = -1;
  int maxLine = -1;
  for (const Instruction& instruction : instructions) {
    const OpcodeInfo* info = opcodes_.lookup(instruction.opcode);
    int startsLine = -1;
    if (instruction.position.line >= 0 && instruction.position.line != lastLine) {
      startsLine = lastLine = instruction.position.line;
      maxLine = std::max(maxLine, startsLine);
    }
    // `dis` shows each EXTENDED_ARG prefix on a line of its own, carrying the
    // argument bits accumulated so far.
    for (unsigned prefix = 0; prefix < instruction.extendedArgs; ++prefix) {
      ListingLine line;
      line.startsLine = prefix == 0 ? startsLine : -1;
      line.offset = instruction.startOffset + 2 * prefix;
      line.isJumpTarget = labels.contains(line.offset);
      line.opname = extendedArg->name;
      line.hasArg = true;
      line.arg = instruction.arg >> (8 * (instruction.extendedArgs - prefix));
      lines.push_back(std::move(line));
    }
    ListingLine line;
    line.startsLine = instruction.extendedArgs == 0 ? startsLine : -1;
    line.offset = instruction.opcodeOffset();
    line.isJumpTarget = labels.contains(line.offset);
    line.opname = info->name;
    line.hasArg = info->hasArgument();
    line.arg = instruction.arg;
    if (line.hasArg) {
      auto argRepr = describe(instruction, *info);
      if (!argRepr)
        return argRepr.takeError();
      line.argRepr = std::move(*argRepr);
    }
    lines.push_back(std::move(line));
  }

  // Field widths follow `dis`: three digits unless the numbers need more.
  const unsigned lineWidth =
      maxLine < 0 ? 0 : (maxLine >= 1000 ? std::to_string(maxLine).size() : 3);
  const uint32_t maxOffset = codeBytes >= 2 ? codeBytes - 2 : 0;
  const unsigned offsetWidth = maxOffset >= 10000 ? std::to_string(maxOffset).size() : 4;

  for (const ListingLine& line : lines) {
    if (lineWidth && line.startsLine >= 0 && line.offset > 0)
      os << '\n';
    llvm::SmallString<128> text;
    llvm::raw_svector_ostream out(text);
    if (lineWidth) {
      if (line.startsLine >= 0)
        out << llvm::right_justify(std::to_string(line.startsLine), lineWidth);
      else
        out.indent(lineWidth);
      out << ' ';
    }
    out << "   " << ' ' << (line.isJumpTarget ? ">>" : "  ") << ' ';
    out << llvm::right_justify(std::to_string(line.offset), offsetWidth) << ' ';
    out << llvm::left_justify(line.opname, OpnameWidth) << ' ';
    if (line.hasArg) {
      out << llvm::right_justify(std::to_string(line.arg), ArgWidth) << ' ';
      if (!line.argRepr.empty())
        out << '(' << line.argRepr << ')';
    }
    os << llvm::StringRef(text).rtrim(' ') << '\n';
  }

  if (!decoded->exceptionRegions.empty()) {
    os << "ExceptionTable:\n";
    auto offsetOf = [&](uint32_t index) {
      return index < instructions.size() ? instructions[index].startOffset : codeBytes;
    };
    for (const ExceptionRegion& region : decoded->exceptionRegions) {
      const uint32_t start = offsetOf(region.start);
      const uint32_t end = offsetOf(region.end);
      os << "  " << start << " to " << end - 2 << " -> " << offsetOf(region.handler) << " ["
         << region.depth << "]" << (region.pushLasti ? " lasti" : "") << '\n';
    }
  }
  return llvm::Error::success();
}

} // namespace dync::bytecode
