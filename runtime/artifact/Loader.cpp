//===- Loader.cpp - Loading and validating dync artifacts -----------------===//

#include "runtime/artifact/Loader.h"

#include "runtime/artifact/CpuFeatures.h"
#include "runtime/artifact/Seal.h"
#include "runtime/artifact/Sha256.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <sstream>

namespace dync::runtime {

const char* loadErrorKindName(LoadErrorKind kind) {
  switch (kind) {
  case LoadErrorKind::None:
    return "none";
  case LoadErrorKind::FileNotFound:
    return "file-not-found";
  case LoadErrorKind::NotElf:
    return "not-elf";
  case LoadErrorKind::Truncated:
    return "truncated";
  case LoadErrorKind::DlopenFailed:
    return "dlopen-failed";
  case LoadErrorKind::NotAnArtifact:
    return "not-an-artifact";
  case LoadErrorKind::BadDescriptor:
    return "bad-descriptor";
  case LoadErrorKind::Corrupt:
    return "corrupt";
  case LoadErrorKind::UnknownFormatVersion:
    return "unknown-format-version";
  case LoadErrorKind::ShimAbiMismatch:
    return "shim-abi-mismatch";
  case LoadErrorKind::PythonMismatch:
    return "python-mismatch";
  case LoadErrorKind::TorchMismatch:
    return "torch-mismatch";
  case LoadErrorKind::CpuFeatureMissing:
    return "cpu-feature-missing";
  case LoadErrorKind::InitFailed:
    return "init-failed";
  }
  return "unknown";
}

std::string describePythonMagic(const unsigned char magic[4]) {
  // The first two bytes are a little-endian number that each CPython release
  // bumps; the last two are always "\r\n". Final-release values only.
  unsigned number = magic[0] | unsigned(magic[1]) << 8;
  struct Known {
    unsigned number;
    const char* version;
  };
  static constexpr Known known[] = {{3413, "3.8"},  {3425, "3.9"},  {3439, "3.10"},
                                    {3495, "3.11"}, {3531, "3.12"}, {3571, "3.13"}};
  if (magic[2] == '\r' && magic[3] == '\n')
    for (const Known& k : known)
      if (k.number == number)
        return std::string("CPython ") + k.version;
  char hex[16];
  std::snprintf(hex, sizeof(hex), "%02x%02x%02x%02x", magic[0], magic[1], magic[2], magic[3]);
  return std::string("magic number ") + hex;
}

namespace {

#if defined(__x86_64__)
constexpr uint16_t kHostMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr uint16_t kHostMachine = EM_AARCH64;
#else
#error "dync's loader knows x86-64 and AArch64 hosts"
#endif

// The public part of a PEP 440 version ("2.13.0" of "2.13.0+cpu") and the
// local part ("cpu", or "").
std::pair<std::string_view, std::string_view> splitVersion(std::string_view v) {
  size_t plus = v.find('+');
  if (plus == std::string_view::npos)
    return {v, {}};
  return {v.substr(0, plus), v.substr(plus + 1)};
}

bool sameTorch(std::string_view built, std::string_view running) {
  auto [builtPublic, builtLocal] = splitVersion(built);
  auto [runningPublic, runningLocal] = splitVersion(running);
  if (builtPublic != runningPublic)
    return false;
  return builtLocal.empty() || runningLocal.empty() || builtLocal == runningLocal;
}

} // namespace

// Holds the state of one load and turns each failed check into a LoadResult.
class Loader {
public:
  Loader(const std::string& path, const LoadOptions& options) : path_(path), options_(options) {}

  LoadResult run() {
    if (!checkFile())
      return take();
    artifact_.reset(new Artifact());
    artifact_->path_ = path_;
    if (!open() || !checkDescriptor() || !checkEntries() || !checkEnvironment() || !init())
      return take();
    LoadResult result;
    result.artifact = std::move(artifact_);
    return result;
  }

private:
  bool error(LoadErrorKind kind, const std::string& message) {
    kind_ = kind;
    message_ = path_ + ": " + message;
    return false;
  }

