//===- TensorOracleTest.cpp - Recording torch calls as graph nodes --------===//
//
// Every expectation comes from torch itself: result types from running the
// same function eagerly on the real example tensors, operator sequences from
// make_fx with the same core-ATen decompositions.
//
//===----------------------------------------------------------------------===//
#include "frontend/oracle/TensorOracle.h"

#include "frontend/embedding/PyStrings.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "test/unit/PythonTestSupport.h"

#include <chrono>

using dync::python::PyRef;
using namespace dync;

namespace {

// Each case is a function and the oracle calls that compute it: `steps`
// lists (callable, args, kwargs), where In(i) is the fake of input i and
// Out(k) / Out(k, j) the result of step k (element j of it). The last step's
// result is what the function returns.
constexpr const char* kCases = R"py(
import operator
import torch
import torch._decomp
from torch._dispatch.python import enable_python_dispatcher
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx

class In:
    def __init__(self, i): self.i = i

class Out:
    def __init__(self, k, j=None): self.k, self.j = k, j

CASES = {}

def case(name, fn, inputs, steps, dynamic=None):
    # inputs: name -> tensor, in order; dynamic: input index -> [(dim, symbol, lo, hi)]
    CASES[name] = dict(fn=fn, inputs=inputs, steps=steps, dynamic=dynamic or {})

torch.manual_seed(0)
x8 = torch.randn(8, 16)
case('linear', lambda x, w, b: torch.nn.functional.linear(x, w, b),
     [('x', x8), ('w', torch.randn(4, 16)), ('b', torch.randn(4))],
     [(torch._C._nn.linear, (In(0), In(1), In(2)), None)])
case('conv_bn', lambda x, w, b, rm, rv, g, beta:
         torch.batch_norm(torch.conv2d(x, w, b, 1, 1), g, beta, rm, rv, False, 0.1, 1e-5, False),
     [('x', torch.randn(2, 3, 8, 8)), ('w', torch.randn(4, 3, 3, 3)), ('b', torch.randn(4)),
      ('rm', torch.randn(4)), ('rv', torch.rand(4) + 0.5), ('g', torch.randn(4)),
      ('beta', torch.randn(4))],
     [(torch.conv2d, (In(0), In(1), In(2), 1, 1), None),
      (torch.batch_norm, (Out(0), In(5), In(6), In(3), In(4), False, 0.1, 1e-5, False), None)])
case('softmax', lambda x: x.softmax(-1), [('x', x8)],
     [(torch.Tensor.softmax, (In(0), -1), None)])
case('layer_norm', lambda x, w, b: torch.layer_norm(x, [16], w, b, 1e-5),
     [('x', torch.randn(2, 8, 16)), ('w', torch.randn(16)), ('b', torch.randn(16))],
     [(torch.layer_norm, (In(0), [16], In(1), In(2), 1e-5), None)])
case('gelu', lambda x: torch._C._nn.gelu(x, approximate='tanh'), [('x', x8)],
     [(torch._C._nn.gelu, (In(0),), {'approximate': 'tanh'})])
case('views', lambda x: x.view(4, 48).transpose(0, 1).reshape(-1, 8).T,
     [('x', torch.randn(4, 6, 8))],
     [(torch.Tensor.view, (In(0), 4, 48), None),
      (torch.Tensor.transpose, (Out(0), 0, 1), None),
      (torch.Tensor.reshape, (Out(1), -1, 8), None),
      (torch.Tensor.T, (Out(2),), None)])
case('getitem', lambda x, i: (x[1:, None, 0], x[i]),
     [('x', torch.randn(6, 5)), ('i', torch.tensor([0, 2, 2]))],
     [(torch.Tensor.__getitem__, (In(0), (slice(1, None), None, 0)), None),
      (torch.Tensor.__getitem__, (In(0), In(1)), None),
      (tuple, ((Out(0), Out(1)),), None)])
case('inplace', lambda x, y: torch.relu(x.add_(y)), [('x', x8), ('y', torch.randn(16))],
     [(torch.Tensor.add_, (In(0), In(1)), None),
      (torch.relu, (In(0),), None)])
case('max_dim', lambda x: torch.max(x, 1), [('x', x8)],
     [(torch.max, (In(0), 1), None)])
case('dynamic_batch', lambda x, w, b: torch.relu(torch.nn.functional.linear(x, w, b)),
     [('x', x8), ('w', torch.randn(4, 16)), ('b', torch.randn(4))],
     [(torch._C._nn.linear, (In(0), In(1), In(2)), None), (torch.relu, (Out(0),), None)],
     dynamic={0: [(0, 'batch', 1, 1024)]})
case('shared_symbol', lambda x, y: torch.cat([x, y]) * 2,
     [('x', x8), ('y', torch.randn(8, 16))],
     [(torch.cat, ([In(0), In(1)],), None), (operator.mul, (Out(0), 2), None)],
     dynamic={0: [(0, 'n', 2, None), (1, 'm', 2, None)], 1: [(0, 'n', 2, None), (1, 'm', 2, None)]})
case('unified_symbols', lambda x, y: x + y, [('x', x8), ('y', torch.randn(8, 16))],
     [(operator.add, (In(0), In(1)), None)],
     dynamic={0: [(0, 'a', 2, 64)], 1: [(0, 'b', 2, 64)]})
case('scalar_constant', lambda x: x * torch.tensor(0.5), [('x', x8)],
     [(lambda x: x * torch.tensor(0.5), (In(0),), None)])
case('view_mod', lambda x: x.view(-1, 2, 128), [('x', torch.randn(512))],
     [(torch.Tensor.view, (In(0), -1, 2, 128), None)],
     dynamic={0: [(0, 'n', 2, 4096)]})

def case_inputs(name):
    c = CASES[name]
    return [(n, f"L['{n}']", t, c['dynamic'].get(i, []))
            for i, (n, t) in enumerate(c['inputs'])]

def case_steps(name):
    return CASES[name]['steps']

def resolve(value, fakes, outs):
    if isinstance(value, In):
        return fakes[value.i]
    if isinstance(value, Out):
        return outs[value.k] if value.j is None else outs[value.k][value.j]
    if isinstance(value, (list, tuple)):
        return type(value)(resolve(v, fakes, outs) for v in value)
    if isinstance(value, dict):
        return {k: resolve(v, fakes, outs) for k, v in value.items()}
    return value

def flat_tensors(result):
    if isinstance(result, torch.Tensor):
        return [result]
    return [t for r in result for t in flat_tensors(r)]

DTYPES = {torch.float32: 'f32', torch.int64: 'i64', torch.bool: 'bool'}

def eager_metas(name):
    c = CASES[name]
    # Inputs are cloned so that in-place cases leave the examples as they were.
    out = c['fn'](*(t.clone() for _, t in c['inputs']))
    return [(DTYPES[t.dtype], list(t.shape), list(t.stride())) for t in flat_tensors(out)]

def example_binding(name):
    c = CASES[name]
    binding = {}
    for i, dims in c['dynamic'].items():
        for dim, symbol, lo, hi in dims:
            binding[symbol] = c['inputs'][i][1].shape[dim]
    return binding

_table = torch._decomp.core_aten_decompositions()

def _is_graph_op(target):
    # The same filter as the oracle's: no prim metadata queries; and make_fx's
    # size queries (sym_size and kin, which return only SymInts) are what
    # capture keeps as symbolic integers instead of nodes.
    if not isinstance(target, torch._ops.OpOverload) or target.namespace == 'prim':
        return False
    returns = target._schema.returns
    return not (returns and all(str(r.type) == 'SymInt' for r in returns))

def reference_ops(name):
    c = CASES[name]
    mode = 'symbolic' if c['dynamic'] else 'fake'
    # The oracle always runs with the Python dispatcher on, as make_fx's
    # symbolic mode and torch.export do; it picks torch's Python kernels,
    # e.g. native_batch_norm's, which decomposes it in eval mode.
    with enable_python_dispatcher():
        gm = make_fx(c['fn'], decomposition_table=_table, tracing_mode=mode)(
            *(t.clone() for _, t in c['inputs']))
    ops = [f"{n.target.namespace}::{n.target._opname}.{n.target._overloadname}"
           for n in gm.graph.nodes if n.op == 'call_function' and _is_graph_op(n.target)]
    # make_fx keeps a constant made in the function as an attribute it
    # copies from; the graph IR holds no tensor data, and the oracle makes a
    # one-number constant with scalar_tensor instead.
    return ['aten::scalar_tensor.default' if op == 'aten::lift_fresh_copy.default' else op
            for op in ops]

def fake_error(fn, *shapes):
    # What torch says when fn fails on fake tensors of these shapes (without
    # the log of it torch writes on the way).
    import logging
    logging.getLogger('torch._subclasses.fake_tensor').setLevel(logging.CRITICAL)
    with FakeTensorMode():
        try:
            fn(*(torch.empty(s) for s in shapes))
        except Exception as e:
            return str(e)
    return 'no error'
)py";

