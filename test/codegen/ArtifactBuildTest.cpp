//===- ArtifactBuildTest.cpp - Kernel objects: parallel, cached, linked ---===//
//
// The artifact's kernels compile to objects of their own, in parallel, keyed
// in the object cache by their text; equal kernels share one object; a
// damaged cache entry is recompiled; the linked library exports only the
// descriptor getter.
//
//===----------------------------------------------------------------------===//
#include "codegen/ArtifactWriter.h"
#include "codegen/ObjectCache.h"
#include "codegen/TargetSpec.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <chrono>
#include <set>

using namespace dync;

namespace {

// k0 and k2 are the same kernel under two names; k1 differs.
constexpr const char* Kernels = R"(
kernel @k0(%a: tensor<f32, [s0, 67]>, %b: tensor<f32, [67]>)
    symbols { s0: [0, 1024] } {
  %0 = aten::add.Tensor(%a, %b) : tensor<f32, [s0, 67]>
  %1 = aten::relu.default(%0) : tensor<f32, [s0, 67]>
  return %1
}

kernel @k1(%a: tensor<f32, [s0]>)
    symbols { s0: [1, 4096] } {
  %0 = aten::mul.Tensor(%a, %a) : tensor<f32, [s0]>
  return %0
}

kernel @k2(%a: tensor<f32, [s0, 67]>, %b: tensor<f32, [67]>)
    symbols { s0: [0, 1024] } {
  %0 = aten::add.Tensor(%a, %b) : tensor<f32, [s0, 67]>
  %1 = aten::relu.default(%0) : tensor<f32, [s0, 67]>
  return %1
}
)";

/// The names of the symbols \p object defines; with \p dynamic, those of
/// its dynamic symbol table (what a shared library exports).
std::set<std::string> definedSymbols(llvm::MemoryBufferRef object, bool dynamic = false) {
  std::set<std::string> names;
  auto file = llvm::cantFail(llvm::object::ObjectFile::createObjectFile(object));
  auto* elf = llvm::cast<llvm::object::ELFObjectFileBase>(file.get());
  auto add = [&](const llvm::object::SymbolRef& symbol) {
    uint32_t flags = llvm::cantFail(symbol.getFlags());
    if (flags & llvm::object::SymbolRef::SF_Undefined)
      return;
    names.insert(llvm::cantFail(symbol.getName()).str());
  };
  if (dynamic)
    for (const llvm::object::ELFSymbolRef& symbol : elf->getDynamicSymbolIterators())
      add(symbol);
  else
    for (const llvm::object::SymbolRef& symbol : elf->symbols())
      add(symbol);
  return names;
}

class ArtifactBuildTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("dync-artifact-build-test", dir_));
    sm_.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(Kernels, "kernels.dync"),
                           llvm::SMLoc());
    module_ = llvm::cantFail(ir::parseModule(sm_, ctx_));
    llvm::cantFail(ir::verify(*module_, &sm_));
    for (const std::unique_ptr<ir::Graph>& kernel : module_->kernels())
      kernels_.push_back(kernel.get());
    llvm::SmallString<256> cacheDir(dir_);
    llvm::sys::path::append(cacheDir, "cache");
    cache_.emplace(cacheDir.str().str());
  }
  void TearDown() override { llvm::sys::fs::remove_directories(dir_); }

  codegen::BuildOptions options() {
    codegen::BuildOptions options;
    options.target = llvm::cantFail(codegen::resolveTarget("native"));
    options.jobs = 2;
    options.cache = &*cache_;
    return options;
  }

  llvm::SmallString<256> dir_;
  llvm::SourceMgr sm_;
  ir::Context ctx_;
  std::unique_ptr<ir::Module> module_;
  std::vector<const ir::Graph*> kernels_;
  std::optional<codegen::ObjectCache> cache_;
};

