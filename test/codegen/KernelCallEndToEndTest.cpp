//===- KernelCallEndToEndTest.cpp - Graphs calling kernels equal eager ----===//
//
// Graphs that call generated kernels, built into an artifact in process
// (ArtifactBuilder: the main module and one object per kernel, linked),
// loaded with the runtime's loader and run on random tensors at several
// symbolic sizes. The reference is the same graph run eagerly through
// torch's dispatcher, each kernel call as the ATen calls its kernel holds
// (or, for graphs the test fuses itself, the graph before fusion). Kernels
// compute exp and friends with their own polynomials and sum in double, so
// values are compared within f32 tolerance; sizes, strides and dtypes
// exactly.
//
//===----------------------------------------------------------------------===//

#include "ArtifactTestSupport.h"
#include "EagerReference.h"

#include "passes/Fusion.h"
#include "passes/MemoryPlan.h"
#include "runtime/artifact/Loader.h"
#include "runtime/shim/ShimInternal.h"

#include <ATen/ops/allclose.h>
#include <ATen/ops/randn.h>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace dync;

namespace {

class KernelCallEndToEnd : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("dync-kernel-call-test", dir_));
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir_); }

  std::unique_ptr<ir::Module> parse(const std::string& path) {
    return test::parseVerifiedModule(sm_, ctx_, path);
  }

  /// Builds \p graph into an artifact and loads it; the loaded artifact
  /// lives as long as the fixture.
  const dync_artifact_graph* build(const ir::Graph& graph) {
    llvm::SmallString<256> path(dir_);
    llvm::sys::path::append(path, "artifact-" + std::to_string(built_++) + ".so");
    if (!test::buildGraphArtifact(graph, path))
      return nullptr;
    runtime::LoadOptions loadOptions;
    loadOptions.pythonMagic = std::array<unsigned char, 4>{DYNC_TEST_PYTHON_MAGIC};
    loaded_.push_back(runtime::loadArtifact(path.str().str(), loadOptions));
    runtime::LoadResult& loaded = loaded_.back();
    EXPECT_TRUE(loaded) << loaded.message;
    if (!loaded)
      return nullptr;
    return &loaded.artifact->descriptor().entries[0].graphs[0];
  }

  static std::vector<at::Tensor> makeInputs(const ir::Graph& graph,
                                            const ir::SymbolValues& symbols) {
    std::vector<at::Tensor> inputs;
    for (const ir::Node& node : graph.inputs()) {
      std::vector<int64_t> sizes;
      for (ir::SymExpr size : node.type().sizes())
        sizes.push_back(*size.evaluate(symbols));
      inputs.push_back(at::randn(sizes, at::dtype(test::scalarType(node.type().dtype()))));
    }
    return inputs;
  }

  /// Runs \p compiled on \p inputs; the error message, empty on success.
  static std::string run(const dync_artifact_graph& compiled, const std::vector<at::Tensor>& inputs,
                         std::vector<at::Tensor>& results) {
    std::vector<dync_tensor*> handles;
    for (const at::Tensor& t : inputs)
      handles.push_back(shim::releaseToHandle(at::Tensor(t)));
    std::vector<dync_tensor*> outputs(compiled.num_outputs, reinterpret_cast<dync_tensor*>(0x1));
    char error[512] = "";
    int status = compiled.run(handles.data(), handles.size(), nullptr, 0, outputs.data(),
                              outputs.size(), error, sizeof(error));
    for (dync_tensor* t : handles)
      dync_tensor_release(t);
    results.clear();
    for (dync_tensor* t : outputs) {
      if (status == DYNC_ARTIFACT_OK) {
        results.push_back(shim::toTensor(t));
        dync_tensor_release(t);
      } else {
        EXPECT_EQ(t, nullptr) << "a failed call leaves its outputs NULL";
      }
    }
    if (status != DYNC_ARTIFACT_OK && !error[0])
      return "failed without a message";
    return status == DYNC_ARTIFACT_OK ? "" : error;
  }

  /// Builds \p compiledGraph, runs it at each of \p sizes and compares with
  /// \p reference run eagerly on the same inputs.
  void expectMatchesEager(const ir::Graph& compiledGraph, const ir::Graph& reference,
                          const std::vector<ir::SymbolValues>& sizes) {
    const dync_artifact_graph* compiled = build(compiledGraph);
    ASSERT_NE(compiled, nullptr);
    for (const ir::SymbolValues& symbols : sizes) {
      SCOPED_TRACE("s0 = " + std::to_string(symbols.begin()->second));
      std::vector<at::Tensor> inputs = makeInputs(reference, symbols);
      std::vector<at::Tensor> copies;
      for (const at::Tensor& t : inputs)
        copies.push_back(t.clone());
      std::vector<at::Tensor> expected = test::EagerInterpreter(reference, symbols).run(copies);
      std::vector<at::Tensor> got;
      ASSERT_EQ(run(*compiled, inputs, got), "");
      ASSERT_EQ(got.size(), expected.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].sizes(), expected[i].sizes()) << "output " << i;
        EXPECT_EQ(got[i].strides(), expected[i].strides()) << "output " << i;
        EXPECT_EQ(got[i].dtype(), expected[i].dtype()) << "output " << i;
        EXPECT_TRUE(at::allclose(got[i], expected[i], 1e-5, 1e-5)) << "output " << i;
      }
    }
  }

  static std::string print(const ir::Module& module) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module.print(os);
    return text;
  }

  llvm::SmallString<256> dir_;
  llvm::SourceMgr sm_;
  ir::Context ctx_;
  std::vector<runtime::LoadResult> loaded_;
  unsigned built_ = 0;
};

