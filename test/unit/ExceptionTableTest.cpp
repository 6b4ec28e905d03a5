//===- ExceptionTableTest.cpp - co_exceptiontable reader and writer -------===//
//
// Parsed rows are compared with dis._parse_exception_table on code compiled
// here, written tables with the compiler's bytes, and large numbers are read
// back with dis's own reader.
//
//===----------------------------------------------------------------------===//
#include "frontend/bytecode/ExceptionTable.h"
#include "frontend/embedding/PyRef.h"

#include "test/unit/PythonTestSupport.h"

#include <Python.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace dync::bytecode;
using namespace dync::test;
using dync::python::PyRef;

namespace {

constexpr const char* kPython = R"py(
import types

SOURCE = '''
def nested(x):
    try:
        try:
            y = 1 / x
        except ZeroDivisionError as e:
            y = str(e)
        finally:
            x = None
    except* TypeError:
        y = 0
    return y

def withs(a, b):
    with a as x:
        with b as y:
            return x + y

async def async_things(xs):
    async with xs as lock:
        async for x in xs:
            await x

def generator():
    try:
        yield 1
    finally:
        yield 2
'''

codes = source_code(SOURCE)
# A handler far from its range, so targets need several chunks.
far = "def far(a):\n    try:\n        a()\n    except:\n" + "".join(
    f"        a = a + {i}\n" for i in range(700)) + "    return a\n"
codes += source_code(far, '<far>')
codes += module_code('asyncio.base_events', 'subprocess', 'tempfile')

def dis_reads(table):
    return exception_rows(types.SimpleNamespace(co_exceptiontable=table))
)py";

class ExceptionTableTest : public PythonTest {
protected:
  ExceptionTableTest() : PythonTest(kPython) {}

  /// dis's rows for \p object (a code object, or anything with a
  /// co_exceptiontable), in bytes as dis gives them.
  std::vector<RawExceptionEntry> disRows(const char* function, PyObject* object) {
    PyRef rows = call(function, {object});
    std::vector<RawExceptionEntry> result;
    for (Py_ssize_t i = 0; rows && i < PyList_GET_SIZE(rows.get()); ++i) {
      PyObject* row = PyList_GET_ITEM(rows.get(), i);
      auto field = [&](Py_ssize_t index) {
        return static_cast<uint32_t>(PyLong_AsUnsignedLong(PyTuple_GET_ITEM(row, index)));
      };
      result.push_back(RawExceptionEntry{field(0), field(1), field(2), field(3), field(4) != 0});
    }
    return result;
  }

  /// Our rows with offsets in bytes, as dis reports them.
  static std::vector<RawExceptionEntry> inBytes(std::vector<RawExceptionEntry> rows) {
    for (RawExceptionEntry& row : rows) {
      row.start *= 2;
      row.end *= 2;
      row.target *= 2;
    }
    return rows;
  }
};

TEST_F(ExceptionTableTest, ParsesLikeDisAndWritesTheSameBytes) {
  size_t withRows = 0;
  size_t multiChunk = 0;
  for (PyCodeObject* code : codeObjectsOf(global("codes"))) {
    SCOPED_TRACE(qualnameOf(code));
    std::vector<uint8_t> table = bytesOf(code->co_exceptiontable);
    auto parsed = parseExceptionTable(table);
    ASSERT_SUCCEEDED(parsed);
    EXPECT_EQ(inBytes(*parsed), disRows("exception_rows", reinterpret_cast<PyObject*>(code)));
    EXPECT_EQ(writeExceptionTable(*parsed), table);
    withRows += !parsed->empty();
    for (const RawExceptionEntry& row : *parsed)
      multiChunk += row.target >= 64;
  }
  EXPECT_GT(withRows, 50u);
  EXPECT_GT(multiChunk, 50u);
}

TEST_F(ExceptionTableTest, LargeNumbersReadBackByDis) {
  // Every chunk boundary the interpreter's 30-bit numbers can cross.
  std::vector<RawExceptionEntry> rows;
  uint32_t start = 0;
  for (uint32_t value : {0u, 1u, 63u, 64u, 4095u, 4096u, (1u << 18) - 1, 1u << 18, (1u << 24) - 1,
                         1u << 24, (1u << 29) + 12345}) {
    rows.push_back(RawExceptionEntry{start, start + value + 1, value, value, value % 2 == 0});
    start += value + 1;
  }
  std::vector<uint8_t> table = writeExceptionTable(rows);
  auto parsed = parseExceptionTable(table);
  ASSERT_SUCCEEDED(parsed);
  EXPECT_EQ(*parsed, rows);

  PyRef bytes = PyRef::steal(
      PyBytes_FromStringAndSize(reinterpret_cast<const char*>(table.data()), table.size()));
  EXPECT_EQ(disRows("dis_reads", bytes.get()), inBytes(rows));
}

TEST_F(ExceptionTableTest, FullThirtyTwoBitRange) {
  std::vector<RawExceptionEntry> rows = {
      RawExceptionEntry{0xFFFFFFF0u, 0xFFFFFFFFu, 0xFFFFFFFFu, 0xFFFFFFFFu, true}};
  auto parsed = parseExceptionTable(writeExceptionTable(rows));
  ASSERT_SUCCEEDED(parsed);
  EXPECT_EQ(*parsed, rows);
}

TEST_F(ExceptionTableTest, EmptyTable) {
  auto parsed = parseExceptionTable({});
  ASSERT_SUCCEEDED(parsed);
  EXPECT_TRUE(parsed->empty());
  EXPECT_TRUE(writeExceptionTable({}).empty());
}

TEST_F(ExceptionTableTest, TruncatedRow) {
  std::vector<uint8_t> table = writeExceptionTable({RawExceptionEntry{1, 5, 9, 2, true}});
  for (size_t size = 1; size < table.size(); ++size)
    expectFailure(parseExceptionTable(llvm::ArrayRef(table).take_front(size)), "truncated");
}

TEST_F(ExceptionTableTest, RowWithoutStartMark) {
  expectFailure(parseExceptionTable({0x01, 0x02, 0x03, 0x04}), "does not start");
}

TEST_F(ExceptionTableTest, StartMarkInsideARow) {
  expectFailure(parseExceptionTable({0x81, 0x82, 0x03, 0x04}), "inside a row");
}

TEST_F(ExceptionTableTest, NumberTooLong) {
  expectFailure(parseExceptionTable({0xC1, 0x41, 0x41, 0x41, 0x41, 0x41, 0x41, 0x01}), "too long");
}

TEST_F(ExceptionTableTest, RowBeyondThirtyTwoBits) {
  // start 2**32 - 1 and length 2: the end does not fit.
  std::vector<uint8_t> table =
      writeExceptionTable({RawExceptionEntry{0xFFFFFFFFu, 0xFFFFFFFFu, 0, 0}});
  ASSERT_EQ(table.size(), 9u); // six chunks of start, then one each
  table[6] = 0x02;             // the length
  expectFailure(parseExceptionTable(table), "32 bits");
}

} // namespace
