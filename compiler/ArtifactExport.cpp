//===- ArtifactExport.cpp - Captured entries to a shared library ----------===//
#include "compiler/ArtifactExport.h"

#include "codegen/ArtifactWriter.h"
#include "frontend/embedding/PyStrings.h"
#include "frontend/embedding/PythonError.h"
#include "frontend/oracle/EmbeddedModules.h"
#include "frontend/oracle/OperatorSchemas.h"
#include "frontend/rewrite/RewrittenCode.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/WithColor.h"

#include <cstring>
#include <optional>

namespace dync::compiler {

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

/// The module \p function is defined in: its __module__, else its globals'
/// __name__; empty when neither is a str.
std::string moduleOf(PyObject* function) {
  if (!function)
    return "";
  PyRef module = PyRef::steal(PyObject_GetAttrString(function, "__module__"));
  if (module && PyUnicode_Check(module.get()))
    return python::utf8Of(module.get()).value_or("");
  PyErr_Clear();
  PyObject* globals = PyFunction_Check(function) ? PyFunction_GetGlobals(function) : nullptr;
  PyObject* name = globals ? PyDict_GetItemString(globals, "__name__") : nullptr;
  return name && PyUnicode_Check(name) ? python::utf8Of(name).value_or("") : "";
}

/// The code identity of what \p entry's capture ran, computed by the
/// runtime package's own module (embedded as dync__code_identity), so that
/// dync.load hashes code objects exactly as export did.
llvm::Expected<std::vector<codegen::CodeFingerprint>> fingerprintsOf(const CapturedEntry& entry) {
  llvm::Expected<PyRef> identity = oracle::importEmbeddedModule("dync__code_identity");
  if (!identity)
    return identity.takeError();
  PyRef ran = PyRef::steal(PyList_New(0));
  for (const CapturedEntry::FunctionRun& function : entry.functionsRun) {
    PyObject* globals = function.globals ? function.globals.get() : Py_None;
    PyRef record = PyRef::steal(
        Py_BuildValue("(OOs)", function.code.get(), globals, function.qualname.c_str()));
    if (!ran || !record || PyList_Append(ran.get(), record.get()) != 0)
      return python::takePythonError("listing the functions capture ran");
  }
  PyRef records =
      PyRef::steal(PyObject_CallMethod(identity->get(), "fingerprints", "O", ran.get()));
  if (!records || !PyList_Check(records.get()))
    return python::takePythonError("fingerprinting the functions capture ran");
  std::vector<codegen::CodeFingerprint> fingerprints;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(records.get()); ++i) {
    PyObject* record = PyList_GET_ITEM(records.get(), i);
    const char *module, *qualname, *file, *digest;
    unsigned int line;
    if (!PyArg_ParseTuple(record, "sssIs", &module, &qualname, &file, &line, &digest))
      return python::takePythonError("reading a code fingerprint");
    fingerprints.push_back({module, qualname, file, line, digest});
  }
  return fingerprints;
}

/// Times the rest of the scope under \p phase when \p times is given.
std::optional<PhaseTimes::Scope> timePhase(PhaseTimes* times, llvm::StringRef phase) {
  if (!times)
    return std::nullopt;
  return std::optional<PhaseTimes::Scope>(std::in_place, *times, phase);
}

void reportBuild(llvm::raw_ostream& os, const codegen::ArtifactBuilder& builder,
                 const codegen::ObjectCache::Pruned& pruned) {
  const codegen::BuildStats& stats = builder.stats();
  const codegen::BuildOptions& options = builder.options();
  os << "dync: target: " << options.target.triple << ", CPU " << options.target.cpu << ", features "
     << (options.target.requiredFeatures.empty() ? "-" : options.target.requiredFeatures) << '\n';
  os << "dync: objects: " << stats.compiled << " compiled, " << stats.cached << " from the cache";
  if (options.cache)
    os << " (" << options.cache->directory() << ")";
  else
    os << " (cache off)";
  os << '\n';
  if (stats.damaged)
    os << "dync: cache: " << stats.damaged << " damaged entr" << (stats.damaged == 1 ? "y" : "ies")
       << " ignored and replaced\n";
  if (pruned.entries)
    os << "dync: cache: removed " << pruned.entries << " least recently used entr"
       << (pruned.entries == 1 ? "y" : "ies") << " (" << llvm::format("%.1f", pruned.bytes / 1e6)
       << " MB) to stay under $DYNC_CACHE_MAX_MB\n";
}

