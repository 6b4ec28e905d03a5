//===- OutputPath.cpp - Where `dync export -o` may write ------------------===//
#include "driver/OutputPath.h"

#include "runtime/artifact/Seal.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

namespace dync::driver {

namespace {

/// Whether \p name is a Python identifier. Bytes of non-ASCII characters
/// count as identifier characters: a name is then rather taken for
/// importable than not.
bool isIdentifier(llvm::StringRef name) {
  if (name.empty() || llvm::isDigit(name.front()))
    return false;
  return llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
  });
}

/// The file or folder of \p directory that `import module` finds after an
/// extension module, if there is one: module.py, module.pyc, or a folder
/// without __init__ (a namespace portion, which an extension module beats).
/// A regular package (module/__init__.py) is found before any extension
/// module, so an artifact cannot shadow it.
std::optional<std::string> shadowedModule(llvm::StringRef directory, llvm::StringRef module) {
  auto in = [&](const llvm::Twine& name) {
    llvm::SmallString<256> path(directory);
    llvm::sys::path::append(path, name);
    return std::string(path);
  };
  for (const char* suffix : {".py", ".pyc"})
    if (std::string file = in(module + suffix); llvm::sys::fs::is_regular_file(file))
      return file;
  std::string folder = in(module);
  if (!llvm::sys::fs::is_directory(folder))
    return std::nullopt;
  for (const char* init : {"__init__.py", "__init__.pyc"}) {
    llvm::SmallString<256> file(folder);
    llvm::sys::path::append(file, init);
    if (llvm::sys::fs::exists(file))
      return std::nullopt;
  }
  return folder;
}

/// An existing file at \p output may be replaced only if it is an artifact
/// an earlier export wrote (any format version, even a damaged one).
llvm::Error checkReplaceable(llvm::StringRef output) {
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(output, status))
    return llvm::Error::success(); // nothing there (or a dangling link)
  if (llvm::sys::fs::is_directory(status))
    return llvm::createStringError("-o '" + output + "' is a directory");
  if (!llvm::sys::fs::is_regular_file(status))
    return llvm::createStringError("-o '" + output +
                                   "' is not a regular file; an artifact is written only to a "
                                   "new file or over an earlier artifact");
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> existing =
      llvm::MemoryBuffer::getFile(output, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!existing)
    return llvm::createStringError("cannot read '" + output +
                                   "' to check that it is a dync artifact before replacing it: " +
                                   existing.getError().message());
  if (!runtime::looksLikeArtifact((*existing)->getBuffer()))
    return llvm::createStringError(
        "refusing to overwrite '" + output +
        "': it is not a dync artifact (-o replaces only an artifact an earlier export wrote); "
        "choose another output name, or remove the file first");
  return llvm::Error::success();
}

} // namespace

std::optional<std::string> importableModuleName(llvm::StringRef fileName) {
  // The suffixes CPython's extension loader tries (importlib.machinery.
  // EXTENSION_SUFFIXES): the interpreter's own tag (any interpreter's, so
  // that a name safe for one is safe for all), the stable ABI's, and
  // plain .so.
  if (!fileName.ends_with(".so"))
    return std::nullopt;
  llvm::StringRef stem = fileName.drop_back(3);
  if (isIdentifier(stem))
    return stem.str();
  for (llvm::StringRef tag : {".abi3", ".cpython-"}) {
    size_t at = stem.find(tag);
    if (at == llvm::StringRef::npos || at == 0)
      continue;
    llvm::StringRef rest = stem.substr(at + 1);
    if ((tag == ".abi3" && rest != "abi3") || rest.contains('.'))
      continue;
    if (isIdentifier(stem.take_front(at)))
      return stem.take_front(at).str();
  }
  return std::nullopt;
}

llvm::Error checkOutputPath(llvm::StringRef output) {
  if (llvm::Error error = checkReplaceable(output))
    return error;
  std::optional<std::string> module = importableModuleName(llvm::sys::path::filename(output));
  if (!module)
    return llvm::Error::success();
  llvm::StringRef directory = llvm::sys::path::parent_path(output);
  std::optional<std::string> shadowed =
      shadowedModule(directory.empty() ? "." : directory, *module);
  if (!shadowed)
    return llvm::Error::success();
  llvm::SmallString<256> suggestion(directory);
  llvm::sys::path::append(suggestion, *module + ".dync.so");
  return llvm::createStringError(
      "-o '" + output + "' would shadow the module '" + *shadowed + "': Python imports '" +
      llvm::sys::path::filename(output) + "' first, so 'import " + *module +
      "' from that folder would load the artifact as a broken extension module; name it '" +
      suggestion + "' instead (a dotted name no import reaches)");
}

} // namespace dync::driver
