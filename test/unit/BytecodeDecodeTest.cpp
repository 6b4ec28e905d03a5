//===- BytecodeDecodeTest.cpp - decode() against dis ----------------------===//
//
// Every expectation comes from CPython in the test itself: dis's view of the
// instructions and exception table of functions compiled here.
//
//===----------------------------------------------------------------------===//
#include "frontend/bytecode/CodeObject.h"
#include "frontend/bytecode/Codec.h"
#include "frontend/bytecode/ExceptionTable.h"
#include "frontend/bytecode/OpcodeTable.h"
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

/// With kStructuredFunctions (loops, handlers, a generator), functions
/// covering the statement kinds whose bytecode has structure: except*, with,
/// comprehensions, closures, coroutines, async generators, pattern matching,
/// calls, f-strings.
constexpr const char* kKitchenSink = R"py(
import asyncio

def star_handlers():
    try:
        raise ExceptionGroup('g', [ValueError(1), TypeError(2)])
    except* ValueError as e:
        a = e
    except* TypeError:
        b = 1
    return a

def withs(path):
    with open(path) as f, open(path) as g:
        data = f.read() + g.read()
    return data

def comprehensions(xs):
    a = [x * 2 for x in xs if x]
    b = {x: y for x, y in zip(xs, xs)}
    c = {x for x in xs}
    d = list(x + 1 for x in xs)
    return a, b, c, d

def closures(a):
    b = a + 1
    def inner(c):
        nonlocal b
        b += c
        return lambda d: a + b + c + d
    return inner

async def coroutine(xs):
    async with asyncio.Lock() as lock:
        async for x in xs:
            await asyncio.sleep(0)
    return [y async for y in xs]

async def async_generator(n):
    for i in range(n):
        yield i
        await asyncio.sleep(0)

def matching(v):
    match v:
        case [1, 2, *rest]:
            return rest
        case {'k': value, **others}:
            return value, others
        case Point(x=0, y=yy) if yy > 0:
            return yy
        case str() | bytes():
            return 'text'
        case _:
            return None

class Point:
    __match_args__ = ('x', 'y')
    def __init__(self, x, y):
        self.x = x
        self.y = y
    @property
    def norm(self):
        return (self.x ** 2 + self.y ** 2) ** 0.5

def calls(f, *args, **kwargs):
    f(1, 2, key=3)
    f(*args, **kwargs)
    return f'{args!r:>10} {kwargs}'

def multiline(a,
              b):
    return (a +
            b) * \
        a
)py";

/// A function with more than 256 constants and jumps longer than 255 code
/// units, forward and backward, so arguments need EXTENDED_ARG.
constexpr const char* kMakeBigSource = R"py(
big_source = ("def big(a):\n"
    + "".join(f"    x = {i}.5\n" for i in range(300))
    + "    while a:\n"
    + "".join(f"        a = a - {i} * x\n" for i in range(150))
    + "    if a:\n"
    + "".join(f"        x = x + {i}\n" for i in range(150))
    + "    return x\n")
)py";

/// dis's view of a code object, in plain tuples.
constexpr const char* kExpectations = R"py(
import dis, opcode

def expected_instructions(co):
    result = []
    for ins in dis.get_instructions(co):
        if ins.opname == 'EXTENDED_ARG':
            continue
        jump = ins.opcode in opcode.hasjrel or ins.opcode in opcode.hasjabs
        arg = ins.arg if ins.arg is not None else co.co_code[ins.offset + 1]
        p = ins.positions
        position = tuple(-1 if v is None else v
                         for v in (p.lineno, p.end_lineno, p.col_offset, p.end_col_offset))
        result.append((ins.offset, ins.opcode, arg, ins.argval if jump else -1, position))
    return result
)py";

class BytecodeDecodeTest : public BytecodeTest {
protected:
  BytecodeDecodeTest() : BytecodeTest(kExpectations, NeedsStackEffects::No) {}

  /// A list of every code object of \p source compiled as a module,
  /// outermost first; null if it does not compile.
  PyRef compileAll(const std::string& source) {
    PyRef text = PyRef::steal(PyUnicode_FromString(source.c_str()));
    return call("source_code", {text.get()});
  }

  /// Checks decode() of \p code against dis; returns how many instructions
  /// had EXTENDED_ARG prefixes.
  size_t checkAgainstDis(PyCodeObject* code);
};