class TensorOracleTest : public test::PythonTest {
protected:
  TensorOracleTest() : PythonTest(kCases) {}

  void SetUp() override {
    PythonTest::SetUp();
    graph = &module.addGraph("f");
    llvm::Expected<std::unique_ptr<oracle::TensorOracle>> created =
        oracle::TensorOracle::create(*graph);
    ASSERT_TRUE(static_cast<bool>(created)) << llvm::toString(created.takeError());
    oracle = std::move(*created);
  }

  /// Adds the case's inputs; returns their fakes as a list.
  llvm::Expected<PyRef> addInputs(const char* name) {
    PyRef nameObject = PyRef::steal(PyUnicode_FromString(name));
    PyRef inputs = call("case_inputs", {nameObject.get()});
    PyRef fakes = PyRef::steal(PyList_New(0));
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(inputs.get()); ++i) {
      PyObject* input = PyList_GET_ITEM(inputs.get(), i);
      std::vector<oracle::DynamicDim> dims;
      PyObject* dimList = PyTuple_GET_ITEM(input, 3);
      for (Py_ssize_t d = 0; d < PyList_GET_SIZE(dimList); ++d) {
        PyObject* dim = PyList_GET_ITEM(dimList, d);
        oracle::DynamicDim dynamic;
        dynamic.dim = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(dim, 0));
        dynamic.symbol = python::utf8Of(PyTuple_GET_ITEM(dim, 1)).value_or("");
        if (PyTuple_GET_ITEM(dim, 2) != Py_None)
          dynamic.range.lo = PyLong_AsLongLong(PyTuple_GET_ITEM(dim, 2));
        if (PyTuple_GET_ITEM(dim, 3) != Py_None)
          dynamic.range.hi = PyLong_AsLongLong(PyTuple_GET_ITEM(dim, 3));
        dims.push_back(dynamic);
      }
      llvm::Expected<PyRef> fake = oracle->addTensorInput(
          PyTuple_GET_ITEM(input, 2), python::utf8Of(PyTuple_GET_ITEM(input, 0)).value_or(""),
          python::utf8Of(PyTuple_GET_ITEM(input, 1)).value_or(""), dims);
      if (!fake)
        return fake.takeError();
      PyList_Append(fakes.get(), fake->get());
    }
    return fakes;
  }

  /// Adds the case's inputs and runs its steps through the oracle; returns
  /// the last step's result.
  llvm::Expected<PyRef> runCase(const char* name) {
    llvm::Expected<PyRef> fakes = addInputs(name);
    if (!fakes)
      return fakes.takeError();
    PyRef nameObject = PyRef::steal(PyUnicode_FromString(name));
    PyRef steps = call("case_steps", {nameObject.get()});
    PyRef outs = PyRef::steal(PyList_New(0));
    PyRef result;
    for (Py_ssize_t k = 0; k < PyList_GET_SIZE(steps.get()); ++k) {
      PyObject* step = PyList_GET_ITEM(steps.get(), k);
      PyRef args = call("resolve", {PyTuple_GET_ITEM(step, 1), fakes->get(), outs.get()});
      PyRef kwargs = call("resolve", {PyTuple_GET_ITEM(step, 2), fakes->get(), outs.get()});
      llvm::Expected<PyRef> out = oracle->call(PyTuple_GET_ITEM(step, 0), args.get(),
                                               kwargs.get() == Py_None ? nullptr : kwargs.get());
      if (!out)
        return out.takeError();
      PyList_Append(outs.get(), out->get());
      result = std::move(*out);
    }
    return result;
  }

  std::vector<std::string> graphOps() const {
    std::vector<std::string> ops;
    for (const ir::Node& node : graph->nodes())
      if (node.isCall())
        ops.push_back(node.op());
    return ops;
  }

  std::string printed() const {
    std::string text;
    llvm::raw_string_ostream os(text);
    graph->print(os);
    return text;
  }

  ir::SymbolValues exampleBinding(const char* name) {
    PyRef nameObject = PyRef::steal(PyUnicode_FromString(name));
    PyRef binding = call("example_binding", {nameObject.get()});
    ir::SymbolValues values;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(binding.get(), &pos, &key, &value))
      values[python::utf8Of(key).value_or("")] = PyLong_AsLongLong(value);
    return values;
  }

  /// Runs case \p name and checks the graph against torch: it verifies, its
  /// results have the types eager torch gives (symbolic sizes evaluated at
  /// the example sizes), and its operators are those make_fx records.
  void checkCase(const char* name) {
    SCOPED_TRACE(name);
    llvm::Expected<PyRef> result = runCase(name);
    ASSERT_TRUE(static_cast<bool>(result)) << llvm::toString(result.takeError());
    PyRef tensors = call("flat_tensors", {result->get()});
    ASSERT_TRUE(tensors);
    std::vector<ir::Argument> outputs;
    std::vector<ir::Type> types;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(tensors.get()); ++i) {
      PyObject* fake = PyList_GET_ITEM(tensors.get(), i);
      std::optional<ir::ValueRef> value = oracle->valueOf(fake);
      ASSERT_TRUE(value.has_value()) << "result " << i << " has no graph value";
      const ir::Type* type = value->node->resultType(value->index);
      ASSERT_NE(type, nullptr);
      llvm::Expected<ir::Type> asked = oracle->typeOf(fake);
      ASSERT_TRUE(static_cast<bool>(asked)) << llvm::toString(asked.takeError());
      EXPECT_EQ(asked->str(), type->str());
      outputs.push_back(ir::Argument::value(value->node, value->index));
    }
    oracle->builder().setOutput(ir::Argument::tuple(outputs));
    llvm::Error finalized = oracle->finalize();
    ASSERT_FALSE(static_cast<bool>(finalized)) << llvm::toString(std::move(finalized));
    llvm::Error verified = ir::verify(*graph);
    ASSERT_FALSE(static_cast<bool>(verified)) << llvm::toString(std::move(verified)) << "\n"
                                              << printed();
    // The text form reads back as the same graph.
    std::string text = printed();
    llvm::SourceMgr sm;
    sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "captured.dync"),
                          llvm::SMLoc());
    ir::Context reparsedContext;
    llvm::Expected<std::unique_ptr<ir::Module>> reparsed = ir::parseModule(sm, reparsedContext);
    ASSERT_TRUE(static_cast<bool>(reparsed)) << llvm::toString(reparsed.takeError()) << text;
    std::string reprinted;
    llvm::raw_string_ostream os(reprinted);
    (*reparsed)->print(os);
    EXPECT_EQ(reprinted, text);

    // Types, read after finalize: symbols capture replaced are gone by now.
    ir::SymbolValues binding = exampleBinding(name);
    PyRef nameObject = PyRef::steal(PyUnicode_FromString(name));
    PyRef metas = call("eager_metas", {nameObject.get()});
    ASSERT_TRUE(metas);
    ASSERT_EQ(PyList_GET_SIZE(metas.get()), static_cast<Py_ssize_t>(outputs.size()));
    for (size_t i = 0; i < outputs.size(); ++i) {
      SCOPED_TRACE("result " + std::to_string(i));
      const ir::ValueRef& ref = outputs[i].valueRef();
      const ir::Type* type = ref.node->resultType(ref.index);
      PyObject* meta = PyList_GET_ITEM(metas.get(), i);
      EXPECT_EQ(ir::spelling(type->dtype()).str(),
                python::utf8Of(PyTuple_GET_ITEM(meta, 0)).value_or(""));
      for (int which = 0; which < 2; ++which) {
        PyObject* expected = PyTuple_GET_ITEM(meta, 1 + which);
        llvm::ArrayRef<ir::SymExpr> actual = which == 0 ? type->sizes() : type->strides();
        ASSERT_EQ(static_cast<size_t>(PyList_GET_SIZE(expected)), actual.size()) << type->str();
        for (size_t d = 0; d < actual.size(); ++d) {
          llvm::Expected<int64_t> value = actual[d].evaluate(binding);
          ASSERT_TRUE(static_cast<bool>(value)) << llvm::toString(value.takeError());
          EXPECT_EQ(*value, PyLong_AsLongLong(PyList_GET_ITEM(expected, d)))
              << (which == 0 ? "size " : "stride ") << d << " of " << type->str();
        }
      }
    }

    PyRef reference = call("reference_ops", {nameObject.get()});
    ASSERT_TRUE(reference);
    EXPECT_EQ(graphOps(), test::stringsOf(reference.get())) << printed();
  }

  /// The relations of the finalized graph, printed.
  std::vector<std::string> relations() const {
    std::vector<std::string> printedRelations;
    for (const ir::Relation& relation : graph->relations()) {
      std::string text;
      llvm::raw_string_ostream os(text);
      relation.print(os);
      printedRelations.push_back(text);
    }
    return printedRelations;
  }

  ir::Context context;
  ir::Module module{context};
  ir::Graph* graph = nullptr;
  std::unique_ptr<oracle::TensorOracle> oracle;
};

