//===- KernelCodegenTest.cpp - Generated kernels against eager ATen -------===//
//
// Each kernel is parsed from its text form, emitted by emitKernel, optimized
// with the O3 pipeline for the host (so the vectorized loops are what runs),
// JIT-compiled, and called on real tensors. The same nodes run eagerly
// through torch's dispatcher give the expected values; results must be
// close as torch.testing.assert_close's defaults say (float32: rtol 1.3e-6,
// atol 1e-5; float64: rtol 1e-7, atol 1e-7; bfloat16: rtol 1.6e-2, atol
// 1e-5; float16: rtol 1e-3, atol 1e-5; others exact).
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelCodegen.h"
#include "EagerReference.h"
#include "codegen/ElementLowering.h"
#include "ir/OpTraits.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "ir/kernel/ElementOps.h"
#include "runtime/shim/ShimInternal.h"
#include "runtime/shim/dync_shim.h"

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <gtest/gtest.h>

#include <iostream>

using namespace dync;

namespace {

using KernelFn = void (*)(char* const*, const int64_t*, int64_t, int64_t);

std::vector<int64_t> evaluate(llvm::ArrayRef<ir::SymExpr> exprs, const ir::SymbolValues& symbols) {
  std::vector<int64_t> values;
  for (ir::SymExpr e : exprs)
    values.push_back(llvm::cantFail(e.evaluate(symbols)));
  return values;
}

/// Runs a kernel's nodes one by one through torch's dispatcher.
std::vector<at::Tensor> runEagerly(const ir::Graph& kernel, const std::vector<at::Tensor>& inputs,
                                   const ir::SymbolValues& symbols) {
  return test::EagerInterpreter(kernel, symbols).run(inputs);
}

/// torch.testing.assert_close's default tolerances: {rtol, atol}.
std::optional<std::pair<double, double>> tolerances(at::ScalarType type) {
  switch (type) {
  case at::kFloat:
    return std::pair{1.3e-6, 1e-5};
  case at::kDouble:
    return std::pair{1e-7, 1e-7};
  case at::kBFloat16:
    return std::pair{1.6e-2, 1e-5};
  case at::kHalf:
    return std::pair{1e-3, 1e-5};
  default:
    return std::nullopt;
  }
}

void expectClose(const at::Tensor& actual, const at::Tensor& expected, const std::string& what) {
  ASSERT_EQ(actual.scalar_type(), expected.scalar_type()) << what;
  ASSERT_EQ(actual.sizes(), expected.sizes()) << what;
  if (auto tol = tolerances(actual.scalar_type())) {
    // Compared in double: bf16 and f16 arithmetic would round the test's
    // own differences.
    at::Tensor a = actual.to(at::kDouble), e = expected.to(at::kDouble);
    at::Tensor far = at::isclose(a, e, tol->first, tol->second, /*equal_nan=*/true).logical_not();
    if (far.any().item<bool>()) {
      int64_t i = far.flatten().nonzero()[0][0].item<int64_t>();
      ADD_FAILURE() << what << ": " << far.sum().item<int64_t>() << " elements differ, first "
                    << a.flatten()[i].item<double>() << " (expected "
                    << e.flatten()[i].item<double>() << ") at flat index " << i;
    }
  } else {
    EXPECT_TRUE(at::equal(actual, expected)) << what;
  }
}

class KernelCodegenTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  }

  /// Parses \p text (one kernel) and JIT-compiles it.
  const ir::Graph& compile(llvm::StringRef text) {
    sm_ = std::make_unique<llvm::SourceMgr>();
    sm_->AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "kernel.dync"),
                            llvm::SMLoc());
    module_ = llvm::cantFail(ir::parseModule(*sm_, ctx_));
    llvm::cantFail(ir::verify(*module_, sm_.get()));
    const ir::Graph& kernel = *module_->kernels().front();
    fn_ = jit(kernel);
    return kernel;
  }

  KernelFn jit(const ir::Graph& kernel) {
    auto tsc = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>("kernel", *tsc);
    std::string symbol = codegen::kernelSymbol(kernel);
    auto jtmb = llvm::cantFail(llvm::orc::JITTargetMachineBuilder::detectHost());
    auto tm = llvm::cantFail(jtmb.createTargetMachine());
    llvm::cantFail(
        codegen::emitKernel(*module, kernel, symbol, isa_.value_or(codegen::vectorIsaOf(*tm))));
    EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));
    module->setDataLayout(tm->createDataLayout());
    module->setTargetTriple(tm->getTargetTriple().str());
    codegen::optimizeKernelModule(*module, *tm);
    jit_ = llvm::cantFail(llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(jtmb).create());
    llvm::cantFail(
        jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(tsc))));
    return llvm::cantFail(jit_->lookup(symbol)).toPtr<KernelFn>();
  }

  /// Runs the compiled kernel on \p inputs, the outer loop split into
  /// \p slices calls as threads would, and compares with eager ATen.
  void check(const ir::Graph& kernel, const std::vector<at::Tensor>& inputs,
             const ir::SymbolValues& symbols, int slices = 1) {
    std::vector<at::Tensor> expected = runEagerly(kernel, inputs, symbols);
    std::vector<char*> buffers;
    for (const at::Tensor& t : inputs)
      buffers.push_back(static_cast<char*>(t.data_ptr()));
    std::vector<at::Tensor> outputs;
    const ir::Node* output = kernel.output();
    output->returnValue().forEachValue([&](const ir::ValueRef& ref) {
      const ir::Type& type = ref.node->type();
      outputs.push_back(
          at::empty_strided(evaluate(type.sizes(), symbols), evaluate(type.strides(), symbols),
                            at::TensorOptions().dtype(test::scalarType(type.dtype()))));
      buffers.push_back(static_cast<char*>(outputs.back().data_ptr()));
    });
    std::vector<int64_t> symbolValues;
    for (const ir::SymbolDecl& decl : kernel.symbols())
      symbolValues.push_back(symbols.lookup(decl.name));
    int64_t extent = llvm::cantFail(codegen::kernelParallelExtent(kernel).evaluate(symbols));
    for (int s = 0; s < slices; ++s)
      fn_(buffers.data(), symbolValues.data(), extent * s / slices, extent * (s + 1) / slices);
    ASSERT_EQ(outputs.size(), expected.size());
    for (size_t i = 0; i < outputs.size(); ++i)
      expectClose(outputs[i], expected[i], "output " + std::to_string(i));
  }

  ir::Context ctx_;
  std::unique_ptr<llvm::SourceMgr> sm_;
  std::unique_ptr<ir::Module> module_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  KernelFn fn_ = nullptr;
  /// The ISA kernels are emitted for; unset, the host's.
  std::optional<codegen::VectorIsa> isa_;

  /// Every ISA this machine can run kernels of: Generic, and AVX-512 where
  /// the host has it.
  static std::vector<codegen::VectorIsa> runnableIsas() {
    auto jtmb = llvm::cantFail(llvm::orc::JITTargetMachineBuilder::detectHost());
    auto tm = llvm::cantFail(jtmb.createTargetMachine());
    std::vector<codegen::VectorIsa> isas{codegen::VectorIsa::Generic};
    if (codegen::vectorIsaOf(*tm) != codegen::VectorIsa::Generic)
      isas.push_back(codegen::vectorIsaOf(*tm));
    return isas;
  }
  static const char* isaName(codegen::VectorIsa isa) {
    return isa == codegen::VectorIsa::Generic ? "generic" : "avx512";
  }
};