  LoadResult take() {
    // Destroying a half-loaded Artifact unloads the library.
    artifact_.reset();
    LoadResult result;
    result.error = kind_;
    result.message = std::move(message_);
    return result;
  }

  // Reads the file with plain file I/O before dlopen sees it: its seal must
  // match its bytes (Seal.h), so nothing changed since export is ever
  // trusted, and its ELF headers must lie inside it, since a truncated
  // library can make the dynamic loader map pages past the end of the file,
  // which faults on first touch instead of failing.
  bool checkFile() {
    struct stat st;
    if (::stat(path_.c_str(), &st) != 0)
      return error(LoadErrorKind::FileNotFound,
                   std::string("cannot open: ") + std::strerror(errno));
    if (!S_ISREG(st.st_mode))
      return error(LoadErrorKind::FileNotFound, "not a regular file");
    std::string bytes;
    if (!readFile(static_cast<uint64_t>(st.st_size), bytes))
      return error(LoadErrorKind::FileNotFound,
                   std::string("cannot read: ") + std::strerror(errno));
    uint64_t size = bytes.size();
    if (size < SELFMAG || std::memcmp(bytes.data(), ELFMAG, SELFMAG) != 0)
      return error(LoadErrorKind::NotElf,
                   size == 0 ? "empty file, not a shared library" : "not an ELF file");
    // A seal that does not match is reported before anything else is read:
    // the headers below may be the bytes that changed.
    ArtifactIntegrity integrity = checkArtifactIntegrity(bytes);
    if (integrity.sealed && integrity.result != ArtifactIntegrity::Result::Intact)
      return error(LoadErrorKind::Corrupt, integrity.reason);

    Elf64_Ehdr header;
    if (size < sizeof(header))
      return error(LoadErrorKind::Truncated,
                   "truncated: " + std::to_string(size) + " bytes, shorter than an ELF header");
    std::memcpy(&header, bytes.data(), sizeof(header));
    if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
      return error(LoadErrorKind::NotElf, "not a 64-bit little-endian ELF file");
    if (header.e_type != ET_DYN)
      return error(LoadErrorKind::NotElf,
                   "not a shared library (ELF type " + std::to_string(header.e_type) + ")");
    if (header.e_machine != kHostMachine)
      return error(LoadErrorKind::NotElf, "built for another machine (ELF machine " +
                                              std::to_string(header.e_machine) + ")");
    if (header.e_phentsize != sizeof(Elf64_Phdr) || header.e_phnum == 0)
      return error(LoadErrorKind::NotElf, "corrupt ELF header: no program headers");

    auto pastEnd = [&](uint64_t offset, uint64_t length) {
      return offset > size || length > size - offset;
    };
    uint64_t phTableSize = uint64_t(header.e_phnum) * header.e_phentsize;
    if (pastEnd(header.e_phoff, phTableSize))
      return error(LoadErrorKind::Truncated, "truncated: program headers end past the file's " +
                                                 std::to_string(size) + " bytes");
    if (header.e_shoff != 0 &&
        pastEnd(header.e_shoff, uint64_t(header.e_shnum) * header.e_shentsize))
      return error(LoadErrorKind::Truncated, "truncated: section headers end past the file's " +
                                                 std::to_string(size) + " bytes");
    for (unsigned i = 0; i < header.e_phnum; ++i) {
      Elf64_Phdr ph;
      std::memcpy(&ph, bytes.data() + header.e_phoff + uint64_t(i) * sizeof(ph), sizeof(ph));
      if (ph.p_type == PT_LOAD && pastEnd(ph.p_offset, ph.p_filesz))
        return error(LoadErrorKind::Truncated, "truncated: segment " + std::to_string(i) +
                                                   " ends at byte " +
                                                   std::to_string(ph.p_offset + ph.p_filesz) +
                                                   " but the file has " + std::to_string(size));
    }

    switch (integrity.result) {
    case ArtifactIntegrity::Result::Intact:
      return true;
    case ArtifactIntegrity::Result::OtherFormat:
      return formatVersionError(integrity.formatVersion);
    case ArtifactIntegrity::Result::NotAnArtifact:
      return error(LoadErrorKind::NotAnArtifact, integrity.reason);
    case ArtifactIntegrity::Result::Corrupt:
      return error(LoadErrorKind::Corrupt, integrity.reason);
    }
    return error(LoadErrorKind::Corrupt, integrity.reason);
  }

