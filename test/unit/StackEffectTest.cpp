//===- StackEffectTest.cpp - Stack effects and co_stacksize ---------------===//
//
// The effect table is checked against dis.stack_effect for every opcode the
// interpreter defines over a sweep of arguments, and computeMaxStackDepth
// against co_stacksize of functions compiled here.
//
//===----------------------------------------------------------------------===//
#include "frontend/bytecode/StackEffect.h"
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

/// CPython's answers: dis.stack_effect over every opcode and a sweep of
/// arguments (small ones, byte and chunk boundaries, bit patterns), and the
/// code objects whose co_stacksize the depth computation must reproduce.
constexpr const char* kPython = R"py(
import dis, opcode

ARGS = (list(range(0, 301))
        + [0x3FF, 0x400, 0xFFF, 0x1000, 0xFFFF, 0x10000, 0x12345, 0xABCDEF, 0xFFFFFF,
           0x1000000, 0x2AAAAAAA, 0x15555555, 0x3FFFFFFF])

def expected_effects():
    rows = []
    for name, op in opcode.opmap.items():
        args = [None] if op < opcode.HAVE_ARGUMENT else ARGS
        for arg in args:
            try:
                rows.append((op, 0 if arg is None else arg,
                             dis.stack_effect(op, arg, jump=False),
                             dis.stack_effect(op, arg, jump=True)))
            except ValueError:
                pass
    return rows

SOURCE = '''
import asyncio

def loops(n):
    total = 0
    for i in range(n):
        while total < i:
            total += 1
            if total > 100:
                break
    return total

def handlers(x):
    try:
        y = 1 / x
    except ZeroDivisionError as e:
        y = str(e)
    finally:
        x = 0
    return y

def dead_handler():
    try:
        pass
    except Exception:
        hit = True

def dead_handler_in_loop(xs):
    for x in xs:
        for y in xs:
            try:
                pass
            except:
                z = [x, y]

def star_handlers():
    try:
        raise ExceptionGroup('g', [ValueError(1)])
    except* ValueError as e:
        a = e
    return a

def withs(path):
    with open(path) as f, open(path) as g:
        return f.read() + g.read()

def comprehensions(xs):
    return [x * 2 for x in xs if x], {x: y for x, y in zip(xs, xs)}, list(x for x in xs)

def closure(a):
    def inner(b):
        return lambda c: a + b + c
    return inner

def generator(n):
    received = yield n
    yield from range(received)

async def coroutine(xs):
    async with asyncio.Lock():
        async for x in xs:
            await asyncio.sleep(x)
    return [y async for y in xs]

async def async_generator(n):
    for i in range(n):
        yield await asyncio.sleep(i)

def matching(v):
    match v:
        case [1, 2, *rest]:
            return rest
        case {'k': value, **others}:
            return value, others
        case str() | bytes():
            return 'text'

def calls(f, *args, **kwargs):
    f(1, 2, key=3)
    return f(*args, **kwargs), f'{args!r:>10}'

def deep(a):
    return (a + (a + (a + (a + (a + (a + (a + (a * 2))))))))
'''

codes = source_code(SOURCE)
codes += module_code('asyncio.base_events', 'contextlib', 'inspect', 'typing')
)py";

class StackEffectTest : public BytecodeTest {
protected:
  StackEffectTest() : BytecodeTest(kPython, NeedsStackEffects::Yes) {}
};

TEST_F(StackEffectTest, EveryOpcodeMatchesDis) {
  PyRef rows = call("expected_effects");
  ASSERT_TRUE(rows);
  std::set<long> covered;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(rows.get()); ++i) {
    PyObject* row = PyList_GET_ITEM(rows.get(), i);
    long code = intAt(row, 0);
    long arg = intAt(row, 1);
    long fallthrough = intAt(row, 2);
    long jump = intAt(row, 3);
    covered.insert(code);
    const OpcodeInfo* info = opcodes.lookup(static_cast<uint8_t>(code));
    ASSERT_NE(info, nullptr);
    SCOPED_TRACE(info->name + " " + std::to_string(arg));
    auto effect = effects.effect(static_cast<uint8_t>(code), static_cast<uint32_t>(arg));
    ASSERT_SUCCEEDED(effect);
    EXPECT_GE(effect->pops, 0);
    EXPECT_GE(effect->pushes, 0);
    EXPECT_EQ(effect->fallthroughEffect(), fallthrough);
    if (info->isJump()) {
      ASSERT_TRUE(effect->jumpEffect.has_value());
      EXPECT_EQ(*effect->jumpEffect, jump);
    } else {
      EXPECT_FALSE(effect->jumpEffect.has_value());
      EXPECT_EQ(fallthrough, jump);
    }
  }
  // dis answered for every opcode at least once, so none went unchecked.
  EXPECT_EQ(covered.size(), opcodes.all().size());
}