TEST_F(KernelCodegenTest, BroadcastAddRelu) {
  const ir::Graph& k = compile(R"(
kernel @k0(%a: tensor<f32, [s0, 67]>, %b: tensor<f32, [67]>)
    symbols { s0: [0, 1024] } {
  %0 = aten::add.Tensor(%a, %b) : tensor<f32, [s0, 67]>
  %1 = aten::relu.default(%0) : tensor<f32, [s0, 67]>
  return %1
}
)");
  for (int64_t n : {37, 1, 0})
    check(k, {at::randn({n, 67}), at::randn({67})}, {{"s0", n}}, 3);
}

TEST_F(KernelCodegenTest, StridedAndScalarOperands) {
  // %a is a transposed view; alpha, a wrapped number and a symbolic int.
  const ir::Graph& k = compile(R"(
kernel @k0(%a: tensor<f32, [s0, 5], [1, s0]>, %b: tensor<f32, [s0, 1]>)
    symbols { s0: [1, 1024] } {
  %0 = aten::sub.Tensor(%a, %b, alpha=2) : tensor<f32, [s0, 5]>
  %1 = aten::mul.Tensor(%0, 0.25) : tensor<f32, [s0, 5]>
  %2 = aten::add.Scalar(%1, s0) : tensor<f32, [s0, 5]>
  return (%2, %0)
}
)");
  at::Tensor a = at::randn({5, 19}).t();
  check(k, {a, at::randn({19, 1})}, {{"s0", 19}}, 2);
}

TEST_F(KernelCodegenTest, Transcendental) {
  const ir::Graph& k = compile(R"(
kernel @k0(%x: tensor<f32, [s0]>, %p: tensor<f32, [s0]>)
    symbols { s0: [1, 100000] } {
  %0 = aten::exp.default(%x) : tensor<f32, [s0]>
  %1 = aten::log.default(%p) : tensor<f32, [s0]>
  %2 = aten::tanh.default(%x) : tensor<f32, [s0]>
  %3 = aten::sigmoid.default(%x) : tensor<f32, [s0]>
  %4 = aten::erf.default(%x) : tensor<f32, [s0]>
  %5 = aten::gelu.default(%x) : tensor<f32, [s0]>
  %6 = aten::gelu.default(%x, approximate="tanh") : tensor<f32, [s0]>
  %7 = aten::rsqrt.default(%p) : tensor<f32, [s0]>
  return (%0, %1, %2, %3, %4, %5, %6, %7)
}
)");
  int64_t n = 10007;
  at::Tensor x = at::randn({n}) * 8;
  x[0] = 0.0;
  x[1] = -1e-3;
  x[2] = 1e-30;
  x[3] = 100.0;
  x[4] = -100.0;
  x[5] = std::numeric_limits<float>::quiet_NaN();
  at::Tensor p = at::rand({n}) * 100;
  p[0] = 0.0;
  p[1] = 1e-40; // subnormal
  p[2] = -1.0;
  p[3] = std::numeric_limits<float>::infinity();
  check(k, {x, p}, {{"s0", n}}, 4);
}

TEST_F(KernelCodegenTest, SigmoidAndTanhAtTheEnds) {
  // Their divisions may use a reciprocal estimate that must never see an
  // infinity: sigmoid divides by 1 + e^-|x|, tanh by -2 - expm1(-2x). For
  // each ISA.
  for (codegen::VectorIsa isa : runnableIsas()) {
    isa_ = isa;
    const ir::Graph& k = compile(R"(
kernel @k0(%x: tensor<f32, [s0]>) symbols { s0: [1, 100000] } {
  %0 = aten::sigmoid.default(%x) : tensor<f32, [s0]>
  %1 = aten::tanh.default(%x) : tensor<f32, [s0]>
  return (%0, %1)
}
)");
    float inf = std::numeric_limits<float>::infinity();
    std::vector<float> ends = {inf,     -inf,   std::numeric_limits<float>::quiet_NaN(),
                               88.8f,   -88.8f, 104.0f,
                               -104.0f, 3e38f,  -3e38f,
                               0.0f,    -0.0f,  std::numeric_limits<float>::denorm_min()};
    // Enough elements for the vector loop as well as the scalar remainder.
    int64_t n = 2 * int64_t(ends.size()) * 16 + 5;
    at::Tensor x = at::empty({n});
    for (int64_t i = 0; i < n; ++i)
      x[i] = ends[size_t(i) % ends.size()];
    check(k, {x}, {{"s0", n}}, 1);
    // tanh of a zero is that zero, sign included, as eager's: the closeness
    // check above does not see the sign.
    at::Tensor sigmoid = at::empty({n}), tanh = at::empty({n});
    std::vector<char*> buffers{static_cast<char*>(x.data_ptr()),
                               static_cast<char*>(sigmoid.data_ptr()),
                               static_cast<char*>(tanh.data_ptr())};
    fn_(buffers.data(), &n, 0, n);
    at::Tensor zeros = x == 0;
    ASSERT_GT(zeros.sum().item<int64_t>(), 2);
    EXPECT_TRUE(at::equal(at::signbit(tanh.masked_select(zeros)),
                          at::signbit(at::tanh(x).masked_select(zeros))))
        << isaName(isa);
  }
}