TEST_F(TensorOracleTest, Linear) { checkCase("linear"); }
TEST_F(TensorOracleTest, Conv2dBatchNormEval) { checkCase("conv_bn"); }
TEST_F(TensorOracleTest, Softmax) { checkCase("softmax"); }
TEST_F(TensorOracleTest, LayerNorm) { checkCase("layer_norm"); }
TEST_F(TensorOracleTest, Gelu) { checkCase("gelu"); }
TEST_F(TensorOracleTest, ViewTransposeReshapeAndProperty) { checkCase("views"); }
TEST_F(TensorOracleTest, Indexing) { checkCase("getitem"); }
TEST_F(TensorOracleTest, ScalarConstant) { checkCase("scalar_constant"); }
TEST_F(TensorOracleTest, MultipleResults) {
  checkCase("max_dim");
  const ir::Node& max = graph->nodes().back().isOutput() ? *std::prev(graph->nodes().end(), 2)
                                                         : graph->nodes().back();
  EXPECT_EQ(max.op(), "aten::max.dim");
  EXPECT_EQ(max.type().kind(), ir::Type::Kind::Tuple);
}

TEST_F(TensorOracleTest, InPlaceResultStandsForTheTensor) {
  checkCase("inplace");
  // relu reads the result of add_, not the input add_ updated.
  std::vector<const ir::Node*> calls;
  for (const ir::Node& node : graph->nodes())
    if (node.isCall())
      calls.push_back(&node);
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[1]->args()[0].valueRef().node, calls[0]);
}

