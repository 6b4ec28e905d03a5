//===- LoaderTest.cpp - Loading, validating and running test artifacts ----===//
//
// The artifacts are built from Inputs/TestArtifact.c, one per way the loader
// must accept or refuse a file; truncated and corrupt files are made here.
//
//===----------------------------------------------------------------------===//

#include "runtime/artifact/Loader.h"
#include "runtime/artifact/Seal.h"
#include "runtime/artifact/Sha256.h"
#include "runtime/shim/ShimInternal.h"

#include <ATen/ops/addmm.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/relu.h>

#include <gtest/gtest.h>

#include <elf.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace fs = std::filesystem;
using namespace dync::runtime;

namespace {

std::string artifactPath(const char* name) {
  return std::string(DYNC_TEST_ARTIFACT_DIR) + "/" + name + ".so";
}

LoadOptions thisInterpreter() {
  LoadOptions options;
  options.pythonMagic = std::array<unsigned char, 4>{DYNC_TEST_PYTHON_MAGIC};
  return options;
}

::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "'" << text << "' does not contain '" << part << "'";
}

// Expects the load to fail with `kind` and a message naming the file.
void expectRefused(const std::string& path, LoadErrorKind kind, const std::string& part,
                   const LoadOptions& options = thisInterpreter()) {
  LoadResult result = loadArtifact(path, options);
  EXPECT_FALSE(result);
  EXPECT_EQ(result.artifact, nullptr);
  EXPECT_EQ(loadErrorKindName(result.error), std::string(loadErrorKindName(kind)));
  EXPECT_TRUE(contains(result.message, path + ": "));
  EXPECT_TRUE(contains(result.message, part));
}

class LoaderTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("dync-loader-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  // A copy of `source` cut to `size` bytes.
  std::string truncatedCopy(const std::string& source, uintmax_t size) {
    std::string path = (dir / "truncated.so").string();
    fs::copy_file(source, path, fs::copy_options::overwrite_existing);
    fs::resize_file(path, size);
    return path;
  }

  std::string writeFile(const char* name, const std::string& bytes) {
    std::string path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }

  fs::path dir;
};

TEST_F(LoaderTest, ValidArtifactLoadsAndRuns) {
  LoadResult result = loadArtifact(artifactPath("artifact_valid"), thisInterpreter());
  ASSERT_TRUE(result) << result.message;
  EXPECT_EQ(result.error, LoadErrorKind::None);
  EXPECT_TRUE(result.artifact->warnings().empty());
  const dync_artifact_descriptor& d = result.artifact->descriptor();
  EXPECT_EQ(d.format_version, DYNC_ARTIFACT_FORMAT_VERSION);
  EXPECT_STREQ(d.torch_version, DYNC_TEST_TORCH_VERSION);
  ASSERT_EQ(d.num_entries, 1u);
  const dync_artifact_entry& entry = d.entries[0];
  EXPECT_STREQ(entry.qualified_name, "f");
  ASSERT_EQ(entry.num_graphs, 1u);
  EXPECT_STREQ(entry.graphs[0].name, "__dync_graph_0");

  // The graph, through the shim: bit-for-bit what ATen gives directly.
  at::Tensor b = at::randn({3}), x = at::randn({2, 4}), w = at::randn({4, 3});
  dync_tensor* inputs[] = {dync::shim::releaseToHandle(at::Tensor(b)),
                           dync::shim::releaseToHandle(at::Tensor(x)),
                           dync::shim::releaseToHandle(at::Tensor(w))};
  dync_tensor* output = nullptr;
  char error[256] = "";
  ASSERT_EQ(entry.graphs[0].run(inputs, 3, nullptr, 0, &output, 1, error, sizeof(error)),
            DYNC_ARTIFACT_OK)
      << error;
  ASSERT_NE(output, nullptr);
  EXPECT_TRUE(at::equal(dync::shim::toTensor(output), at::relu(at::addmm(b, x, w))));
  dync_tensor_release(output);

  // Its failures are messages, not crashes: bad arity, and ATen raising.
  output = reinterpret_cast<dync_tensor*>(0x1);
  EXPECT_EQ(entry.graphs[0].run(inputs, 2, nullptr, 0, &output, 1, error, sizeof(error)),
            DYNC_ARTIFACT_ERROR);
  EXPECT_EQ(output, nullptr);
  EXPECT_TRUE(contains(error, "takes 3 tensors"));
  std::swap(inputs[1], inputs[2]);
  EXPECT_EQ(entry.graphs[0].run(inputs, 3, nullptr, 0, &output, 1, error, sizeof(error)),
            DYNC_ARTIFACT_ERROR);
  EXPECT_TRUE(contains(error, "cannot be multiplied"));
  for (dync_tensor* t : inputs)
    dync_tensor_release(t);

  // Without the Python half of the shim a guard can only miss.
  const char* reason = nullptr;
  EXPECT_EQ(entry.guard(nullptr, nullptr, &reason), 0);
  EXPECT_STREQ(reason, "no Python in this process");
}