/// The largest distance in units in the last place between two float
/// tensors, over the elements where \p expected is a normal number.
int64_t maxUlpDistance(const at::Tensor& actual, const at::Tensor& expected) {
  // Float bit patterns as sign-magnitude integers, made monotonic.
  auto ordered = [](const at::Tensor& t) {
    at::Tensor bits = t.contiguous().view(at::kInt).to(at::kLong);
    return at::where(bits < 0, -(bits + (int64_t(1) << 31)), bits);
  };
  at::Tensor normal = expected.abs() >= std::numeric_limits<float>::min();
  normal &= expected.isfinite();
  return (ordered(actual) - ordered(expected)).abs().masked_select(normal).max().item<int64_t>();
}

TEST_F(KernelCodegenTest, FloatMathWithinFewUlps) {
  // f32 exp, log, tanh, sigmoid and erf compute in f32 (KernelMath.cpp);
  // over dense sweeps of their ranges each stays within 4 ulp of the exact
  // result rounded to f32 (computed by ATen in double). GELU follows
  // ATen's f32 formula instead (GeluFollowsEagerFormula). For each ISA:
  // with AVX-512, exp takes 2^(j/16) from a table (VectorIsa.h).
  for (codegen::VectorIsa isa : runnableIsas()) {
    isa_ = isa;
    compile(R"(
kernel @k0(%e: tensor<f32, [s0]>, %l: tensor<f32, [s0]>, %t: tensor<f32, [s0]>,
           %s: tensor<f32, [s0]>, %r: tensor<f32, [s0]>)
    symbols { s0: [1, 1000000] } {
  %0 = aten::exp.default(%e) : tensor<f32, [s0]>
  %1 = aten::log.default(%l) : tensor<f32, [s0]>
  %2 = aten::tanh.default(%t) : tensor<f32, [s0]>
  %3 = aten::sigmoid.default(%s) : tensor<f32, [s0]>
  %4 = aten::erf.default(%r) : tensor<f32, [s0]>
  return (%0, %1, %2, %3, %4)
}
)");
    int64_t n = 400009;
    at::Tensor e = at::linspace(-103.0, 88.7, n);
    at::Tensor l = at::exp(at::linspace(-103.0, 88.7, n, at::kDouble)).to(at::kFloat);
    at::Tensor t = at::linspace(-9.0, 9.0, n);
    at::Tensor s = at::linspace(-80.0, 30.0, n);
    at::Tensor r = at::linspace(-4.5, 4.5, n);
    const at::Tensor* inputs[] = {&e, &l, &t, &s, &r};
    std::vector<at::Tensor> outputs;
    std::vector<char*> buffers;
    for (const at::Tensor* input : inputs)
      buffers.push_back(static_cast<char*>(input->data_ptr()));
    for (size_t i = 0; i < std::size(inputs); ++i) {
      outputs.push_back(at::empty({n}));
      buffers.push_back(static_cast<char*>(outputs.back().data_ptr()));
    }
    fn_(buffers.data(), &n, 0, n);
    const char* names[] = {"exp", "log", "tanh", "sigmoid", "erf"};
    int64_t bounds[] = {4, 4, 4, 4, 4};
    at::Tensor (*exact[])(const at::Tensor&) = {at::exp, at::log, at::tanh, at::sigmoid, at::erf};
    for (size_t i = 0; i < std::size(inputs); ++i) {
      int64_t ulps =
          maxUlpDistance(outputs[i], exact[i](inputs[i]->to(at::kDouble)).to(at::kFloat));
      // The figures docs/kernels.md quotes.
      std::cout << isaName(isa) << " " << names[i] << ": at most " << ulps << " ulp\n";
      EXPECT_LE(ulps, bounds[i]) << isaName(isa) << " " << names[i];
    }
  }
}

TEST_F(KernelCodegenTest, GeluFollowsEagerFormula) {
  // Eager's f32 GELU is x / 2 (1 + erf(x / sqrt 2)): far enough left,
  // 1 + erf rounds to 0 and the result is -0.0, which floor(gelu(x) * 2)
  // or a sign test tells from the tiny negative exact value. The kernel
  // gives -0.0 there too (from x = -5.6 on, where its erf is -1; ATen's
  // own erf reaches -1 a little earlier, at -5.51), keeps every result's
  // sign, and stays within erf's ulp, scaled by |x| / 2, of ATen's values.
  for (codegen::VectorIsa isa : runnableIsas()) {
    isa_ = isa;
    compile(R"(
kernel @k0(%g: tensor<f32, [s0]>) symbols { s0: [1, 1000000] } {
  %0 = aten::gelu.default(%g) : tensor<f32, [s0]>
  return %0
}
)");
    int64_t n = 200003;
    at::Tensor g = at::linspace(-13.0, 12.0, n);
    at::Tensor out = at::empty({n});
    char* buffers[] = {static_cast<char*>(g.data_ptr()), static_cast<char*>(out.data_ptr())};
    fn_(buffers, &n, 0, n);
    at::Tensor eager = at::gelu(g);
    at::Tensor left = g <= -5.6;
    EXPECT_TRUE(at::equal(out.masked_select(left), eager.masked_select(left))) << isaName(isa);
    EXPECT_TRUE(at::equal(at::signbit(out), at::signbit(eager))) << isaName(isa);
    at::Tensor bound = 4 * std::ldexp(1.0f, -23) * (g.abs() / 2 + 1);
    EXPECT_TRUE((out - eager).abs().le(bound).all().item<bool>())
        << isaName(isa) << ": " << ((out - eager).abs() - bound).max().item<float>();
  }
}

