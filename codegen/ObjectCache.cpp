//===- ObjectCache.cpp - Compiled objects on disk, keyed by content -------===//
#include "codegen/ObjectCache.h"
#include "codegen/AtomicFile.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/xxhash.h"

#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>

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

/// The GNU build ID of the loaded object whose segments hold \p address:
/// the linker's hash of that object's contents. Empty if it has none.
std::string buildIdContaining(const void* address) {
  struct Search {
    uintptr_t address;
    std::string id;
  } search{reinterpret_cast<uintptr_t>(address), {}};
  dl_iterate_phdr(
      [](dl_phdr_info* object, size_t, void* data) {
        auto* search = static_cast<Search*>(data);
        bool holds = false;
        for (int i = 0; i < object->dlpi_phnum && !holds; ++i) {
          const ElfW(Phdr)& segment = object->dlpi_phdr[i];
          uintptr_t start = object->dlpi_addr + segment.p_vaddr;
          holds = segment.p_type == PT_LOAD && search->address >= start &&
                  search->address < start + segment.p_memsz;
        }
        if (!holds)
          return 0;
        for (int i = 0; i < object->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = object->dlpi_phdr[i];
          if (segment.p_type != PT_NOTE)
            continue;
          const char* note = reinterpret_cast<const char*>(object->dlpi_addr + segment.p_vaddr);
          const char* end = note + segment.p_memsz;
          // Each note: a header, then its name and its descriptor, each
          // padded to 4 bytes.
          while (note + sizeof(ElfW(Nhdr)) <= end) {
            ElfW(Nhdr) header;
            std::memcpy(&header, note, sizeof(header));
            const char* name = note + sizeof(header);
            const char* desc = name + ((header.n_namesz + 3) & ~3u);
            if (header.n_type == NT_GNU_BUILD_ID && header.n_namesz == 4 &&
                std::memcmp(name, "GNU", 4) == 0 && desc + header.n_descsz <= end) {
              search->id = llvm::toHex(llvm::StringRef(desc, header.n_descsz), true);
              return 1;
            }
            note = desc + ((header.n_descsz + 3) & ~3u);
          }
        }
        return 1;
      },
      &search);
  return search.id;
}

} // namespace

std::string ObjectCache::compilerIdentity() {
  // Computed once: the notes are in memory, but the fallback reads a file.
  static const std::string identity = [] {
    const void* self = reinterpret_cast<const void*>(&buildIdContaining);
    if (std::string id = buildIdContaining(self); !id.empty())
      return "build-id " + id;
    Dl_info info;
    if (dladdr(self, &info) && info.dli_fname) {
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
          llvm::MemoryBuffer::getFile(info.dli_fname, /*IsText=*/false,
                                      /*RequiresNullTerminator=*/false);
      if (file)
        return "file-hash " + llvm::utohexstr(llvm::xxh3_64bits((*file)->getBuffer()));
    }
    return std::string("unidentified build");
  }();
  return identity;
}

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
  std::string header =
      "dync-object " + compilerIdentity() + " llvm=" LLVM_VERSION_STRING " " + target.str() + "\n";
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
  std::string entryPath = path(key);
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(entryPath, /*IsText=*/false, /*RequiresNullTerminator=*/false);
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
  // The entry's time is its last use, for prune: touched on every hit.
  utimensat(AT_FDCWD, entryPath.c_str(), nullptr, 0);
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

llvm::Expected<ObjectCache::Pruned> ObjectCache::prune(uint64_t maxBytes) const {
  struct Entry {
    std::string path;
    uint64_t size;
    llvm::sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  llvm::SmallString<256> objects(directory_);
  llvm::sys::path::append(objects, "objects");
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(objects, ec), end; it != end && !ec; it.increment(ec)) {
    if (llvm::sys::path::extension(it->path()) != ".o")
      continue; // a temporary file another export is writing
    llvm::ErrorOr<llvm::sys::fs::basic_file_status> status = it->status();
    if (!status)
      continue;
    entries.push_back({it->path(), status->getSize(), status->getLastModificationTime()});
    total += status->getSize();
  }
  if (ec && ec != std::errc::no_such_file_or_directory)
    return llvm::createStringError("cannot list the object cache '" + std::string(objects) +
                                   "': " + ec.message());
  Pruned pruned;
  if (total <= maxBytes)
    return pruned;
  llvm::sort(entries, [](const Entry& a, const Entry& b) { return a.used < b.used; });
  for (const Entry& entry : entries) {
    if (total <= maxBytes)
      break;
    if (llvm::sys::fs::remove(entry.path, /*IgnoreNonExisting=*/true))
      continue; // not ours to remove; the next one may be
    total -= entry.size;
    ++pruned.entries;
    pruned.bytes += entry.size;
  }
  return pruned;
}

llvm::Expected<uint64_t> ObjectCache::maxBytesFromEnvironment() {
  std::optional<std::string> text = nonEmptyEnv("DYNC_CACHE_MAX_MB");
  uint64_t megabytes = DefaultMaxMegabytes;
  if (text && llvm::StringRef(*text).getAsInteger(10, megabytes))
    return llvm::createStringError("DYNC_CACHE_MAX_MB='" + *text +
                                   "' is not a whole number of megabytes");
  // More megabytes than bytes can count is no limit, not a wrapped one.
  if (megabytes > (UINT64_MAX >> 20))
    return UINT64_MAX;
  return megabytes << 20;
}
