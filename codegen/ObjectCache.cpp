//===- ObjectCache.cpp - Compiled objects on disk, keyed by content -------===//
#include "codegen/ObjectCache.h"
#include "codegen/AtomicFile.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"

#include <cstring>

using namespace dync;
using namespace dync::codegen;

namespace {

/// An entry is this magic, the SHA-256 of the object, then the object: the
/// digest is what tells a damaged entry from a good one.
constexpr llvm::StringLiteral EntryMagic = "DYNCOBJ1";
constexpr size_t DigestSize = 32;

std::array<uint8_t, DigestSize> digestOf(llvm::StringRef bytes) {
  return llvm::SHA256::hash(llvm::arrayRefFromStringRef(bytes));
}

std::optional<std::string> nonEmptyEnv(const char* name) {
  std::optional<std::string> value = llvm::sys::Process::GetEnv(name);
  if (value && value->empty())
    return std::nullopt;
  return value;
}

} // namespace

std::optional<std::string> ObjectCache::defaultDirectory() {
  if (std::optional<std::string> dir = nonEmptyEnv("DYNC_CACHE_DIR"))
    return dir;
  llvm::SmallString<256> dir;
  if (std::optional<std::string> xdg = nonEmptyEnv("XDG_CACHE_HOME")) {
    dir = *xdg;
  } else if (std::optional<std::string> home = nonEmptyEnv("HOME")) {
    dir = *home;
    llvm::sys::path::append(dir, ".cache");
  } else {
    return std::nullopt;
  }
  llvm::sys::path::append(dir, "dync");
  return dir.str().str();
}

std::string ObjectCache::key(llvm::StringRef content, llvm::StringRef target) {
  llvm::SHA256 hash;
  std::string header = "dync-object codegen=" + std::to_string(CodegenVersion) +
                       " llvm=" LLVM_VERSION_STRING " " + target.str() + "\n";
  hash.update(header);
  hash.update(content);
  return llvm::toHex(hash.final(), /*LowerCase=*/true);
}

std::string ObjectCache::path(llvm::StringRef key) const {
  llvm::SmallString<256> path(directory_);
  llvm::sys::path::append(path, "objects", key + ".o");
  return path.str().str();
}

std::unique_ptr<llvm::MemoryBuffer> ObjectCache::lookup(llvm::StringRef key, bool* damaged) const {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path(key), /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!file)
    return nullptr;
  llvm::StringRef bytes = (*file)->getBuffer();
  bool good = bytes.size() > EntryMagic.size() + DigestSize && bytes.starts_with(EntryMagic);
  llvm::StringRef object;
  if (good) {
    llvm::StringRef digest = bytes.substr(EntryMagic.size(), DigestSize);
    object = bytes.drop_front(EntryMagic.size() + DigestSize);
    good = std::memcmp(digest.data(), digestOf(object).data(), DigestSize) == 0;
  }
  if (!good) {
    if (damaged)
      *damaged = true;
    return nullptr;
  }
  return llvm::MemoryBuffer::getMemBufferCopy(object, key);
}

llvm::Error ObjectCache::store(llvm::StringRef key, llvm::StringRef object) const {
  std::string entryPath = path(key);
  if (std::error_code ec =
          llvm::sys::fs::create_directories(llvm::sys::path::parent_path(entryPath)))
    return llvm::createStringError("cannot create the object cache '" + directory_ +
                                   "': " + ec.message());
  std::array<uint8_t, DigestSize> digest = digestOf(object);
  std::string entry;
  entry.reserve(EntryMagic.size() + DigestSize + object.size());
  entry += EntryMagic;
  entry.append(reinterpret_cast<const char*>(digest.data()), DigestSize);
  entry += object;
  return writeFileAtomically(entryPath, entry);
}