TEST_F(StackEffectTest, UndefinedOpcodesHaveNoEffect) {
  for (unsigned code = 0; code < 256; ++code) {
    auto effect = effects.effect(static_cast<uint8_t>(code), 0);
    EXPECT_EQ(static_cast<bool>(effect), opcodes.lookup(static_cast<uint8_t>(code)) != nullptr)
        << code;
    if (!effect)
      llvm::consumeError(effect.takeError());
  }
}

TEST_F(StackEffectTest, TerminatorsNeverFallThrough) {
  for (const char* name : {"RETURN_VALUE", "RAISE_VARARGS", "RERAISE", "JUMP_FORWARD",
                           "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"})
    EXPECT_TRUE(effects.terminates(opcode(name))) << name;
  for (const char* name : {"LOAD_CONST", "FOR_ITER", "POP_JUMP_FORWARD_IF_TRUE", "YIELD_VALUE",
                           "JUMP_IF_TRUE_OR_POP", "SEND"})
    EXPECT_FALSE(effects.terminates(opcode(name))) << name;
}

TEST_F(StackEffectTest, MaxDepthEqualsCoStacksize) {
  std::vector<PyCodeObject*> codes = codeObjectsOf(global("codes"));
  ASSERT_GT(codes.size(), 500u);
  for (PyCodeObject* code : codes) {
    SCOPED_TRACE(qualnameOf(code));
    auto raw = readRawCode(code);
    ASSERT_SUCCEEDED(raw);
    auto decoded = decode(*raw, opcodes);
    ASSERT_SUCCEEDED(decoded);
    auto depth = computeMaxStackDepth(*decoded, effects, opcodes);
    ASSERT_SUCCEEDED(depth);
    EXPECT_EQ(*depth, code->co_stacksize);
  }
}

TEST_F(StackEffectTest, HandlerEntryCountsTowardTheMaximum) {
  // Three constants, then a protected LOAD_CONST; RETURN_VALUE whose handler
  // keeps 3 values and pushes lasti and the exception: it starts at 5, one
  // deeper than the code it protects ever gets.
  DecodedCode code;
  code.instructions = {make("LOAD_CONST"), make("LOAD_CONST"),   make("LOAD_CONST"),
                       make("LOAD_CONST"), make("RETURN_VALUE"), make("RERAISE", 1)};
  code.exceptionRegions = {ExceptionRegion{3, 5, 5, 3, true}};
  EXPECT_EQ(StackEffects::handlerEntryDepth(code.exceptionRegions[0]), 5u);
  auto depth = computeMaxStackDepth(code, effects, opcodes);
  ASSERT_SUCCEEDED(depth);
  EXPECT_EQ(*depth, 5);
}

TEST_F(StackEffectTest, GeneratorBodiesStartAtDepthOne) {
  DecodedCode code;
  code.instructions = {make("RETURN_GENERATOR"), make("POP_TOP"), make("LOAD_CONST"),
                       make("RETURN_VALUE")};
  auto depth = computeMaxStackDepth(code, effects, opcodes);
  ASSERT_SUCCEEDED(depth);
  EXPECT_EQ(*depth, 1);
}

TEST_F(StackEffectTest, Underflow) {
  DecodedCode code;
  code.instructions = {make("POP_TOP"), make("LOAD_CONST"), make("RETURN_VALUE")};
  expectFailure(computeMaxStackDepth(code, effects, opcodes), "pops 1 values");
}

TEST_F(StackEffectTest, PathsDisagree) {
  DecodedCode code;
  code.instructions = {make("LOAD_CONST"), make("LOAD_CONST"),
                       make("POP_JUMP_FORWARD_IF_TRUE", 0, 4), make("LOAD_CONST"),
                       make("RETURN_VALUE")};
  expectFailure(computeMaxStackDepth(code, effects, opcodes), "stack depths");
}

TEST_F(StackEffectTest, FallingOffTheEnd) {
  DecodedCode code;
  code.instructions = {make("LOAD_CONST")};
  expectFailure(computeMaxStackDepth(code, effects, opcodes), "falls off the end");
}

TEST_F(StackEffectTest, MissingJumpTarget) {
  DecodedCode code;
  code.instructions = {make("JUMP_FORWARD", 0, 7)};
  expectFailure(computeMaxStackDepth(code, effects, opcodes), "does not exist");
}

TEST_F(StackEffectTest, RegionOutsideTheCode) {
  DecodedCode code;
  code.instructions = {make("LOAD_CONST"), make("RETURN_VALUE")};
  code.exceptionRegions = {ExceptionRegion{0, 3, 1, 0, false}};
  expectFailure(computeMaxStackDepth(code, effects, opcodes), "does not fit");
}

TEST_F(StackEffectTest, ProtectedCodeBelowItsHandlerDepth) {
  DecodedCode code;
  code.instructions = {make("LOAD_CONST"), make("RETURN_VALUE"), make("RERAISE")};
  code.exceptionRegions = {ExceptionRegion{0, 2, 2, 4, false}};
  expectFailure(computeMaxStackDepth(code, effects, opcodes), "below its handler");
}

} // namespace
