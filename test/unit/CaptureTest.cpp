//===- CaptureTest.cpp - The symbolic interpreter's tables and values -----===//
//
// The opcode table is total over the interpreter's opcodes; --dynamic
// parses; and functions over
// constants interpreted symbolically compute what CPython computes running
// them (the oracle is a double here: these functions touch no tensor).
//
//===----------------------------------------------------------------------===//
#include "PythonTestSupport.h"

#include "frontend/capture/CaptureError.h"
#include "frontend/capture/DynamicSpec.h"
#include "frontend/capture/Interpreter.h"
#include "frontend/embedding/PyStrings.h"
#include "ir/GraphBuilder.h"

#include "llvm/ADT/StringMap.h"

#include <gtest/gtest.h>

namespace dync::test {
namespace {

using namespace capture;
using python::PyRef;

TEST(CaptureOpcodeTable, CoversEveryOpcodeOnce) {
  llvm::Expected<bytecode::OpcodeTable> opcodes = bytecode::OpcodeTable::fromInterpreter();
  ASSERT_SUCCEEDED(opcodes);
  llvm::StringMap<const OpcodeEntry*> rows;
  for (const OpcodeEntry& entry : opcodeEntries()) {
    EXPECT_TRUE(rows.try_emplace(entry.name, &entry).second) << entry.name << " twice";
    // A row either executes the opcode or says why it does not.
    EXPECT_NE(entry.handler == nullptr, entry.reason == nullptr) << entry.name;
  }
  for (const bytecode::OpcodeInfo* info : opcodes->all())
    EXPECT_TRUE(rows.count(info->name)) << "no row for " << info->name;
  EXPECT_EQ(rows.size(), opcodes->all().size());
}

TEST(CaptureDynamicSpec, Parses) {
  llvm::Expected<DynamicSpec> full = parseDynamicSpec("x:0=batch[1,1024]");
  ASSERT_SUCCEEDED(full);
  EXPECT_EQ(full->argument, "x");
  EXPECT_EQ(full->dim, 0u);
  EXPECT_EQ(full->symbol, "batch");
  EXPECT_EQ(full->range.lo, 1);
  EXPECT_EQ(full->range.hi, 1024);

  llvm::Expected<DynamicSpec> open = parseDynamicSpec("images:2=h[8,]");
  ASSERT_SUCCEEDED(open);
  EXPECT_EQ(open->range.lo, 8);
  EXPECT_FALSE(open->range.hi);

  llvm::Expected<DynamicSpec> bare = parseDynamicSpec("x:1=seq");
  ASSERT_SUCCEEDED(bare);
  EXPECT_FALSE(bare->range.lo || bare->range.hi);

  llvm::Expected<DynamicSpec> symInt = parseDynamicSpec("n=n[1,64]");
  ASSERT_SUCCEEDED(symInt);
  EXPECT_TRUE(symInt->intArgument);
  EXPECT_EQ(symInt->argument, "n");
  EXPECT_EQ(symInt->symbol, "n");
  EXPECT_EQ(symInt->range.lo, 1);
  EXPECT_EQ(symInt->range.hi, 64);
  EXPECT_FALSE(bare->intArgument);
  expectFailure(parseDynamicSpec("n=n[-4,8]"), "a symbolic int is a size");
  llvm::Expected<DynamicSpec> first = parseDynamicSpec("n=n[1,64]");
  llvm::Expected<DynamicSpec> again = parseDynamicSpec("n:0=m");
  ASSERT_SUCCEEDED(first);
  ASSERT_SUCCEEDED(again);
  llvm::Error twice = checkDynamicSpecs({*first, *again});
  ASSERT_TRUE(bool(twice));
  EXPECT_NE(llvm::toString(std::move(twice)).find("an int argument is declared once"),
            std::string::npos);
  expectFailure(parseDynamicSpec("x:=batch"), "not a dimension number");
  expectFailure(parseDynamicSpec("x:0"), "no '=SYMBOL'");
  expectFailure(parseDynamicSpec("x:0=2b"), "not a symbol name");
  expectFailure(parseDynamicSpec("x:0=or[1,8]"), "'or' is a word of the graph IR");
  expectFailure(parseDynamicSpec("x:0=mod"), "'mod' is a word of the graph IR");
  expectFailure(parseDynamicSpec("x:0=b[10,2]"), "the range is empty");
  expectFailure(parseDynamicSpec("x:0=b[1;2]"), "two bounds");
}

TEST(CaptureDynamicSpec, ParsesPathsToIntsInsideArguments) {
  llvm::Expected<DynamicSpec> attr = parseDynamicSpec("cfg.window=w[1,32]");
  ASSERT_SUCCEEDED(attr);
  EXPECT_TRUE(attr->intArgument);
  EXPECT_EQ(attr->argument, "cfg");
  EXPECT_EQ(attr->path, ".window");
  EXPECT_EQ(attr->symbol, "w");
  EXPECT_EQ(attr->range.hi, 32);
  ir::SourcePtr base = ir::Source::key(ir::Source::local("kwargs"), "cfg");
  EXPECT_EQ(sourceOf(*attr, base)->str(), "L['kwargs']['cfg'].window");

  llvm::Expected<DynamicSpec> nested = parseDynamicSpec("opts['dims'][1].n=n");
  ASSERT_SUCCEEDED(nested);
  EXPECT_EQ(nested->argument, "opts");
  EXPECT_EQ(sourceOf(*nested, ir::Source::local("opts"))->str(), "L['opts']['dims'][1].n");
  llvm::Expected<DynamicSpec> plain = parseDynamicSpec("n=n");
  ASSERT_SUCCEEDED(plain);
  EXPECT_EQ(sourceOf(*plain, ir::Source::local("n"))->str(), "L['n']");

  expectFailure(parseDynamicSpec("cfg.(n)=n"), "is not a path of attribute and item reads");
  expectFailure(parseDynamicSpec("cfg[x]=n"), "is not a path of attribute and item reads");

  // Two paths inside one argument are two ints; the same path twice, or
  // the argument both as an int and as holding one, is an error.
  llvm::Expected<DynamicSpec> other = parseDynamicSpec("cfg.heads=h");
  llvm::Expected<DynamicSpec> same = parseDynamicSpec("cfg.window=v");
  llvm::Expected<DynamicSpec> whole = parseDynamicSpec("cfg=c");
  ASSERT_SUCCEEDED(other);
  ASSERT_SUCCEEDED(same);
  ASSERT_SUCCEEDED(whole);
  EXPECT_FALSE(bool(checkDynamicSpecs({*attr, *other})));
  llvm::Error twice = checkDynamicSpecs({*attr, *same});
  ASSERT_TRUE(bool(twice));
  EXPECT_NE(llvm::toString(std::move(twice)).find("declare each int once"), std::string::npos);
  llvm::Error both = checkDynamicSpecs({*whole, *attr});
  ASSERT_TRUE(bool(both));
  EXPECT_NE(llvm::toString(std::move(both)).find("both as an int and as an object"),
            std::string::npos);
}

/// An oracle for programs without tensors: any call reaching it is a bug in
/// the test.
class NoTensorOracle : public oracle::TensorOracle {
public:
  ir::GraphBuilder& builder() override { return builder_; }
  void setLocation(llvm::StringRef) override {}
  llvm::Expected<PyRef> addTensorInput(PyObject*, llvm::StringRef, llvm::StringRef,
                                       llvm::ArrayRef<oracle::DynamicDim>) override {
    return llvm::createStringError("unexpected tensor input");
  }
  llvm::Expected<PyRef> call(PyObject*, PyObject*, PyObject*) override {
    return llvm::createStringError("unexpected oracle call");
  }
  llvm::Expected<PyRef> eagerLayout(PyObject*) override {
    return llvm::createStringError("unexpected eagerLayout");
  }
  std::optional<ir::ValueRef> valueOf(PyObject*) const override { return std::nullopt; }
  llvm::Expected<ir::Type> typeOf(PyObject*) override {
    return llvm::createStringError("unexpected typeOf");
  }
  llvm::Expected<ir::SymExpr> symExprOf(PyObject*) override {
    return llvm::createStringError("unexpected symExprOf");
  }
  llvm::Error finalize() override { return llvm::Error::success(); }

private:
  ir::Context context_;
  ir::Graph graph_{context_, "test"};
  ir::GraphBuilder builder_{graph_};
};

constexpr const char* kPrograms = R"PY(
import math

def defaults(a, b=2, *rest, c=3, **kw):
    return (a, b, rest, c, sorted(kw.items()))

def closures(n):
    def add(k):
        return lambda x: x + k + n
    return [add(i)(10) for i in range(3)]

def generators(n):
    def gen(m):
        for i in range(m):
            if i % 2:
                yield i * i
    return list(gen(n)), sum(x for x in range(n) if x > 1)

def containers(n):
    d = {"a": 1}
    d.update(b=2)
    xs = [n, *range(2), *d.values()]
    xs.append(len(xs))
    first, *middle, last = xs
    s = {1, 2, 2}
    return first, middle, last, xs[::-1], d.get("c", 7), len(s), 2 in s, "a" in d

def control(n):
    total = 0
    i = 0
    while True:
        i += 1
        if i > n:
            break
        if i == 2:
            continue
        total += i
    for i, (a, b) in enumerate(zip("xyz", (1, 2, 3))):
        total += b * (i or 1)
    return total, n if n > 3 else -n, not n, n is None

def strings(n):
    name = f"layer{n:02d}_{'x' * 2!r}"
    return name, "-".join(["a", "b"]), "%d/%s" % (n, "z"), name.upper(), math.floor(2.5)

def methods(n):
    class_like = int
    return isinstance(n, class_like), getattr(n, "real"), hasattr(n, "nope"), abs(-n), max(n, 3), min([4, n]), divmod(n, 3)

def calls(n):
    args = (n, 1)
    kwargs = {"c": 5}
    return defaults(*args, **kwargs), defaults(n, 4, 5, 6, c=1, d=2)
)PY";

class CaptureInterpreterTest : public PythonTest {
protected:
  CaptureInterpreterTest() : PythonTest(kPrograms) {}

