//===- OpcodeTableTest.cpp - The opcode table against the opcode module ---===//
#include "frontend/bytecode/OpcodeTable.h"

#include "test/unit/PythonTestSupport.h"

#include <Python.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace dync::bytecode;
using namespace dync::test;

namespace {

/// The opcode module's facts as plain tuples, one per opcode in opmap.
constexpr const char* kPython = R"py(
import opcode

KINDS = [('hasconst', 'const'), ('hasname', 'name'), ('haslocal', 'local'),
         ('hasfree', 'free'), ('hascompare', 'compare'), ('hasjrel', 'jump'),
         ('hasjabs', 'jump')]

def kind(op):
    if op < opcode.HAVE_ARGUMENT:
        return 'none'
    for attribute, name in KINDS:
        if op in getattr(opcode, attribute):
            return name
    return 'plain'

def direction(op):
    if op in opcode.hasjabs:
        return 'absolute'
    if op in opcode.hasjrel:
        return 'backward' if 'JUMP_BACKWARD' in opcode.opname[op] else 'forward'
    return 'none'

rows = sorted((op, name, kind(op), direction(op), opcode._inline_cache_entries[op])
              for name, op in opcode.opmap.items())
extended_arg = opcode.EXTENDED_ARG
cache = opcode.opmap['CACHE']
compare_ops = list(opcode.cmp_op)
binary_ops = [symbol for _, symbol in opcode._nb_ops]
)py";

const char* kindName(ArgKind kind) {
  switch (kind) {
  case ArgKind::None:
    return "none";
  case ArgKind::Plain:
    return "plain";
  case ArgKind::Const:
    return "const";
  case ArgKind::Name:
    return "name";
  case ArgKind::Local:
    return "local";
  case ArgKind::Free:
    return "free";
  case ArgKind::Compare:
    return "compare";
  case ArgKind::Jump:
    return "jump";
  }
  return "?";
}

const char* directionName(JumpDirection direction) {
  switch (direction) {
  case JumpDirection::None:
    return "none";
  case JumpDirection::Forward:
    return "forward";
  case JumpDirection::Backward:
    return "backward";
  case JumpDirection::Absolute:
    return "absolute";
  }
  return "?";
}

TEST(OpcodeTableTest, MatchesTheOpcodeModule) {
  auto table = OpcodeTable::fromInterpreter();
  ASSERT_SUCCEEDED(table);
  PythonNamespace python;
  ASSERT_TRUE(python.run(kPython));

  PyObject* rows = python.global("rows");
  std::vector<const OpcodeInfo*> all = table->all();
  ASSERT_EQ(all.size(), size_t(PyList_GET_SIZE(rows)));
  for (size_t i = 0; i < all.size(); ++i) {
    PyObject* row = PyList_GET_ITEM(rows, i);
    const OpcodeInfo& info = *all[i];
    SCOPED_TRACE(info.name);
    EXPECT_EQ(info.code, intAt(row, 0));
    EXPECT_EQ(info.name, PyUnicode_AsUTF8(PyTuple_GET_ITEM(row, 1)));
    EXPECT_STREQ(kindName(info.argKind), PyUnicode_AsUTF8(PyTuple_GET_ITEM(row, 2)));
    EXPECT_STREQ(directionName(info.jump), PyUnicode_AsUTF8(PyTuple_GET_ITEM(row, 3)));
    EXPECT_EQ(info.cacheEntries, intAt(row, 4));
    EXPECT_EQ(table->lookup(info.code), &info);
    EXPECT_EQ(table->byName(info.name), info.code);
  }
  EXPECT_EQ(table->extendedArg(), PyLong_AsLong(python.global("extended_arg")));
  EXPECT_EQ(table->cacheOpcode(), PyLong_AsLong(python.global("cache")));
  EXPECT_EQ(table->compareOps(), stringsOf(python.global("compare_ops")));
  EXPECT_EQ(table->binaryOps(), stringsOf(python.global("binary_ops")));
  EXPECT_FALSE(table->byName("NOT_AN_OPCODE").has_value());
}

TEST(OpcodeTableTest, UndefinedOpcodesHaveNoInfo) {
  auto table = OpcodeTable::fromInterpreter();
  ASSERT_SUCCEEDED(table);
  size_t defined = 0;
  for (unsigned code = 0; code < 256; ++code)
    defined += table->lookup(static_cast<uint8_t>(code)) != nullptr;
  EXPECT_EQ(defined, table->all().size());
  EXPECT_LT(defined, 256u);
}

} // namespace