TEST_F(ArtifactBuildTest, EqualKernelsShareOneObjectAndTheCacheServesThem) {
  codegen::ArtifactBuilder first(options());
  std::vector<codegen::ArtifactUnit> units = llvm::cantFail(first.buildKernelUnits(kernels_));
  ASSERT_EQ(units.size(), 2u);
  EXPECT_EQ(units[0].kernelName, "k0");
  EXPECT_EQ(units[1].kernelName, "k1");
  llvm::cantFail(first.compile(units));
  EXPECT_EQ(first.stats().compiled, 2u);
  EXPECT_EQ(first.stats().cached, 0u);
  for (const codegen::ArtifactUnit& unit : units) {
    ASSERT_TRUE(unit.object);
    EXPECT_TRUE(definedSymbols(*unit.object).count(unit.name)) << unit.name;
  }

  codegen::ArtifactBuilder second(options());
  std::vector<codegen::ArtifactUnit> again = llvm::cantFail(second.buildKernelUnits(kernels_));
  ASSERT_EQ(again.size(), 2u);
  for (size_t i = 0; i < again.size(); ++i) {
    EXPECT_TRUE(again[i].cached);
    EXPECT_FALSE(again[i].module) << "a cached kernel is not emitted again";
    EXPECT_EQ(again[i].object->getBuffer(), units[i].object->getBuffer());
  }
  llvm::cantFail(second.compile(again));
  EXPECT_EQ(second.stats().compiled, 0u);
  EXPECT_EQ(second.stats().cached, 2u);
}

TEST_F(ArtifactBuildTest, DamagedEntryIsRecompiledAndReplaced) {
  codegen::ArtifactBuilder first(options());
  std::vector<codegen::ArtifactUnit> units = llvm::cantFail(first.buildKernelUnits(kernels_));
  llvm::cantFail(first.compile(units));
  std::string entry = cache_->path(units[1].cacheKey);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(entry, ec, llvm::sys::fs::OF_None);
    ASSERT_FALSE(ec);
    os << "not an object";
  }
  codegen::ArtifactBuilder second(options());
  std::vector<codegen::ArtifactUnit> again = llvm::cantFail(second.buildKernelUnits(kernels_));
  EXPECT_TRUE(again[0].cached);
  EXPECT_FALSE(again[1].cached);
  llvm::cantFail(second.compile(again));
  EXPECT_EQ(second.stats().damaged, 1u);
  EXPECT_EQ(second.stats().compiled, 1u);
  bool damaged = false;
  std::unique_ptr<llvm::MemoryBuffer> replaced = cache_->lookup(units[1].cacheKey, &damaged);
  EXPECT_FALSE(damaged);
  ASSERT_TRUE(replaced);
  EXPECT_EQ(replaced->getBuffer(), units[1].object->getBuffer());
}

TEST_F(ArtifactBuildTest, KeysNameTheCompilersBuild) {
  // Objects from another build of dync are never reused: every key covers
  // the build ID of the binary that compiles. Read here from this test's
  // executable file by LLVM's ELF reader; the cache reads it from memory.
  llvm::Expected<llvm::object::OwningBinary<llvm::object::ObjectFile>> self =
      llvm::object::ObjectFile::createObjectFile("/proc/self/exe");
  ASSERT_TRUE(bool(self)) << llvm::toString(self.takeError());
  auto* elf = llvm::dyn_cast<llvm::object::ELF64LEObjectFile>(self->getBinary());
  ASSERT_NE(elf, nullptr);
  std::string buildId;
  for (const auto& header : llvm::cantFail(elf->getELFFile().program_headers())) {
    if (header.p_type != llvm::ELF::PT_NOTE)
      continue;
    llvm::Error error = llvm::Error::success();
    for (const auto& note : elf->getELFFile().notes(header, error))
      if (note.getType() == llvm::ELF::NT_GNU_BUILD_ID && note.getName() == "GNU")
        buildId = llvm::toHex(note.getDesc(4), /*LowerCase=*/true);
    llvm::cantFail(std::move(error));
  }
  ASSERT_FALSE(buildId.empty()) << "the test binary was linked without a build ID";
  EXPECT_EQ(codegen::ObjectCache::compilerIdentity(), "build-id " + buildId);
}