TEST_F(KernelCodegenTest, BoundedArgumentsTakeShorterPaths) {
  // Arguments whose bounds are known (ValueRange.h) leave out the clamps
  // and the two-step scaling; the results must not change: exp over the
  // whole range where one multiply by 2^k suffices, exp of tanh, tanh
  // short of saturation, sigmoid of bounded values, with NaN and the
  // infinities (which the clamps turn into the bounds) among the inputs.
  for (codegen::VectorIsa isa : runnableIsas()) {
    isa_ = isa;
    const ir::Graph& k = compile(R"(
kernel @k0(%x: tensor<f32, [s0]>) symbols { s0: [1, 1000000] } {
  %0 = aten::clamp.default(%x, -86.0, 88.0) : tensor<f32, [s0]>
  %1 = aten::exp.default(%0) : tensor<f32, [s0]>
  %2 = aten::tanh.default(%x) : tensor<f32, [s0]>
  %3 = aten::exp.default(%2) : tensor<f32, [s0]>
  %4 = aten::clamp.default(%x, -9.5, 9.5) : tensor<f32, [s0]>
  %5 = aten::tanh.default(%4) : tensor<f32, [s0]>
  %6 = aten::clamp.default(%x, -80.0, 80.0) : tensor<f32, [s0]>
  %7 = aten::sigmoid.default(%6) : tensor<f32, [s0]>
  return (%1, %3, %5, %7)
}
)");
    int64_t n = 200003;
    at::Tensor x = at::linspace(-100.0, 100.0, n);
    float inf = std::numeric_limits<float>::infinity();
    x[0] = std::numeric_limits<float>::quiet_NaN();
    x[1] = inf;
    x[2] = -inf;
    x[n - 1] = std::numeric_limits<float>::quiet_NaN();
    check(k, {x}, {{"s0", n}}, 2);
    // And within 2 ulp of the exact values, 3 with exp's table, whose
    // entries are rounded (for exp of tanh, tanh's own error adds to it).
    std::vector<at::Tensor> outputs;
    std::vector<char*> buffers{static_cast<char*>(x.data_ptr())};
    for (int i = 0; i < 4; ++i) {
      outputs.push_back(at::empty({n}));
      buffers.push_back(static_cast<char*>(outputs.back().data_ptr()));
    }
    fn_(buffers.data(), &n, 0, n);
    at::Tensor xd = x.to(at::kDouble);
    at::Tensor exact[] = {at::exp(xd.clamp(-86.0, 88.0)), at::exp(at::tanh(xd)),
                          at::tanh(xd.clamp(-9.5, 9.5)), at::sigmoid(xd.clamp(-80.0, 80.0))};
    int64_t bound = isa == codegen::VectorIsa::Generic ? 2 : 3;
    for (int i = 0; i < 4; ++i)
      EXPECT_LE(maxUlpDistance(outputs[i], exact[i].to(at::kFloat)), bound)
          << isaName(isa) << " output " << i;
  }
}

TEST_F(KernelCodegenTest, SubnormalResultsRoundOnce) {
  // exp and sigmoid of arguments from -103.9 to -87.4 have subnormal
  // results; each is rounded once (two-step scaling or sigmoid's 2^24 on
  // the generic path, scalef with AVX-512), so it lies within an ulp of
  // the exact value, 2^-149, like a normal result. The distance is taken on
  // every element, subnormal or not.
  for (codegen::VectorIsa isa : runnableIsas()) {
    isa_ = isa;
    compile(R"(
kernel @k0(%x: tensor<f32, [s0]>) symbols { s0: [1, 1000000] } {
  %0 = aten::exp.default(%x) : tensor<f32, [s0]>
  %1 = aten::sigmoid.default(%x) : tensor<f32, [s0]>
  return (%0, %1)
}
)");
    int64_t n = 100003;
    at::Tensor x = at::linspace(-103.9, -87.4, n);
    at::Tensor e = at::empty({n}), s = at::empty({n});
    std::vector<char*> buffers{static_cast<char*>(x.data_ptr()), static_cast<char*>(e.data_ptr()),
                               static_cast<char*>(s.data_ptr())};
    fn_(buffers.data(), &n, 0, n);
    at::Tensor xd = x.to(at::kDouble);
    at::Tensor exact[] = {at::exp(xd).to(at::kFloat), at::sigmoid(xd).to(at::kFloat)};
    at::Tensor actual[] = {e, s};
    for (int i = 0; i < 2; ++i) {
      ASSERT_GT((exact[i] < std::numeric_limits<float>::min()).sum().item<int64_t>(), n / 2);
      at::Tensor distance = (actual[i].view(at::kInt) - exact[i].view(at::kInt)).abs();
      EXPECT_LE(distance.max().item<int32_t>(), 1) << isaName(isa) << " output " << i;
    }
  }
}

TEST_F(KernelCodegenTest, TranscendentalDouble) {
  const ir::Graph& k = compile(R"(
kernel @k0(%x: tensor<f64, [s0]>)
    symbols { s0: [1, 100000] } {
  %0 = aten::exp.default(%x) : tensor<f64, [s0]>
  %1 = aten::abs.default(%x) : tensor<f64, [s0]>
  %2 = aten::log.default(%1) : tensor<f64, [s0]>
  %3 = aten::tanh.default(%x) : tensor<f64, [s0]>
  %4 = aten::erf.default(%x) : tensor<f64, [s0]>
  %5 = aten::sigmoid.default(%x) : tensor<f64, [s0]>
  return (%0, %2, %3, %4, %5)
}
)");
  int64_t n = 4099;
  check(k, {at::randn({n}, at::kDouble) * 6}, {{"s0", n}});
}

TEST_F(KernelCodegenTest, Softmax) {
  const ir::Graph& k = compile(R"(
kernel @k0(%x: tensor<f32, [s0, s1]>)
    symbols { s0: [1, 4096], s1: [1, 65536] } {
  %0 = aten::amax.default(%x, [-1], true) : tensor<f32, [s0, 1]>
  %1 = aten::sub.Tensor(%x, %0) : tensor<f32, [s0, s1]>
  %2 = aten::exp.default(%1) : tensor<f32, [s0, s1]>
  %3 = aten::sum.dim_IntList(%2, [-1], true) : tensor<f32, [s0, 1]>
  %4 = aten::div.Tensor(%2, %3) : tensor<f32, [s0, s1]>
  return %4
}
)");
  check(k, {at::randn({13, 1001}) * 5}, {{"s0", 13}, {"s1", 1001}}, 3);
  check(k, {at::randn({2, 30000})}, {{"s0", 2}, {"s1", 30000}}, 2);
}

TEST_F(KernelCodegenTest, StagedValuesReadBack) {
  // exp is computed in the reduction passes and stored in the outputs %6
  // and %5 (staging, KernelCodegen.cpp), which read it back; %2 is an output
  // itself and two reductions read it.
  const ir::Graph& k = compile(R"(
kernel @k0(%x: tensor<f32, [s0, s1]>)
    symbols { s0: [1, 4096], s1: [1, 65536] } {
  %0 = aten::amax.default(%x, [-1], true) : tensor<f32, [s0, 1]>
  %1 = aten::sub.Tensor(%x, %0) : tensor<f32, [s0, s1]>
  %2 = aten::exp.default(%1) : tensor<f32, [s0, s1]>
  %3 = aten::sum.dim_IntList(%2, [-1], true) : tensor<f32, [s0, 1]>
  %4 = aten::amin.default(%2, [-1], true) : tensor<f32, [s0, 1]>
  %5 = aten::div.Tensor(%2, %3) : tensor<f32, [s0, s1]>
  %6 = aten::add.Tensor(%5, %4) : tensor<f32, [s0, s1]>
  return (%6, %2, %5)
}
)");
  check(k, {at::randn({7, 333}) * 3}, {{"s0", 7}, {"s1", 333}}, 2);
  check(k, {at::randn({1, 1})}, {{"s0", 1}, {"s1", 1}});
}

