//===- RewrittenCodeTest.cpp - The bytecode that runs a compiled graph ----===//
//
// Graphs written as text are rewritten into code objects for functions
// defined in the test, and the code runs with a Python stand-in for the
// compiled graph that records its inputs and returns given results. The
// stand-in "tensors" are objects with a `shape`, which is all the rewritten
// code reads of a tensor, so these tests need no torch.
//
//===----------------------------------------------------------------------===//
#include "frontend/rewrite/RewrittenCode.h"

#include "frontend/embedding/PyRef.h"
#include "frontend/embedding/PyStrings.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"

#include "test/unit/PythonTestSupport.h"

#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

using namespace dync;
using namespace dync::test;
using python::PyRef;

namespace {

constexpr const char* kPython = R"py(
import dis, marshal, types

class Sized:
    """What the rewritten code reads of a tensor: its shape."""
    def __init__(self, *shape):
        self.shape = shape
    def __repr__(self):
        return 'Sized' + repr(self.shape)

def run(code, original, leaves, *args, **kwargs):
    """Calls code as the runtime does, as a function with the original's
    globals, defaults and closure, with the graph bound to a stand-in
    returning leaves. Returns repr((result, graph calls))."""
    assert code.co_varnames == original.__code__.co_varnames
    assert code.co_cellvars == original.__code__.co_cellvars
    assert code.co_freevars == original.__code__.co_freevars
    assert code.co_argcount == original.__code__.co_argcount
    assert code.co_kwonlyargcount == original.__code__.co_kwonlyargcount
    assert code.co_flags == original.__code__.co_flags
    assert code.co_qualname == original.__code__.co_qualname
    assert code.co_firstlineno == original.__code__.co_firstlineno
    assert marshal.loads(marshal.dumps(code)) == code
    assert list(dis.get_instructions(code))
    calls = []
    def graph(*inputs):
        calls.append(inputs)
        return tuple(leaves)
    names = [n for n in code.co_names if n.startswith('__dync_graph_')]
    assert len(names) == 1, code.co_names
    fn = types.FunctionType(code, dict(original.__globals__, **{names[0]: graph}),
                            original.__name__, original.__defaults__, original.__closure__)
    fn.__kwdefaults__ = original.__kwdefaults__
    result = fn(*args, **kwargs)
    return repr((result, calls))

def sizes(x, n):
    """Returns sizes."""
    return x

def run_sizes(code):
    assert code.co_consts[0] == 'Returns sizes.'
    return run(code, sizes, ['leaf'], Sized(6, 4), 4)

SCALE = Sized(3)

class Holder:
    pass

holder = Holder()
holder.weights = {'w': Sized(2, 2)}
holder.items = [Sized(8), Sized(5)]

def make(offset):
    def layout(x, *rest, k, **kw):
        def inner():
            return x, offset
        return inner
    return layout

layout = make(Sized(7))

def run_layout(code):
    return run(code, layout, ['l0', 'l1', 'l2', 'l3'], Sized(1), Sized(2), k=3, extra=4)

def attributes(x):
    return x

def run_attributes(code):
    return run(code, attributes, ['leaf'], Sized(2))

def gen(x):
    yield x

def plain(x):
    y = x
    return y
)py";

class RewrittenCodeTest : public PythonTest {
protected:
  RewrittenCodeTest() : PythonTest(kPython) {}

