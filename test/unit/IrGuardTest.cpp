//===- IrGuardTest.cpp - Sources and guards as IR data and text -----------===//
#include "ir/BigIntGuard.h"
#include "ir/GraphBuilder.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"

#include <gtest/gtest.h>

using namespace dync::ir;

namespace {

SourcePtr parsed(llvm::StringRef text) {
  llvm::Expected<SourcePtr> source = Source::parse(text);
  if (!source) {
    ADD_FAILURE() << llvm::toString(source.takeError());
    return nullptr;
  }
  return *source;
}

std::string parseError(llvm::StringRef text) {
  llvm::Expected<SourcePtr> source = Source::parse(text);
  if (source)
    return "";
  return llvm::toString(source.takeError());
}

TEST(IrSource, PrintsAsPython) {
  SourcePtr self = Source::local("self");
  SourcePtr weight = Source::key(
      Source::attr(Source::key(Source::attr(self, "_modules"), "hidden"), "_parameters"), "weight");
  EXPECT_EQ(weight->str(), "L['self']._modules['hidden']._parameters['weight']");
  EXPECT_EQ(Source::attr(Source::global("torch"), "float32")->str(), "G['torch'].float32");
  EXPECT_EQ(Source::index(Source::local("args"), -1)->str(), "L['args'][-1]");
  EXPECT_EQ(Source::key(self, "it's \\ \n\x01")->str(), "L['self']['it\\'s \\\\ \\n\\x01']");
}

TEST(IrSource, ValueNamesLeaveOutModuleTables) {
  SourcePtr hidden = Source::key(Source::attr(Source::local("self"), "_modules"), "hidden");
  SourcePtr layer = Source::key(Source::attr(hidden, "_modules"), "0");
  EXPECT_EQ(Source::key(Source::attr(layer, "_parameters"), "weight")->valueName(),
            "self_hidden_0_weight");
  EXPECT_EQ(Source::key(Source::attr(hidden, "_buffers"), "running_mean")->valueName(),
            "self_hidden_running_mean");
  EXPECT_EQ(Source::attr(hidden, "training")->valueName(), "self_hidden_training");
  EXPECT_EQ(Source::index(Source::local("args"), -1)->valueName(), "args__1");
  EXPECT_EQ(Source::key(Source::local("d"), "a-b")->valueName(), "d_a_b");
  EXPECT_EQ(Source::attr(Source::global("cfg"), "scale")->valueName(), "G_cfg_scale");
}

TEST(IrSource, ParsesWhatItPrints) {
  for (llvm::StringRef text :
       {"L['x']", "G['torch'].float32", "L['self']._modules['0']._parameters['weight']",
        "L['args'][0][-2]", "L['self'].cfg['it\\'s \\\\ \\n\\t\\r\\x7f']", "L['']",
        "L['x'][-9223372036854775808]"}) {
    SourcePtr source = parsed(text);
    ASSERT_TRUE(source) << text.str();
    EXPECT_EQ(source->str(), text.str());
  }
  // Double quotes are read too, and printed as Python's repr prints them.
  EXPECT_EQ(parsed("L[\"x\"][\"k\"]")->str(), "L['x']['k']");
}

// Sources only guards read: a module in sys.modules, what a class holds (by
// the MRO), what a closure cell holds.
TEST(IrSource, GuardOnlyKinds) {
  SourcePtr module = parsed("M['torch.nn.modules.module']._global_forward_hooks");
  ASSERT_TRUE(module);
  EXPECT_EQ(module->root().kind(), Source::Kind::Module);
  EXPECT_EQ(module->root().name(), "torch.nn.modules.module");
  SourcePtr classAttr = parsed("type(L['self']._modules['fc']).forward");
  ASSERT_TRUE(classAttr);
  EXPECT_EQ(classAttr->kind(), Source::Kind::ClassAttr);
  EXPECT_EQ(classAttr->name(), "forward");
  EXPECT_EQ(classAttr->base()->str(), "L['self']._modules['fc']");
  SourcePtr cell = parsed("G['helper'].__closure__[1].cell_contents.x");
  ASSERT_TRUE(cell);
  EXPECT_EQ(cell->base()->kind(), Source::Kind::Cell);
  EXPECT_EQ(cell->base()->indexValue(), 1);
  for (llvm::StringRef text :
       {"M['torch.nn.modules.module']._global_forward_hooks",
        "type(L['self']._modules['fc']).forward", "type(type(L['x']).y).z['k'][0]",
        "G['helper'].__closure__[1].cell_contents.x"})
    EXPECT_EQ(parsed(text)->str(), text.str());
  EXPECT_FALSE(*parsed("type(L['x']).y") == *parsed("L['x'].y"));
  EXPECT_EQ(parsed("type(L['self']).scale")->valueName(), "self_class_scale");
}

TEST(IrSource, RootAndEquality) {
  SourcePtr a = parsed("L['self']._modules['fc'].training");
  SourcePtr b = parsed("L['self']._modules['fc'].training");
  EXPECT_TRUE(*a == *b);
  EXPECT_FALSE(*a == *parsed("L['self']._modules['fc'].train"));
  EXPECT_FALSE(*parsed("L['x'][0]") == *parsed("L['x']['0']"));
  EXPECT_FALSE(*parsed("L['x']") == *parsed("G['x']"));
  EXPECT_EQ(a->root().kind(), Source::Kind::Local);
  EXPECT_EQ(a->root().name(), "self");
}

TEST(IrSource, ErrorsSayWhere) {
  EXPECT_EQ(parseError("x"), "malformed source 'x': expected L['name'], G['name'], M['name'], "
                             "type(...) or list(...) at column 1");
  EXPECT_EQ(parseError("L['x'][(1)]"), "malformed source 'L['x'][(1)]': a one-element tuple key "
                                       "is written with a comma, (k,) at column 11");
  EXPECT_EQ(parseError("list(L['x'])[-1]"),
            "malformed source 'list(L['x'])[-1]': a position in list(...) is not negative at "
            "column 16");
  EXPECT_EQ(parseError("type(L['x']"), "malformed source 'type(L['x']': expected ')' at column 12");
  EXPECT_EQ(parseError("type(L['x'])"), "malformed source 'type(L['x'])': expected '.' and an "
                                        "attribute name after type(...) at column 13");
  EXPECT_EQ(parseError("G['f'].__closure__[0].x"),
            "malformed source 'G['f'].__closure__[0].x': expected '].cell_contents' after "
            "__closure__[i at column 24");
  EXPECT_EQ(parseError("L['x'"), "malformed source 'L['x'': expected ']' at column 6");
  EXPECT_EQ(parseError("L['x]"), "malformed source 'L['x]': unterminated string at column 6");
  EXPECT_EQ(parseError("L['x'].w("), "malformed source 'L['x'].w(': unexpected '(' at column 9");
  EXPECT_EQ(parseError("L['x'].1"),
            "malformed source 'L['x'].1': expected an attribute name after '.' at column 8");
  EXPECT_EQ(parseError("L['x'][a]"),
            "malformed source 'L['x'][a]': expected an integer index or a quoted key at column 8");
  EXPECT_EQ(parseError("L['x'][99999999999999999999]"),
            "malformed source 'L['x'][99999999999999999999]': index does not fit in 64 bits at "
            "column 8");
  EXPECT_EQ(parseError("L['\\q']"), "malformed source 'L['\\q']': unknown escape in string at "
                                    "column 4");
}

TEST(IrSource, DictKeysOfEveryKind) {
  SourcePtr d = Source::attr(Source::local("self"), "d");
  std::vector<std::pair<DictKey, std::string>> keys = {
      {DictKey::integer(-3), "L['self'].d[-3]"},
      {DictKey::str("a b"), "L['self'].d['a b']"},
      {DictKey::boolean(true), "L['self'].d[True]"},
      {DictKey::none(), "L['self'].d[None]"},
      {DictKey::floating(-0.0), "L['self'].d[-0.0]"},
      {DictKey::tuple({DictKey::integer(1), DictKey::str("a")}), "L['self'].d[(1, 'a')]"},
      {DictKey::tuple({DictKey::boolean(false)}), "L['self'].d[(False,)]"},
      {DictKey::tuple({}), "L['self'].d[()]"},
  };
  for (const auto& [key, text] : keys) {
    SourcePtr item = Source::item(d, key);
    EXPECT_EQ(item->str(), text);
    EXPECT_TRUE(item->itemKey() == key) << text;
    llvm::Expected<SourcePtr> parsed = Source::parse(text);
    ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
    EXPECT_TRUE(**parsed == *item) << text;
  }
  // An int key is the index form, a str key the key form; 1, 1.0 and True
  // are three sources, and 0.0 is not -0.0.
  EXPECT_TRUE(Source::item(d, DictKey::integer(1))->hasIndex());
  EXPECT_FALSE(*Source::item(d, DictKey::integer(1)) == *Source::item(d, DictKey::boolean(true)));
  EXPECT_FALSE(*Source::item(d, DictKey::integer(1)) == *Source::item(d, DictKey::floating(1.0)));
  EXPECT_FALSE(*Source::item(d, DictKey::floating(0.0)) ==
               *Source::item(d, DictKey::floating(-0.0)));
  // Positions in a dict, guards only.
  EXPECT_EQ(Source::valueAt(d, 2)->str(), "list(L['self'].d.values())[2]");
  EXPECT_EQ(Source::keyAt(d, 0)->str(), "list(L['self'].d)[0]");
  EXPECT_FALSE(*Source::valueAt(d, 0) == *Source::keyAt(d, 0));
  EXPECT_FALSE(*Source::valueAt(d, 0) == *Source::index(d, 0));
  llvm::Expected<SourcePtr> nested = Source::parse("list(list(L['t'].values())[1].h)[0].x");
  ASSERT_TRUE(bool(nested)) << llvm::toString(nested.takeError());
  EXPECT_EQ((*nested)->str(), "list(list(L['t'].values())[1].h)[0].x");
  EXPECT_EQ((*nested)->base()->kind(), Source::Kind::KeyAt);
}

TEST(IrGuards, OnePerKindAndSource) {
  Context ctx;
  GuardSet guards;
  guards.localNames() = {"self", "x"};
  guards.add(Guard::type(Source::local("self"), "model", "MLP"));
  guards.add(Guard::type(Source::local("self"), "model", "Other"));
  guards.add(
      Guard::equals(Source::attr(Source::local("self"), "training"), Argument::boolean(false)));
  guards.add(
      Guard::equals(Source::attr(Source::local("self"), "training"), Argument::boolean(true)));
  guards.add(Guard::gradMode(true));
  guards.add(Guard::gradMode(false));
  guards.add(Guard::defaultDType(DType::F32));
  guards.add(Guard::versionIs("torch", "2.13.0+cpu"));
  guards.add(Guard::versionIs("python", "3.11.7"));
  guards.add(Guard::versionIs("torch", "2.0"));
  std::string text;
  llvm::raw_string_ostream os(text);
  guards.print(os, "MLP.forward");
  EXPECT_EQ(text, "guards @MLP.forward(self, x) {\n"
                  "  type L['self'] : model:MLP\n"
                  "  equals L['self'].training : false\n"
                  "  grad_mode true\n"
                  "  default_dtype f32\n"
                  "  version torch \"2.13.0+cpu\"\n"
                  "  version python \"3.11.7\"\n"
                  "}\n");
}

TEST(IrGuards, PrintsEachKind) {
  Context ctx;
  auto line = [](const Guard& guard) {
    std::string text;
    llvm::raw_string_ostream os(text);
    guard.print(os);
    return text;
  };
  SourcePtr x = Source::local("x");
  EXPECT_EQ(line(Guard::tensor(x, Type::contiguousTensor(ctx, DType::F16, {ctx.symbol("n")}))),
            "tensor L['x'] : tensor<f16, [n]>");
  EXPECT_EQ(line(Guard::type(x, "torch.nn.modules.linear", "Linear")),
            "type L['x'] : torch.nn.modules.linear:Linear");
  EXPECT_EQ(line(Guard::type(x, "my-module", "f.<locals>.C")),
            "type L['x'] : \"my-module\":f.<locals>.C");
  EXPECT_EQ(line(Guard::equals(x, Argument::sym(ctx.constant(-4)))), "equals L['x'] : -4");
  EXPECT_EQ(line(Guard::equals(x, Argument::floating(0.5))), "equals L['x'] : 0.5");
  EXPECT_EQ(line(Guard::equals(x, Argument::floating(2))), "equals L['x'] : 2.0");
  EXPECT_EQ(line(Guard::equals(x, Argument::string("a\"b"))), "equals L['x'] : \"a\\\"b\"");
  EXPECT_EQ(line(Guard::none(x)), "none L['x']");
  EXPECT_EQ(line(Guard::gradMode(false)), "grad_mode false");
  EXPECT_EQ(line(Guard::defaultDType(DType::F64)), "default_dtype f64");
}

/// A graph with a guards block built in code, printed, parsed and printed
/// again.
TEST(IrGuards, ModuleRoundTrip) {
  Context ctx;
  Module module(ctx);
  Graph& graph = module.addGraph("f");
  GraphBuilder b(graph);
  SymExpr n = b.declareSymbol("n", {2, 64});
  Type type = Type::contiguousTensor(ctx, DType::F32, {n, ctx.constant(3)});
  Node* x = b.addInput("x", type, "L['x']");
  b.setOutput({GraphBuilder::use(x)});
  graph.guards().localNames() = {"x", "scale", "cell"};
  graph.guards().add(Guard::tensor(Source::local("x"), type));
  graph.guards().add(Guard::equals(Source::local("scale"), Argument::floating(1e-5)));
  ASSERT_FALSE(verify(module));

  std::string first;
  llvm::raw_string_ostream os(first);
  module.print(os);
  EXPECT_NE(first.find("}\nguards @f(x, scale, cell) {\n"
                       "  tensor L['x'] : tensor<f32, [n, 3]>\n"
                       "  equals L['scale'] : 1e-05\n"
                       "}\n"),
            std::string::npos)
      << first;

  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(first, "test.dync"), llvm::SMLoc());
  Context ctx2;
  llvm::Expected<std::unique_ptr<Module>> reparsed = parseModule(sm, ctx2);
  ASSERT_TRUE(bool(reparsed)) << llvm::toString(reparsed.takeError());
  ASSERT_FALSE(verify(**reparsed, &sm));
  std::string second;
  llvm::raw_string_ostream os2(second);
  (*reparsed)->print(os2);
  EXPECT_EQ(first, second);
  // Graph::print is the graph alone.
  std::string graphOnly;
  llvm::raw_string_ostream os3(graphOnly);
  graph.print(os3);
  EXPECT_EQ(graphOnly.find("guards"), std::string::npos);
}

