//===- CodecTest.cpp - decode, encode and rebuild code objects ------------===//
//
// decode then encode must give back the compiler's bytes and co_stacksize,
// the rebuilt code object must marshal like the original and run like it,
// and edited code must be laid out again with the prefixes it needs.
//
//===----------------------------------------------------------------------===//
#include "frontend/bytecode/Codec.h"
#include "frontend/bytecode/CodeObject.h"
#include "frontend/bytecode/OpcodeTable.h"
#include "frontend/bytecode/StackEffect.h"
#include "frontend/embedding/PyRef.h"

#include "test/unit/PythonTestSupport.h"

#include <Python.h>
#include <gtest/gtest.h>
#include <marshal.h>

#include <string>
#include <vector>

using namespace dync::bytecode;
using namespace dync::test;
using dync::python::PyRef;

namespace {

/// Run after kStructuredFunctions: more functions to rebuild, the arguments
/// each one is run with, and the code objects to round-trip.
constexpr const char* kPython = R"py(
import asyncio, types

def star_handlers(kind):
    try:
        raise ExceptionGroup('g', [kind(1)])
    except* ValueError as e:
        caught = 'value'
    except* TypeError:
        caught = 'type'
    return caught

def withs():
    items = []
    class Manager:
        def __enter__(self): items.append('enter'); return self
        def __exit__(self, *exc): items.append('exit'); return True
    with Manager() as m, Manager():
        items.append('body')
        raise KeyError
    return items

def comprehensions(xs):
    return ([x * 2 for x in xs if x], {x: y for x, y in zip(xs, xs)},
            {x for x in xs}, list(x + 1 for x in xs))

def closures(a):
    b = a + 1
    def inner(c):
        nonlocal b
        b += c
        return lambda d: a + b + c + d
    return inner(2)(3)

def drive(n):
    return list(generator(n))

async def coroutine(xs):
    lock = asyncio.Lock()
    async with lock:
        total = 0
        async for x in agen(xs):
            total += await asyncio.sleep(0, x)
    return total, [y async for y in agen(xs)]

async def agen(xs):
    for x in xs:
        yield x

def run_coroutine(xs):
    return asyncio.run(coroutine(xs))

def matching(v):
    match v:
        case [1, 2, *rest]:
            return rest
        case {'k': value, **others}:
            return value, others
        case str() | bytes():
            return 'text'
        case _:
            return None

def calls(*args, **kwargs):
    def f(*a, **k):
        return a, k
    return f(1, 2, key=3), f(*args, **kwargs), f'{args!r:>10} {kwargs}'

BIG = ("def big(a):\n"
    + "".join(f"    x = {i}.5\n" for i in range(300))
    + "    while a > 0:\n"
    + "".join(f"        a = a - {i} * 0\n" for i in range(150))
    + "        a = a - 1\n"
    + "    if a:\n"
    + "".join(f"        x = x + {i}\n" for i in range(150))
    + "    return x, a\n")
exec(BIG)

CASES = [
    (loops, [(0,), (10,), (50,), (300,)]),
    (handlers, [(0,), (4,), ('a',)]),
    (star_handlers, [(ValueError,), (TypeError,)]),
    (withs, [()]),
    (comprehensions, [([1, 0, 2],)]),
    (closures, [(1,)]),
    (drive, [(4,)]),
    (run_coroutine, [([1, 2, 3],)]),
    (matching, [([1, 2, 3],), ({'k': 1, 'z': 2},), ('s',), (5,)]),
    (calls, [((4, 5), {'q': 6})]),
    (big, [(3,), (0,)]),
]

def outcome(function, args):
    try:
        return repr(function(*args))
    except Exception as e:
        return 'raised ' + repr(e)

def behaves_the_same(function, code):
    twin = types.FunctionType(code, function.__globals__, function.__name__,
                              function.__defaults__, function.__closure__)
    for f, cases in CASES:
        if f is function:
            return all(outcome(function, args) == outcome(twin, args) for args in cases)
    raise LookupError(function.__name__)

module = compile(BIG, '<big>', 'exec')
codes = [f.__code__ for f, _ in CASES]
codes = [c for code in codes for c in all_code(code)] + list(all_code(module))
)py";

