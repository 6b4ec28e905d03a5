//===- Manifest.cpp - The human-readable record inside an artifact --------===//
#include "codegen/Manifest.h"
#include "ir/AutogradFunction.h"
#include "runtime/artifact/Seal.h"
#include "runtime/artifact/dync_artifact.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

using namespace dync;

std::string codegen::renderManifest(llvm::ArrayRef<ArtifactEntry> entries,
                                    const ArtifactOptions& options, llvm::StringRef targetCpu,
                                    llvm::StringRef cpuFeatures) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // Files without a seal are recognized by this header (Seal.h).
  os << runtime::ManifestHeader << DYNC_ARTIFACT_FORMAT_VERSION << '\n';
  os << "shim_abi_version " << DYNC_SHIM_ABI_VERSION << '\n';
  os << "python_magic "
     << llvm::toHex(llvm::ArrayRef<uint8_t>(options.pythonMagic.data(), 4), /*LowerCase=*/true)
     << '\n';
  os << "torch " << options.torchVersion << '\n';
  os << "target_cpu " << targetCpu << '\n';
  os << "cpu_features " << (cpuFeatures.empty() ? "-" : cpuFeatures) << '\n';
  os << "source " << (options.sourcePath.empty() ? "-" : options.sourcePath) << '\n';
  os << "source_sha256 " << (options.sourceSha256.empty() ? "-" : options.sourceSha256) << '\n';
  for (const ArtifactEntry& entry : entries) {
    os << "\nentry " << entry.qualifiedName << " line " << entry.firstLine << " graphs";
    for (const ArtifactGraph& graph : entry.graphs)
      os << ' ' << graph.name;
    os << '\n';
    // Code identity: where the entry is defined, and what its capture ran.
    if (!entry.moduleName.empty())
      os << "module " << entry.moduleName << " file "
         << (entry.definingFile.empty() ? "-" : entry.definingFile) << '\n';
    for (const CodeFingerprint& f : entry.functions)
      os << "ran " << f.moduleName << ':' << f.qualifiedName << " file " << f.file << " line "
         << f.firstLine << " code_sha256 " << f.codeSha256 << '\n';
    for (const ArtifactGraph& graph : entry.graphs) {
      // The backward graphs of its autograd.Functions first, as a module
      // prints them.
      for (const ir::Graph* backward : ir::backwardGraphsOf(*graph.graph)) {
        os << '\n';
        backward->print(os);
      }
      os << '\n';
      graph.graph->print(os);
      if (!graph.graph->guards().empty()) {
        os << '\n';
        graph.graph->guards().print(os, graph.graph->name());
      }
    }
  }
  return text;
}

llvm::Expected<std::string> codegen::readManifest(llvm::StringRef path) {
  if (!llvm::sys::fs::exists(path))
    return llvm::createStringError(path + ": no such file");
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> bytes =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!bytes)
    return llvm::createStringError(path + ": cannot read: " + bytes.getError().message());
  // The seal first: a manifest is printed only if the file is, byte for
  // byte, what export wrote.
  runtime::ArtifactIntegrity integrity = runtime::checkArtifactIntegrity((*bytes)->getBuffer());
  using Result = runtime::ArtifactIntegrity::Result;
  if (integrity.result == Result::OtherFormat)
    return llvm::createStringError(
        path + ": artifact format version " + llvm::Twine(integrity.formatVersion) +
        ", but this dync reads version " + llvm::Twine(DYNC_ARTIFACT_FORMAT_VERSION) +
        "; export it again with this dync");
  if (integrity.result != Result::Intact) {
    // A file cut short has lost its seal; if its ELF headers point past its
    // end, that says better what happened.
    if (!integrity.sealed && (*bytes)->getBuffer().starts_with("\x7f"
                                                               "ELF")) {
      llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> file =
          llvm::object::ObjectFile::createObjectFile((*bytes)->getMemBufferRef());
      if (!file)
        return llvm::createStringError(path + ": truncated or damaged ELF file, not a whole " +
                                       "dync artifact: " + llvm::toString(file.takeError()));
    }
    return llvm::createStringError(path + ": " + integrity.reason);
  }
  llvm::Expected<std::unique_ptr<llvm::object::ObjectFile>> file =
      llvm::object::ObjectFile::createObjectFile((*bytes)->getMemBufferRef());
  if (!file) {
    std::string why = llvm::toString(file.takeError());
    return llvm::createStringError(path + ": not a dync artifact: " + why);
  }
  const llvm::object::ObjectFile& object = **file;
  if (!object.isELF())
    return llvm::createStringError(path + ": not a dync artifact: not an ELF shared library");
  for (const llvm::object::SectionRef& section : object.sections()) {
    llvm::Expected<llvm::StringRef> name = section.getName();
    if (!name) {
      llvm::consumeError(name.takeError());
      continue;
    }
    if (*name != ManifestSection)
      continue;
    llvm::Expected<llvm::StringRef> contents = section.getContents();
    if (!contents)
      return llvm::createStringError(
          path + ": the dync manifest cannot be read: " + llvm::toString(contents.takeError()));
    // The section holds a NUL-terminated string.
    return contents->split('\0').first.str();
  }
  return llvm::createStringError(path + ": not a dync artifact: it has no " +
                                 llvm::Twine(ManifestSection) + " section");
}
