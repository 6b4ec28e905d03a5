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
#include "frontend/python/PyRef.h"

#include <Python.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace dync::bytecode;
using dync::python::PyRef;

namespace {

/// Fails the test with the error's message unless \p value holds a value.
#define ASSERT_SUCCEEDED(value)                                                                    \
  ASSERT_TRUE(static_cast<bool>(value)) << llvm::toString((value).takeError())
#define EXPECT_SUCCEEDED(value)                                                                    \
  EXPECT_TRUE(static_cast<bool>(value)) << llvm::toString((value).takeError())

/// Expects \p value to be an error whose message contains \p fragment.
template <typename T> void expectFailure(llvm::Expected<T> value, const std::string& fragment) {
  ASSERT_FALSE(static_cast<bool>(value)) << "expected an error mentioning '" << fragment << "'";
  std::string message = llvm::toString(value.takeError());
  EXPECT_NE(message.find(fragment), std::string::npos) << message;
}

/// Functions covering the statement kinds whose bytecode has structure:
/// loops, handlers (a dead one included), with, comprehensions, closures,
/// generators, coroutines, pattern matching, calls, f-strings.
constexpr const char* kKitchenSink = R"py(
import asyncio

def loops(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        while total < i:
            total += 1
            if total > 100:
                break
        else:
            total -= 1
    return total

def handlers(x):
    try:
        y = 1 / x
    except ZeroDivisionError as e:
        y = str(e)
    except (TypeError, ValueError):
        y = None
    else:
        y = y * 2
    finally:
        x = 0
    try:
        pass
    except Exception:
        y = 'never'
    return y

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

def generator(n):
    for i in range(n):
        received = yield i
        if received:
            yield from range(received)
    return n

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

def expected_regions(co):
    return [(e.start, e.end, e.target, e.depth, int(e.lasti))
            for e in dis._parse_exception_table(co)]

def all_code(co):
    yield co
    for c in co.co_consts:
        if hasattr(c, 'co_code'):
            yield from all_code(c)
)py";

class BytecodeDecodeTest : public testing::Test {
protected:
  void SetUp() override {
    auto table = OpcodeTable::fromInterpreter();
    ASSERT_SUCCEEDED(table);
    opcodes = std::move(*table);
    namespace_ = PyRef::steal(PyDict_New());
    PyDict_SetItemString(namespace_.get(), "__builtins__", PyEval_GetBuiltins());
    run(kExpectations);
  }

  void run(const std::string& source) {
    PyRef result = PyRef::steal(
        PyRun_String(source.c_str(), Py_file_input, namespace_.get(), namespace_.get()));
    if (!result)
      PyErr_Print();
    ASSERT_TRUE(result);
  }

  PyRef global(const char* name) {
    return PyRef::borrow(PyDict_GetItemString(namespace_.get(), name));
  }

  PyRef call(const char* function, PyObject* argument) {
    PyRef result = PyRef::steal(PyObject_CallOneArg(global(function).get(), argument));
    if (!result)
      PyErr_Print();
    return result;
  }

  /// Every code object of \p source compiled as a module, outermost first.
  std::vector<PyRef> compileAll(const std::string& source) {
    PyRef code = PyRef::steal(Py_CompileString(source.c_str(), "<test>", Py_file_input));
    if (!code)
      PyErr_Print();
    EXPECT_TRUE(code);
    PyRef all = PyRef::steal(PySequence_List(call("all_code", code.get()).get()));
    std::vector<PyRef> result;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(all.get()); ++i)
      result.push_back(PyRef::borrow(PyList_GET_ITEM(all.get(), i)));
    return result;
  }

  static long intAt(PyObject* tuple, Py_ssize_t index) {
    return PyLong_AsLong(PyTuple_GET_ITEM(tuple, index));
  }

  /// Checks decode() of \p code against dis; returns how many instructions
  /// had EXTENDED_ARG prefixes.
  size_t checkAgainstDis(PyObject* code);

  OpcodeTable opcodes;
  PyRef namespace_;
};

size_t BytecodeDecodeTest::checkAgainstDis(PyObject* code) {
  auto raw = readRawCode(reinterpret_cast<PyCodeObject*>(code));
  EXPECT_SUCCEEDED(raw);
  if (!raw)
    return 0;
  auto decoded = decode(*raw, opcodes);
  EXPECT_SUCCEEDED(decoded);
  if (!decoded)
    return 0;
  std::string name = PyUnicode_AsUTF8(reinterpret_cast<PyCodeObject*>(code)->co_qualname);
  SCOPED_TRACE(name);

  PyRef expected = call("expected_instructions", code);
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

  PyRef regions = call("expected_regions", code);
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
  EXPECT_EQ(decoded->firstLine, reinterpret_cast<PyCodeObject*>(code)->co_firstlineno);
  return extended;
}

TEST_F(BytecodeDecodeTest, MatchesDisOnKitchenSink) {
  std::vector<PyRef> codes = compileAll(kKitchenSink);
  EXPECT_GT(codes.size(), 15u);
  for (const PyRef& code : codes)
    checkAgainstDis(code.get());
}

TEST_F(BytecodeDecodeTest, MatchesDisWithExtendedArgs) {
  run(kMakeBigSource);
  PyRef text = global("big_source");
  std::vector<PyRef> codes = compileAll(PyUnicode_AsUTF8(text.get()));
  size_t extended = 0;
  for (const PyRef& code : codes)
    extended += checkAgainstDis(code.get());
  // Constants past 255 and both long jumps need prefixes.
  EXPECT_GT(extended, 40u);
}

TEST_F(BytecodeDecodeTest, MatchesDisOnStandardLibraryModules) {
  for (const char* module : {"dis", "inspect", "asyncio.tasks", "json.decoder"}) {
    SCOPED_TRACE(module);
    run(std::string("import importlib.util\n"
                    "spec = importlib.util.find_spec('") +
        module + "')\nsource = spec.loader.get_source(spec.name)\n");
    std::vector<PyRef> codes = compileAll(PyUnicode_AsUTF8(global("source").get()));
    for (const PyRef& code : codes)
      checkAgainstDis(code.get());
  }
}

// --- Malformed input: each is an error, never a crash. -------------------

class BytecodeDecodeErrorTest : public BytecodeDecodeTest {
protected:
  /// A valid body to corrupt: `def f(a): return a + 1`.
  RawCode valid() {
    run("def f(a):\n    return a + 1\n");
    PyRef function = global("f");
    PyRef code = PyRef::steal(PyObject_GetAttrString(function.get(), "__code__"));
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
