//===- Seal.cpp - The checksum that ends every dync artifact --------------===//

#include "runtime/artifact/Seal.h"

#include "runtime/artifact/Sha256.h"
#include "runtime/artifact/dync_artifact.h"

#include <array>
#include <charconv>
#include <cstring>
#include <optional>

namespace dync::runtime {

namespace {

constexpr std::string_view SealMagic(DYNC_ARTIFACT_SEAL_MAGIC, DYNC_ARTIFACT_SEAL_MAGIC_SIZE);
static_assert(sizeof(DYNC_ARTIFACT_SEAL_MAGIC) == DYNC_ARTIFACT_SEAL_MAGIC_SIZE + 1);
static_assert(DYNC_ARTIFACT_SEAL_DIGEST_SIZE == 32, "the seal holds a SHA-256 digest");

bool hasSealMagic(std::string_view file) {
  return file.size() >= DYNC_ARTIFACT_SEAL_SIZE && file.ends_with(SealMagic);
}

// The format version the manifest's first lines name, if the file holds a
// dync manifest.
std::optional<unsigned> manifestFormatVersion(std::string_view file) {
  size_t at = file.find(ManifestHeader);
  if (at == std::string_view::npos)
    return std::nullopt;
  std::string_view digits = file.substr(at + ManifestHeader.size(), 10);
  unsigned version = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), version);
  if (ec != std::errc() || end == digits.data() || end == digits.data() + digits.size() ||
      *end != '\n')
    return std::nullopt;
  return version;
}

} // namespace

std::string artifactSeal(std::string_view image) {
  std::array<unsigned char, 32> digest = sha256(image);
  std::string seal(reinterpret_cast<const char*>(digest.data()), digest.size());
  seal += SealMagic;
  return seal;
}

ArtifactIntegrity checkArtifactIntegrity(std::string_view file) {
  ArtifactIntegrity check;
  if (hasSealMagic(file)) {
    check.sealed = true;
    std::string_view image = file.substr(0, file.size() - DYNC_ARTIFACT_SEAL_SIZE);
    std::string_view recorded = file.substr(image.size(), DYNC_ARTIFACT_SEAL_DIGEST_SIZE);
    std::array<unsigned char, 32> digest = sha256(image);
    if (std::memcmp(digest.data(), recorded.data(), digest.size()) == 0)
      return check;
    check.result = ArtifactIntegrity::Result::Corrupt;
    check.reason = "corrupt artifact: its bytes do not match the SHA-256 sealed into it at "
                   "export (the file was changed or damaged since); export it again";
    return check;
  }
  std::optional<unsigned> version = manifestFormatVersion(file);
  if (!version) {
    check.result = ArtifactIntegrity::Result::NotAnArtifact;
    check.reason = "not a dync artifact: it has neither the seal nor the manifest that "
                   "'dync export' writes";
    return check;
  }
  if (*version != DYNC_ARTIFACT_FORMAT_VERSION) {
    // Format 1 had no seal; its manifest says which format it is.
    check.result = ArtifactIntegrity::Result::OtherFormat;
    check.formatVersion = *version;
    return check;
  }
  check.result = ArtifactIntegrity::Result::Corrupt;
  check.reason = "corrupt artifact: the seal that ends every artifact is missing (the file was "
                 "truncated, or something was appended to it); export it again";
  return check;
}

bool looksLikeArtifact(std::string_view file) {
  return file.starts_with("\x7f"
                          "ELF") &&
         (hasSealMagic(file) || manifestFormatVersion(file).has_value());
}

} // namespace dync::runtime