  // Reads the whole file, which stat() says has \p expected bytes.
  bool readFile(uint64_t expected, std::string& bytes) {
    std::FILE* file = std::fopen(path_.c_str(), "rb");
    if (!file)
      return false;
    bytes.resize(expected);
    size_t got = std::fread(bytes.data(), 1, bytes.size(), file);
    bool failed = std::ferror(file);
    std::fclose(file);
    // A file that shrank meanwhile is checked as it is now.
    bytes.resize(got);
    return !failed;
  }

  bool formatVersionError(unsigned version) {
    return error(LoadErrorKind::UnknownFormatVersion,
                 "artifact format version " + std::to_string(version) +
                     ", but this runtime reads version " +
                     std::to_string(DYNC_ARTIFACT_FORMAT_VERSION) +
                     "; re-export it with the dync that matches this runtime");
  }

  bool open() {
    // dlopen runs the library's constructors; a dync artifact has none that
    // matter, and a file that is not one is refused below before anything in
    // it is called again.
    dlerror();
    // A name without a slash would make dlopen search the library path
    // (LD_LIBRARY_PATH, the system directories) instead of opening the file
    // the checks above read: `dync.load("model.so")` means ./model.so.
    std::string file = path_.find('/') == std::string::npos ? "./" + path_ : path_;
    void* library = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      const char* why = dlerror();
      return error(LoadErrorKind::DlopenFailed,
                   std::string("cannot load: ") + (why ? why : "unknown dlopen error"));
    }
    artifact_->library_ = library;
    void* symbol = ::dlsym(library, DYNC_ARTIFACT_SYMBOL);
    if (!symbol)
      return error(LoadErrorKind::NotAnArtifact,
                   "not a dync artifact: it does not export " DYNC_ARTIFACT_SYMBOL);
    Dl_info info;
    if (!::dladdr(symbol, &info))
      return error(LoadErrorKind::NotAnArtifact, "cannot locate " DYNC_ARTIFACT_SYMBOL);
    base_ = info.dli_fbase;
    if (!inLibrary(symbol))
      // RTLD_LOCAL lookups also search the library's dependencies.
      return error(LoadErrorKind::NotAnArtifact,
                   DYNC_ARTIFACT_SYMBOL " is not defined by the file itself");
    auto get = reinterpret_cast<dync_artifact_get_descriptor_fn>(symbol);
    descriptor_ = get();
    return true;
  }

  // Whether `p` points into this library's mapping: every pointer in the
  // descriptor must, or it was not built by dync's codegen.
  bool inLibrary(const void* p) const {
    Dl_info info;
    return p && ::dladdr(p, &info) && info.dli_fbase == base_;
  }

  bool checkString(const char* s, const char* what, bool allowEmpty = true) {
    if (!inLibrary(s))
      return error(LoadErrorKind::BadDescriptor,
                   std::string("corrupt descriptor: ") + what + " does not point into the file");
    size_t length = strnlen(s, kMaxString);
    if (length == kMaxString)
      return error(LoadErrorKind::BadDescriptor,
                   std::string("corrupt descriptor: ") + what + " is not a terminated string");
    if (!allowEmpty && length == 0)
      return error(LoadErrorKind::BadDescriptor,
                   std::string("corrupt descriptor: ") + what + " is empty");
    return true;
  }

