//===- IrGraphTest.cpp - Building, verifying, printing and parsing graphs -===//
#include "ir/GraphBuilder.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

using namespace dync::ir;

namespace {

std::string printed(const Graph& graph) {
  std::string text;
  llvm::raw_string_ostream os(text);
  graph.print(os);
  return text;
}

/// The verifier's complaints about \p graph, or "" if it is valid.
std::string verifierErrors(const Graph& graph) {
  llvm::Error error = verify(graph);
  return error ? llvm::toString(std::move(error)) : "";
}

/// Parses \p text as a module, fails the test if it does not parse.
std::unique_ptr<Module> parseText(llvm::SourceMgr& sm, Context& ctx, llvm::StringRef text) {
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "test.dync"), llvm::SMLoc());
  llvm::Expected<std::unique_ptr<Module>> module = parseModule(sm, ctx);
  if (!module) {
    ADD_FAILURE() << llvm::toString(module.takeError());
    return nullptr;
  }
  return std::move(*module);
}

/// The MLP of examples/mlp with one hidden layer, as capture would build it.
void buildMlp(Graph& graph) {
  Context& ctx = graph.context();
  GraphBuilder b(graph);
  SymExpr s0 = b.declareSymbol("s0", {1, 1024});
  b.addRelation(s0.mod(8), RelationKind::Eq, ctx.constant(0));
  SymExpr c256 = ctx.constant(256), c784 = ctx.constant(784), c10 = ctx.constant(10);
  Node* x = b.addInput("x", Type::contiguousTensor(ctx, DType::F32, {s0, c784}), "L['x']");
  Node* w0 = b.addInput("w0", Type::contiguousTensor(ctx, DType::F32, {c256, c784}),
                        "L['self'].hidden[0].weight");
  Node* b0 =
      b.addInput("b0", Type::contiguousTensor(ctx, DType::F32, {c256}), "L['self'].hidden[0].bias");
  Node* t = b.addCall("aten::t.default", {GraphBuilder::use(w0)},
                      Type::tensor(DType::F32, {c784, c256}, {ctx.constant(1), c784}));
  Node* mm = b.addCall("aten::addmm.default",
                       {GraphBuilder::use(b0), GraphBuilder::use(x), GraphBuilder::use(t)},
                       Type::contiguousTensor(ctx, DType::F32, {s0, c256}));
  Node* relu = b.addCall("aten::relu.default", {GraphBuilder::use(mm)},
                         Type::contiguousTensor(ctx, DType::F32, {s0, c256}));
  Node* max = b.addCall("aten::max.dim", {GraphBuilder::use(relu), b.integer(1)},
                        {{"keepdim", Argument::boolean(false)}},
                        Type::tuple({Type::contiguousTensor(ctx, DType::F32, {s0}),
                                     Type::contiguousTensor(ctx, DType::I64, {s0})}),
                        "max");
  Node* view = b.addCall(
      "aten::view.default",
      {GraphBuilder::use(relu), Argument::list({Argument::sym(s0 * 16), Argument::sym(c10 + 6)})},
      Type::contiguousTensor(ctx, DType::F32, {s0 * 16, ctx.constant(16)}));
  b.setOutput(Argument::tuple({GraphBuilder::use(view), GraphBuilder::use(max, 1)}));
}

constexpr const char* mlpText =
    R"(graph @MLP.forward(%x: tensor<f32, [s0, 784]> = L['x'],
                   %w0: tensor<f32, [256, 784]> = L['self'].hidden[0].weight,
                   %b0: tensor<f32, [256]> = L['self'].hidden[0].bias)
    symbols { s0: [1, 1024] }
    relations { s0 mod 8 == 0 } {
  %0 = aten::t.default(%w0) : tensor<f32, [784, 256], [1, 784]>
  %1 = aten::addmm.default(%b0, %x, %0) : tensor<f32, [s0, 256]>
  %2 = aten::relu.default(%1) : tensor<f32, [s0, 256]>
  %max = aten::max.dim(%2, 1, keepdim=false) : tuple<tensor<f32, [s0]>, tensor<i64, [s0]>>
  %3 = aten::view.default(%2, [16*s0, 16]) : tensor<f32, [16*s0, 16]>
  return (%3, %max#1)
}
)";