TEST_F(KernelCodegenTest, ReductionsOverOuterDims) {
  // Reducing dimension 0 (strided inner loop), mean, amin without keepdim
  // and a pointwise consumer of the reduced values.
  const ir::Graph& k = compile(R"(
kernel @k0(%x: tensor<f32, [s0, 7, 3]>, %b: tensor<f32, [3]>)
    symbols { s0: [1, 4096] } {
  %0 = aten::sum.dim_IntList(%x, [0, 1]) : tensor<f32, [3]>
  %1 = aten::mean.dim(%x, [0, 1], true) : tensor<f32, [1, 1, 3]>
  %2 = aten::amin.default(%x, [0, 1]) : tensor<f32, [3]>
  %3 = aten::add.Tensor(%0, %b) : tensor<f32, [3]>
  return (%3, %1, %2)
}
)");
  // Positive values: a float32 sum of thousands of terms near zero differs
  // from the exact sum by more than atol in eager ATen itself.
  check(k, {at::rand({1000, 7, 3}) + 0.5, at::randn({3})}, {{"s0", 1000}}, 2);
}

TEST_F(KernelCodegenTest, IntegerSumAndFullReduction) {
  const ir::Graph& k = compile(R"(
kernel @k0(%x: tensor<i32, [s0, 5]>)
    symbols { s0: [0, 4096] } {
  %0 = aten::sum.dim_IntList(%x, none) : tensor<i64, []>
  %1 = aten::amax.default(%x) : tensor<i32, []>
  return (%0, %1)
}
)");
  check(k, {at::randint(-1000, 1000, {333, 5}, at::kInt)}, {{"s0", 333}});
}

TEST_F(KernelCodegenTest, ComparisonsWhereAndBool) {
  const ir::Graph& k = compile(R"(
kernel @k0(%x: tensor<f32, [s0]>, %y: tensor<f32, [s0]>, %i: tensor<i64, [s0]>)
    symbols { s0: [1, 4096] } {
  %0 = aten::gt.Tensor(%x, %y) : tensor<bool, [s0]>
  %1 = aten::le.Scalar(%i, 3) : tensor<bool, [s0]>
  %2 = aten::logical_and.default(%0, %1) : tensor<bool, [s0]>
  %3 = aten::where.self(%2, %x, 0.5) : tensor<f32, [s0]>
  %4 = aten::_to_copy.default(%i, dtype=f32) : tensor<f32, [s0]>
  %5 = aten::clamp.default(%4, -2, 5.5) : tensor<f32, [s0]>
  %6 = aten::maximum.default(%x, %y) : tensor<f32, [s0]>
  %7 = aten::_to_copy.default(%y, dtype=i32) : tensor<i32, [s0]>
  %8 = aten::ne.Scalar(%x, 0.0) : tensor<bool, [s0]>
  return (%2, %3, %5, %6, %7, %8)
}
)");
  int64_t n = 1027;
  at::Tensor x = at::randn({n}) * 10;
  x[7] = std::numeric_limits<float>::quiet_NaN();
  // %y (no NaN) is cast to int: NaN to int is undefined in torch.
  check(k, {x, at::randn({n}) * 100, at::randint(-10, 10, {n}, at::kLong)}, {{"s0", n}});
}

/// \p text with every `DT` replaced by \p dtype.
std::string withDType(llvm::StringRef text, llvm::StringRef dtype) {
  std::string out = text.str();
  for (size_t at = out.find("DT"); at != std::string::npos; at = out.find("DT", at))
    out.replace(at, 2, dtype.str());
  return out;
}

/// bf16 and f16 kernels compute each node in f32 and round, as eager does;
/// numbers with add and sub round to the dtype first, with mul and div not.
/// The same chain in f32 runs first, as a reference.
TEST_F(KernelCodegenTest, ReducedFloatPointwise) {
  for (auto [dtype, type] : {std::pair{"f32", at::kFloat}, std::pair{"bf16", at::kBFloat16},
                             std::pair{"f16", at::kHalf}}) {
    SCOPED_TRACE(dtype);
    const ir::Graph& k = compile(withDType(R"(
kernel @k0(%x: tensor<DT, [s0, 37]>, %y: tensor<DT, [37]>, %i: tensor<i64, [s0, 1]>)
    symbols { s0: [1, 4096] } {
  %0 = aten::add.Tensor(%x, %y, alpha=2) : tensor<DT, [s0, 37]>
  %1 = aten::mul.Tensor(%0, 0.1) : tensor<DT, [s0, 37]>
  %2 = aten::sub.Tensor(%1, 0.7) : tensor<DT, [s0, 37]>
  %3 = aten::div.Tensor(%2, %y) : tensor<DT, [s0, 37]>
  %4 = aten::gelu.default(%3) : tensor<DT, [s0, 37]>
  %5 = aten::gelu.default(%x, approximate="tanh") : tensor<DT, [s0, 37]>
  %6 = aten::tanh.default(%4) : tensor<DT, [s0, 37]>
  %7 = aten::sigmoid.default(%x) : tensor<DT, [s0, 37]>
  %8 = aten::exp.default(%x) : tensor<DT, [s0, 37]>
  %9 = aten::abs.default(%x) : tensor<DT, [s0, 37]>
  %10 = aten::rsqrt.default(%9) : tensor<DT, [s0, 37]>
  %11 = aten::gt.Scalar(%x, 0.1) : tensor<bool, [s0, 37]>
  %12 = aten::where.self(%11, %x, 0.3) : tensor<DT, [s0, 37]>
  %13 = aten::add.Tensor(%12, %i) : tensor<DT, [s0, 37]>
  %14 = aten::_to_copy.default(%13, dtype=f32) : tensor<f32, [s0, 37]>
  %15 = aten::_to_copy.default(%14, dtype=DT) : tensor<DT, [s0, 37]>
  %16 = aten::clamp.default(%x, -0.5, 0.25) : tensor<DT, [s0, 37]>
  %17 = aten::div.Tensor(%x, 3) : tensor<DT, [s0, 37]>
  return (%0, %1, %2, %3, %4, %5, %6, %7, %10, %11, %12, %13, %15, %16, %17)
}
)",
                                           dtype));
    at::Tensor x = (at::randn({29, 37}) * 3).to(type);
    x[2][5] = std::numeric_limits<float>::quiet_NaN();
    at::Tensor y = (at::rand({37}) + 0.5).to(type);
    check(k, {x, y, at::randint(-300, 300, {29, 1}, at::kLong)}, {{"s0", 29}}, 2);
  }
}