  bool checkDescriptor() {
    const dync_artifact_descriptor* d = descriptor_;
    if (!inLibrary(d))
      return error(LoadErrorKind::BadDescriptor,
                   "corrupt descriptor: " DYNC_ARTIFACT_SYMBOL "() returned a pointer outside "
                   "the file");
    if (d->magic != DYNC_ARTIFACT_MAGIC)
      return error(LoadErrorKind::BadDescriptor, "corrupt descriptor: bad magic");
    if (d->format_version != DYNC_ARTIFACT_FORMAT_VERSION)
      return formatVersionError(d->format_version);
    if (d->descriptor_size != sizeof(dync_artifact_descriptor))
      return error(LoadErrorKind::BadDescriptor,
                   "corrupt descriptor: size " + std::to_string(d->descriptor_size) +
                       ", format version " + std::to_string(DYNC_ARTIFACT_FORMAT_VERSION) +
                       " has " + std::to_string(sizeof(dync_artifact_descriptor)));
    if (!inLibrary(reinterpret_cast<const char*>(d) + sizeof(*d) - 1))
      return error(LoadErrorKind::BadDescriptor, "corrupt descriptor: extends past the file");
    artifact_->descriptor_ = d;
    return checkString(d->torch_version, "torch_version", false) &&
           checkString(d->target_cpu, "target_cpu") &&
           checkString(d->cpu_features, "cpu_features") &&
           checkString(d->source_path, "source_path") &&
           checkString(d->source_sha256, "source_sha256");
  }

  bool checkEntries() {
    const dync_artifact_descriptor* d = descriptor_;
    if (d->init && !inLibrary(reinterpret_cast<const void*>(d->init)))
      return error(LoadErrorKind::BadDescriptor, "corrupt descriptor: init is not in the file");
    if (d->num_entries && !inLibrary(d->entries))
      return error(LoadErrorKind::BadDescriptor, "corrupt descriptor: entries not in the file");
    for (uint32_t i = 0; i < d->num_entries; ++i) {
      const dync_artifact_entry& e = d->entries[i];
      std::string where = "entry " + std::to_string(i);
      if (!inLibrary(&e) || !inLibrary(reinterpret_cast<const char*>(&e + 1) - 1))
        return error(LoadErrorKind::BadDescriptor,
                     "corrupt descriptor: " + where + " not in the file");
      if (!checkString(e.qualified_name, (where + " qualified_name").c_str(), false))
        return false;
      where += " (" + std::string(e.qualified_name) + ")";
      if (!e.code_size || !inLibrary(e.code) || !inLibrary(e.code + e.code_size - 1))
        return error(LoadErrorKind::BadDescriptor,
                     "corrupt descriptor: " + where + " has no code object bytes in the file");
      if (!inLibrary(reinterpret_cast<const void*>(e.guard)))
        return error(LoadErrorKind::BadDescriptor,
                     "corrupt descriptor: " + where + " has no guard function");
      if (e.num_graphs && !inLibrary(e.graphs))
        return error(LoadErrorKind::BadDescriptor,
                     "corrupt descriptor: " + where + " graphs not in the file");
      for (uint32_t g = 0; g < e.num_graphs; ++g) {
        std::string graph = where + " graph " + std::to_string(g);
        if (!checkString(e.graphs[g].name, (graph + " name").c_str(), false))
          return false;
        if (!inLibrary(reinterpret_cast<const void*>(e.graphs[g].run)))
          return error(LoadErrorKind::BadDescriptor,
                       "corrupt descriptor: " + graph + " has no function");
      }
    }
    return checkOrigins();
  }

  // Code identity: each entry's origin and the functions its capture ran.
  bool checkOrigins() {
    const dync_artifact_descriptor* d = descriptor_;
    if (!d->entry_origins)
      return true;
    for (uint32_t i = 0; i < d->num_entries; ++i) {
      const dync_artifact_entry_origin& o = d->entry_origins[i];
      std::string where = "entry " + std::to_string(i) + " origin";
      if (!inLibrary(&o) || !inLibrary(reinterpret_cast<const char*>(&o + 1) - 1))
        return error(LoadErrorKind::BadDescriptor,
                     "corrupt descriptor: " + where + " not in the file");
      if (!checkString(o.module_name, (where + " module_name").c_str()) ||
          !checkString(o.defining_file, (where + " defining_file").c_str()))
        return false;
      if (o.num_functions &&
          (!inLibrary(o.functions) ||
           !inLibrary(reinterpret_cast<const char*>(o.functions + o.num_functions) - 1)))
        return error(LoadErrorKind::BadDescriptor,
                     "corrupt descriptor: " + where + " functions not in the file");
      for (uint32_t f = 0; f < o.num_functions; ++f) {
        const dync_artifact_function& fn = o.functions[f];
        std::string function = where + " function " + std::to_string(f);
        if (!checkString(fn.module_name, (function + " module_name").c_str()) ||
            !checkString(fn.qualified_name, (function + " qualified_name").c_str(), false) ||
            !checkString(fn.file, (function + " file").c_str()) ||
            !checkString(fn.code_sha256, (function + " code_sha256").c_str(), false))
          return false;
      }
    }
    return true;
  }

