//===- Loader.h - Loading and validating dync artifacts -------------------===//
//
// Opens an artifact library and checks everything its descriptor claims
// before any of it is used: that the file is, byte for byte, what `dync
// export` sealed (Seal.h), a whole ELF shared object for this machine, that
// it exports a dync descriptor of a known format, and that it was built for
// this interpreter, this torch, this shim and this CPU. Every failure is a
// LoadError with a message naming the file; nothing here throws or aborts.
//
//===----------------------------------------------------------------------===//

#ifndef DYNC_RUNTIME_ARTIFACT_LOADER_H
#define DYNC_RUNTIME_ARTIFACT_LOADER_H

#include "runtime/artifact/dync_artifact.h"

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#ifndef DYNC_RUNTIME_EXPORT
#define DYNC_RUNTIME_EXPORT __attribute__((visibility("default")))
#endif

namespace dync::runtime {

enum class LoadErrorKind {
  None,
  FileNotFound,         ///< no such file, or not a regular file
  NotElf,               ///< not an ELF shared object for this machine
  Truncated,            ///< headers or segments point past the end of the file
  DlopenFailed,         ///< the dynamic loader refused it (message from dlerror)
  NotAnArtifact,        ///< loads, but exports no dync descriptor
  BadDescriptor,        ///< the descriptor is malformed
  Corrupt,              ///< the file's bytes do not match the seal written at export
  UnknownFormatVersion, ///< a descriptor format this runtime does not read
  ShimAbiMismatch,      ///< built against another shim ABI version
  PythonMismatch,       ///< bytecode for another interpreter (magic number)
  TorchMismatch,        ///< built against another torch version
  CpuFeatureMissing,    ///< compiled for CPU features this machine lacks
  InitFailed,           ///< the artifact's init function reported an error
};

/// The stable name of a LoadErrorKind ("python-mismatch"), for messages and
/// for the Python module's exception attributes.
DYNC_RUNTIME_EXPORT const char* loadErrorKindName(LoadErrorKind kind);

struct LoadOptions {
  /// importlib.util.MAGIC_NUMBER of the running interpreter. Unset in a host
  /// without Python: the bytecode is then never run, so it is not checked.
  std::optional<std::array<unsigned char, 4>> pythonMagic;
  /// The running torch's version; empty means the version the shim was built
  /// against. Versions compare by their public part ("2.13.0"), and also by
  /// their local part ("+cpu") when both have one.
  std::string torchVersion;
  /// The table the artifact's init receives; null means the shim's core
  /// table (no Python functions). Must outlive the artifact.
  const dync_shim_api* api = nullptr;
  /// Whether a source file whose hash differs from the one recorded at
  /// export is a warning. The Python runtime turns it off: it checks the
  /// code identity of every function instead (docs/artifact.md), which an
  /// edit elsewhere in the file does not change.
  bool warnOnSourceChange = true;
};

/// A loaded, validated, initialized artifact. Unloads the library when
/// destroyed; nothing obtained from the descriptor may be used after that.
class DYNC_RUNTIME_EXPORT Artifact {
public:
  Artifact(const Artifact&) = delete;
  Artifact& operator=(const Artifact&) = delete;
  ~Artifact();

  const std::string& path() const { return path_; }
  const dync_artifact_descriptor& descriptor() const { return *descriptor_; }
  /// Checks that passed with a caveat, e.g. the source file changed since
  /// export.
  const std::vector<std::string>& warnings() const { return warnings_; }

private:
  friend class Loader;
  Artifact() = default;
  std::string path_;
  void* library_ = nullptr;
  const dync_artifact_descriptor* descriptor_ = nullptr;
  std::vector<std::string> warnings_;
};

struct LoadResult {
  std::unique_ptr<Artifact> artifact;
  LoadErrorKind error = LoadErrorKind::None;
  std::string message;

  explicit operator bool() const { return artifact != nullptr; }
};

/// Loads the artifact at `path` (with RTLD_NOW | RTLD_LOCAL, so two artifacts
/// never resolve each other's symbols).
DYNC_RUNTIME_EXPORT LoadResult loadArtifact(const std::string& path,
                                            const LoadOptions& options = {});

/// "3.11" for a known CPython magic number, else the number in hex.
DYNC_RUNTIME_EXPORT std::string describePythonMagic(const unsigned char magic[4]);

} // namespace dync::runtime

#endif // DYNC_RUNTIME_ARTIFACT_LOADER_H