TEST_F(ArtifactBuildTest, PruneRemovesTheLeastRecentlyUsed) {
  // Three entries of 1000-byte objects, stored in order a, b, c with their
  // times an hour apart; a is then read, which makes it the most recent.
  // Room for two: b goes, the oldest unused one.
  const char* keys[] = {"a", "b", "c"};
  std::string object(1000, 'x');
  auto now = std::chrono::system_clock::now();
  for (int i = 0; i < 3; ++i) {
    llvm::cantFail(cache_->store(keys[i], object));
    int fd = -1;
    ASSERT_FALSE(
        llvm::sys::fs::openFileForWrite(cache_->path(keys[i]), fd, llvm::sys::fs::CD_OpenExisting));
    auto when = llvm::sys::toTimePoint(std::chrono::system_clock::to_time_t(now) - 3600 * (3 - i));
    EXPECT_FALSE(llvm::sys::fs::setLastAccessAndModificationTime(fd, when));
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }
  ASSERT_TRUE(cache_->lookup("a"));
  uint64_t entrySize = 0;
  ASSERT_FALSE(llvm::sys::fs::file_size(cache_->path("a"), entrySize));
  EXPECT_EQ(llvm::cantFail(cache_->prune(3 * entrySize)).entries, 0u);
  codegen::ObjectCache::Pruned pruned = llvm::cantFail(cache_->prune(2 * entrySize));
  EXPECT_EQ(pruned.entries, 1u);
  EXPECT_EQ(pruned.bytes, entrySize);
  EXPECT_TRUE(llvm::sys::fs::exists(cache_->path("a")));
  EXPECT_FALSE(llvm::sys::fs::exists(cache_->path("b")));
  EXPECT_TRUE(llvm::sys::fs::exists(cache_->path("c")));
  // Nothing to list is nothing to remove.
  codegen::ObjectCache empty((dir_ + "/nowhere").str());
  EXPECT_EQ(llvm::cantFail(empty.prune(0)).entries, 0u);
}

TEST_F(ArtifactBuildTest, LinkedLibraryExportsOnlyTheDescriptor) {
  codegen::ArtifactOptions artifact;
  artifact.torchVersion = "2.0.0";
  codegen::ArtifactBuilder builder(options());
  std::vector<codegen::ArtifactUnit> units = llvm::cantFail(builder.buildModules({}, artifact));
  std::vector<codegen::ArtifactUnit> kernels = llvm::cantFail(builder.buildKernelUnits(kernels_));
  for (codegen::ArtifactUnit& unit : kernels)
    units.push_back(std::move(unit));
  llvm::cantFail(builder.compile(units));
  llvm::SmallString<256> library(dir_);
  llvm::sys::path::append(library, "model.so");
  llvm::cantFail(builder.link(units, library));
  auto buffer = llvm::MemoryBuffer::getFile(library);
  ASSERT_TRUE(buffer);
  EXPECT_EQ(definedSymbols(**buffer, /*dynamic=*/true),
            std::set<std::string>{"dync_artifact_get_descriptor"});
  std::set<std::string> all = definedSymbols(**buffer);
  EXPECT_TRUE(all.count(units[1].name) && all.count(units[2].name));
}

TEST(TargetSpecTest, NamedCpuRecordsItsOwnFeatures) {
  codegen::TargetSpec spr = llvm::cantFail(codegen::resolveTarget("sapphirerapids"));
  EXPECT_EQ(spr.cpu, "sapphirerapids");
  EXPECT_EQ(spr.features, "");
  EXPECT_NE(spr.requiredFeatures.find("amx-tile"), std::string::npos);
  EXPECT_NE(spr.requiredFeatures.find("avx512fp16"), std::string::npos);
  codegen::TargetSpec baseline = llvm::cantFail(codegen::resolveTarget("x86-64"));
  EXPECT_EQ(baseline.requiredFeatures.find("avx"), std::string::npos);
  EXPECT_NE(baseline.describe(), spr.describe());
  std::string error = llvm::toString(codegen::resolveTarget("sapphirerapid").takeError());
  EXPECT_NE(error.find("unknown CPU 'sapphirerapid'"), std::string::npos) << error;
  EXPECT_NE(error.find("did you mean 'sapphirerapids'"), std::string::npos) << error;
}

} // namespace