class CodecTest : public BytecodeTest {
protected:
  CodecTest() : BytecodeTest(std::string(kStructuredFunctions) + kPython, NeedsStackEffects::Yes) {}

  static PyCodeObject* codeOf(PyObject* function) {
    return reinterpret_cast<PyCodeObject*>(PyFunction_GetCode(function));
  }

  /// Whether \p code, run as \p function, gives the same results on the
  /// test's cases.
  bool behavesTheSame(PyObject* function, PyObject* code) {
    PyRef result = call("behaves_the_same", {function, code});
    return result && PyObject_IsTrue(result.get()) == 1;
  }

  static std::string marshalled(PyObject* object) {
    PyRef bytes = PyRef::steal(PyMarshal_WriteObjectToString(object, Py_MARSHAL_VERSION));
    return bytes ? std::string(PyBytes_AS_STRING(bytes.get()), PyBytes_GET_SIZE(bytes.get()))
                 : std::string();
  }

  /// Inserts \p count NOPs before instruction \p at, keeping every jump and
  /// exception region pointing at the instructions it pointed at.
  static void insertNops(DecodedCode& code, uint32_t at, uint32_t count, uint8_t nop) {
    Instruction filler;
    filler.opcode = nop;
    filler.position = code.instructions[at].position;
    for (Instruction& instruction : code.instructions)
      if (instruction.jumpTarget >= static_cast<int32_t>(at))
        instruction.jumpTarget += count;
    for (ExceptionRegion& region : code.exceptionRegions) {
      region.start += region.start >= at ? count : 0;
      region.end += region.end > at ? count : 0;
      region.handler += region.handler >= at ? count : 0;
    }
    code.instructions.insert(code.instructions.begin() + at, count, filler);
  }
};

TEST_F(CodecTest, ReadRawCodeMatchesTheAttributes) {
  PyObject* function = global("handlers");
  PyCodeObject* code = codeOf(function);
  auto raw = readRawCode(code);
  ASSERT_SUCCEEDED(raw);
  auto attribute = [&](const char* name) {
    PyRef value = PyRef::steal(PyObject_GetAttrString(reinterpret_cast<PyObject*>(code), name));
    return bytesOf(value.get());
  };
  EXPECT_EQ(raw->code, attribute("co_code"));
  EXPECT_EQ(raw->exceptionTable, attribute("co_exceptiontable"));
  EXPECT_EQ(raw->lineTable, attribute("co_linetable"));
  EXPECT_EQ(raw->firstLine, code->co_firstlineno);
  EXPECT_EQ(raw->stackSize, code->co_stacksize);
  EXPECT_FALSE(raw->exceptionTable.empty());
}

TEST_F(CodecTest, RoundTripIsIdentical) {
  std::vector<PyCodeObject*> codes = codeObjectsOf(global("codes"));
  ASSERT_GT(codes.size(), 15u);
  for (PyCodeObject* code : codes) {
    SCOPED_TRACE(qualnameOf(code));
    auto raw = readRawCode(code);
    ASSERT_SUCCEEDED(raw);
    auto decoded = decode(*raw, opcodes);
    ASSERT_SUCCEEDED(decoded);
    auto encoded = encode(*decoded, opcodes, effects);
    ASSERT_SUCCEEDED(encoded);
    EXPECT_EQ(encoded->code, raw->code);
    EXPECT_EQ(encoded->exceptionTable, raw->exceptionTable);
    EXPECT_EQ(encoded->lineTable, raw->lineTable);
    EXPECT_EQ(encoded->firstLine, raw->firstLine);
    EXPECT_EQ(encoded->stackSize, code->co_stacksize);

    auto rebuilt = buildCodeObject(code, *encoded);
    ASSERT_SUCCEEDED(rebuilt);
    PyRef copy = PyRef::steal(*rebuilt);
    EXPECT_NE(copy.get(), reinterpret_cast<PyObject*>(code));
    // Hold both the same way: marshal marks objects referenced more than once.
    PyRef both = PyRef::steal(PyTuple_Pack(2, code, copy.get()));
    std::string original = marshalled(reinterpret_cast<PyObject*>(code));
    EXPECT_FALSE(original.empty());
    EXPECT_EQ(marshalled(copy.get()), original);
  }
}