  /// Parses \p text, which must hold one graph, and verifies it unless
  /// told not to (to make graphs only the API could).
  const ir::Graph* parse(const char* text, bool verified = true) {
    module_.reset();
    sm_ = std::make_unique<llvm::SourceMgr>();
    sm_->AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "test.dync"), llvm::SMLoc());
    llvm::Expected<std::unique_ptr<ir::Module>> module = ir::parseModule(*sm_, ctx_);
    if (!module) {
      ADD_FAILURE() << llvm::toString(module.takeError());
      return nullptr;
    }
    module_ = std::move(*module);
    if (llvm::Error error =
            verified ? ir::verify(*module_->graphs().front(), sm_.get()) : llvm::Error::success()) {
      ADD_FAILURE() << llvm::toString(std::move(error));
      return nullptr;
    }
    return module_->graphs().front().get();
  }

  /// The code object of the function bound to \p name.
  PyObject* codeOf(const char* name) {
    code_ = PyRef::steal(PyObject_GetAttrString(global(name), "__code__"));
    return code_.get();
  }

  /// Rewrites \p function for \p graph and runs it with run_<function>;
  /// returns what that gives, or the error.
  std::string runRewritten(const char* function, const char* graph) {
    const ir::Graph* parsed = parse(graph);
    if (!parsed)
      return "<no graph>";
    llvm::Expected<PyObject*> code = rewrite::buildWholeFunctionCode(
        codeOf(function), *parsed, rewrite::graphGlobalName(*parsed, 0));
    if (!code)
      return "error: " + llvm::toString(code.takeError());
    PyRef owned = PyRef::steal(*code);
    PyRef result = call(("run_" + std::string(function)).c_str(), {owned.get()});
    if (!result)
      return "<raised>";
    return python::utf8Of(result.get()).value_or("<not str>");
  }

  /// The error rewriting \p function for \p graph gives.
  std::string rewriteError(const char* function, const char* graph, bool verified = true) {
    const ir::Graph* parsed = parse(graph, verified);
    if (!parsed)
      return "<no graph>";
    llvm::Expected<std::vector<uint8_t>> bytes =
        rewrite::rewriteWholeFunction(codeOf(function), *parsed, "g");
    if (bytes)
      return "<no error>";
    return llvm::toString(bytes.takeError());
  }

private:
  ir::Context ctx_;
  std::unique_ptr<llvm::SourceMgr> sm_;
  std::unique_ptr<ir::Module> module_;
  PyRef code_;
};

TEST_F(RewrittenCodeTest, RebuildsLiteralsAndSymbolicSizes) {
  // s0 is x.shape[0] (6), s1 the int argument n (4). min and max take the
  // left and the right operand in turn; negative terms are subtracted.
  EXPECT_EQ(runRewritten("sizes", R"(
graph @sizes(%x: tensor<f32, [s0, 4]> = L['x'], %n: int<s1> = L['n'])
    symbols { s0: [2, 64], s1: [1, 64] } {
  return (%x, s0 - 1, -s0, 3*s0 - 2*s1, s0 floordiv s1, s0 mod s1, -s0 floordiv s1,
          min(s0, s1), max(s0, s1, 5), max(s1, 5), min(s0, 9), s0*s1 + 7, %n,
          "text", 1.5, -0.0, true, none, [()], (s0,))
})"),
            "(('leaf', 5, -6, 10, 1, 2, -2, 4, 6, 5, 6, 31, 4, 'text', 1.5, -0.0, True, None, "
            "[()], (6,)), [(Sized(6, 4), 4)])");
}

TEST_F(RewrittenCodeTest, RebuildsTorchAttributesByName) {
  // dtypes, layouts and memory formats are torch's objects of that name; a
  // device is made from its text.
  EXPECT_EQ(runRewritten("attributes", R"(
graph @attributes(%x: tensor<f32, [2]> = L['x']) {
  return (%x, bf16, c128, bool, cpu, cuda:1, strided, channels_last)
})"),
            "(('leaf', torch.bfloat16, torch.complex128, torch.bool, device(type='cpu'), "
            "device(type='cuda', index=1), torch.strided, torch.channels_last), [(Sized(2,),)])");
}