  bool checkEnvironment() {
    const dync_artifact_descriptor* d = descriptor_;
    if (d->shim_abi_version != DYNC_SHIM_ABI_VERSION)
      return error(LoadErrorKind::ShimAbiMismatch, "built for shim ABI version " +
                                                       std::to_string(d->shim_abi_version) +
                                                       ", but this runtime provides version " +
                                                       std::to_string(DYNC_SHIM_ABI_VERSION));
    if (options_.pythonMagic && std::memcmp(d->python_magic, options_.pythonMagic->data(), 4) != 0)
      return error(LoadErrorKind::PythonMismatch,
                   "bytecode built for " + describePythonMagic(d->python_magic) +
                       ", but this interpreter is " +
                       describePythonMagic(options_.pythonMagic->data()));
    std::string running =
        options_.torchVersion.empty() ? dync_shim_torch_version() : options_.torchVersion;
    if (!sameTorch(d->torch_version, running))
      return error(LoadErrorKind::TorchMismatch, std::string("built against torch ") +
                                                     d->torch_version +
                                                     ", but this process runs torch " + running);
    std::vector<std::string> missing = missingCpuFeatures(d->cpu_features);
    if (!missing.empty()) {
      std::string list;
      for (const std::string& f : missing)
        list += (list.empty() ? "" : ", ") + f;
      std::string target = *d->target_cpu ? std::string(" (target ") + d->target_cpu + ")" : "";
      return error(LoadErrorKind::CpuFeatureMissing,
                   "compiled for CPU features this machine lacks: " + list + target);
    }
    if (options_.warnOnSourceChange)
      checkSource();
    return true;
  }

  // A changed source file means the artifact may no longer match the code the
  // user runs; it still runs what was exported, so this only warns. A missing
  // file is normal for a deployed artifact.
  void checkSource() {
    const dync_artifact_descriptor* d = descriptor_;
    if (!*d->source_path)
      return;
    struct stat st;
    if (::stat(d->source_path, &st) != 0)
      return;
    std::optional<std::string> hash = sha256FileHex(d->source_path);
    if (!hash)
      artifact_->warnings_.push_back(std::string("cannot read the exported source ") +
                                     d->source_path + " to check its hash");
    else if (*hash != d->source_sha256)
      artifact_->warnings_.push_back(std::string(d->source_path) +
                                     " changed since it was exported; the artifact runs the "
                                     "code as it was then");
  }

  bool init() {
    if (!descriptor_->init)
      return true;
    static dync_shim_api coreApi = [] {
      dync_shim_api api{};
      dync_shim_fill_api(&api);
      return api;
    }();
    char message[1024] = {0};
    int status =
        descriptor_->init(options_.api ? options_.api : &coreApi, message, sizeof(message));
    message[sizeof(message) - 1] = 0;
    if (status != DYNC_ARTIFACT_OK)
      return error(LoadErrorKind::InitFailed,
                   std::string("initialization failed: ") + (*message ? message : "no message"));
    return true;
  }

  static constexpr size_t kMaxString = 1 << 16;

  std::string path_;
  const LoadOptions& options_;
  std::unique_ptr<Artifact> artifact_;
  const dync_artifact_descriptor* descriptor_ = nullptr;
  void* base_ = nullptr;
  LoadErrorKind kind_ = LoadErrorKind::None;
  std::string message_;
};

Artifact::~Artifact() {
  if (library_)
    ::dlclose(library_);
}

LoadResult loadArtifact(const std::string& path, const LoadOptions& options) {
  try {
    return Loader(path, options).run();
  } catch (const std::exception& e) {
    LoadResult result;
    result.error = LoadErrorKind::BadDescriptor;
    result.message = path + ": internal error while loading: " + e.what();
    return result;
  }
}

} // namespace dync::runtime