TEST(IrGuards, VerifierChecksSymbolsAndLocals) {
  Context ctx;
  Module module(ctx);
  Graph& graph = module.addGraph("f");
  GraphBuilder b(graph);
  b.setOutput({});
  graph.guards().localNames() = {"x"};
  graph.guards().add(Guard::tensor(Source::local("x"),
                                   Type::contiguousTensor(ctx, DType::F32, {ctx.symbol("m")})));
  graph.guards().add(Guard::none(Source::local("y")));
  graph.guards().add(Guard::none(Source::global("g")));
  Guard noSource = Guard::none(nullptr);
  graph.guards().add(noSource);
  llvm::Error error = verify(module);
  ASSERT_TRUE(bool(error));
  EXPECT_EQ(llvm::toString(std::move(error)),
            "error: graph @f: guard 'tensor L['x'] : tensor<f32, [m]>': symbol 'm' is not "
            "declared\n"
            "error: graph @f: guard 'none L['y']': L['y'] is not among the local names of the "
            "guards block\n"
            "error: graph @f: guard 'none' has no source");
}

} // namespace

namespace {

// The expected bytes are Python's int.to_bytes(n, "little", signed=True) in
// the fewest bytes, worked out by hand: 2**63 is 0x80 in byte 7 with a zero
// sign byte after it; -(2**63) - 1 is 0xff * 7, 0x7f, then 0xff.
TEST(IrBigIntGuards, DecimalAndTwosComplement) {
  std::vector<uint8_t> edge = twosComplementBytes("9223372036854775808");
  EXPECT_EQ(edge, (std::vector<uint8_t>{0, 0, 0, 0, 0, 0, 0, 0x80, 0}));
  std::vector<uint8_t> low = twosComplementBytes("-9223372036854775809");
  EXPECT_EQ(low, (std::vector<uint8_t>{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff}));
  EXPECT_EQ(decimalOfTwosComplement(edge), "9223372036854775808");
  EXPECT_EQ(decimalOfTwosComplement(low), "-9223372036854775809");
  // Wider bytes than needed spell the same number.
  EXPECT_EQ(decimalOfTwosComplement({0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0}), "9223372036854775808");
  EXPECT_EQ(decimalOfTwosComplement({0xff, 0xff}), "-1");
  const char* uuidInt = "324969006592305634633390616021200786553";
  EXPECT_EQ(decimalOfTwosComplement(twosComplementBytes(uuidInt)), uuidInt);
}

TEST(IrBigIntGuards, OnlyNumbersBeyondInt64) {
  EXPECT_TRUE(isBigIntDecimal("9223372036854775808"));
  EXPECT_FALSE(isBigIntDecimal("9223372036854775807"));
  EXPECT_TRUE(isBigIntDecimal("-9223372036854775809"));
  EXPECT_FALSE(isBigIntDecimal("-9223372036854775808"));
  EXPECT_FALSE(isBigIntDecimal("09223372036854775808"));
  EXPECT_FALSE(isBigIntDecimal("-"));
  EXPECT_FALSE(isBigIntDecimal("12a"));
  EXPECT_EQ(canonicalDecimal("000", true), "0");
  EXPECT_EQ(canonicalDecimal("0012", true), "-12");
  EXPECT_EQ(canonicalDecimal("1x", false), std::nullopt);
}

TEST(IrBigIntGuards, PrintedAsAnInt) {
  Guard guard =
      equalsBigInt(Source::attr(Source::global("KEY"), "int"), "-1267650600228229401496703205376");
  ASSERT_TRUE(bigIntOf(guard));
  std::string text;
  llvm::raw_string_ostream os(text);
  guard.print(os);
  EXPECT_EQ(text, "equals G['KEY'].int : -1267650600228229401496703205376");
  EXPECT_FALSE(bigIntOf(Guard::equals(Source::global("S"), Argument::string("12"))));
}

} // namespace