TEST_F(CodecTest, RebuiltFunctionsBehaveTheSame) {
  PyObject* cases = global("CASES");
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(cases); ++i) {
    PyObject* function = PyTuple_GET_ITEM(PyList_GET_ITEM(cases, i), 0);
    PyCodeObject* code = codeOf(function);
    SCOPED_TRACE(qualnameOf(code));
    auto raw = readRawCode(code);
    ASSERT_SUCCEEDED(raw);
    auto decoded = decode(*raw, opcodes);
    ASSERT_SUCCEEDED(decoded);
    auto encoded = encode(*decoded, opcodes, effects);
    ASSERT_SUCCEEDED(encoded);
    auto rebuilt = buildCodeObject(code, *encoded);
    ASSERT_SUCCEEDED(rebuilt);
    PyRef copy = PyRef::steal(*rebuilt);
    EXPECT_TRUE(behavesTheSame(function, copy.get()));
  }
}

TEST_F(CodecTest, EncoderChoosesTheFewestPrefixes) {
  PyCodeObject* code = codeOf(global("big"));
  auto raw = readRawCode(code);
  ASSERT_SUCCEEDED(raw);
  auto decoded = decode(*raw, opcodes);
  ASSERT_SUCCEEDED(decoded);
  size_t prefixed = 0;
  for (Instruction& instruction : decoded->instructions) {
    prefixed += instruction.extendedArgs > 0;
    // Whatever the instructions claim, the encoder decides.
    instruction.extendedArgs = 3;
    instruction.startOffset = 0;
  }
  EXPECT_GT(prefixed, 40u);
  auto encoded = encode(*decoded, opcodes, effects);
  ASSERT_SUCCEEDED(encoded);
  EXPECT_EQ(encoded->code, raw->code);
  EXPECT_EQ(encoded->lineTable, raw->lineTable);
}

TEST_F(CodecTest, EditedLoopGetsLongJumpsAndStillRuns) {
  for (const char* name :
       {"loops", "handlers", "run_coroutine", "coroutine", "drive", "generator"}) {
    SCOPED_TRACE(name);
    PyObject* function = global(name);
    PyCodeObject* code = codeOf(function);
    auto raw = readRawCode(code);
    ASSERT_SUCCEEDED(raw);
    auto decoded = decode(*raw, opcodes);
    ASSERT_SUCCEEDED(decoded);

    // 300 NOPs in the middle: jumps across them need a prefix, and the
    // prefixes move everything after them.
    DecodedCode edited = *decoded;
    constexpr uint32_t kPadding = 300;
    uint32_t middle = static_cast<uint32_t>(edited.instructions.size() / 2);
    insertNops(edited, middle, kPadding, opcode("NOP"));
    auto encoded = encode(edited, opcodes, effects);
    ASSERT_SUCCEEDED(encoded);
    EXPECT_GE(encoded->code.size(), raw->code.size() + 2 * kPadding);
    EXPECT_EQ(encoded->stackSize, code->co_stacksize);

    // Decoding the result gives the same instructions and targets back.
    auto again = decode(*encoded, opcodes);
    ASSERT_SUCCEEDED(again);
    ASSERT_EQ(again->instructions.size(), edited.instructions.size());
    size_t spanning = 0;
    for (size_t i = 0; i < edited.instructions.size(); ++i) {
      const Instruction& before = edited.instructions[i];
      const Instruction& after = again->instructions[i];
      EXPECT_EQ(after.opcode, before.opcode);
      EXPECT_EQ(after.jumpTarget, before.jumpTarget);
      EXPECT_EQ(after.position, before.position);
      if (before.jumpTarget < 0) {
        EXPECT_EQ(after.arg, before.arg);
        continue;
      }
      size_t low = std::min<size_t>(i, before.jumpTarget);
      size_t high = std::max<size_t>(i, before.jumpTarget);
      if (low < middle && high >= middle + kPadding) {
        ++spanning;
        EXPECT_GE(after.extendedArgs, 1) << "jump at " << i;
      }
    }
    EXPECT_EQ(again->exceptionRegions, edited.exceptionRegions);
    if (std::string(name) == "loops") {
      EXPECT_GT(spanning, 0u);
    }

    auto rebuilt = buildCodeObject(code, *encoded);
    ASSERT_SUCCEEDED(rebuilt);
    PyRef copy = PyRef::steal(*rebuilt);
    if (std::string(name) != "coroutine" && std::string(name) != "generator") {
      EXPECT_TRUE(behavesTheSame(function, copy.get()));
    }
  }
}

