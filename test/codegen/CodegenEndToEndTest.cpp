//===- CodegenEndToEndTest.cpp - Compiled graphs equal eager ATen ---------===//
//
// Each test takes a graph of test/ir (or Inputs/, the same graphs with the
// Scalar overloads where the shim cannot pass a number as a Tensor yet), compiles it with dync-llc
// into an artifact, loads that with the runtime's loader and runs its graph on random tensors. The
// expected results come from the same graph text: its nodes are run eagerly, in order, through
// torch's own dispatcher with keyword arguments placed by torch's own schemas. The same kernels run
// on the same inputs, so the results must be equal bit for bit.
//
//===----------------------------------------------------------------------===//

#include "EagerReference.h"

#include "ir/Parser.h"
#include "ir/Verifier.h"
#include "runtime/artifact/Loader.h"
#include "runtime/shim/ShimInternal.h"

#include <ATen/ops/equal.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/zeros.h>

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;
using namespace dync;

namespace {

using test::EagerInterpreter;
using test::findOp;
using test::scalarType;

class CodegenEndToEnd : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("dync-codegen-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Parses the file \p name, returns its only graph.
  const ir::Graph& parse(const std::string& name) {
    auto buffer = llvm::MemoryBuffer::getFile(name);
    EXPECT_TRUE(bool(buffer));
    sm_.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
    llvm::Expected<std::unique_ptr<ir::Module>> module = ir::parseModule(sm_, ctx_);
    if (!module) {
      ADD_FAILURE() << llvm::toString(module.takeError());
      std::abort();
    }
    module_ = std::move(*module);
    EXPECT_FALSE(bool(ir::verify(*module_, &sm_)));
    return *module_->graphs()[0];
  }

  // Compiles the file \p name into an artifact with dync-llc, with the schemas
  // of the graph's operators as torch has them.
  std::string compile(const std::string& name, const ir::Graph& graph) {
    std::string schemas = (dir_ / "schemas.txt").string();
    {
      std::ofstream os(schemas);
      for (const ir::Node& node : graph.nodes())
        if (node.isCall() && !node.isKernelCall())
          os << c10::toString(findOp(node.op()).schema()) << '\n';
    }
    std::string out = (dir_ / "artifact.so").string();
    std::string input = name;
    llvm::StringRef args[] = {DYNC_LLC, input, "--schemas", schemas, "-o", out};
    std::string error;
    int rc = llvm::sys::ExecuteAndWait(DYNC_LLC, args, std::nullopt, {}, 0, 0, &error);
    EXPECT_EQ(rc, 0) << error;
    return out;
  }

  // Random inputs for the graph's input types under `symbols`.
  std::vector<at::Tensor> makeInputs(const ir::Graph& graph, const ir::SymbolValues& symbols) {
    std::vector<at::Tensor> inputs;
    for (const ir::Node& node : graph.inputs()) {
      std::vector<int64_t> sizes;
      for (ir::SymExpr size : node.type().sizes())
        sizes.push_back(*size.evaluate(symbols));
      c10::ScalarType dtype = scalarType(node.type().dtype());
      inputs.push_back(c10::isFloatingType(dtype) ? at::randn(sizes, at::dtype(dtype))
                                                  : at::zeros(sizes, at::dtype(dtype)));
    }
    return inputs;
  }

  // Compiles, loads and runs `name` and the eager reference; compares.
  void expectBitwiseEqual(const std::string& name, const ir::SymbolValues& symbols) {
    const ir::Graph& graph = parse(name);
    std::string path = compile(name, graph);
    runtime::LoadOptions options;
    options.pythonMagic = std::array<unsigned char, 4>{DYNC_TEST_PYTHON_MAGIC};
    runtime::LoadResult loaded = runtime::loadArtifact(path, options);
    ASSERT_TRUE(loaded) << loaded.message;
    const dync_artifact_descriptor& d = loaded.artifact->descriptor();
    ASSERT_EQ(d.num_entries, 1u);
    EXPECT_STREQ(d.entries[0].qualified_name, graph.name().c_str());
    ASSERT_EQ(d.entries[0].num_graphs, 1u);
    const dync_artifact_graph& compiled = d.entries[0].graphs[0];

    std::vector<at::Tensor> inputs = makeInputs(graph, symbols);
    // The reference runs on copies: operators such as batch norm's
    // functional form must not see inputs another run touched.
    std::vector<at::Tensor> copies;
    for (const at::Tensor& t : inputs)
      copies.push_back(t.clone());
    std::vector<at::Tensor> expected = EagerInterpreter(graph, symbols).run(copies);

    std::vector<dync_tensor*> handles;
    for (const at::Tensor& t : inputs)
      handles.push_back(shim::releaseToHandle(at::Tensor(t)));
    std::vector<dync_tensor*> outputs(compiled.num_outputs, nullptr);
    char error[512] = "";
    ASSERT_EQ(compiled.run(handles.data(), handles.size(), nullptr, 0, outputs.data(),
                           outputs.size(), error, sizeof(error)),
              DYNC_ARTIFACT_OK)
        << error;
    ASSERT_EQ(outputs.size(), expected.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      ASSERT_NE(outputs[i], nullptr);
      at::Tensor got = shim::toTensor(outputs[i]);
      EXPECT_EQ(got.sizes(), expected[i].sizes()) << "output " << i;
      EXPECT_EQ(got.strides(), expected[i].strides()) << "output " << i;
      EXPECT_EQ(got.dtype(), expected[i].dtype()) << "output " << i;
      EXPECT_TRUE(at::equal(got, expected[i])) << "output " << i;
      dync_tensor_release(outputs[i]);
    }

    // A failing ATen call is a message naming the node, and outputs stay
    // NULL: swap two inputs of different shapes.
    if (handles.size() >= 2) {
      std::swap(handles[0], handles[1]);
      std::fill(outputs.begin(), outputs.end(), reinterpret_cast<dync_tensor*>(0x1));
      EXPECT_EQ(compiled.run(handles.data(), handles.size(), nullptr, 0, outputs.data(),
                             outputs.size(), error, sizeof(error)),
                DYNC_ARTIFACT_ERROR);
      EXPECT_NE(std::string(error).find("graph " + graph.name()), std::string::npos) << error;
      for (dync_tensor* t : outputs)
        EXPECT_EQ(t, nullptr);
    }
    for (dync_tensor* t : handles)
      dync_tensor_release(t);
  }

  fs::path dir_;
  llvm::SourceMgr sm_;
  ir::Context ctx_;
  std::unique_ptr<ir::Module> module_;
};

TEST_F(CodegenEndToEnd, Mlp) { expectBitwiseEqual(DYNC_TEST_IR_DIR "/mlp.dync", {{"s0", 5}}); }

TEST_F(CodegenEndToEnd, ConvBatchNorm) {
  expectBitwiseEqual(DYNC_TEST_INPUTS_DIR "/conv-bn.dync", {{"s0", 9}});
}

TEST_F(CodegenEndToEnd, Attention) {
  expectBitwiseEqual(DYNC_TEST_INPUTS_DIR "/attention.dync", {{"s0", 2}, {"s1", 8}});
}

TEST_F(CodegenEndToEnd, ArityAndGuard) {
  const ir::Graph& graph = parse(DYNC_TEST_IR_DIR "/mlp.dync");
  std::string path = compile(DYNC_TEST_IR_DIR "/mlp.dync", graph);
  runtime::LoadOptions options;
  options.pythonMagic = std::array<unsigned char, 4>{DYNC_TEST_PYTHON_MAGIC};
  runtime::LoadResult loaded = runtime::loadArtifact(path, options);
  ASSERT_TRUE(loaded) << loaded.message;
  const dync_artifact_entry& entry = loaded.artifact->descriptor().entries[0];
  dync_tensor* outputs[2] = {reinterpret_cast<dync_tensor*>(0x1),
                             reinterpret_cast<dync_tensor*>(0x1)};
  char error[256] = "";
  EXPECT_EQ(entry.graphs[0].run(nullptr, 0, nullptr, 0, outputs, 2, error, sizeof(error)),
            DYNC_ARTIFACT_ERROR);
  EXPECT_EQ(outputs[0], nullptr);
  EXPECT_EQ(outputs[1], nullptr);
  EXPECT_STREQ(error, "graph MLP.forward takes 7 tensor inputs and 0 int inputs and returns 1 "
                      "tensors; called with other counts");
  // A tiny error buffer truncates, always terminated.
  char tiny[6] = "xxxxx";
  EXPECT_EQ(entry.graphs[0].run(nullptr, 0, nullptr, 0, outputs, 2, tiny, sizeof(tiny)),
            DYNC_ARTIFACT_ERROR);
  EXPECT_STREQ(tiny, "graph");

  const char* reason = nullptr;
  EXPECT_EQ(entry.guard(nullptr, nullptr, &reason), 0);
  // mlp.dync has no guards block: the entry's guard always misses.
  EXPECT_STREQ(reason, "graph MLP.forward has no guards");
}

} // namespace