// Sizes on both sides of the grain: 3000 rows of 32 elements is more than
// one thread's share, so the kernel runs on several threads when torch has
// them.
const std::vector<ir::SymbolValues> kRows = {{{"s0", 1}}, {{"s0", 7}}, {{"s0", 3000}}};

TEST_F(KernelCallEndToEnd, PointwiseWithBroadcast) {
  std::unique_ptr<ir::Module> module = parse(DYNC_TEST_INPUTS_DIR "/kernel-pointwise.dync");
  ASSERT_TRUE(module);
  const ir::Graph& graph = *module->graphs()[0];
  expectMatchesEager(graph, graph, kRows);
}

TEST_F(KernelCallEndToEnd, MultiOutputKernel) {
  std::unique_ptr<ir::Module> module = parse(DYNC_TEST_INPUTS_DIR "/kernel-multi-output.dync");
  ASSERT_TRUE(module);
  const ir::Graph& graph = *module->graphs()[0];
  expectMatchesEager(graph, graph, kRows);
}

TEST_F(KernelCallEndToEnd, FusedSoftmaxReduction) {
  std::string path = DYNC_TEST_INPUTS_DIR "/softmax-unfused.dync";
  std::unique_ptr<ir::Module> reference = parse(path);
  std::unique_ptr<ir::Module> fused = parse(path);
  ASSERT_TRUE(reference && fused);
  ASSERT_FALSE(bool(transforms::runFusion(*fused)));
  ASSERT_EQ(fused->kernels().size(), 1u) << print(*fused);
  expectMatchesEager(*fused->graphs()[0], *reference->graphs()[0],
                     {{{"s0", 1}}, {{"s0", 3}}, {{"s0", 200}}});
}

TEST_F(KernelCallEndToEnd, PlannedBuffersAreShared) {
  std::string path = DYNC_TEST_INPUTS_DIR "/chain-unfused.dync";
  std::unique_ptr<ir::Module> reference = parse(path);
  std::unique_ptr<ir::Module> planned = parse(path);
  ASSERT_TRUE(reference && planned);
  ir::Graph& graph = *planned->graphs()[0];
  ASSERT_FALSE(bool(transforms::runFusion(*planned)));
  ASSERT_FALSE(bool(transforms::runMemoryPlanning(graph)));
  ASSERT_FALSE(bool(ir::verify(*planned)));
  // Three intermediates of two sizes share buffer 0; the returned one does not.
  std::string text = print(*planned);
  size_t shared = 0;
  for (size_t at = text.find("buffers=[0]"); at != std::string::npos;
       at = text.find("buffers=[0]", at + 1))
    ++shared;
  EXPECT_EQ(shared, 3u) << text;
  expectMatchesEager(graph, *reference->graphs()[0], kRows);
}