// --- Input the encoder refuses. -------------------------------------------

class CodecErrorTest : public CodecTest {
protected:
  DecodedCode simple() {
    DecodedCode code;
    code.firstLine = 1;
    code.instructions = {make("RESUME"), make("LOAD_CONST"), make("RETURN_VALUE")};
    return code;
  }
};

TEST_F(CodecErrorTest, SimpleBodyEncodes) {
  auto encoded = encode(simple(), opcodes, effects);
  ASSERT_SUCCEEDED(encoded);
  EXPECT_EQ(encoded->stackSize, 1);
}

TEST_F(CodecErrorTest, JumpToNowhere) {
  DecodedCode code = simple();
  code.instructions[0].opcode = opcode("JUMP_FORWARD");
  code.instructions[0].jumpTarget = 9;
  expectFailure(encode(code, opcodes, effects), "does not exist");
}

TEST_F(CodecErrorTest, BackwardJumpToALaterInstruction) {
  DecodedCode code = simple();
  code.instructions[0].opcode = opcode("JUMP_BACKWARD");
  code.instructions[0].jumpTarget = 2;
  expectFailure(encode(code, opcodes, effects), "cannot reach");
}

TEST_F(CodecErrorTest, ForwardJumpToAnEarlierInstruction) {
  DecodedCode code = simple();
  code.instructions[1].opcode = opcode("JUMP_FORWARD");
  code.instructions[1].jumpTarget = 0;
  expectFailure(encode(code, opcodes, effects), "cannot reach");
}

TEST_F(CodecErrorTest, ExtendedArgIsNotAnInstruction) {
  DecodedCode code = simple();
  code.instructions[0].opcode = opcodes.extendedArg();
  expectFailure(encode(code, opcodes, effects), "EXTENDED_ARG");
}

TEST_F(CodecErrorTest, UndefinedOpcode) {
  DecodedCode code = simple();
  for (unsigned value = 255; value > 0; --value)
    if (!opcodes.lookup(value)) {
      code.instructions[1].opcode = value;
      break;
    }
  expectFailure(encode(code, opcodes, effects), "undefined opcode");
}

TEST_F(CodecErrorTest, RegionOutsideTheCode) {
  DecodedCode code = simple();
  code.exceptionRegions = {ExceptionRegion{1, 4, 2, 0, false}};
  expectFailure(encode(code, opcodes, effects), "does not fit");
}

TEST_F(CodecErrorTest, OverlappingRegions) {
  DecodedCode code = simple();
  code.exceptionRegions = {ExceptionRegion{1, 3, 2, 0, false}, ExceptionRegion{0, 2, 2, 0, false}};
  expectFailure(encode(code, opcodes, effects), "overlaps");
}

TEST_F(CodecErrorTest, UnwritablePosition) {
  DecodedCode code = simple();
  code.instructions[1].position = SourcePosition{4, 2, 0, 0};
  expectFailure(encode(code, opcodes, effects), "line table");
}

TEST_F(CodecErrorTest, StackUnderflow) {
  DecodedCode code = simple();
  code.instructions[1].opcode = opcode("POP_TOP");
  expectFailure(encode(code, opcodes, effects), "stack depth");
}

TEST_F(CodecErrorTest, NotACodeObject) {
  expectFailure(readRawCode(reinterpret_cast<PyCodeObject*>(Py_None)), "not a code object");
  auto encoded = encode(simple(), opcodes, effects);
  ASSERT_SUCCEEDED(encoded);
  expectFailure(buildCodeObject(reinterpret_cast<PyCodeObject*>(Py_None), *encoded),
                "not a code object");
}

} // namespace
