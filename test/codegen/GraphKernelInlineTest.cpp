//===- GraphKernelInlineTest.cpp - Small kernel ranges skip parallel_for --===//
//
// A graph function runs a kernel whose parallel extent is no longer than its
// grain directly, on the calling thread, and goes through the shim's
// parallel_for only for longer ranges. The artifact is loaded with a copy of
// the shim table whose parallel_for slot counts its calls and records the
// threads the kernel ran on; the results are compared with the same graph
// run eagerly through ATen on both sides of the grain.
//
//===----------------------------------------------------------------------===//

#include "ArtifactTestSupport.h"
#include "EagerReference.h"

#include "runtime/artifact/Loader.h"
#include "runtime/shim/ShimInternal.h"

#include <ATen/ops/allclose.h>
#include <ATen/ops/randn.h>

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <thread>

using namespace dync;

namespace {

// What the counting parallel_for saw; the graph calls it with the caller's
// context, which the wrapper hands on unchanged.
struct ParallelForLog {
  std::mutex mutex;
  int calls = 0;
  std::set<std::thread::id> threads;
};
ParallelForLog parallelLog;

// The kernel's trampoline wrapped so the threads it runs on are recorded.
struct Wrapped {
  dync_parallel_fn fn;
  void* ctx;
};

void recordingTrampoline(void* ctx, int64_t begin, int64_t end) {
  auto* wrapped = static_cast<Wrapped*>(ctx);
  {
    std::lock_guard<std::mutex> lock(parallelLog.mutex);
    parallelLog.threads.insert(std::this_thread::get_id());
  }
  wrapped->fn(wrapped->ctx, begin, end);
}

dync_status countingParallelFor(int64_t begin, int64_t end, int64_t grain, dync_parallel_fn fn,
                                void* ctx) {
  {
    std::lock_guard<std::mutex> lock(parallelLog.mutex);
    ++parallelLog.calls;
  }
  Wrapped wrapped{fn, ctx};
  return dync_parallel_for(begin, end, grain, recordingTrampoline, &wrapped);
}

const dync_shim_api* countingApi() {
  static dync_shim_api api = [] {
    dync_shim_api table{};
    dync_shim_fill_api(&table);
    table.parallel_for = countingParallelFor;
    return table;
  }();
  return &api;
}

class GraphKernelInline : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("dync-graph-inline-test", dir_));
    std::lock_guard<std::mutex> lock(parallelLog.mutex);
    parallelLog.calls = 0;
    parallelLog.threads.clear();
  }
  void TearDown() override {
    loaded_.reset();
    llvm::sys::fs::remove_directories(dir_);
  }

  std::unique_ptr<ir::Module> parse(const std::string& path) {
    return test::parseVerifiedModule(sm_, ctx_, path);
  }

  /// Builds \p graph into an artifact loaded with the counting shim table.
  const dync_artifact_graph* build(const ir::Graph& graph) {
    llvm::SmallString<256> path(dir_);
    llvm::sys::path::append(path, "artifact.so");
    if (!test::buildGraphArtifact(graph, path))
      return nullptr;
    runtime::LoadOptions loadOptions;
    loadOptions.pythonMagic = std::array<unsigned char, 4>{DYNC_TEST_PYTHON_MAGIC};
    loadOptions.api = countingApi();
    runtime::LoadResult loaded = runtime::loadArtifact(path.str().str(), loadOptions);
    EXPECT_TRUE(loaded) << loaded.message;
    if (!loaded)
      return nullptr;
    loaded_ = std::move(loaded.artifact);
    return &loaded_->descriptor().entries[0].graphs[0];
  }

  /// Runs \p graph (built as \p compiled) at s0 = \p rows and expects the
  /// eager results.
  void expectMatchesEager(const dync_artifact_graph& compiled, const ir::Graph& graph,
                          int64_t rows) {
    ir::SymbolValues symbols = {{"s0", rows}};
    std::vector<at::Tensor> inputs;
    for (const ir::Node& node : graph.inputs()) {
      std::vector<int64_t> sizes;
      for (ir::SymExpr size : node.type().sizes())
        sizes.push_back(*size.evaluate(symbols));
      inputs.push_back(at::randn(sizes));
    }
    std::vector<at::Tensor> copies;
    for (const at::Tensor& t : inputs)
      copies.push_back(t.clone());
    std::vector<at::Tensor> expected = test::EagerInterpreter(graph, symbols).run(copies);

    std::vector<dync_tensor*> handles;
    for (const at::Tensor& t : inputs)
      handles.push_back(shim::releaseToHandle(at::Tensor(t)));
    std::vector<dync_tensor*> outputs(compiled.num_outputs, nullptr);
    char error[512] = "";
    int status = compiled.run(handles.data(), handles.size(), nullptr, 0, outputs.data(),
                              outputs.size(), error, sizeof(error));
    for (dync_tensor* t : handles)
      dync_tensor_release(t);
    ASSERT_EQ(status, DYNC_ARTIFACT_OK) << error;
    ASSERT_EQ(outputs.size(), expected.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      at::Tensor got = shim::toTensor(outputs[i]);
      dync_tensor_release(outputs[i]);
      EXPECT_EQ(got.sizes(), expected[i].sizes()) << "output " << i;
      EXPECT_EQ(got.strides(), expected[i].strides()) << "output " << i;
      EXPECT_TRUE(at::allclose(got, expected[i], 1e-5, 1e-5)) << "output " << i;
    }
  }

  llvm::SmallString<256> dir_;
  llvm::SourceMgr sm_;
  ir::Context ctx_;
  std::unique_ptr<runtime::Artifact> loaded_;
};

// kernel-pointwise.dync's kernel covers s0 rows of 32 elements; its grain is
// ceil(32768 / 32) = 1024 rows.
TEST_F(GraphKernelInline, ShortRangeRunsOnTheCallingThread) {
  std::unique_ptr<ir::Module> module = parse(DYNC_TEST_INPUTS_DIR "/kernel-pointwise.dync");
  ASSERT_TRUE(module);
  const ir::Graph& graph = *module->graphs()[0];
  const dync_artifact_graph* compiled = build(graph);
  ASSERT_NE(compiled, nullptr);
  for (int64_t rows : {1, 7, 1024}) {
    SCOPED_TRACE("s0 = " + std::to_string(rows));
    expectMatchesEager(*compiled, graph, rows);
  }
  // None of these ranges is longer than a grain: parallel_for was never
  // asked, so the kernel ran on this thread.
  EXPECT_EQ(parallelLog.calls, 0);
  EXPECT_TRUE(parallelLog.threads.empty());
}

TEST_F(GraphKernelInline, LongRangeGoesThroughParallelFor) {
  std::unique_ptr<ir::Module> module = parse(DYNC_TEST_INPUTS_DIR "/kernel-pointwise.dync");
  ASSERT_TRUE(module);
  const ir::Graph& graph = *module->graphs()[0];
  const dync_artifact_graph* compiled = build(graph);
  ASSERT_NE(compiled, nullptr);
  expectMatchesEager(*compiled, graph, 3000);
  EXPECT_EQ(parallelLog.calls, 1);
  EXPECT_FALSE(parallelLog.threads.empty());
}

} // namespace