  /// The function \p name interpreted symbolically on the int \p n, converted
  /// back to Python.
  PyRef interpret(const char* name, long n) {
    llvm::Expected<bytecode::OpcodeTable> table = bytecode::OpcodeTable::fromInterpreter();
    if (!table) {
      ADD_FAILURE() << llvm::toString(table.takeError());
      return PyRef();
    }
    opcodes_ = std::make_unique<bytecode::OpcodeTable>(std::move(*table));
    PyObject* globals = PyFunction_GetGlobals(global(name));
    llvm::Expected<std::unique_ptr<Interpreter>> interp =
        Interpreter::create(oracle_, guards_, *opcodes_, globals);
    if (!interp) {
      ADD_FAILURE() << llvm::toString(interp.takeError());
      return PyRef();
    }
    llvm::Expected<ValuePtr> function = (*interp)->values().wrapReal(global(name), nullptr);
    llvm::Expected<ValuePtr> result =
        function ? (*interp)->call(*function, {makeInt(n)}) : function.takeError();
    if (!result) {
      ADD_FAILURE() << name << ": " << llvm::toString(result.takeError());
      return PyRef();
    }
    llvm::Expected<PyRef> object = (*interp)->toPython(*result);
    if (!object) {
      ADD_FAILURE() << llvm::toString(object.takeError());
      return PyRef();
    }
    return *object;
  }

