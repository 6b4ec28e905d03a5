//===- ArtifactExport.cpp - Captured entries to a shared library ----------===//
#include "driver/ArtifactExport.h"

#include "codegen/ArtifactWriter.h"
#include "frontend/oracle/OperatorSchemas.h"
#include "frontend/python/PyStrings.h"
#include "frontend/python/PythonError.h"
#include "frontend/rewrite/RewrittenCode.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"

#include <cstring>

namespace dync::driver {

using python::PyRef;

namespace {

/// importlib.util.MAGIC_NUMBER: the bytecode the rewritten code is for.
llvm::Expected<std::array<uint8_t, 4>> bytecodeMagic() {
  PyRef util = PyRef::steal(PyImport_ImportModule("importlib.util"));
  PyRef magic = util ? PyRef::steal(PyObject_GetAttrString(util.get(), "MAGIC_NUMBER")) : PyRef();
  if (!magic || !PyBytes_Check(magic.get()) || PyBytes_GET_SIZE(magic.get()) != 4)
    return python::takePythonError("reading importlib.util.MAGIC_NUMBER");
  std::array<uint8_t, 4> bytes;
  std::memcpy(bytes.data(), PyBytes_AS_STRING(magic.get()), 4);
  return bytes;
}

llvm::Expected<std::string> torchVersion() {
  PyRef torch = PyRef::steal(PyImport_ImportModule("torch"));
  PyRef version =
      torch ? PyRef::steal(PyObject_GetAttrString(torch.get(), "__version__")) : PyRef();
  if (!version)
    return python::takePythonError("reading torch.__version__");
  return python::strOf(version.get());
}

llvm::Expected<std::string> fileSha256(llvm::StringRef path) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError("cannot read '" + path + "': " + buffer.getError().message());
  std::array<uint8_t, 32> digest =
      llvm::SHA256::hash(llvm::arrayRefFromStringRef((*buffer)->getBuffer()));
  return llvm::toHex(digest, /*LowerCase=*/true);
}

} // namespace

llvm::Error writeArtifact(llvm::ArrayRef<CapturedEntry> entries, llvm::StringRef sourcePath,
                          llvm::StringRef outputPath, bool keepGoing, llvm::Error& skipped) {
  codegen::ArtifactOptions options;
  llvm::Expected<std::array<uint8_t, 4>> magic = bytecodeMagic();
  if (!magic)
    return magic.takeError();
  options.pythonMagic = *magic;
  llvm::Expected<std::string> torch = torchVersion();
  if (!torch)
    return torch.takeError();
  options.torchVersion = std::move(*torch);
  options.sourcePath = sourcePath.str();
  llvm::Expected<std::string> digest = fileSha256(sourcePath);
  if (!digest)
    return digest.takeError();
  options.sourceSha256 = std::move(*digest);

  std::vector<const ir::Graph*> graphs;
  for (const CapturedEntry& entry : entries)
    graphs.push_back(entry.graph);
  llvm::Expected<std::string> schemaText = oracle::operatorSchemas(graphs);
  if (!schemaText)
    return schemaText.takeError();
  codegen::OpSchemas schemas;
  if (llvm::Error error = schemas.addLines(*schemaText))
    return error;
  options.schemas = &schemas;

  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm = codegen::createHostTargetMachine();
  if (!tm)
    return tm.takeError();

  // Each entry is rewritten and compiled on its own first, so that one that
  // cannot be is reported by name (and, with keepGoing, left out) rather
  // than failing the whole module.
  std::vector<codegen::ArtifactEntry> artifactEntries;
  for (size_t i = 0; i < entries.size(); ++i) {
    const CapturedEntry& entry = entries[i];
    auto* code = reinterpret_cast<PyCodeObject*>(entry.code.get());
    codegen::ArtifactEntry artifactEntry;
    artifactEntry.qualifiedName = python::utf8Of(code->co_qualname).value_or("");
    artifactEntry.firstLine = static_cast<uint32_t>(code->co_firstlineno);
    std::string global = rewrite::graphGlobalName(*entry.graph, i);
    llvm::Error error = [&]() -> llvm::Error {
      llvm::Expected<std::vector<uint8_t>> rewritten =
          rewrite::rewriteWholeFunction(entry.code.get(), *entry.graph, global);
      if (!rewritten)
        return rewritten.takeError();
      artifactEntry.code = std::move(*rewritten);
      artifactEntry.graphs.push_back({entry.graph, global});
      llvm::LLVMContext scratch;
      llvm::Expected<std::unique_ptr<llvm::Module>> alone =
          codegen::buildArtifactModule(scratch, **tm, artifactEntry, options);
      return alone ? llvm::Error::success() : alone.takeError();
    }();
    if (error) {
      error = llvm::createStringError(sourcePath + ": " + artifactEntry.qualifiedName + ": " +
                                      llvm::toString(std::move(error)));
      if (!keepGoing)
        return error;
      skipped = llvm::joinErrors(std::move(skipped), std::move(error));
      continue;
    }
    artifactEntries.push_back(std::move(artifactEntry));
  }
  if (artifactEntries.empty())
    return llvm::createStringError("no entry could be compiled; " + outputPath +
                                   " was not written");

  llvm::LLVMContext context;
  llvm::Expected<std::unique_ptr<llvm::Module>> module =
      codegen::buildArtifactModule(context, **tm, artifactEntries, options);
  if (!module)
    return module.takeError();
  return codegen::writeSharedLibrary(**module, **tm, outputPath, options);
}

} // namespace dync::driver