TEST_F(TensorOracleTest, DynamicBatch) {
  checkCase("dynamic_batch");
  ASSERT_EQ(graph->symbols().size(), 1u);
  EXPECT_EQ(graph->symbols()[0].name, "batch");
  // torch assumes sizes 0 and 1 away, so the range starts at 2.
  EXPECT_EQ(graph->symbols()[0].range, (ir::SymbolRange{2, 1024}));
  EXPECT_EQ(graph->nodes().front().type().str(), "tensor<f32, [batch, 16]>");
  EXPECT_TRUE(graph->relations().empty()) << printed();
}

TEST_F(TensorOracleTest, DimensionsNamedAlikeShareOneSymbol) {
  checkCase("shared_symbol");
  std::vector<std::string> names;
  for (const ir::SymbolDecl& symbol : graph->symbols())
    names.push_back(symbol.name);
  EXPECT_EQ(names, (std::vector<std::string>{"n", "m"}));
  EXPECT_TRUE(graph->relations().empty()) << printed();
}

TEST_F(TensorOracleTest, SymbolsCaptureEquatesBecomeOne) {
  checkCase("unified_symbols");
  ASSERT_EQ(graph->symbols().size(), 1u) << printed();
  const ir::Node& x = graph->nodes().front();
  const ir::Node& y = *std::next(graph->nodes().begin());
  EXPECT_EQ(x.type(), y.type()) << printed();
}

