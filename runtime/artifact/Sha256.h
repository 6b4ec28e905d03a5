//===- Sha256.h - SHA-256 of a file ---------------------------------------===//
//
// The loader compares an artifact's recorded source hash with the file on
// disk and checks the seal over the artifact's own bytes (Seal.h); the
// runtime links no crypto library (nor LLVM's), so it carries this small
// implementation of FIPS 180-4.
//
//===----------------------------------------------------------------------===//

#ifndef DYNC_RUNTIME_ARTIFACT_SHA256_H
#define DYNC_RUNTIME_ARTIFACT_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#ifndef DYNC_RUNTIME_EXPORT
#define DYNC_RUNTIME_EXPORT __attribute__((visibility("default")))
#endif

namespace dync::runtime {

/// The SHA-256 digest of `data`.
DYNC_RUNTIME_EXPORT std::array<unsigned char, 32> sha256(std::string_view data);

/// Lowercase hex SHA-256 of `data`.
DYNC_RUNTIME_EXPORT std::string sha256Hex(std::string_view data);

/// Lowercase hex SHA-256 of the file's bytes; nullopt if it cannot be read.
DYNC_RUNTIME_EXPORT std::optional<std::string> sha256FileHex(const std::string& path);

} // namespace dync::runtime

#endif // DYNC_RUNTIME_ARTIFACT_SHA256_H