  /// Symbolic and real runs agree on \p name at \p n.
  void expectSameAsCPython(const char* name, long n) {
    PyRef symbolic = interpret(name, n);
    PyRef argument = PyRef::steal(PyLong_FromLong(n));
    PyRef real = call(name, {argument.get()});
    ASSERT_TRUE(symbolic && real);
    EXPECT_EQ(PyObject_RichCompareBool(symbolic.get(), real.get(), Py_EQ), 1)
        << name << "(" << n << "): symbolic " << python::strOf(symbolic.get()) << ", CPython "
        << python::strOf(real.get());
  }

  NoTensorOracle oracle_;
  GuardSet guards_;
  std::unique_ptr<bytecode::OpcodeTable> opcodes_;
};

TEST_F(CaptureInterpreterTest, AgreesWithCPython) {
  for (const char* name : {"defaults", "closures", "generators", "containers", "control", "strings",
                           "methods", "calls"})
    for (long n : {0, 1, 5})
      expectSameAsCPython(name, n);
}

TEST_F(CaptureInterpreterTest, StopsWithReasonAndPlace) {
  // Reading a file is a side effect capture refuses (print is replayed
  // after the graph, so it no longer stops capture).
  ASSERT_TRUE(run("def opens(n):\n    open(n)\n    return n\n"));
  llvm::Expected<bytecode::OpcodeTable> table = bytecode::OpcodeTable::fromInterpreter();
  ASSERT_SUCCEEDED(table);
  llvm::Expected<std::unique_ptr<Interpreter>> interp =
      Interpreter::create(oracle_, guards_, *table, PyFunction_GetGlobals(global("opens")));
  ASSERT_SUCCEEDED(interp);
  llvm::Expected<ValuePtr> function = (*interp)->values().wrapReal(global("opens"), nullptr);
  ASSERT_SUCCEEDED(function);
  llvm::Expected<ValuePtr> result = (*interp)->call(*function, {makeInt(1)});
  ASSERT_FALSE(static_cast<bool>(result));
  llvm::handleAllErrors(result.takeError(), [](const CaptureError& error) {
    EXPECT_NE(error.reason().find("open"), std::string::npos) << error.reason();
    ASSERT_FALSE(error.stack().empty());
    EXPECT_EQ(error.stack().front().location.line, 2u);
    EXPECT_EQ(error.stack().front().function, "opens");
  });
}

} // namespace
} // namespace dync::test