TEST_F(TensorOracleTest, ViewGuardsBecomeRelations) {
  checkCase("view_mod");
  std::vector<std::string> found = relations();
  EXPECT_NE(std::find(found.begin(), found.end(), "n mod 256 == 0"), found.end()) << printed();
}

TEST_F(TensorOracleTest, RangesDecideComparisons) {
  // x.size(0) > 2000 is known false for a size in [2, 1024]: no guard.
  ASSERT_TRUE(run("x = torch.zeros(8, 4)\nimport operator\n"));
  llvm::Expected<PyRef> x =
      oracle->addTensorInput(global("x"), "x", "L['x']", {{0, "batch", {1, 1024}}});
  ASSERT_SUCCEEDED(x);
  PyRef sizeMethod =
      PyRef::borrow(PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(x->get())), "size"));
  PyRef zero = PyRef::steal(PyLong_FromLong(0));
  PyRef args = PyRef::steal(PyTuple_Pack(2, x->get(), zero.get()));
  llvm::Expected<PyRef> size = oracle->call(sizeMethod.get(), args.get(), nullptr);
  ASSERT_SUCCEEDED(size);
  llvm::Expected<ir::SymExpr> sizeExpr = oracle->symExprOf(size->get());
  ASSERT_SUCCEEDED(sizeExpr);
  EXPECT_EQ(sizeExpr->str(), "batch");

  PyObject* gt = PyObject_GetAttrString(global("operator"), "gt");
  PyRef bound = PyRef::steal(PyLong_FromLong(2000));
  PyRef compareArgs = PyRef::steal(PyTuple_Pack(2, size->get(), bound.get()));
  llvm::Expected<PyRef> compared = oracle->call(gt, compareArgs.get(), nullptr);
  Py_DECREF(gt);
  ASSERT_SUCCEEDED(compared);
  PyRef boolArgs = PyRef::steal(PyTuple_Pack(1, compared->get()));
  llvm::Expected<PyRef> decided =
      oracle->call(reinterpret_cast<PyObject*>(&PyBool_Type), boolArgs.get(), nullptr);
  ASSERT_SUCCEEDED(decided);
  EXPECT_EQ(decided->get(), Py_False);

  // x.size(0) < 512 is not known: it holds for the example and narrows the
  // range.
  PyObject* lt = PyObject_GetAttrString(global("operator"), "lt");
  PyRef limit = PyRef::steal(PyLong_FromLong(512));
  PyRef ltArgs = PyRef::steal(PyTuple_Pack(2, size->get(), limit.get()));
  llvm::Expected<PyRef> less = oracle->call(lt, ltArgs.get(), nullptr);
  Py_DECREF(lt);
  ASSERT_SUCCEEDED(less);
  PyRef lessArgs = PyRef::steal(PyTuple_Pack(1, less->get()));
  llvm::Expected<PyRef> lessDecided =
      oracle->call(reinterpret_cast<PyObject*>(&PyBool_Type), lessArgs.get(), nullptr);
  ASSERT_SUCCEEDED(lessDecided);
  EXPECT_EQ(lessDecided->get(), Py_True);

  llvm::Error finalized = oracle->finalize();
  ASSERT_FALSE(static_cast<bool>(finalized)) << llvm::toString(std::move(finalized));
  ASSERT_EQ(graph->symbols().size(), 1u);
  EXPECT_EQ(graph->symbols()[0].range, (ir::SymbolRange{2, 511}));
  EXPECT_TRUE(graph->relations().empty()) << printed();
}