size_t BytecodeDecodeTest::checkAgainstDis(PyCodeObject* code) {
  auto raw = readRawCode(code);
  EXPECT_SUCCEEDED(raw);
  if (!raw)
    return 0;
  auto decoded = decode(*raw, opcodes);
  EXPECT_SUCCEEDED(decoded);
  if (!decoded)
    return 0;
  SCOPED_TRACE(qualnameOf(code));

  PyRef expected = call("expected_instructions", {reinterpret_cast<PyObject*>(code)});
  const auto& instructions = decoded->instructions;
  EXPECT_EQ(instructions.size(), size_t(PyList_GET_SIZE(expected.get())));
  size_t extended = 0;
  for (size_t i = 0; i < instructions.size() && i < size_t(PyList_GET_SIZE(expected.get())); ++i) {
    PyObject* row = PyList_GET_ITEM(expected.get(), i);
    const Instruction& instruction = instructions[i];
    SCOPED_TRACE("instruction " + std::to_string(i));
    EXPECT_EQ(instruction.opcodeOffset(), intAt(row, 0));
    EXPECT_EQ(instruction.opcode, intAt(row, 1));
    EXPECT_EQ(instruction.arg, static_cast<uint32_t>(intAt(row, 2)));
    long target = intAt(row, 3);
    if (target < 0) {
      EXPECT_EQ(instruction.jumpTarget, -1);
    } else if (instruction.jumpTarget < 0) {
      ADD_FAILURE() << "jump without a target";
    } else {
      EXPECT_EQ(instructions[instruction.jumpTarget].startOffset, target);
    }
    PyObject* position = PyTuple_GET_ITEM(row, 4);
    EXPECT_EQ(instruction.position.line, intAt(position, 0));
    EXPECT_EQ(instruction.position.endLine, intAt(position, 1));
    EXPECT_EQ(instruction.position.column, intAt(position, 2));
    EXPECT_EQ(instruction.position.endColumn, intAt(position, 3));
    EXPECT_EQ(instruction.cacheEntries, opcodes.lookup(instruction.opcode)->cacheEntries);
    if (i + 1 < instructions.size()) {
      EXPECT_EQ(instruction.endOffset(), instructions[i + 1].startOffset);
    }
    extended += instruction.extendedArgs > 0;
  }
  EXPECT_EQ(instructions.back().endOffset(), raw->code.size());

  PyRef regions = call("exception_rows", {reinterpret_cast<PyObject*>(code)});
  EXPECT_EQ(decoded->exceptionRegions.size(), size_t(PyList_GET_SIZE(regions.get())));
  for (size_t i = 0;
       i < decoded->exceptionRegions.size() && i < size_t(PyList_GET_SIZE(regions.get())); ++i) {
    PyObject* row = PyList_GET_ITEM(regions.get(), i);
    const ExceptionRegion& region = decoded->exceptionRegions[i];
    EXPECT_EQ(instructions[region.start].startOffset, intAt(row, 0));
    uint32_t end =
        region.end == instructions.size() ? raw->code.size() : instructions[region.end].startOffset;
    EXPECT_EQ(end, intAt(row, 1));
    EXPECT_EQ(instructions[region.handler].startOffset, intAt(row, 2));
    EXPECT_EQ(region.depth, intAt(row, 3));
    EXPECT_EQ(region.pushLasti, intAt(row, 4) != 0);
  }
  EXPECT_EQ(decoded->firstLine, code->co_firstlineno);
  return extended;
}

TEST_F(BytecodeDecodeTest, MatchesDisOnKitchenSink) {
  PyRef codes = compileAll(std::string(kStructuredFunctions) + kKitchenSink);
  ASSERT_TRUE(codes);
  EXPECT_GT(PyList_GET_SIZE(codes.get()), 15);
  for (PyCodeObject* code : codeObjectsOf(codes.get()))
    checkAgainstDis(code);
}

TEST_F(BytecodeDecodeTest, MatchesDisWithExtendedArgs) {
  ASSERT_TRUE(run(kMakeBigSource));
  PyRef codes = compileAll(PyUnicode_AsUTF8(global("big_source")));
  ASSERT_TRUE(codes);
  size_t extended = 0;
  for (PyCodeObject* code : codeObjectsOf(codes.get()))
    extended += checkAgainstDis(code);
  // Constants past 255 and both long jumps need prefixes.
  EXPECT_GT(extended, 40u);
}

TEST_F(BytecodeDecodeTest, MatchesDisOnStandardLibraryModules) {
  for (const char* module : {"dis", "inspect", "asyncio.tasks", "json.decoder"}) {
    SCOPED_TRACE(module);
    PyRef name = PyRef::steal(PyUnicode_FromString(module));
    PyRef codes = call("module_code", {name.get()});
    ASSERT_TRUE(codes);
    for (PyCodeObject* code : codeObjectsOf(codes.get()))
      checkAgainstDis(code);
  }
}

// --- Malformed input: each is an error, never a crash. -------------------

class BytecodeDecodeErrorTest : public BytecodeDecodeTest {
protected:
  /// A valid body to corrupt: `def f(a): return a + 1`.
  RawCode valid() {
    EXPECT_TRUE(run("def f(a):\n    return a + 1\n"));
    PyRef code = PyRef::steal(PyObject_GetAttrString(global("f"), "__code__"));
    auto raw = readRawCode(reinterpret_cast<PyCodeObject*>(code.get()));
    EXPECT_SUCCEEDED(raw);
    return raw ? *raw : RawCode{};
  }

  /// The byte offset of the first instruction with opcode \p name.
  size_t offsetOf(const RawCode& raw, const char* name) {
    uint8_t code = *opcodes.byName(name);
    for (size_t offset = 0; offset < raw.code.size(); offset += 2)
      if (raw.code[offset] == code)
        return offset;
    ADD_FAILURE() << name << " not found";
    return 0;
  }

