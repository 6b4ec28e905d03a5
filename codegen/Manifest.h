//===- Manifest.h - The human-readable record inside an artifact -*- C++ -*-===//
//
// Every artifact carries, in an ELF section of its own, a text manifest: the
// facts the descriptor holds (format, Python magic, torch, target CPU and
// features, source path and hash), then each entry with its graphs and
// guards in the graph IR's text form. `dync inspect model.so` prints it. It
// is read from the file with LLVM's object reader, so inspecting an artifact
// never loads or runs it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/ArtifactWriter.h"

#include "llvm/Support/Error.h"

#include <string>

namespace dync::codegen {

/// The section holding the manifest.
inline constexpr const char* ManifestSection = ".dync.manifest";

/// The manifest of an artifact built from \p entries and \p options for the
/// CPU \p targetCpu with \p cpuFeatures.
std::string renderManifest(llvm::ArrayRef<ArtifactEntry> entries, const ArtifactOptions& options,
                           llvm::StringRef targetCpu, llvm::StringRef cpuFeatures);

/// Reads the manifest of the artifact at \p path, without loading it, after
/// checking the file's seal (runtime/artifact/Seal.h). Errors name the file
/// and say whether it is corrupt or truncated, of another format version,
/// not an ELF shared library, or holds no dync manifest.
llvm::Expected<std::string> readManifest(llvm::StringRef path);

} // namespace dync::codegen
