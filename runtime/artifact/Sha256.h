//===- Sha256.h - SHA-256 of a file ---------------------------------------===//
//
// The loader compares an artifact's recorded source hash with the file on
// disk; the runtime links no crypto library (nor LLVM's), so it carries this
// small implementation of FIPS 180-4.
//
//===----------------------------------------------------------------------===//

#ifndef DYNC_RUNTIME_ARTIFACT_SHA256_H
#define DYNC_RUNTIME_ARTIFACT_SHA256_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#ifndef DYNC_RUNTIME_EXPORT
#define DYNC_RUNTIME_EXPORT __attribute__((visibility("default")))
#endif

namespace dync::runtime {

/// Lowercase hex SHA-256 of `data`.
DYNC_RUNTIME_EXPORT std::string sha256Hex(std::string_view data);

/// Lowercase hex SHA-256 of the file's bytes; nullopt if it cannot be read.
DYNC_RUNTIME_EXPORT std::optional<std::string> sha256FileHex(const std::string& path);

} // namespace dync::runtime

#endif // DYNC_RUNTIME_ARTIFACT_SHA256_H