TEST(IrGraphTest, BuilderGraphVerifiesAndPrints) {
  Context ctx;
  Graph graph(ctx, "MLP.forward");
  buildMlp(graph);
  EXPECT_EQ(verifierErrors(graph), "");
  EXPECT_EQ(printed(graph), mlpText);
}

TEST(IrGraphTest, ParsedGraphPrintsIdentically) {
  Context ctx;
  llvm::SourceMgr sm;
  std::unique_ptr<Module> module = parseText(sm, ctx, mlpText);
  ASSERT_TRUE(module);
  ASSERT_EQ(module->graphs().size(), 1u);
  const Graph& graph = *module->graphs().front();
  EXPECT_FALSE(static_cast<bool>(verify(graph, &sm)));
  EXPECT_EQ(printed(graph), mlpText);

  // Uses point at the defining nodes, results by index.
  const Argument& returned = graph.output()->returnValue();
  ASSERT_EQ(returned.kind(), Argument::Kind::Tuple);
  EXPECT_EQ(returned.elements()[1].valueRef().node->name(), "max");
  EXPECT_EQ(*returned.elements()[1].valueRef().index, 1u);
  EXPECT_EQ(returned.elements()[1].valueRef().node->resultType(1)->dtype(), DType::I64);
  // Symbolic sizes in the text are the same nodes the builder would make.
  SymExpr s0 = ctx.symbol("s0");
  EXPECT_EQ(std::prev(graph.nodes().end(), 2)->type().sizes()[0], s0 * 16);
}

TEST(IrGraphTest, BuilderNamesValuesAndKeepsInputsFirst) {
  Context ctx;
  Graph graph(ctx, "f");
  GraphBuilder b(graph);
  Type scalar = Type::contiguousTensor(ctx, DType::F32, {});
  Node* x = b.addInput("x", scalar, "L['x']");
  Node* call = b.addCall("aten::neg.default", {GraphBuilder::use(x)}, scalar);
  Node* named = b.addCall("aten::neg.default", {GraphBuilder::use(call)}, {}, scalar, "x");
  Node* late = b.addInput("y", scalar, "L['y']");
  b.setOutput(Argument::tuple({GraphBuilder::use(named), GraphBuilder::use(late)}));
  EXPECT_EQ(call->name(), "0");
  EXPECT_EQ(named->name(), "x_1");
  EXPECT_EQ(&*std::next(graph.nodes().begin()), late);
  EXPECT_EQ(verifierErrors(graph), "");

  // A second builder on the same graph continues the numbering safely.
  GraphBuilder more(graph);
  EXPECT_EQ(more.addCall("aten::neg.default", {GraphBuilder::use(x)}, scalar)->name(), "1");
}