TEST_F(LoaderTest, MissingFile) {
  expectRefused((dir / "nope.so").string(), LoadErrorKind::FileNotFound,
                "cannot open: No such file or directory");
  expectRefused(dir.string(), LoadErrorKind::FileNotFound, "not a regular file");
}

TEST_F(LoaderTest, NotAnElfFile) {
  expectRefused(writeFile("empty.so", ""), LoadErrorKind::NotElf, "empty file");
  expectRefused(writeFile("text.so", "def f(): pass\n"), LoadErrorKind::NotElf, "not an ELF file");
  // An ELF file that is not a shared object: a relocatable object's header.
  std::string header(64, '\0');
  header.replace(0, 4,
                 "\x7f"
                 "ELF");
  header[EI_CLASS] = ELFCLASS64;
  header[EI_DATA] = ELFDATA2LSB;
  header[16] = ET_REL;
  expectRefused(writeFile("object.o", header), LoadErrorKind::NotElf, "not a shared library");
}

TEST_F(LoaderTest, TruncatedFile) {
  std::string valid = artifactPath("artifact_valid");
  uintmax_t size = fs::file_size(valid);
  expectRefused(truncatedCopy(valid, 40), LoadErrorKind::Truncated, "shorter than an ELF header");
  expectRefused(truncatedCopy(valid, size / 2), LoadErrorKind::Truncated, "truncated: ");
  // The ELF image whole, its seal cut: only the seal tells.
  expectRefused(truncatedCopy(valid, size - 1), LoadErrorKind::Corrupt,
                "corrupt artifact: the seal that ends every artifact is missing");
  expectRefused(truncatedCopy(valid, size - DYNC_ARTIFACT_SEAL_SIZE), LoadErrorKind::Corrupt,
                "corrupt artifact: the seal that ends every artifact is missing");
  // A whole copy is fine.
  std::string copy = (dir / "copy.so").string();
  fs::copy_file(valid, copy);
  LoadResult result = loadArtifact(copy, thisInterpreter());
  EXPECT_TRUE(result) << result.message;
}