/// Reductions over bf16 and f16: torch's softmax decomposition (to f32 and
/// back), a softmax in the dtype itself, and a layer norm's statistics.
TEST_F(KernelCodegenTest, ReducedFloatReductions) {
  for (auto [dtype, type] : {std::pair{"bf16", at::kBFloat16}, std::pair{"f16", at::kHalf}}) {
    SCOPED_TRACE(dtype);
    const ir::Graph& k = compile(withDType(R"(
kernel @k0(%x: tensor<DT, [s0, s1]>)
    symbols { s0: [1, 4096], s1: [1, 65536] } {
  %0 = aten::_to_copy.default(%x, dtype=f32) : tensor<f32, [s0, s1]>
  %1 = aten::amax.default(%0, [-1], true) : tensor<f32, [s0, 1]>
  %2 = aten::sub.Tensor(%0, %1) : tensor<f32, [s0, s1]>
  %3 = aten::exp.default(%2) : tensor<f32, [s0, s1]>
  %4 = aten::sum.dim_IntList(%3, [-1], true) : tensor<f32, [s0, 1]>
  %5 = aten::div.Tensor(%3, %4) : tensor<f32, [s0, s1]>
  %6 = aten::_to_copy.default(%5, dtype=DT) : tensor<DT, [s0, s1]>
  %7 = aten::amax.default(%x, [-1], true) : tensor<DT, [s0, 1]>
  %8 = aten::sub.Tensor(%x, %7) : tensor<DT, [s0, s1]>
  %9 = aten::exp.default(%8) : tensor<DT, [s0, s1]>
  %10 = aten::sum.dim_IntList(%9, [-1], true) : tensor<DT, [s0, 1]>
  %11 = aten::div.Tensor(%9, %10) : tensor<DT, [s0, s1]>
  %12 = aten::mean.dim(%x, [-1], true) : tensor<DT, [s0, 1]>
  %13 = aten::sum.dim_IntList(%x, [-1], false, dtype=f32) : tensor<f32, [s0]>
  return (%6, %11, %12, %13)
}
)",
                                           dtype));
    check(k, {(at::randn({13, 1001}) * 4).to(type)}, {{"s0", 13}, {"s1", 1001}}, 3);
    check(k, {at::randn({3, 7}).to(type)}, {{"s0", 3}, {"s1", 7}});
  }
}

/// Runs the compiled one-input kernel \p fn on \p input into a new tensor
/// of \p type.
at::Tensor runConversion(KernelFn fn, const at::Tensor& input, at::ScalarType type) {
  at::Tensor out = at::empty(input.sizes(), at::TensorOptions().dtype(type));
  std::vector<char*> buffers = {static_cast<char*>(input.data_ptr()),
                                static_cast<char*>(out.data_ptr())};
  int64_t n = input.numel();
  fn(buffers.data(), &n, 0, n);
  return out;
}

/// Equal bit for bit where \p expected is a number; NaN where it is NaN
/// (ATen's scalar and vector conversions differ in a NaN's payload).
void expectSameBits(const at::Tensor& actual, const at::Tensor& expected, const std::string& what) {
  at::Tensor nan = expected.isnan();
  EXPECT_TRUE(at::equal(actual.isnan(), nan)) << what << ": NaN positions differ";
  at::ScalarType bits = actual.element_size() == 2 ? at::kShort : at::kInt;
  at::Tensor a = actual.view(bits).masked_fill(nan, 0), e = expected.view(bits).masked_fill(nan, 0);
  at::Tensor differ = a.ne(e);
  EXPECT_FALSE(differ.any().item<bool>())
      << what << ": " << differ.sum().item<int64_t>() << " values differ, first at "
      << differ.nonzero()[0][0].item<int64_t>();
}

/// Every bf16 and f16 bit pattern widened to f32, and f32 values around
/// each of them (ties, just above and below, random bit patterns) rounded
/// back, against ATen's `.to()`.
TEST_F(KernelCodegenTest, ReducedFloatConversionsExhaustive) {
  for (auto [dtype, type] : {std::pair{"bf16", at::kBFloat16}, std::pair{"f16", at::kHalf}}) {
    SCOPED_TRACE(dtype);
    at::Tensor all = at::arange(0, 65536, at::kInt).to(at::kShort).view(type);
    compile(withDType(R"(
kernel @k0(%x: tensor<DT, [s0]>) symbols { s0: [1, 1000000000] } {
  %0 = aten::_to_copy.default(%x, dtype=f32) : tensor<f32, [s0]>
  return %0
}
)",
                      dtype));
    at::Tensor wide = runConversion(fn_, all, at::kFloat);
    expectSameBits(wide, all.to(at::kFloat), "widened");

    compile(withDType(R"(
kernel @k0(%x: tensor<f32, [s0]>) symbols { s0: [1, 1000000000] } {
  %0 = aten::_to_copy.default(%x, dtype=DT) : tensor<DT, [s0]>
  return %0
}
)",
                      dtype));
    // Offsets in f32 bits from each exact value: half an ulp of the narrow
    // type (a tie) and its neighbours, for normals of either type.
    int32_t halfUlp = type == at::kBFloat16 ? 0x8000 : 0x1000;
    at::Tensor base = all.to(at::kFloat).view(at::kInt);
    std::vector<at::Tensor> parts = {base};
    for (int32_t offset : {1, halfUlp - 1, halfUlp, halfUlp + 1, 2 * halfUlp - 1})
      parts.push_back(base + offset);
    parts.push_back(at::randint(std::numeric_limits<int32_t>::min(),
                                std::numeric_limits<int32_t>::max(), {1 << 20}, at::kInt));
    // f16 subnormals and the overflow threshold in f32 steps.
    parts.push_back(at::arange(0, 0x38800000 + 4096, 997, at::kInt));
    parts.push_back(at::arange(0x477fe000, 0x47800100, 1, at::kInt));
    at::Tensor inputs = at::cat(parts).view(at::kFloat);
    expectSameBits(runConversion(fn_, inputs, type), inputs.to(type), "rounded");
  }
}