TEST(IrGraphTest, VerifierReportsEachProblemWithTheNode) {
  Context ctx;
  Graph graph(ctx, "g");
  GraphBuilder b(graph);
  SymExpr s0 = b.declareSymbol("s0", {2, std::nullopt});
  b.declareSymbol("u8", {0, 1});
  b.declareSymbol("s9", {5, 2});
  b.addRelation(ctx.symbol("s7"), RelationKind::Le, ctx.constant(4));
  Type t = Type::contiguousTensor(ctx, DType::F32, {s0});
  Node* x = b.addInput("x", t, "L['x'");
  Node* a = b.addCall("relu", {GraphBuilder::use(x)}, t);
  Node* c = b.addCall("aten::relu.default", {GraphBuilder::use(a, 0)},
                      Type::contiguousTensor(ctx, DType::F32, {ctx.symbol("s3")}));
  b.addCall("aten::add.Tensor", {GraphBuilder::use(c), GraphBuilder::use(x)},
            {{"alpha", b.integer(1)}, {"alpha", b.integer(2)}},
            Type::tensor(DType::F32, {s0, ctx.constant(-2)}, {ctx.constant(1)}));
  EXPECT_EQ(verifierErrors(graph),
            "error: graph @g: symbol name 'u8' is reserved (a dtype, device, layout, memory "
            "format, literal or operator)\n"
            "error: graph @g: symbol 's9' has an empty range [5, 2]\n"
            "error: graph @g: relation 's7 <= 4': symbol 's7' is not declared\n"
            "error: graph @g: graph @g has no 'return'\n"
            "error: graph @g: input %x has a malformed source 'L['x'' (it must be one line with "
            "balanced brackets and quotes)\n"
            "error: graph @g: %0: operator 'relu' is not of the form namespace::name.overload\n"
            "error: graph @g: %1: symbol 's3' is not declared\n"
            "error: graph @g: %1: %0#0 indexes a value of type tensor<f32, [s0]>, which is not a "
            "tuple or list\n"
            "error: graph @g: %2: tensor type has 2 sizes but 1 strides\n"
            "error: graph @g: %2: tensor type has negative size -2\n"
            "error: graph @g: %2: keyword argument 'alpha' is given twice");
}

TEST(IrGraphTest, VerifierChecksDefinitionOrderAndOwnership) {
  Context ctx;
  Graph graph(ctx, "g"), other(ctx, "other");
  Type t = Type::contiguousTensor(ctx, DType::F32, {ctx.constant(4)});
  GraphBuilder b(graph), o(other);
  Node* stranger = o.addInput("z", t, "L['z']");
  Node* x = b.addInput("x", t, "L['x']");
  Node* first = b.addCall("aten::neg.default", {GraphBuilder::use(x)}, t);
  Node* second = b.addCall("aten::neg.default", {GraphBuilder::use(first)}, t);
  Node* out = b.setOutput(Argument::tuple({GraphBuilder::use(second)}));
  EXPECT_EQ(verifierErrors(graph), "");

  // Move %1 before its operand, rename it to clash, and use a foreign value.
  graph.nodes().remove(second);
  graph.nodes().insert(first->getIterator(), second);
  second->setName("0");
  std::vector<Argument>& returned = out->args().front().elements();
  returned.push_back(GraphBuilder::use(stranger));
  returned.push_back(GraphBuilder::use(first, 3));
  EXPECT_EQ(verifierErrors(graph),
            "error: graph @g: value %0 is defined more than once\n"
            "error: graph @g: %0: uses %0 before its definition\n"
            "error: graph @g: return: uses %z, which is not a node of this graph\n"
            "error: graph @g: return: %0#3 indexes a value of type tensor<f32, [4]>, which is "
            "not a tuple or list");
}

TEST(IrGraphTest, VerifierRulesOnlyTheApiCanBreak) {
  // The parser cannot produce these; passes and capture code could.
  Context ctx;
  Graph graph(ctx, "g");
  graph.symbols().push_back({"not a name", {0, 1}, llvm::SMLoc()});
  Type t = Type::integer();
  Node* x = graph.append(Node::input("x", t, "L['x']"));
  Node* call = graph.append(Node::call("bad name", "aten::neg.default", {Argument::value(nullptr)},
                                       {{"1st", Argument::none()}}, t));
  graph.append(Node::input("late", t, "L['late']"));
  Node* out = graph.append(Node::output(Argument::value(x)));
  out->kwargs().push_back({"k", Argument::none()});
  graph.append(Node::call("after", "aten::neg.default", {Argument::value(out)}, {}, t));
  (void)call;
  EXPECT_EQ(verifierErrors(graph),
            "error: graph @g: symbol name 'not a name' is not an identifier\n"
            "error: graph @g: '%bad name' is not a valid value name\n"
            "error: graph @g: input %late comes after an operation; inputs come first\n"
            "error: graph @g: 'return' must be the last node of the graph\n"
            "error: graph @g: %bad name: uses a null value\n"
            "error: graph @g: %bad name: keyword argument name '1st' is not an identifier\n"
            "error: graph @g: 'return' takes no keyword arguments\n"
            "error: graph @g: %after: uses the graph's 'return', which has no value");
}

