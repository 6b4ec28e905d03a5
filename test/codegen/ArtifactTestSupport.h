//===- ArtifactTestSupport.h - Parse a graph file, build an artifact -*- C++ -*-===//
//
// What the tests that run generated graphs through a real artifact share:
// reading a `.dync` file into a verified module, and building one graph
// into a linked shared object (ArtifactBuilder, native target). Each test
// loads the object its own way.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/ArtifactWriter.h"
#include "codegen/TargetSpec.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace dync::test {

/// The module in the file \p path, verified; null (and a test failure) if
/// it does not read, parse or verify.
inline std::unique_ptr<ir::Module> parseVerifiedModule(llvm::SourceMgr& sm, ir::Context& ctx,
                                                       const std::string& path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  EXPECT_TRUE(bool(buffer)) << path;
  if (!buffer)
    return nullptr;
  sm.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  llvm::Expected<std::unique_ptr<ir::Module>> module = ir::parseModule(sm, ctx);
  if (!module) {
    ADD_FAILURE() << llvm::toString(module.takeError());
    return nullptr;
  }
  EXPECT_FALSE(bool(ir::verify(**module, &sm)));
  return std::move(*module);
}

/// Builds \p graph, as the one graph of one entry, into the shared object
/// \p path; false (and a test failure) if any step fails.
inline bool buildGraphArtifact(const ir::Graph& graph, llvm::StringRef path) {
  codegen::BuildOptions options;
  options.target = llvm::cantFail(codegen::resolveTarget("native"));
  options.jobs = 2;
  codegen::ArtifactBuilder builder(options);
  codegen::ArtifactEntry entry;
  entry.qualifiedName = graph.name();
  entry.graphs.push_back({&graph, "__dync_graph_0"});
  codegen::ArtifactOptions artifactOptions;
  artifactOptions.pythonMagic = {DYNC_TEST_PYTHON_MAGIC};
  artifactOptions.torchVersion = DYNC_TEST_TORCH_VERSION;
  llvm::Expected<std::vector<codegen::ArtifactUnit>> units =
      builder.buildModules({entry}, artifactOptions);
  if (!units) {
    ADD_FAILURE() << llvm::toString(units.takeError());
    return false;
  }
  if (llvm::Error error = builder.compile(*units)) {
    ADD_FAILURE() << llvm::toString(std::move(error));
    return false;
  }
  if (llvm::Error error = builder.link(*units, path)) {
    ADD_FAILURE() << llvm::toString(std::move(error));
    return false;
  }
  return true;
}

} // namespace dync::test