TEST_F(TensorOracleTest, ShapeMismatchIsAnError) {
  ASSERT_TRUE(run("x = torch.randn(8, 16)\ny = torch.randn(4, 16)\n"));
  llvm::Expected<PyRef> x = oracle->addTensorInput(global("x"), "x", "L['x']", {});
  ASSERT_SUCCEEDED(x);
  llvm::Expected<PyRef> y = oracle->addTensorInput(global("y"), "y", "L['y']", {});
  ASSERT_SUCCEEDED(y);
  ASSERT_TRUE(run("expected = fake_error(torch.add, (8, 16), (4, 16))\n"));
  PyRef args = PyRef::steal(PyTuple_Pack(2, x->get(), y->get()));
  PyObject* add = PyObject_GetAttrString(global("torch"), "add");
  test::expectFailure(oracle->call(add, args.get(), nullptr),
                      "raised RuntimeError: " + python::strOf(global("expected")));
  Py_DECREF(add);
  EXPECT_TRUE(graphOps().empty());
}

TEST_F(TensorOracleTest, DataDependentBranchIsAnError) {
  ASSERT_TRUE(run("x = torch.randn(8)\n"
                  "def branch(x):\n"
                  "    return bool(x.sum() > 0)\n"));
  llvm::Expected<PyRef> x = oracle->addTensorInput(global("x"), "x", "L['x']", {});
  ASSERT_SUCCEEDED(x);
  PyRef args = PyRef::steal(PyTuple_Pack(1, x->get()));
  llvm::Expected<PyRef> result = oracle->call(global("branch"), args.get(), nullptr);
  ASSERT_FALSE(static_cast<bool>(result));
  std::string message = llvm::toString(result.takeError());
  // Plain words, naming the function, not torch's internal exception.
  EXPECT_NE(message.find("branch needs to decide a bool computed from tensor data"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("_local_scalar_dense"), std::string::npos) << message;
  // The failed call left nothing behind.
  EXPECT_TRUE(graphOps().empty()) << printed();
}

TEST_F(TensorOracleTest, SameSymbolWithDifferentSizesIsAnError) {
  ASSERT_TRUE(run("x = torch.randn(8, 16)\ny = torch.randn(4, 16)\n"));
  ASSERT_SUCCEEDED(oracle->addTensorInput(global("x"), "x", "L['x']", {{0, "batch", {}}}));
  test::expectFailure(oracle->addTensorInput(global("y"), "y", "L['y']", {{0, "batch", {}}}),
                      "dimension 0 of L['y'] (batch) has example size 4, but the same symbol is "
                      "dimension 0 of L['x'], of size 8");
}

TEST_F(TensorOracleTest, SizeOneDynamicDimensionIsAnError) {
  ASSERT_TRUE(run("x = torch.randn(1, 16)\n"));
  test::expectFailure(oracle->addTensorInput(global("x"), "x", "L['x']", {{0, "batch", {}}}),
                      "dimension 0 of L['x'] (batch) has example size 1; torch specializes");
}

TEST_F(TensorOracleTest, ReservedWordCannotNameASymbol) {
  ASSERT_TRUE(run("x = torch.randn(4, 16)\n"));
  test::expectFailure(oracle->addTensorInput(global("x"), "x", "L['x']", {{0, "max", {}}}),
                      "'max' cannot name the symbol");
}

TEST_F(TensorOracleTest, SpecializationIsReported) {
  ASSERT_TRUE(run("x = torch.randn(8, 16)\n"));
  llvm::Expected<PyRef> x =
      oracle->addTensorInput(global("x"), "x", "L['x']", {{0, "batch", {1, 1024}}});
  ASSERT_SUCCEEDED(x);
  oracle->setLocation("model.py:12");
  PyRef eight = PyRef::steal(PyLong_FromLong(8));
  PyRef sixteen = PyRef::steal(PyLong_FromLong(16));
  PyRef args = PyRef::steal(PyTuple_Pack(3, x->get(), eight.get(), sixteen.get()));
  PyObject* tensorType = PyObject_GetAttrString(global("torch"), "Tensor");
  PyObject* view = PyObject_GetAttrString(tensorType, "view");
  ASSERT_SUCCEEDED(oracle->call(view, args.get(), nullptr));
  Py_DECREF(view);
  Py_DECREF(tensorType);
  llvm::Error finalized = oracle->finalize();
  ASSERT_TRUE(static_cast<bool>(finalized));
  std::string message = llvm::toString(std::move(finalized));
  EXPECT_NE(message.find("dimension 0 of L['x'] (batch) was specialized to 8 by "),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("at model.py:12"), std::string::npos) << message;
}

/// Captures an MLP of `layers` linear+relu layers (Python globals x,
/// weights, biases) into \p graph through a new oracle; returns the time
/// taken, oracle creation included.
double captureMlp(ir::Graph& graph, test::PythonNamespace& python) {
  auto start = std::chrono::steady_clock::now();
  llvm::Expected<std::unique_ptr<oracle::TensorOracle>> created =
      oracle::TensorOracle::create(graph);
  EXPECT_SUCCEEDED(created);
  if (!created)
    return 0;
  oracle::TensorOracle& oracle = **created;
  llvm::Expected<PyRef> h =
      oracle.addTensorInput(python.global("x"), "x", "L['x']", {{0, "batch", {1, 1024}}});
  EXPECT_SUCCEEDED(h);
  if (!h)
    return 0;
  PyRef hidden = *h;
  long layers = PyLong_AsLong(python.global("layers"));
  for (long i = 0; i < layers; ++i) {
    std::string index = std::to_string(i);
    llvm::Expected<PyRef> w =
        oracle.addTensorInput(PyList_GET_ITEM(python.global("weights"), i), "w" + index,
                              "L['self'].layers[" + index + "].weight", {});
    llvm::Expected<PyRef> b =
        oracle.addTensorInput(PyList_GET_ITEM(python.global("biases"), i), "b" + index,
                              "L['self'].layers[" + index + "].bias", {});
    EXPECT_SUCCEEDED(w);
    EXPECT_SUCCEEDED(b);
    if (!w || !b)
      return 0;
    PyRef linearArgs = PyRef::steal(PyTuple_Pack(3, hidden.get(), w->get(), b->get()));
    llvm::Expected<PyRef> linear = oracle.call(python.global("linear"), linearArgs.get(), nullptr);
    EXPECT_SUCCEEDED(linear);
    if (!linear)
      return 0;
    PyRef reluArgs = PyRef::steal(PyTuple_Pack(1, linear->get()));
    llvm::Expected<PyRef> relu = oracle.call(python.global("relu"), reluArgs.get(), nullptr);
    EXPECT_SUCCEEDED(relu);
    if (!relu)
      return 0;
    hidden = *relu;
  }
  std::optional<ir::ValueRef> result = oracle.valueOf(hidden.get());
  EXPECT_TRUE(result.has_value());
  if (!result)
    return 0;
  oracle.builder().setOutput(ir::Argument::value(result->node, result->index));
  llvm::Error finalized = oracle.finalize();
  EXPECT_FALSE(static_cast<bool>(finalized)) << llvm::toString(std::move(finalized));
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Not a timing test: prints how long capturing a deep MLP takes through the
// oracle, to keep an eye on it. The first capture in a process also pays
// for torch's first use of fake tensors; the second shows the steady state.
TEST_F(TensorOracleTest, DeepMlpCaptureTime) {
  ASSERT_TRUE(run("layers = 100\n"
                  "x = torch.randn(8, 64)\n"
                  "weights = [torch.randn(64, 64) for _ in range(layers)]\n"
                  "biases = [torch.randn(64) for _ in range(layers)]\n"
                  "linear = torch._C._nn.linear\n"
                  "relu = torch.relu\n"));
  for (const char* which : {"first", "second"}) {
    ir::Graph& mlp = module.addGraph(std::string("mlp_") + which);
    double ms = captureMlp(mlp, *this);
    llvm::Error verified = ir::verify(mlp);
    ASSERT_FALSE(static_cast<bool>(verified)) << llvm::toString(std::move(verified));
    size_t calls = llvm::count_if(mlp.nodes(), [](const ir::Node& n) { return n.isCall(); });
    EXPECT_EQ(calls, 300u);
    std::printf("[ timing ] 100-layer MLP (linear+relu), %s capture through the oracle: %.1f ms, "
                "%zu nodes\n",
                which, ms, calls);
  }
}

} // namespace