TEST(IrGraphTest, ReturnMustBeLast) {
  Context ctx;
  Graph graph(ctx, "g");
  GraphBuilder b(graph);
  Type t = Type::integer();
  Node* n = b.addInput("n", t, "L['n']");
  b.setOutput(GraphBuilder::use(n));
  b.addCall("aten::sym_size.int", {GraphBuilder::use(n), b.integer(0)}, t);
  EXPECT_EQ(verifierErrors(graph), "error: graph @g: 'return' must be the last node of the graph");
}

TEST(IrGraphTest, ReturnHoldsTheReturnedValue) {
  // `return x` and `return (x,)` are different Python results, so they are
  // different graphs; `(x)` is only grouping.
  constexpr const char* text = R"(graph @f(%x: tensor<f32, [4]> = L['x']) {
  return %x
}

graph @g(%x: tensor<f32, [4]> = L['x']) {
  return (%x,)
}

graph @h(%x: tensor<f32, [4]> = L['x']) {
  return %x
}
)";
  Context ctx;
  llvm::SourceMgr sm;
  std::unique_ptr<Module> module = parseText(sm, ctx, text);
  ASSERT_TRUE(module);
  ASSERT_EQ(module->graphs().size(), 3u);
  EXPECT_EQ(module->graphs()[0]->output()->returnValue().kind(), Argument::Kind::Value);
  EXPECT_EQ(module->graphs()[1]->output()->returnValue().kind(), Argument::Kind::Tuple);
  EXPECT_EQ(printed(*module->graphs()[2]), "graph @h(%x: tensor<f32, [4]> = L['x']) {\n"
                                           "  return %x\n"
                                           "}\n");

  // Only the API can make a return without its one value.
  Graph graph(ctx, "k");
  graph.append(Node::output(Argument::none()))->args().clear();
  EXPECT_EQ(verifierErrors(graph), "error: graph @k: 'return' must hold exactly one value, not 0");
}

TEST(IrGraphTest, OutputLeavesAreTheReturnedTensorsInOrder) {
  Context ctx;
  Graph graph(ctx, "f");
  GraphBuilder b(graph);
  SymExpr s0 = b.declareSymbol("s0", {2, 64});
  Type t = Type::contiguousTensor(ctx, DType::F32, {s0});
  Node* x = b.addInput("x", t, "L['x']");
  Node* n = b.addInput("n", Type::integer(s0), "L['n']");
  Node* neg = b.addCall("aten::neg.default", {GraphBuilder::use(x)}, t);
  Node* max = b.addCall("aten::max.dim", {GraphBuilder::use(x), b.integer(0)},
                        Type::tuple({Type::contiguousTensor(ctx, DType::F32, {}),
                                     Type::contiguousTensor(ctx, DType::I64, {})}));
  // (%1#1, [%0, none, %n], 3, (%x, 2*s0), %0): depth-first, left to right,
  // tensors only, a value returned twice counted twice.
  b.setOutput(Argument::tuple(
      {GraphBuilder::use(max, 1),
       Argument::list({GraphBuilder::use(neg), Argument::none(), GraphBuilder::use(n)}),
       b.integer(3), Argument::tuple({GraphBuilder::use(x), Argument::sym(s0 * 2)}),
       GraphBuilder::use(neg)}));
  EXPECT_EQ(verifierErrors(graph), "");
  std::vector<ValueRef> leaves = outputLeaves(graph);
  std::vector<ValueRef> expected = {
      {max, 1}, {neg, std::nullopt}, {x, std::nullopt}, {neg, std::nullopt}};
  EXPECT_EQ(leaves, expected);

  Graph scalar(ctx, "g");
  GraphBuilder(scalar).setOutput(Argument::sym(ctx.constant(7)));
  EXPECT_TRUE(outputLeaves(scalar).empty());
}