TEST_F(LoaderTest, CorruptLoadSegment) {
  // Headers intact but garbage where the code was: dlopen must refuse it or
  // the descriptor checks must, never a crash.
  std::string valid = artifactPath("artifact_valid");
  std::string path = (dir / "corrupt.so").string();
  fs::copy_file(valid, path);
  {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    f.seekp(64 + 56 * 12); // past the ELF and program headers
    std::string junk(256, '\xcc');
    f.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  expectRefused(path, LoadErrorKind::Corrupt, "corrupt artifact: its bytes do not match");
}

TEST_F(LoaderTest, AnyChangedByteIsCorrupt) {
  // Every byte is under the seal: the ELF header, the descriptor's strings
  // (the torch version), the code, the seal's own digest.
  std::string valid = artifactPath("artifact_valid");
  std::ifstream in(valid, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t torch = bytes.find(DYNC_TEST_TORCH_VERSION);
  ASSERT_NE(torch, std::string::npos);
  for (size_t at : {size_t(EI_CLASS), size_t(16), torch, bytes.size() / 2,
                    bytes.size() - DYNC_ARTIFACT_SEAL_SIZE, bytes.size() - 9}) {
    std::string changed = bytes;
    changed[at] ^= 0x20;
    SCOPED_TRACE("byte " + std::to_string(at));
    expectRefused(writeFile("changed.so", changed), LoadErrorKind::Corrupt,
                  "corrupt artifact: its bytes do not match the SHA-256 sealed into it");
  }
}

TEST_F(LoaderTest, UnsealedFiles) {
  std::string valid = artifactPath("artifact_valid");
  std::ifstream in(valid, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::string image = bytes.substr(0, bytes.size() - DYNC_ARTIFACT_SEAL_SIZE);
  // A manifest of this format without its seal: the end was lost.
  expectRefused(writeFile("cut.so", image), LoadErrorKind::Corrupt,
                "the seal that ends every artifact is missing");
  // Format 1 had no seal; its manifest names its version.
  std::string current =
      "# dync artifact\nformat_version " + std::to_string(DYNC_ARTIFACT_FORMAT_VERSION) + "\n";
  size_t at = image.find(current);
  ASSERT_NE(at, std::string::npos);
  image.replace(at, current.size(), "# dync artifact\nformat_version 1\n");
  expectRefused(writeFile("old.so", image), LoadErrorKind::UnknownFormatVersion,
                "artifact format version 1, but this runtime reads version 2");
}

TEST_F(LoaderTest, NotADyncArtifact) {
  expectRefused(artifactPath("not_an_artifact"), LoadErrorKind::NotAnArtifact,
                "not a dync artifact: it has neither the seal nor the manifest");
}

TEST_F(LoaderTest, UnknownFormatVersion) {
  expectRefused(artifactPath("artifact_format99"), LoadErrorKind::UnknownFormatVersion,
                "artifact format version 99, but this runtime reads version " +
                    std::to_string(DYNC_ARTIFACT_FORMAT_VERSION));
}

TEST_F(LoaderTest, CodeIdentityIsReadAndChecked) {
  LoadResult result = loadArtifact(artifactPath("artifact_valid"), thisInterpreter());
  ASSERT_TRUE(result) << result.message;
  const dync_artifact_descriptor& d = result.artifact->descriptor();
  ASSERT_NE(d.entry_origins, nullptr);
  const dync_artifact_entry_origin& origin = d.entry_origins[0];
  EXPECT_STREQ(origin.module_name, "model");
  ASSERT_EQ(origin.num_functions, 1u);
  EXPECT_STREQ(origin.functions[0].qualified_name, "f");
  EXPECT_EQ(origin.functions[0].first_line, 5u);
  // Every string of a fingerprint must lie in the file, like the rest.
  expectRefused(artifactPath("artifact_bad_origin"), LoadErrorKind::BadDescriptor,
                "entry 0 origin function 0 code_sha256 does not point into the file");
}

TEST_F(LoaderTest, OtherPythonMagic) {
  expectRefused(artifactPath("artifact_py312"), LoadErrorKind::PythonMismatch,
                "bytecode built for CPython 3.12, but this interpreter is CPython 3.11");
  // A host without an interpreter never runs the bytecode, so does not check
  // it.
  LoadResult result = loadArtifact(artifactPath("artifact_py312"), LoadOptions{});
  EXPECT_TRUE(result) << result.message;
}

TEST_F(LoaderTest, OtherTorch) {
  expectRefused(artifactPath("artifact_old_torch"), LoadErrorKind::TorchMismatch,
                "built against torch 1.13.1+cpu, but this process runs torch 2.13.0");
  // Local version parts are compared when both sides have one.
  LoadOptions options = thisInterpreter();
  options.torchVersion = "2.13.0+cu121";
  expectRefused(artifactPath("artifact_valid"), LoadErrorKind::TorchMismatch,
                "but this process runs torch 2.13.0+cu121", options);
  options.torchVersion = "2.13.0";
  EXPECT_TRUE(loadArtifact(artifactPath("artifact_valid"), options));
}

TEST_F(LoaderTest, MissingCpuFeature) {
  LoadResult result = loadArtifact(artifactPath("artifact_cpu_features"), thisInterpreter());
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error, LoadErrorKind::CpuFeatureMissing);
  // sse2 is on every x86-64; a disabled feature ("-avx512f") needs nothing.
  EXPECT_TRUE(contains(result.message,
                       "compiled for CPU features this machine lacks: dync-no-such-feature "
                       "(target x86-64)"));
}

TEST_F(LoaderTest, ChangedSourceIsAWarning) {
  LoadResult result = loadArtifact(artifactPath("artifact_stale_source"), thisInterpreter());
  ASSERT_TRUE(result) << result.message;
  ASSERT_EQ(result.artifact->warnings().size(), 1u);
  EXPECT_TRUE(contains(result.artifact->warnings()[0], "model.py changed since it was exported"));
  // The Python runtime checks code identity instead, and turns it off.
  LoadOptions quiet = thisInterpreter();
  quiet.warnOnSourceChange = false;
  LoadResult checked = loadArtifact(artifactPath("artifact_stale_source"), quiet);
  ASSERT_TRUE(checked) << checked.message;
  EXPECT_TRUE(checked.artifact->warnings().empty());
}

TEST_F(LoaderTest, InitFailure) {
  expectRefused(artifactPath("artifact_init_fails"), LoadErrorKind::InitFailed,
                "initialization failed: no operator aten::no_such_op.default");
}

TEST(SealTest, DigestThenMagic) {
  std::string seal = artifactSeal("abc");
  ASSERT_EQ(seal.size(), DYNC_ARTIFACT_SEAL_SIZE);
  std::array<unsigned char, 32> digest = sha256("abc");
  EXPECT_EQ(seal.substr(0, 32), std::string(reinterpret_cast<const char*>(digest.data()), 32));
  EXPECT_EQ(seal.substr(32), DYNC_ARTIFACT_SEAL_MAGIC);
  EXPECT_EQ(checkArtifactIntegrity("abc" + seal).result, ArtifactIntegrity::Result::Intact);
  EXPECT_EQ(checkArtifactIntegrity("abd" + seal).result, ArtifactIntegrity::Result::Corrupt);
  EXPECT_TRUE(looksLikeArtifact("\x7f"
                                "ELF" +
                                seal));
  EXPECT_FALSE(looksLikeArtifact("def f(): pass\n" + seal));
  EXPECT_FALSE(looksLikeArtifact("\x7f"
                                 "ELF plain library"));
}

TEST(Sha256Test, KnownDigests) {
  EXPECT_EQ(sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Crosses a block boundary.
  EXPECT_EQ(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_FALSE(sha256FileHex("/nonexistent/dync"));
}

TEST(PythonMagicTest, Describe) {
  const unsigned char py311[4] = {0xa7, 0x0d, 0x0d, 0x0a};
  const unsigned char junk[4] = {1, 2, 3, 4};
  EXPECT_EQ(describePythonMagic(py311), "CPython 3.11");
  EXPECT_EQ(describePythonMagic(junk), "magic number 01020304");
}

} // namespace