/// The O3-optimized module of a bf16/f16 kernel calls nothing: conversions
/// are integer operations, never `half` (whose conversions become library
/// calls on CPUs without F16C).
TEST_F(KernelCodegenTest, ReducedFloatKernelsCallNothing) {
  sm_ = std::make_unique<llvm::SourceMgr>();
  sm_->AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(R"(
kernel @k0(%x: tensor<f16, [s0]>, %y: tensor<bf16, [s0]>) symbols { s0: [1, 4096] } {
  %0 = aten::_to_copy.default(%x, dtype=bf16) : tensor<bf16, [s0]>
  %1 = aten::mul.Tensor(%0, %y) : tensor<bf16, [s0]>
  %2 = aten::_to_copy.default(%1, dtype=f16) : tensor<f16, [s0]>
  %3 = aten::exp.default(%2) : tensor<f16, [s0]>
  return %3
}
)",
                                                               "kernel.dync"),
                          llvm::SMLoc());
  module_ = llvm::cantFail(ir::parseModule(*sm_, ctx_));
  const ir::Graph& kernel = *module_->kernels().front();
  llvm::LLVMContext context;
  llvm::Module module("kernel", context);
  llvm::cantFail(codegen::emitKernel(module, kernel, codegen::kernelSymbol(kernel)));
  // A baseline x86-64 (no F16C) where the host is x86, else the host.
  auto jtmb = llvm::cantFail(llvm::orc::JITTargetMachineBuilder::detectHost());
  if (jtmb.getTargetTriple().isX86()) {
    jtmb.setCPU("x86-64");
    jtmb.getFeatures() = llvm::SubtargetFeatures();
  }
  auto tm = llvm::cantFail(jtmb.createTargetMachine());
  module.setDataLayout(tm->createDataLayout());
  module.setTargetTriple(tm->getTargetTriple().str());
  codegen::optimizeKernelModule(module, *tm);
  for (const llvm::Function& fn : module.functions())
    EXPECT_TRUE(!fn.isDeclaration() || fn.isIntrinsic()) << fn.getName().str();
  for (const llvm::Function& fn : module.functions())
    for (const llvm::BasicBlock& block : fn)
      for (const llvm::Instruction& inst : block) {
        EXPECT_FALSE(inst.getType()->getScalarType()->isHalfTy()) << "half in the kernel";
        if (auto* call = llvm::dyn_cast<llvm::CallBase>(&inst)) {
          EXPECT_TRUE(call->getCalledFunction() && call->getCalledFunction()->isIntrinsic());
        }
      }
}

/// The way a graph function calls a kernel: outputs from the shim's
/// empty_strided, slices from the shim's parallel_for on torch's pool.
TEST_F(KernelCodegenTest, ThroughShimParallelFor) {
  const ir::Graph& k = compile(R"(
kernel @k0(%x: tensor<f32, [s0, s1]>)
    symbols { s0: [1, 100000], s1: [1, 100000] } {
  %0 = aten::sum.dim_IntList(%x, [1], true) : tensor<f32, [s0, 1]>
  %1 = aten::div.Tensor(%x, %0) : tensor<f32, [s0, s1]>
  return %1
}
)");
  at::Tensor x = at::rand({4099, 33}) + 0.1;
  ir::SymbolValues symbols{{"s0", 4099}, {"s1", 33}};
  const ir::Type& type = k.output()->returnValue().valueRef().node->type();
  std::vector<int64_t> sizes = evaluate(type.sizes(), symbols);
  std::vector<int64_t> strides = evaluate(type.strides(), symbols);
  dync_tensor* out = nullptr;
  ASSERT_EQ(dync_tensor_empty_strided(sizes.data(), strides.data(), sizes.size(),
                                      DYNC_DTYPE_FLOAT32, &out),
            DYNC_OK);
  std::vector<char*> buffers{static_cast<char*>(x.data_ptr()),
                             static_cast<char*>(dync_tensor_data_ptr(out))};
  std::vector<int64_t> symbolValues{4099, 33};
  struct Call {
    KernelFn fn;
    char* const* buffers;
    const int64_t* symbols;
  } call{fn_, buffers.data(), symbolValues.data()};
  auto slice = [](void* ctx, int64_t begin, int64_t end) {
    auto* c = static_cast<Call*>(ctx);
    c->fn(c->buffers, c->symbols, begin, end);
  };
  int64_t extent = llvm::cantFail(codegen::kernelParallelExtent(k).evaluate(symbols));
  ASSERT_EQ(extent, 4099);
  ASSERT_EQ(dync_parallel_for(0, extent, 64, slice, &call), DYNC_OK);
  expectClose(shim::toTensor(out), runEagerly(k, {x}, symbols)[0], "output");
  dync_tensor_release(out);
}

TEST_F(KernelCodegenTest, UnsupportedNodeIsAnError) {
  sm_ = std::make_unique<llvm::SourceMgr>();
  sm_->AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(R"(
kernel @k0(%a: tensor<f32, [8]>, %b: tensor<f32, [8]>)
    symbols {} {
  %0 = aten::div.Tensor_mode(%a, %b, rounding_mode="floor") : tensor<f32, [8]>
  return %0
}
)",
                                                               "kernel.dync"),
                          llvm::SMLoc());
  module_ = llvm::cantFail(ir::parseModule(*sm_, ctx_));
  const ir::Graph& kernel = *module_->kernels().front();
  llvm::LLVMContext context;
  llvm::Module module("kernel", context);
  llvm::Error err = codegen::emitKernel(module, kernel, "k");
  ASSERT_TRUE(bool(err));
  EXPECT_EQ(llvm::toString(std::move(err)),
            "kernel @k0: %0 = aten::div.Tensor_mode: rounding_mode 'floor' is not lowered");
  EXPECT_EQ(ir::kernelOpClass(*std::next(kernel.nodes().begin(), 2)), ir::KernelOpClass::None);
}

