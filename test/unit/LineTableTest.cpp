//===- LineTableTest.cpp - co_linetable reader and writer -----------------===//
//
// parseLineTable is compared with code.co_positions() (one tuple per code
// unit) and writeLineTable with the compiler's co_linetable, on code compiled
// here that exercises every entry form.
//
//===----------------------------------------------------------------------===//
#include "frontend/bytecode/LineTable.h"
#include "frontend/bytecode/CodeObject.h"
#include "frontend/bytecode/Codec.h"
#include "frontend/bytecode/OpcodeTable.h"
#include "frontend/embedding/PyRef.h"

#include "test/unit/PythonTestSupport.h"

#include <Python.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

using namespace dync::bytecode;
using namespace dync::test;
using dync::python::PyRef;

namespace {

constexpr const char* kPython = R"py(
def positions(co):
    return [tuple(-1 if v is None else v for v in p) for p in co.co_positions()]

wide = 'x' * 150
SOURCE = f'''
def short_forms(a, b):
    return a + b

def lines_apart(a):
    x = a

    y = x


    z = y




    return z

def multiline(a,
              b):
    return (a +
            b) * \\
        a

def backwards(xs):
    for x in xs:
        y = (x
             + 1)
    return y

def wide_columns(a):
    return a + {wide!r} + a + {wide!r}

def long_body(a):
''' + "".join(f"    a = a + {i}\n" for i in range(300)) + '''
    return a

def generator(n):
    yield n

class C:
    def method(self):
        return [i for i in range(3)]
'''

codes = source_code(SOURCE)
# Far-away first lines make large line deltas.
codes += source_code('\n' * 5000 + 'def far(a):\n    return a\n', '<far>')
codes += module_code('argparse', 'inspect', 'typing', 'dataclasses')
)py";

class LineTableTest : public BytecodeTest {
protected:
  LineTableTest() : BytecodeTest(kPython, NeedsStackEffects::No) {}

  /// co_positions() of \p code.
  std::vector<SourcePosition> cpythonPositions(PyCodeObject* code) {
    PyRef list = call("positions", {reinterpret_cast<PyObject*>(code)});
    std::vector<SourcePosition> result;
    for (Py_ssize_t i = 0; list && i < PyList_GET_SIZE(list.get()); ++i) {
      PyObject* row = PyList_GET_ITEM(list.get(), i);
      auto field = [&](Py_ssize_t index) { return static_cast<int>(intAt(row, index)); };
      result.push_back(SourcePosition{field(0), field(1), field(2), field(3)});
    }
    return result;
  }
};

TEST_F(LineTableTest, ParsesLikeCoPositionsAndWritesTheSameBytes) {
  std::set<unsigned> forms;
  for (PyCodeObject* code : codeObjectsOf(global("codes"))) {
    SCOPED_TRACE(qualnameOf(code));
    auto raw = readRawCode(code);
    ASSERT_SUCCEEDED(raw);
    auto parsed = parseLineTable(raw->lineTable, raw->firstLine, raw->code.size() / 2);
    ASSERT_SUCCEEDED(parsed);
    ASSERT_EQ(*parsed, cpythonPositions(code));

    auto decoded = decode(*raw, opcodes);
    ASSERT_SUCCEEDED(decoded);
    auto written = writeLineTable(decoded->instructions, decoded->firstLine);
    ASSERT_SUCCEEDED(written);
    EXPECT_EQ(*written, raw->lineTable);

    // Which entry forms the compiler used, read from the entry start bytes
    // (the only bytes with bit 7 set).
    for (uint8_t byte : raw->lineTable)
      if (byte & 0x80)
        forms.insert((byte >> 3) & 0xF);
  }
  // Every form appears: short (0-9), one-line (10-12), no columns (13),
  // long (14) and none (15).
  EXPECT_EQ(forms.size(), 16u);
}

TEST_F(LineTableTest, EntriesCoverAtMostEightCodeUnits) {
  // The opcode with the most inline caches, with a prefix, is longer than one
  // entry can cover, so it is written as two entries.
  const OpcodeInfo* longest = opcodes.all().front();
  for (const OpcodeInfo* info : opcodes.all())
    if (info->cacheEntries > longest->cacheEntries)
      longest = info;
  Instruction instruction;
  instruction.opcode = longest->code;
  instruction.extendedArgs = 1;
  instruction.cacheEntries = longest->cacheEntries;
  instruction.position = SourcePosition{3, 3, 4, 9};
  unsigned units = instruction.sizeInCodeUnits();
  ASSERT_GT(units, 8u);
  auto written = writeLineTable({instruction}, 3);
  ASSERT_SUCCEEDED(written);
  auto parsed = parseLineTable(*written, 3, units);
  ASSERT_SUCCEEDED(parsed);
  EXPECT_EQ(*parsed, std::vector<SourcePosition>(units, instruction.position));
  EXPECT_EQ((*written)[0] & 0x07, 7); // the first entry holds 8 units
}

TEST_F(LineTableTest, UnrepresentablePositions) {
  Instruction instruction;
  instruction.position = SourcePosition{5, 4, 0, 1};
  expectFailure(writeLineTable({instruction}, 1), "before it starts");
  instruction.position = SourcePosition{5, 5, -3, 1};
  expectFailure(writeLineTable({instruction}, 1), "cannot be written");
}

TEST_F(LineTableTest, MalformedTables) {
  // A byte without the entry start bit where an entry should start.
  expectFailure(parseLineTable({0x10}, 1, 1), "start bit");
  // A one-line entry (form 10) missing its end column.
  expectFailure(parseLineTable({0x80 | (10 << 3), 0x04}, 1, 1), "truncated");
  // An entry start inside the long form's numbers.
  expectFailure(parseLineTable({0x80 | (14 << 3), 0x02, 0x80}, 1, 1), "unexpected entry start");
  // A varint that never ends.
  expectFailure(
      parseLineTable({0x80 | (13 << 3), 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41}, 1, 1),
      "too long");
  // Covering fewer or more code units than the code has.
  std::vector<uint8_t> twoUnits = {0x80 | (15 << 3) | 1};
  expectFailure(parseLineTable(twoUnits, 1, 3), "covers 2 code units of 3");
  expectFailure(parseLineTable(twoUnits, 1, 1), "past the end");
}

} // namespace