TEST(IrGraphTest, OutputLeavesHoldNumbersComputedFromData) {
  // Floats and bools a call computes are results where they are returned;
  // a data-dependent int the value mentions comes last, as its node.
  Context ctx;
  Graph graph(ctx, "f");
  GraphBuilder b(graph);
  SymExpr u0 = b.declareSymbol("u0", {std::nullopt, std::nullopt}, /*unbacked=*/true);
  Type t = Type::contiguousTensor(ctx, DType::F32, {ctx.constant(4)});
  Type scalar = Type::contiguousTensor(ctx, DType::F32, {});
  Node* x = b.addInput("x", t, "L['x']");
  Node* sum = b.addCall("aten::sum.default", {GraphBuilder::use(x)}, scalar);
  Node* s =
      b.addCall("aten::_local_scalar_dense.default", {GraphBuilder::use(sum)}, Type::floating());
  Node* big = b.addCall("sym::gt.default", {GraphBuilder::use(s), Argument::floating(0.5)},
                        Type::boolean());
  Node* count = b.addCall("aten::_to_copy.default", {GraphBuilder::use(sum)},
                          Type::contiguousTensor(ctx, DType::I64, {}));
  Node* n =
      b.addCall("aten::_local_scalar_dense.default", {GraphBuilder::use(count)}, Type::integer(u0));
  b.setOutput(Argument::tuple(
      {Argument::sym(u0 + 1), GraphBuilder::use(s), GraphBuilder::use(x), GraphBuilder::use(big)}));
  EXPECT_EQ(verifierErrors(graph), "");
  std::vector<ValueRef> expected = {
      {s, std::nullopt}, {x, std::nullopt}, {big, std::nullopt}, {n, std::nullopt}};
  EXPECT_EQ(outputLeaves(graph), expected);
  EXPECT_EQ(unbackedIntNode(graph, "u0"), n);
}

