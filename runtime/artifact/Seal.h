//===- Seal.h - The checksum that ends every dync artifact ----------------===//
//
// `dync export` appends a seal to the library it links: the SHA-256 of every
// byte of the file before it, then DYNC_ARTIFACT_SEAL_MAGIC
// (dync_artifact.h). The loader verifies it before dlopen sees the file, and
// `dync inspect` before it prints the manifest, so a byte changed anywhere
// after export (a descriptor field or string, an entry's code bytes, a graph
// name, the manifest, machine code, a relocation) makes the file a corrupt
// artifact instead of something trusted. The seal covers the whole file
// rather than a list of fields, so a later format change cannot forget to
// cover what it adds.
//
// These functions are built into both the runtime, which checks seals, and
// codegen, which writes them and checks them for `dync inspect` and `-o`:
// one definition of what a seal is, on both sides.
//
//===----------------------------------------------------------------------===//

#ifndef DYNC_RUNTIME_ARTIFACT_SEAL_H
#define DYNC_RUNTIME_ARTIFACT_SEAL_H

#include <string>
#include <string_view>

#ifndef DYNC_RUNTIME_EXPORT
#define DYNC_RUNTIME_EXPORT __attribute__((visibility("default")))
#endif

namespace dync::runtime {

/// How every artifact's manifest begins; the format version's number
/// follows. Files without a seal are recognized by it (an artifact of an
/// earlier format, or one whose seal is damaged).
inline constexpr std::string_view ManifestHeader = "# dync artifact\nformat_version ";

/// The DYNC_ARTIFACT_SEAL_SIZE bytes to append to a linked artifact whose
/// bytes are \p image.
DYNC_RUNTIME_EXPORT std::string artifactSeal(std::string_view image);

struct ArtifactIntegrity {
  enum class Result {
    Intact,        ///< the seal matches the file
    Corrupt,       ///< the file changed after export, or lost its end
    OtherFormat,   ///< no seal: an artifact of another format version
    NotAnArtifact, ///< neither a seal nor a dync manifest
  };
  Result result = Result::Intact;
  /// Whether the file ends with a seal (matching or not).
  bool sealed = false;
  /// For OtherFormat, the format version the manifest names.
  unsigned formatVersion = 0;
  /// For Corrupt and NotAnArtifact, why, without the file's name
  /// ("corrupt artifact: ...").
  std::string reason;
};

/// Checks the seal of a file whose bytes are \p file.
DYNC_RUNTIME_EXPORT ArtifactIntegrity checkArtifactIntegrity(std::string_view file);

/// Whether \p file looks like an artifact `dync export` wrote, of any format
/// version and intact or not: an ELF file with a seal or a dync manifest.
/// What `-o` may replace.
DYNC_RUNTIME_EXPORT bool looksLikeArtifact(std::string_view file);

} // namespace dync::runtime

#endif // DYNC_RUNTIME_ARTIFACT_SEAL_H