TEST_F(KernelCallEndToEnd, InputWithOtherStridesIsRefused) {
  std::unique_ptr<ir::Module> module = parse(DYNC_TEST_INPUTS_DIR "/kernel-multi-output.dync");
  ASSERT_TRUE(module);
  const ir::Graph& graph = *module->graphs()[0];
  const dync_artifact_graph* compiled = build(graph);
  ASSERT_NE(compiled, nullptr);
  // The kernel reads %x as contiguous [s0, 16]; a transposed tensor of the
  // same sizes must not be read that way.
  std::vector<at::Tensor> inputs = {at::randn({16, 5}).t(), at::randn({16, 16})};
  std::vector<at::Tensor> results;
  EXPECT_EQ(run(*compiled, inputs, results),
            "graph multi, %k = @k0: argument 0 (%x) is not a CPU tensor laid out as "
            "tensor<f32, [s0, 16]> (dtype, sizes and strides); the kernel reads it that way");
  // A dimension of size 1 may have any stride, as in torch.
  inputs[0] = at::randn({16, 1}).t();
  EXPECT_EQ(run(*compiled, inputs, results), "");
  // Another dtype is refused the same way.
  inputs[0] = at::randn({5, 16}, at::kDouble);
  EXPECT_NE(run(*compiled, inputs, results).find("is not a CPU tensor laid out as"),
            std::string::npos);
}

TEST_F(KernelCallEndToEnd, WrongPlanIsACodegenError) {
  std::unique_ptr<ir::Module> module = parse(DYNC_TEST_INPUTS_DIR "/kernel-multi-output.dync");
  ASSERT_TRUE(module);
  ir::Graph& graph = *module->graphs()[0];
  // Both outputs of one call in one buffer: live at once.
  for (ir::Node& node : graph.nodes())
    if (node.isKernelCall())
      node.kwargs().push_back(
          {"buffers", ir::Argument::list({ir::Argument::sym(ctx_.constant(0)),
                                          ir::Argument::sym(ctx_.constant(0))})});
  std::string error = llvm::toString(transforms::checkMemoryPlan(graph));
  EXPECT_EQ(error, "graph @multi: kernel output %k#1 is in buffer 0, but the graph returns it or a "
                   "view of it");
}

// Planned outputs are views the shim makes of a byte buffer; a view that
// would reach past the buffer is refused, never grown into.
TEST(TensorViewStorage, StaysInsideItsBuffer) {
  int64_t bytes = 16, one = 1;
  dync_tensor* base = nullptr;
  ASSERT_EQ(dync_tensor_empty_strided(&bytes, &one, 1, DYNC_DTYPE_UINT8, &base), DYNC_OK);
  int64_t sizes[] = {2, 2}, strides[] = {2, 1};
  dync_tensor* view = nullptr;
  ASSERT_EQ(dync_tensor_view_storage(base, sizes, strides, 2, DYNC_DTYPE_FLOAT32, &view), DYNC_OK);
  at::Tensor t = shim::toTensor(view);
  EXPECT_EQ(t.sizes(), at::IntArrayRef({2, 2}));
  EXPECT_EQ(t.scalar_type(), at::kFloat);
  EXPECT_EQ(t.data_ptr(), shim::toTensor(base).data_ptr());
  dync_tensor_release(view);

  int64_t tooLong[] = {3, 2};
  EXPECT_EQ(dync_tensor_view_storage(base, tooLong, strides, 2, DYNC_DTYPE_FLOAT32, &view),
            DYNC_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(view, nullptr);
  EXPECT_STREQ(dync_last_error(),
               "dync_tensor_view_storage: the view needs 24 bytes, the storage has 16");
  int64_t negative[] = {-2, 1};
  EXPECT_EQ(dync_tensor_view_storage(base, sizes, negative, 2, DYNC_DTYPE_FLOAT32, &view),
            DYNC_ERR_INVALID_ARGUMENT);
  // No elements need no bytes.
  int64_t empty[] = {0, 100};
  EXPECT_EQ(dync_tensor_view_storage(base, empty, strides, 2, DYNC_DTYPE_FLOAT64, &view), DYNC_OK);
  dync_tensor_release(view);
  dync_tensor_release(base);
}

} // namespace