TEST(IrGraphTest, ModuleGraphNamesAreUnique) {
  Context ctx;
  Module module(ctx);
  for (int i = 0; i < 2; ++i)
    GraphBuilder(module.addGraph("f")).setOutput(Argument::tuple({}));
  llvm::Error error = verify(module);
  ASSERT_TRUE(static_cast<bool>(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "error: graph @f: graph @f is defined more than once");
}

TEST(IrGraphTest, ContiguousStridesFollowTorch) {
  Context ctx;
  SymExpr s0 = ctx.symbol("s0"), s1 = ctx.symbol("s1");
  auto strides = contiguousStrides(ctx, {s0, s1, ctx.constant(3)});
  EXPECT_EQ(strides[0], 3 * s1);
  EXPECT_EQ(strides[1], ctx.constant(3));
  EXPECT_EQ(strides[2], ctx.constant(1));
  // A zero-size dimension counts as one, as in torch.empty(2, 0, 3).stride().
  strides = contiguousStrides(ctx, {ctx.constant(2), ctx.constant(0), ctx.constant(3)});
  EXPECT_EQ(strides[0], ctx.constant(3));
  EXPECT_EQ(strides[1], ctx.constant(3));
}

TEST(IrGraphTest, TypesPrintCanonicallyAndCompare) {
  Context ctx;
  for (const char* text :
       {"tensor<f32, [s0, 784]>", "tensor<f32, [784, 256], [1, 784]>", "tensor<bf16, []>",
        "tensor<f16, [8], cuda:0, requires_grad>", "tensor<u8, [2, 3], [1, 2], meta>",
        "tensor<c64, [s0 floordiv 2 + 1]>", "int", "int<2*s0>", "float", "bool", "none",
        "tuple<tensor<f32, [s0]>, tensor<i64, [s0]>>", "list<tensor<f32, [2]>, int<3>>",
        "tuple<>"}) {
    llvm::Expected<Type> type = parseType(text, ctx);
    ASSERT_TRUE(static_cast<bool>(type)) << llvm::toString(type.takeError());
    EXPECT_EQ(type->str(), text);
    EXPECT_EQ(*type, llvm::cantFail(parseType(type->str(), ctx)));
  }
  // Strides that are contiguous anyway are dropped.
  EXPECT_EQ(llvm::cantFail(parseType("tensor<f32, [2, 3], [3, 1]>", ctx)).str(),
            "tensor<f32, [2, 3]>");
  EXPECT_NE(llvm::cantFail(parseType("tensor<f32, [2]>", ctx)),
            llvm::cantFail(parseType("tensor<f64, [2]>", ctx)));
  EXPECT_NE(llvm::cantFail(parseType("int<s0>", ctx)), llvm::cantFail(parseType("int", ctx)));
}

TEST(IrGraphTest, FloatsPrintShortestAndReadBackExactly) {
  auto text = [](double v) {
    std::string s;
    llvm::raw_string_ostream os(s);
    printFloat(os, v);
    return s;
  };
  EXPECT_EQ(text(1.0), "1.0");
  EXPECT_EQ(text(0.1), "0.1");
  EXPECT_EQ(text(1e-5), "1e-05");
  EXPECT_EQ(text(-0.0), "-0.0");
  EXPECT_EQ(text(1.0 / 0.0), "inf");
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    double value;
    std::memcpy(&value, &bits, sizeof(value));
    if (std::isnan(value))
      continue;
    std::string s = text(value);
    double back = std::strtod(s.c_str(), nullptr);
    ASSERT_EQ(std::memcmp(&back, &value, sizeof(value)), 0) << s;
  }
}

TEST(IrGraphTest, LiteralArgumentsRoundTrip) {
  constexpr const char* text =
      R"(graph @"not a plain name"(%x: tensor<f32, [4]> = G['torch'].nn.functional.__dict__['gelu, tanh'],
                          %n: int<s0> = L['n'])
    symbols { s0: [-inf, inf] } {
  %0 = aten::gelu.default(%x, approximate="tan\"h\\\n\01") : tensor<f32, [4]>
  %1 = aten::_to_copy.default(%0, dtype=bf16, layout=strided, device=cuda:1, non_blocking=false, memory_format=channels_last) : tensor<bf16, [4], cuda:1>
  %2 = aten::full.default([s0, -1], -inf, dtype=bool) : tensor<bool, [s0, 1]>
  %3 = aten::mul.Scalar(%0, 0.30000000000000004) : tensor<f32, [4]>
  return (%1, (%2,), [%3, (), none, 1e+300], -s0 floordiv 2, nan)
}
)";
  Context ctx;
  llvm::SourceMgr sm;
  std::unique_ptr<Module> module = parseText(sm, ctx, text);
  ASSERT_TRUE(module);
  const Graph& graph = *module->graphs().front();
  EXPECT_EQ(graph.name(), "not a plain name");
  EXPECT_EQ(printed(graph), text);
  EXPECT_FALSE(static_cast<bool>(verify(graph, &sm)));
  const Node& gelu = *std::next(graph.nodes().begin(), 2);
  EXPECT_EQ(gelu.kwargs()[0].value.stringValue(), std::string("tan\"h\\\n\x01", 8));
  const Node& copy = *std::next(graph.nodes().begin(), 3);
  EXPECT_EQ(copy.kwargs()[1].value.layoutValue(), Layout::Strided);
  EXPECT_EQ(copy.kwargs()[4].value.memoryFormatValue(), MemoryFormat::ChannelsLast);
  EXPECT_EQ(copy.kwargs()[2].value.deviceValue(), (Device{DeviceKind::CUDA, 1}));
}

} // namespace
