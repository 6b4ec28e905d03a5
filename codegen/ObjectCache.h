//===- ObjectCache.h - Compiled objects on disk, keyed by content -*- C++ -*-===//
//
// Optimizing and compiling a module is most of an export's time once the
// model is captured, and a model exported again usually has the same
// kernels. The cache keeps each compiled object under a hash of everything
// that decided its bytes: the module's text (or the kernel's canonical IR),
// the target (triple, CPU, features), LLVM's version and the compiler's own
// build (compilerIdentity).
//
// Entries are written to a temporary file and renamed into place, so a
// reader never sees half an entry and concurrent exports are safe. Each
// entry carries the SHA-256 of its object; an entry that fails the check
// (truncated, overwritten) is a miss, and the recompiled object replaces it.
// The cache is only ever an optimization: failing to write it is reported,
// never fatal.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace dync::codegen {

class ObjectCache {
public:
  /// A cache rooted at \p directory (created on first store).
  explicit ObjectCache(std::string directory) : directory_(std::move(directory)) {}

  /// `$DYNC_CACHE_DIR`, else `$XDG_CACHE_HOME/dync`, else `~/.cache/dync`;
  /// none when no variable says where (no HOME either).
  static std::optional<std::string> defaultDirectory();

  /// The key of an object built from \p content for \p target: a hex SHA-256
  /// that also covers LLVM's version and compilerIdentity().
  static std::string key(llvm::StringRef content, llvm::StringRef target);

  /// The build of dync doing the compiling: the GNU build ID of the binary
  /// code generation is linked into (the linker's hash of its contents), or
  /// a hash of that file where the linker wrote none. Any rebuild that
  /// changes the binary changes every key.
  static std::string compilerIdentity();

  const std::string& directory() const { return directory_; }
  /// Where the entry for \p key lives.
  std::string path(llvm::StringRef key) const;

  /// The object stored under \p key, or null if there is none or the entry
  /// is damaged (\p damaged is then set, for reporting).
  std::unique_ptr<llvm::MemoryBuffer> lookup(llvm::StringRef key, bool* damaged = nullptr) const;
  /// Stores \p object under \p key, replacing any entry, atomically.
  llvm::Error store(llvm::StringRef key, llvm::StringRef object) const;

  /// What prune removed.
  struct Pruned {
    size_t entries = 0;
    uint64_t bytes = 0;
  };
  /// Removes the least recently used entries (a hit counts as a use) until
  /// the entries take at most \p maxBytes. Entries another build of dync
  /// compiled are never hit again, so without this the cache would only
  /// grow. An entry another export removed meanwhile counts as gone; one
  /// that cannot be removed is passed over for the next.
  llvm::Expected<Pruned> prune(uint64_t maxBytes) const;

  /// The size the cache is kept under: $DYNC_CACHE_MAX_MB megabytes, else
  /// DefaultMaxMegabytes. A value that is not a whole number is an error
  /// (which the caller may report and then use the default).
  static llvm::Expected<uint64_t> maxBytesFromEnvironment();
  static constexpr uint64_t DefaultMaxMegabytes = 1024;

private:
  std::string directory_;
};

} // namespace dync::codegen