  void expectError(const RawCode& raw, const char* fragment) {
    expectFailure(decode(raw, opcodes), fragment);
  }
};

TEST_F(BytecodeDecodeErrorTest, ValidBodyDecodes) {
  auto decoded = decode(valid(), opcodes);
  EXPECT_SUCCEEDED(decoded);
}

TEST_F(BytecodeDecodeErrorTest, OddLength) {
  RawCode raw = valid();
  raw.code.push_back(0);
  expectError(raw, "odd number of bytes");
}

TEST_F(BytecodeDecodeErrorTest, TruncatedInsideCaches) {
  RawCode raw = valid();
  // BINARY_OP has inline caches; cut the code right after its opcode word.
  size_t offset = offsetOf(raw, "BINARY_OP");
  ASSERT_GT(opcodes.lookup(raw.code[offset])->cacheEntries, 0);
  raw.code.resize(offset + 2);
  // Keep the line table consistent with the shorter code so that the cache
  // check is what fails.
  raw.lineTable.clear();
  uint8_t noLocation = 0x80 | (15 << 3);
  for (size_t units = raw.code.size() / 2; units > 0; units -= std::min<size_t>(units, 8))
    raw.lineTable.push_back(noLocation | (std::min<size_t>(units, 8) - 1));
  expectError(raw, "inline cache");
}

TEST_F(BytecodeDecodeErrorTest, UnknownOpcode) {
  RawCode raw = valid();
  std::optional<uint8_t> undefined;
  for (unsigned code = 255; code > 0 && !undefined; --code)
    if (!opcodes.lookup(code))
      undefined = code;
  ASSERT_TRUE(undefined);
  raw.code[offsetOf(raw, "RETURN_VALUE")] = *undefined;
  expectError(raw, "unknown opcode");
}

TEST_F(BytecodeDecodeErrorTest, TrailingExtendedArg) {
  RawCode raw = valid();
  size_t offset = offsetOf(raw, "RETURN_VALUE");
  raw.code[offset] = opcodes.extendedArg();
  expectError(raw, "EXTENDED_ARG");
}

TEST_F(BytecodeDecodeErrorTest, FilledInlineCache) {
  RawCode raw = valid();
  size_t offset = offsetOf(raw, "BINARY_OP");
  raw.code[offset + 3] = 7;
  expectError(raw, "not empty");
}

TEST_F(BytecodeDecodeErrorTest, JumpIntoAnInlineCache) {
  RawCode raw = valid();
  // Replace the RESUME at the start with JUMP_FORWARD landing inside the
  // BINARY_OP caches.
  size_t binaryOp = offsetOf(raw, "BINARY_OP");
  raw.code[0] = *opcodes.byName("JUMP_FORWARD");
  raw.code[1] = static_cast<uint8_t>((binaryOp + 2 - 2) / 2);
  expectError(raw, "not the start of an instruction");
}

TEST_F(BytecodeDecodeErrorTest, JumpPastTheEnd) {
  RawCode raw = valid();
  raw.code[0] = *opcodes.byName("JUMP_FORWARD");
  raw.code[1] = 200;
  expectError(raw, "not the start of an instruction");
}

TEST_F(BytecodeDecodeErrorTest, BackwardJumpBeforeTheStart) {
  RawCode raw = valid();
  raw.code[0] = *opcodes.byName("JUMP_BACKWARD");
  raw.code[1] = 5;
  expectError(raw, "outside the code");
}

TEST_F(BytecodeDecodeErrorTest, ExceptionRowInsideAnInstruction) {
  RawCode raw = valid();
  size_t binaryOp = offsetOf(raw, "BINARY_OP");
  // One row: units [0, binaryOp/2 + 1) -> unit 0, which ends inside caches.
  raw.exceptionTable = writeExceptionTable(
      {RawExceptionEntry{0, static_cast<uint32_t>(binaryOp / 2 + 1), 0, 0, false}});
  expectError(raw, "not an instruction boundary");
}

TEST_F(BytecodeDecodeErrorTest, CorruptExceptionTable) {
  RawCode raw = valid();
  raw.exceptionTable = {0x80, 0x41};
  expectError(raw, "exception table");
}

TEST_F(BytecodeDecodeErrorTest, LineTableTooShort) {
  RawCode raw = valid();
  raw.lineTable.pop_back();
  raw.lineTable.pop_back();
  expectFailure(decode(raw, opcodes), "line table");
}

TEST_F(BytecodeDecodeErrorTest, EveryTruncationFailsCleanly) {
  RawCode raw = valid();
  for (size_t size = 0; size < raw.code.size(); ++size) {
    RawCode cut = raw;
    cut.code.resize(size);
    auto decoded = decode(cut, opcodes);
    // A cut at an instruction boundary leaves a valid prefix whose line table
    // is too long; anything else is a truncated instruction. Either way an
    // error, never a crash.
    EXPECT_FALSE(static_cast<bool>(decoded)) << "size " << size;
    if (!decoded)
      llvm::consumeError(decoded.takeError());
  }
}

} // namespace