TEST_F(RewrittenCodeTest, ReadsInputsFromEverySourceKind) {
  // x is an argument that is also a cell, offset a free variable; *args,
  // keyword-only and **kwargs arguments; globals, attributes and items.
  // Tensors go to the graph first, then ints, each in graph order.
  EXPECT_EQ(runRewritten("layout", R"(
graph @layout(%x: tensor<f32, [1]> = L['x'],
              %k: int = L['k'],
              %r: tensor<f32, [2]> = L['rest'][0],
              %extra: int = L['kw']['extra'],
              %o: tensor<f32, [7]> = L['offset'],
              %s: tensor<f32, [3]> = G['SCALE'],
              %w: tensor<f32, [2, 2]> = G['holder'].weights['w'],
              %i: tensor<f32, [5]> = G['holder'].items[-1]) {
  return [%x, %o, (%w, [%i])]
})"),
            "(['l0', 'l1', ('l2', ['l3'])], [(Sized(1,), Sized(2,), Sized(7,), Sized(3,), "
            "Sized(2, 2), Sized(5,), 3, 4)])");
}

TEST_F(RewrittenCodeTest, UnsupportedCasesAreErrors) {
  EXPECT_EQ(rewriteError("gen", "graph @gen(%x: tensor<f32, [1]> = L['x']) { return %x }"),
            "cannot rewrite gen: it is a generator or coroutine function, whose frames are "
            "resumed after they return; only plain functions can be replaced by a compiled graph");
  // The verifier rejects such a source; graphs built in code may have one.
  EXPECT_EQ(rewriteError("plain", "graph @plain(%x: tensor<f32, [1]> = L['x'].) { return %x }",
                         /*verified=*/false),
            "cannot rewrite plain: input %x: malformed source 'L['x'].': expected an attribute "
            "name after '.' at column 8");
  // When the body starts, only arguments and free variables are bound.
  EXPECT_EQ(rewriteError("plain", "graph @plain(%y: tensor<f32, [1]> = L['y']) { return %y }"),
            "cannot rewrite plain: input %y is read from L['y'], but 'y' is not an argument or "
            "free variable of the function");
  EXPECT_EQ(rewriteError("plain", "graph @plain(%f: float = L['x']) { return 1 }"),
            "cannot rewrite plain: input %f has type float; a compiled graph takes only tensor "
            "and int inputs");
  // Dicts of other types, and objects object.__new__ cannot make.
  EXPECT_EQ(rewriteError("plain", "graph @plain(%x: tensor<f32, [1]> = L['x']) "
                                  "{ return collections:defaultdict{\"a\": %x} }"),
            "cannot rewrite plain: the function returns a collections:defaultdict, a dict type "
            "the rewritten code does not know how to construct (it rebuilds dict and "
            "collections.OrderedDict)");
  EXPECT_EQ(rewriteError("plain", "graph @plain(%x: tensor<f32, [1]> = L['x']) "
                                  "{ return object collections:deque{a = %x} }"),
            "cannot rewrite plain: the function returns a collections:deque, whose objects "
            "the rewritten code cannot make (they are laid out as collections.deque's; it makes "
            "objects laid out as object's, dict's and OrderedDict's)");
  EXPECT_EQ(rewriteError("plain", "graph @plain(%x: tensor<f32, [1]> = L['x']) "
                                  "{ return object collections:Nope{a = %x} }")
                .rfind("cannot rewrite plain: the function returns a collections:Nope, whose type "
                       "the rewritten code cannot import by its module and qualified name",
                       0),
            0u);
  // 2*s0 is a size, but s0 alone is not, so nothing binds it.
  EXPECT_EQ(rewriteError("plain", "graph @plain(%x: tensor<f32, [2*s0]> = L['x']) "
                                  "symbols { s0: [1, 8] } { return (%x, s0) }"),
            "cannot rewrite plain: the return value uses the symbol s0, which is neither a size "
            "of a tensor input nor an int input");
  // Capture returns an operator's results element by element (%0#0).
  EXPECT_EQ(rewriteError("plain", "graph @plain(%x: tensor<f32, [4]> = L['x']) {\n"
                                  "  %0 = aten::max.dim(%x, 0) : tuple<tensor<f32, []>, "
                                  "tensor<i64, []>>\n"
                                  "  return %0\n}"),
            "cannot rewrite plain: the function returns %0 of type tuple<tensor<f32, []>, "
            "tensor<i64, []>>, which the rewritten code cannot rebuild");
}

} // namespace