TEST_F(KernelCodegenTest, SymbolIgnoresName) {
  const char* text = R"(
kernel @NAME(%a: tensor<f32, [4]>)
    symbols {} {
  %0 = aten::neg.default(%a) : tensor<f32, [4]>
  return %0
}
)";
  std::string one = llvm::StringRef(text).str(), two = one;
  two.replace(two.find("NAME"), 4, "k7");
  one.replace(one.find("NAME"), 4, "k0");
  std::string symbols[2];
  for (int i = 0; i < 2; ++i) {
    compile(i ? two : one);
    symbols[i] = codegen::kernelSymbol(*module_->kernels().front());
  }
  EXPECT_EQ(symbols[0], symbols[1]);
  EXPECT_TRUE(llvm::StringRef(symbols[0]).starts_with("dync_kernel_"));
}

/// Every overload the table accepts carries torch's pointwise or reduction
/// tag (_to_copy, a dtype conversion here, is the one untagged row), and
/// every element op has a lowering for some dtype.
TEST(KernelOpTable, TagsAndLowerings) {
  for (llvm::StringRef overload : ir::kernelOverloads()) {
    const ir::OpTraits* traits = ir::findOpTraits(overload);
    ASSERT_NE(traits, nullptr) << overload.str();
    if (overload == "aten::_to_copy.default")
      continue;
    EXPECT_TRUE(traits->pointwise || traits->reduction) << overload.str();
  }
  llvm::LLVMContext context;
  llvm::Module module("lowerings", context);
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(context), false),
                                    llvm::Function::ExternalLinkage, "f", module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", fn));
  for (int op = 0; op <= static_cast<int>(ir::ElementOp::Amin); ++op) {
    auto element = static_cast<ir::ElementOp>(op);
    if (ir::isReduction(element))
      continue;
    bool lowered = false;
    for (ir::DType dtype : {ir::DType::F32, ir::DType::F64, ir::DType::BF16, ir::DType::F16,
                            ir::DType::I64, ir::DType::Bool}) {
      codegen::TypedValue v{llvm::UndefValue::get(codegen::computeType(context, dtype)), dtype};
      ir::DType result =
          ir::isComparison(element) || ir::isLogical(element) ? ir::DType::Bool : dtype;
      llvm::Expected<codegen::TypedValue> out =
          codegen::lowerElement(b, element, {v, v, v}, result);
      if (out)
        lowered = true;
      else
        llvm::consumeError(out.takeError());
    }
    EXPECT_TRUE(lowered) << ir::spelling(element).str();
  }
}

/// Samples of a range: both ends and points between them, infinite ends
/// replaced by large finite values.
std::vector<float> samples(codegen::ValueRange r) {
  double lo = std::max(r.lo, -3e38), hi = std::min(r.hi, 3e38);
  std::vector<float> points{float(lo), float(hi)};
  for (int i = 1; i < 64; ++i)
    points.push_back(float(lo + (hi - lo) * i / 64));
  return points;
}

TEST(ValueRange, BoundsHoldForF32Results) {
  // Each rule's bounds hold for f32 computations of the operation on values
  // within the operands' bounds (computed with the C library here, not by
  // the kernel's own functions, whose error the margin also covers).
  using Op = ir::ElementOp;
  using R = codegen::ValueRange;
  double inf = std::numeric_limits<double>::infinity();
  std::vector<R> ranges = {R{-1, 1},   R{0, 5},   R{-7.5, -0.25}, R{-100, 100},
                           R{-inf, 0}, R{2, inf}, R::point(3),    R::all()};
  auto unary = [](Op op, float x) -> float {
    switch (op) {
    case Op::Neg:
      return -x;
    case Op::Abs:
      return std::fabs(x);
    case Op::Square:
      return x * x;
    case Op::Relu:
      return x < 0 ? 0.0f : x;
    case Op::Exp:
      return std::exp(x);
    case Op::Sigmoid:
      return x < 0 ? std::exp(x) / (1.0f + std::exp(x)) : 1.0f / (1.0f + std::exp(-x));
    case Op::Tanh:
      return std::tanh(x);
    case Op::Erf:
      return std::erf(x);
    case Op::Sqrt:
      return std::sqrt(x);
    default:
      return std::numeric_limits<float>::quiet_NaN();
    }
  };
  auto binary = [](Op op, float x, float y) -> float {
    switch (op) {
    case Op::Add:
      return x + y;
    case Op::Sub:
      return x - y;
    case Op::Mul:
      return x * y;
    case Op::Div:
      return x / y;
    case Op::Maximum:
      return std::max(x, y);
    case Op::Minimum:
      return std::min(x, y);
    default:
      return std::numeric_limits<float>::quiet_NaN();
    }
  };
  auto holds = [](R r, float v) { return std::isnan(v) || (v >= r.lo && v <= r.hi); };
  for (Op op :
       {Op::Neg, Op::Abs, Op::Square, Op::Relu, Op::Exp, Op::Sigmoid, Op::Tanh, Op::Erf, Op::Sqrt})
    for (R x : ranges) {
      R out = codegen::resultRange(op, {x}, ir::DType::F32);
      for (float v : samples(x))
        EXPECT_TRUE(holds(out, unary(op, v)))
            << ir::spelling(op).str() << "(" << v << ") = " << unary(op, v) << " outside ["
            << out.lo << ", " << out.hi << "]";
    }
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::Div, Op::Maximum, Op::Minimum})
    for (R x : ranges)
      for (R y : ranges) {
        R out = codegen::resultRange(op, {x, y}, ir::DType::F32);
        for (float a : samples(x))
          for (float b : samples(y))
            EXPECT_TRUE(holds(out, binary(op, a, b)))
                << ir::spelling(op).str() << "(" << a << ", " << b << ") = " << binary(op, a, b)
                << " outside [" << out.lo << ", " << out.hi << "]";
      }
  // The ranges that let the kernel leave work out are as tight as claimed.
  EXPECT_TRUE(codegen::resultRange(Op::Tanh, {R::all()}, ir::DType::F32).within(-1, 1));
  EXPECT_TRUE(codegen::resultRange(Op::Exp, {R{-1, 1}}, ir::DType::F32).within(0.36, 2.72));
  EXPECT_TRUE(codegen::resultRange(Op::Sigmoid, {R::all()}, ir::DType::F32).within(0, 1));
  // Rounded coarsely, a bf16 result has no bounds; nor has a quotient by
  // a divisor that may be 0.
  EXPECT_EQ(codegen::resultRange(Op::Tanh, {R::all()}, ir::DType::BF16), R::all());
  EXPECT_EQ(codegen::resultRange(Op::Div, {R{1, 2}, R{-1, 1}}, ir::DType::F32), R::all());
}

} // namespace