/// Keeps \p cache under its size limit after an export stored objects in
/// it. Only ever a warning: the artifact is complete either way.
codegen::ObjectCache::Pruned pruneCache(const codegen::ObjectCache& cache) {
  llvm::Expected<uint64_t> limit = codegen::ObjectCache::maxBytesFromEnvironment();
  if (!limit) {
    llvm::WithColor::warning(llvm::errs(), "dync")
        << llvm::toString(limit.takeError()) << "; keeping the cache under "
        << codegen::ObjectCache::DefaultMaxMegabytes << " MB\n";
    limit = codegen::ObjectCache::DefaultMaxMegabytes << 20;
  }
  llvm::Expected<codegen::ObjectCache::Pruned> pruned = cache.prune(*limit);
  if (pruned)
    return *pruned;
  llvm::WithColor::warning(llvm::errs(), "dync")
      << "the object cache was not pruned: " << llvm::toString(pruned.takeError()) << '\n';
  return {};
}

} // namespace

llvm::Error writeArtifact(llvm::ArrayRef<CapturedEntry> entries, llvm::StringRef sourcePath,
                          const ArtifactRequest& request, llvm::Error& skipped) {
  std::optional<PhaseTimes::Scope> preparing = timePhase(request.times, "codegen");
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

  codegen::BuildOptions buildOptions;
  if (request.target.triple.empty()) {
    llvm::Expected<codegen::TargetSpec> host = codegen::resolveTarget("native");
    if (!host)
      return host.takeError();
    buildOptions.target = std::move(*host);
  } else {
    buildOptions.target = request.target;
  }
  buildOptions.jobs = request.jobs;
  buildOptions.needModules = request.llvmIR != nullptr;
  std::optional<codegen::ObjectCache> cache;
  if (request.useCache)
    if (std::optional<std::string> directory = codegen::ObjectCache::defaultDirectory())
      cache.emplace(std::move(*directory));
  buildOptions.cache = cache ? &*cache : nullptr;
  codegen::ArtifactBuilder builder(std::move(buildOptions));

  auto nameError = [&](const codegen::ArtifactEntry& entry, llvm::Error error) {
    return llvm::createStringError(sourcePath + ": " + entry.qualifiedName + ": " +
                                   llvm::toString(std::move(error)));
  };
  // Rewriting the bytecode is per entry: an entry that cannot be rewritten
  // is reported by name (and, with keepGoing, left out).
  std::vector<codegen::ArtifactEntry> artifactEntries;
  for (size_t i = 0; i < entries.size(); ++i) {
    const CapturedEntry& entry = entries[i];
    auto* code = reinterpret_cast<PyCodeObject*>(entry.code.get());
    codegen::ArtifactEntry artifactEntry;
    // The function's __qualname__, which is its code's except for a
    // decorator's wrapper made with functools.wraps: that one names the
    // function it wraps, the path `dync.load` finds the wrapper by.
    PyObject* qualname =
        PyFunction_Check(entry.function.get())
            ? reinterpret_cast<PyFunctionObject*>(entry.function.get())->func_qualname
            : code->co_qualname;
    artifactEntry.qualifiedName = python::utf8Of(qualname).value_or("");
    artifactEntry.firstLine = static_cast<uint32_t>(code->co_firstlineno);
    artifactEntry.moduleName = moduleOf(entry.function.get());
    // A method of a class no module names (a class made in a function, as
    // torch.fx's GraphModule makes one per instance, whose forward is code
    // it generated without a module) has no qualified name dync.load could
    // follow. When the entry was named through an object of the exported
    // file, that path finds it instead: the method is looked up on the
    // object's class, and no module name means the exported file's module.
    if (!entry.boundPath.empty() &&
        (artifactEntry.moduleName.empty() ||
         llvm::StringRef(artifactEntry.qualifiedName).contains("<locals>"))) {
      artifactEntry.qualifiedName = entry.boundPath;
      artifactEntry.moduleName.clear();
    }
    artifactEntry.definingFile = python::utf8Of(code->co_filename).value_or("");
    llvm::Expected<std::vector<codegen::CodeFingerprint>> fingerprints = fingerprintsOf(entry);
    if (!fingerprints)
      return nameError(artifactEntry, fingerprints.takeError());
    artifactEntry.functions = std::move(*fingerprints);
    std::string global = rewrite::graphGlobalName(*entry.graph, i);
    llvm::Expected<std::vector<uint8_t>> rewritten =
        rewrite::rewriteWholeFunction(entry.code.get(), *entry.graph, global);
    if (!rewritten) {
      llvm::Error error = nameError(artifactEntry, rewritten.takeError());
      if (!request.keepGoing)
        return error;
      skipped = llvm::joinErrors(std::move(skipped), std::move(error));
      continue;
    }
    artifactEntry.code = std::move(*rewritten);
    artifactEntry.graphs.push_back({entry.graph, global});
    artifactEntries.push_back(std::move(artifactEntry));
  }

  // All entries' modules are built at once; only if that fails is each
  // entry built alone (modules only, no backend) to find the ones at fault,
  // so the common case builds every module once.
  llvm::Expected<std::vector<codegen::ArtifactUnit>> units =
      artifactEntries.empty() ? std::vector<codegen::ArtifactUnit>()
                              : builder.buildModules(artifactEntries, options);
  if (!units) {
    llvm::Error joint = units.takeError();
    std::vector<codegen::ArtifactEntry> good;
    llvm::Error faults = llvm::Error::success();
    bool anyFault = false;
    for (codegen::ArtifactEntry& entry : artifactEntries) {
      llvm::Expected<std::vector<codegen::ArtifactUnit>> alone =
          builder.buildModules(entry, options);
      if (alone) {
        good.push_back(std::move(entry));
        continue;
      }
      anyFault = true;
      llvm::Error error = nameError(entry, alone.takeError());
      if (!request.keepGoing) {
        llvm::consumeError(std::move(joint));
        llvm::consumeError(std::move(faults));
        return error;
      }
      faults = llvm::joinErrors(std::move(faults), std::move(error));
    }
    if (!anyFault) {
      llvm::consumeError(std::move(faults));
      return joint;
    }
    llvm::consumeError(std::move(joint));
    skipped = llvm::joinErrors(std::move(skipped), std::move(faults));
    artifactEntries = std::move(good);
    units = artifactEntries.empty() ? std::vector<codegen::ArtifactUnit>()
                                    : builder.buildModules(artifactEntries, options);
    if (!units)
      return units.takeError();
  }
  if (artifactEntries.empty())
    return llvm::createStringError("no entry could be compiled" +
                                   (request.outputPath.empty()
                                        ? llvm::Twine()
                                        : "; " + request.outputPath + " was not written"));
  preparing.reset();

  if (request.llvmIR) {
    std::optional<PhaseTimes::Scope> optimizing = timePhase(request.times, "optimize");
    if (llvm::Error error = builder.optimize(*units))
      return error;
    optimizing.reset();
    codegen::printUnits(*request.llvmIR, *units);
  }
  codegen::ObjectCache::Pruned pruned;
  if (!request.outputPath.empty()) {
    std::optional<PhaseTimes::Scope> compiling = timePhase(request.times, "compile");
    if (llvm::Error error = builder.compile(*units))
      return error;
    compiling.reset();
    // One failed store usually means they all failed (a read-only cache):
    // say it once.
    if (const std::vector<std::string>& problems = builder.stats().cacheProblems; !problems.empty())
      llvm::WithColor::warning(llvm::errs(), "dync")
          << "the object cache was not updated: " << problems.front() << '\n';
    std::optional<PhaseTimes::Scope> linking = timePhase(request.times, "link");
    if (llvm::Error error = builder.link(*units, request.outputPath))
      return error;
    linking.reset();
    if (cache && builder.stats().compiled)
      pruned = pruneCache(*cache);
  }
  if (request.log)
    reportBuild(*request.log, builder, pruned);
  return llvm::Error::success();
}

} // namespace dync::compiler
