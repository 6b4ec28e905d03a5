//===- ArtifactWriter.cpp - Graphs to a loadable dync artifact ------------===//

#include "codegen/ArtifactWriter.h"
#include "codegen/AtomicFile.h"
#include "codegen/GraphCodegen.h"
#include "codegen/GuardCodegen.h"
#include "codegen/KernelCodegen.h"
#include "codegen/Manifest.h"

#include "runtime/artifact/Seal.h"
#include "runtime/artifact/dync_artifact.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SmallVectorMemoryBuffer.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <dlfcn.h>

#include <cstddef>
#include <mutex>

using namespace dync;
using namespace dync::codegen;

#ifndef DYNC_LLD_PATH
#define DYNC_LLD_PATH "ld.lld"
#endif

namespace {

class DescriptorBuilder {
public:
  DescriptorBuilder(llvm::Module& module, ShimModule& shim) : module_(module), shim_(shim) {
    llvm::LLVMContext& ctx = module.getContext();
    ptr_ = llvm::PointerType::getUnqual(ctx);
    i32_ = llvm::Type::getInt32Ty(ctx);
    i64_ = llvm::Type::getInt64Ty(ctx);
    // The C structs of dync_artifact.h, field for field; the data layout
    // then pads them exactly as the C compiler does (checked below).
    graphType_ =
        llvm::StructType::create(ctx, {ptr_, i32_, i32_, i32_, ptr_}, "dync_artifact_graph");
    entryType_ = llvm::StructType::create(ctx, {ptr_, i32_, ptr_, i64_, ptr_, i32_, ptr_},
                                          "dync_artifact_entry");
    descriptorType_ = llvm::StructType::create(ctx,
                                               {i32_, i32_, i32_, i32_,
                                                llvm::ArrayType::get(llvm::Type::getInt8Ty(ctx), 4),
                                                ptr_, ptr_, ptr_, ptr_, ptr_, ptr_, i32_, ptr_,
                                                // Code identity: entry_origins.
                                                ptr_},
                                               "dync_artifact_descriptor");
    functionType_ =
        llvm::StructType::create(ctx, {ptr_, ptr_, ptr_, i32_, ptr_}, "dync_artifact_function");
    originType_ =
        llvm::StructType::create(ctx, {ptr_, ptr_, i32_, ptr_}, "dync_artifact_entry_origin");
  }

  llvm::Error checkLayout() const {
    const llvm::DataLayout& dl = module_.getDataLayout();
    auto check = [&](llvm::StructType* type, size_t size, const char* name) -> llvm::Error {
      if (dl.getTypeAllocSize(type) != size)
        return llvm::createStringError(llvm::Twine("the target's layout of ") + name +
                                       " differs from dync_artifact.h's");
      return llvm::Error::success();
    };
    if (llvm::Error e = check(graphType_, sizeof(dync_artifact_graph), "dync_artifact_graph"))
      return e;
    if (llvm::Error e = check(entryType_, sizeof(dync_artifact_entry), "dync_artifact_entry"))
      return e;
    if (llvm::Error e =
            check(functionType_, sizeof(dync_artifact_function), "dync_artifact_function"))
      return e;
    if (llvm::Error e =
            check(originType_, sizeof(dync_artifact_entry_origin), "dync_artifact_entry_origin"))
      return e;
    const llvm::StructLayout* layout = dl.getStructLayout(descriptorType_);
    if (layout->getElementOffset(12) != offsetof(dync_artifact_descriptor, entries) ||
        layout->getElementOffset(13) != offsetof(dync_artifact_descriptor, entry_origins) ||
        layout->getElementOffset(4) != offsetof(dync_artifact_descriptor, python_magic))
      return llvm::createStringError("the target's layout of dync_artifact_descriptor differs "
                                     "from dync_artifact.h's");
    return check(descriptorType_, sizeof(dync_artifact_descriptor), "dync_artifact_descriptor");
  }

  llvm::Function* emitGuardStub(llvm::StringRef name, llvm::StringRef reason) {
    // Without guard data (which object each source names in the frame, and
    // what was assumed about it) the honest guard always misses, so the
    // runtime never runs a graph on a frame nobody checked.
    llvm::LLVMContext& ctx = module_.getContext();
    auto* type = llvm::FunctionType::get(i32_, {ptr_, ptr_, ptr_}, false);
    llvm::Function* f =
        llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, name, module_);
    f->getArg(0)->setName("fast_locals");
    f->getArg(1)->setName("globals");
    f->getArg(2)->setName("reason");
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", f));
    b.CreateStore(shim_.string(reason, "guard.reason"), f->getArg(2));
    b.CreateRet(b.getInt32(0));
    return f;
  }

  llvm::Constant* bytes(llvm::ArrayRef<uint8_t> data, const llvm::Twine& name) {
    llvm::Constant* init = llvm::ConstantDataArray::get(module_.getContext(), data);
    auto* global = new llvm::GlobalVariable(module_, init->getType(), true,
                                            llvm::GlobalValue::PrivateLinkage, init, name);
    global->setAlignment(llvm::Align(1));
    return global;
  }

  /// The code identity of \p entry (number \p e): its origin struct.
  llvm::Constant* emitOrigin(const ArtifactEntry& entry, size_t e) {
    std::vector<llvm::Constant*> functions;
    for (const CodeFingerprint& f : entry.functions)
      functions.push_back(llvm::ConstantStruct::get(
          functionType_,
          {shim_.string(f.moduleName, "function.module"),
           shim_.string(f.qualifiedName, "function.name"), shim_.string(f.file, "function.file"),
           llvm::ConstantInt::get(i32_, f.firstLine),
           shim_.string(f.codeSha256, "function.sha256")}));
    auto* functionsType = llvm::ArrayType::get(functionType_, functions.size());
    auto* functionsGlobal = new llvm::GlobalVariable(
        module_, functionsType, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantArray::get(functionsType, functions), "functions." + std::to_string(e));
    return llvm::ConstantStruct::get(originType_, {shim_.string(entry.moduleName, "entry.module"),
                                                   shim_.string(entry.definingFile, "entry.file"),
                                                   llvm::ConstantInt::get(i32_, functions.size()),
                                                   functionsGlobal});
  }

  llvm::Error emit(llvm::ArrayRef<ArtifactEntry> entries, const ArtifactOptions& options) {
    if (llvm::Error error = checkLayout())
      return error;
    std::vector<llvm::Constant*> entryValues;
    for (size_t e = 0; e < entries.size(); ++e) {
      const ArtifactEntry& entry = entries[e];
      if (entry.qualifiedName.empty())
        return llvm::createStringError("an entry needs a qualified name");
      std::vector<llvm::Constant*> graphValues;
      for (size_t g = 0; g < entry.graphs.size(); ++g) {
        const ArtifactGraph& graph = entry.graphs[g];
        if (graph.name.empty())
          return llvm::createStringError("graph @" + graph.graph->name() + " needs a name");
        std::string fnName =
            "graph." + std::to_string(e) + "." + std::to_string(g) + "." + graph.graph->name();
        llvm::Expected<GraphSignature> signature =
            emitGraphFunction(shim_, *graph.graph, fnName, options.schemas);
        if (!signature)
          return signature.takeError();
        graphValues.push_back(llvm::ConstantStruct::get(
            graphType_,
            {shim_.string(graph.name, "graph.name"),
             llvm::ConstantInt::get(i32_, signature->numInputs),
             llvm::ConstantInt::get(i32_, signature->numIntInputs),
             llvm::ConstantInt::get(i32_, signature->numOutputs), module_.getFunction(fnName)}));
      }
      auto* graphsType = llvm::ArrayType::get(graphType_, graphValues.size());
      auto* graphs = new llvm::GlobalVariable(
          module_, graphsType, true, llvm::GlobalValue::PrivateLinkage,
          llvm::ConstantArray::get(graphsType, graphValues), "graphs." + std::to_string(e));

      static const uint8_t marshalledNone[] = {'N'};
      llvm::ArrayRef<uint8_t> code = entry.code.empty() ? llvm::ArrayRef<uint8_t>(marshalledNone)
                                                        : llvm::ArrayRef<uint8_t>(entry.code);
      // The entry's guard is its first graph's: the graph the rewritten code
      // calls first was captured under exactly those assumptions.
      std::string guardName = "guard." + std::to_string(e);
      llvm::Function* guard;
      if (entry.graphs.empty()) {
        guard = emitGuardStub(guardName, "entry " + entry.qualifiedName + " has no graph to guard");
      } else if (entry.graphs[0].graph->guards().empty()) {
        guard =
            emitGuardStub(guardName, "graph " + entry.graphs[0].graph->name() + " has no guards");
      } else {
        llvm::Expected<llvm::Function*> compiled =
            emitGuardFunction(shim_, *entry.graphs[0].graph, guardName);
        if (!compiled)
          return compiled.takeError();
        guard = *compiled;
      }
      entryValues.push_back(llvm::ConstantStruct::get(
          entryType_,
          {shim_.string(entry.qualifiedName, "entry.name"),
           llvm::ConstantInt::get(i32_, entry.firstLine), bytes(code, "code." + std::to_string(e)),
           llvm::ConstantInt::get(i64_, code.size()), guard,
           llvm::ConstantInt::get(i32_, graphValues.size()), graphs}));
    }
    auto* entriesType = llvm::ArrayType::get(entryType_, entryValues.size());
    auto* entriesGlobal =
        new llvm::GlobalVariable(module_, entriesType, true, llvm::GlobalValue::PrivateLinkage,
                                 llvm::ConstantArray::get(entriesType, entryValues), "entries");
    std::vector<llvm::Constant*> originValues;
    for (size_t e = 0; e < entries.size(); ++e)
      originValues.push_back(emitOrigin(entries[e], e));
    auto* originsType = llvm::ArrayType::get(originType_, originValues.size());
    auto* originsGlobal = new llvm::GlobalVariable(
        module_, originsType, true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantArray::get(originsType, originValues), "entry_origins");

    llvm::Function* init = shim_.emitInit();
    llvm::Constant* magic = llvm::ConstantDataArray::get(
        module_.getContext(), llvm::ArrayRef<uint8_t>(options.pythonMagic.data(), 4));
    if (options.torchVersion.empty())
      return llvm::createStringError("the torch version to record is empty");
    llvm::Constant* descriptor = llvm::ConstantStruct::get(
        descriptorType_,
        {llvm::ConstantInt::get(i32_, DYNC_ARTIFACT_MAGIC),
         llvm::ConstantInt::get(i32_, DYNC_ARTIFACT_FORMAT_VERSION),
         llvm::ConstantInt::get(i32_, sizeof(dync_artifact_descriptor)),
         llvm::ConstantInt::get(i32_, DYNC_SHIM_ABI_VERSION), magic,
         shim_.string(options.torchVersion, "torch_version"),
         shim_.string(targetCpu_, "target_cpu"), shim_.string(cpuFeatures_, "cpu_features"),
         shim_.string(options.sourcePath, "source_path"),
         shim_.string(options.sourceSha256, "source_sha256"), init,
         llvm::ConstantInt::get(i32_, entryValues.size()), entriesGlobal, originsGlobal});
    auto* descriptorGlobal =
        new llvm::GlobalVariable(module_, descriptorType_, true, llvm::GlobalValue::PrivateLinkage,
                                 descriptor, "descriptor");

    // The manifest: text for people and `dync inspect`, in a section of its
    // own so that it is read from the file without loading the library.
    // Nothing references it, so it is kept alive explicitly.
    llvm::Constant* manifestText = llvm::ConstantDataArray::getString(
        module_.getContext(), renderManifest(entries, options, targetCpu_, cpuFeatures_));
    auto* manifest =
        new llvm::GlobalVariable(module_, manifestText->getType(), true,
                                 llvm::GlobalValue::PrivateLinkage, manifestText, "manifest");
    manifest->setSection(ManifestSection);
    manifest->setAlignment(llvm::Align(1));
    llvm::appendToUsed(module_, {manifest});

    // The one exported symbol; everything else stays internal so two
    // artifacts in a process never see each other.
    auto* getterType = llvm::FunctionType::get(ptr_, false);
    llvm::Function* getter = llvm::Function::Create(getterType, llvm::GlobalValue::ExternalLinkage,
                                                    DYNC_ARTIFACT_SYMBOL, module_);
    getter->setVisibility(llvm::GlobalValue::DefaultVisibility);
    getter->setDSOLocal(true);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(module_.getContext(), "entry", getter));
    b.CreateRet(descriptorGlobal);
    return llvm::Error::success();
  }

  void setTarget(std::string cpu, std::string features) {
    targetCpu_ = std::move(cpu);
    cpuFeatures_ = std::move(features);
  }

private:
  llvm::Module& module_;
  ShimModule& shim_;
  llvm::Type* ptr_;
  llvm::Type* i32_;
  llvm::Type* i64_;
  llvm::StructType* graphType_;
  llvm::StructType* entryType_;
  llvm::StructType* descriptorType_;
  llvm::StructType* functionType_;
  llvm::StructType* originType_;
  std::string targetCpu_;
  std::string cpuFeatures_;
};

/// Fails with the verifier's report if \p module is not valid IR.
llvm::Error verify(const llvm::Module& module) {
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(module, &os))
    return llvm::createStringError("codegen produced invalid LLVM IR (a bug in dync): " + problems);
  return llvm::Error::success();
}

/// The main module for \p spec, whose data layout comes from \p tm.
llvm::Expected<std::unique_ptr<llvm::Module>>
buildMainModule(llvm::LLVMContext& ctx, llvm::TargetMachine& tm, llvm::StringRef requiredFeatures,
                llvm::ArrayRef<ArtifactEntry> entries, const ArtifactOptions& options) {
  auto module = std::make_unique<llvm::Module>("dync.artifact", ctx);
  module->setTargetTriple(tm.getTargetTriple().str());
  module->setDataLayout(tm.createDataLayout());
  ShimModule shim(*module);
  DescriptorBuilder builder(*module, shim);
  builder.setTarget(tm.getTargetCPU().str(), requiredFeatures.str());
  if (llvm::Error error = builder.emit(entries, options))
    return error;
  if (llvm::Error error = verify(*module))
    return error;
  return module;
}

/// The kernels \p entries' graphs call, in call order, repeats included.
llvm::Expected<std::vector<const ir::Graph*>>
collectKernels(llvm::ArrayRef<ArtifactEntry> entries) {
  std::vector<const ir::Graph*> kernels;
  for (const ArtifactEntry& entry : entries)
    for (const ArtifactGraph& artifactGraph : entry.graphs)
      for (const ir::Node& node : artifactGraph.graph->nodes()) {
        if (!node.isKernelCall())
          continue;
        const ir::Module* module = artifactGraph.graph->module();
        const ir::Graph* kernel = module ? module->findKernel(node.kernelName()) : nullptr;
        if (!kernel)
          return llvm::createStringError("graph @" + artifactGraph.graph->name() + " calls @" +
                                         node.kernelName() + ", which its module does not define");
        kernels.push_back(kernel);
      }
  return kernels;
}

/// The text a kernel's object depends on: its canonical IR under a fixed
/// name, so the same kernel in two models shares one cache entry.
std::string kernelCacheText(const ir::Graph& kernel, llvm::StringRef symbol) {
  std::string text;
  llvm::raw_string_ostream os(text);
  kernel.print(os);
  std::string name = "@" + kernel.name() + "(";
  if (size_t at = text.find(name); at != std::string::npos)
    text.replace(at, name.size(), "@kernel(");
  return "kernel " + symbol.str() + "\n" + text;
}

/// \p module compiled to an object in memory.
llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
emitObject(llvm::Module& module, llvm::TargetMachine& tm, llvm::StringRef name) {
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream os(bytes);
  llvm::legacy::PassManager passes;
  if (tm.addPassesToEmitFile(passes, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the target cannot emit object files");
  passes.run(module);
  return std::make_unique<llvm::SmallVectorMemoryBuffer>(std::move(bytes), name,
                                                         /*RequiresNullTerminator=*/false);
}

/// The C and math libraries of the running process. Kernels call no
/// library on purpose, but the optimizer may turn a loop into memset or
/// memcpy; those resolve against the libraries every process loading an
/// artifact already has. Empty entries for libraries that cannot be found
/// (such calls then fail to link, naming the symbol).
const std::vector<std::string>& systemLibraries() {
  static const std::vector<std::string> libraries = [] {
    std::vector<std::string> found;
    for (auto [library, symbol] : {std::pair{"libc.so.6", "memcpy"}, {"libm.so.6", "expf"}}) {
      void* handle = dlopen(library, RTLD_LAZY | RTLD_NOLOAD);
      if (!handle)
        continue;
      Dl_info info;
      if (void* address = dlsym(handle, symbol);
          address && dladdr(address, &info) && info.dli_fname)
        found.emplace_back(info.dli_fname);
      dlclose(handle);
    }
    return found;
  }();
  return libraries;
}

/// Runs ld.lld on \p inputs to write the shared library \p output.
llvm::Error runLinker(llvm::StringRef linker, llvm::ArrayRef<std::string> inputs,
                      llvm::StringRef versionScript, llvm::StringRef output,
                      llvm::StringRef shownPath) {
  llvm::SmallString<256> log(output);
  log += ".log";
  llvm::FileRemover logRemover(log);
  // --no-undefined: the artifact reaches the runtime through the shim
  // table, so an undefined symbol is a codegen bug, caught here rather than
  // by dlopen in a user's process. Only libc and libm may be needed, by
  // kernels, and only when they are (--as-needed).
  llvm::SmallVector<llvm::StringRef> args = {
      linker, "-shared",     "--no-undefined",   "-z",         "now", "-z",  "relro",
      "-z",   "noexecstack", "--hash-style=gnu", "--build-id", "-o",  output};
  std::string versionScriptArg;
  if (!versionScript.empty()) {
    versionScriptArg = ("--version-script=" + versionScript).str();
    args.push_back(versionScriptArg);
  }
  for (const std::string& input : inputs)
    args.push_back(input);
  if (inputs.size() > 1) {
    args.push_back("--as-needed");
    for (const std::string& library : systemLibraries())
      args.push_back(library);
  }
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(linker, args, std::nullopt, redirects, 0, 0, &execError);
  if (rc == 0)
    return llvm::Error::success();
  std::string text;
  if (auto buffer = llvm::MemoryBuffer::getFile(log))
    text = (*buffer)->getBuffer().trim().str();
  return llvm::createStringError("linking '" + shownPath + "' with " + linker + " failed" +
                                 (execError.empty() ? "" : ": " + execError) +
                                 (text.empty() ? "" : "\n" + text));
}

/// Appends the seal (runtime/artifact/Seal.h) to the library the linker
/// wrote at \p temp: the loader and `dync inspect` refuse a file whose bytes
/// no longer match it.
llvm::Error sealLibrary(llvm::StringRef temp, llvm::StringRef shownPath) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> library =
      llvm::MemoryBuffer::getFile(temp, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!library)
    return llvm::createStringError("cannot read the library linked for '" + shownPath +
                                   "': " + library.getError().message());
  std::string seal = runtime::artifactSeal((*library)->getBuffer());
  library->reset();
  std::error_code ec;
  llvm::raw_fd_ostream os(temp, ec, llvm::sys::fs::OF_Append);
  if (!ec) {
    os << seal;
    os.close();
    ec = os.error();
  }
  if (ec)
    return llvm::createStringError("cannot seal the library linked for '" + shownPath +
                                   "': " + ec.message());
  return llvm::Error::success();
}

} // namespace

llvm::Expected<std::vector<ArtifactUnit>>
ArtifactBuilder::buildModules(llvm::ArrayRef<ArtifactEntry> entries,
                              const ArtifactOptions& artifactOptions) {
  const TargetSpec& target = options_.target;
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm = createTargetMachine(target);
  if (!tm)
    return tm.takeError();
  ArtifactUnit main;
  main.name = "main";
  main.context = std::make_unique<llvm::LLVMContext>();
  llvm::Expected<std::unique_ptr<llvm::Module>> mainModule =
      buildMainModule(*main.context, **tm, target.requiredFeatures, entries, artifactOptions);
  if (!mainModule)
    return mainModule.takeError();
  main.module = std::move(*mainModule);
  if (options_.cache) {
    std::string text;
    llvm::raw_string_ostream os(text);
    main.module->print(os, nullptr);
    main.cacheKey = ObjectCache::key(text, target.describe());
    lookUp(main);
  }

  llvm::Expected<std::vector<const ir::Graph*>> kernels = collectKernels(entries);
  if (!kernels)
    return kernels.takeError();
  llvm::Expected<std::vector<ArtifactUnit>> kernelUnits = buildKernelUnits(*kernels);
  if (!kernelUnits)
    return kernelUnits.takeError();
  std::vector<ArtifactUnit> units;
  units.push_back(std::move(main));
  for (ArtifactUnit& unit : *kernelUnits)
    units.push_back(std::move(unit));
  return units;
}

llvm::Expected<std::vector<ArtifactUnit>>
ArtifactBuilder::buildKernelUnits(llvm::ArrayRef<const ir::Graph*> kernels) {
  const TargetSpec& target = options_.target;
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm = createTargetMachine(target);
  if (!tm)
    return tm.takeError();
  std::vector<ArtifactUnit> units;
  llvm::StringSet<> seen;
  for (const ir::Graph* kernel : kernels) {
    ArtifactUnit unit;
    unit.name = kernelSymbol(*kernel);
    if (!seen.insert(unit.name).second)
      continue;
    unit.kernelName = kernel->name();
    unit.optimize = true;
    if (options_.cache) {
      unit.cacheKey = ObjectCache::key(kernelCacheText(*kernel, unit.name), target.describe());
      lookUp(unit);
      if (unit.cached && !options_.needModules) {
        units.push_back(std::move(unit));
        continue;
      }
    }
    // Kernels are emitted here, one at a time: the graph IR they are read
    // from is not meant to be shared between threads.
    unit.context = std::make_unique<llvm::LLVMContext>();
    unit.module = std::make_unique<llvm::Module>(unit.name, *unit.context);
    unit.module->setTargetTriple(target.triple);
    unit.module->setDataLayout((*tm)->createDataLayout());
    llvm::Error error = emitKernel(*unit.module, *kernel, unit.name, vectorIsaOf(**tm));
    if (!error)
      error = verify(*unit.module);
    if (error)
      return llvm::createStringError("kernel @" + unit.kernelName + ": " +
                                     llvm::toString(std::move(error)));
    units.push_back(std::move(unit));
  }
  return units;
}

void ArtifactBuilder::lookUp(ArtifactUnit& unit) {
  bool damaged = false;
  unit.object = options_.cache->lookup(unit.cacheKey, &damaged);
  unit.cached = unit.object != nullptr;
  stats_.damaged += damaged;
  // Kept when needModules: --emit=llvm prints even cached modules.
  if (unit.cached && !options_.needModules) {
    unit.module.reset();
    unit.context.reset();
  }
}

llvm::Error ArtifactBuilder::forEachInParallel(llvm::MutableArrayRef<ArtifactUnit> units,
                                               llvm::function_ref<bool(const ArtifactUnit&)> wanted,
                                               std::function<llvm::Error(ArtifactUnit&)> work) {
  std::vector<ArtifactUnit*> todo;
  for (ArtifactUnit& unit : units)
    if (wanted(unit))
      todo.push_back(&unit);
  if (todo.empty())
    return llvm::Error::success();
  // Errors are kept as text per unit: llvm::Error must be handled on the
  // thread that checks it.
  std::vector<std::string> failures(todo.size());
  auto run = [&](size_t i) {
    if (llvm::Error error = work(*todo[i])) {
      const ArtifactUnit& unit = *todo[i];
      failures[i] =
          (unit.kernelName.empty() ? "module " + unit.name : "kernel @" + unit.kernelName) + ": " +
          llvm::toString(std::move(error));
    }
  };
  if (todo.size() == 1 || options_.jobs == 1) {
    for (size_t i = 0; i < todo.size(); ++i)
      run(i);
  } else {
    llvm::ThreadPoolStrategy strategy = llvm::hardware_concurrency(options_.jobs);
    strategy.ThreadsRequested = std::min<unsigned>(strategy.compute_thread_count(), todo.size());
    llvm::DefaultThreadPool pool(strategy);
    for (size_t i = 0; i < todo.size(); ++i)
      pool.async([&run, i] { run(i); });
    pool.wait();
  }
  llvm::Error all = llvm::Error::success();
  for (std::string& failure : failures)
    if (!failure.empty())
      all = llvm::joinErrors(std::move(all), llvm::createStringError(failure));
  return all;
}

llvm::Error ArtifactBuilder::optimize(llvm::MutableArrayRef<ArtifactUnit> units) {
  return forEachInParallel(
      units,
      [](const ArtifactUnit& unit) { return unit.module && unit.optimize && !unit.optimized; },
      [this](ArtifactUnit& unit) -> llvm::Error {
        llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm =
            createTargetMachine(options_.target, llvm::CodeGenOptLevel::Aggressive);
        if (!tm)
          return tm.takeError();
        optimizeKernelModule(*unit.module, **tm);
        unit.optimized = true;
        return llvm::Error::success();
      });
}

llvm::Error ArtifactBuilder::compile(llvm::MutableArrayRef<ArtifactUnit> units) {
  std::mutex statsMutex;
  llvm::Error error = forEachInParallel(
      units, [](const ArtifactUnit& unit) { return !unit.object; },
      [&](ArtifactUnit& unit) -> llvm::Error {
        if (!unit.module)
          return llvm::createStringError("has neither a module nor an object (a bug in dync)");
        llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm =
            createTargetMachine(options_.target, unit.optimize ? llvm::CodeGenOptLevel::Aggressive
                                                               : llvm::CodeGenOptLevel::Default);
        if (!tm)
          return tm.takeError();
        if (unit.optimize && !unit.optimized) {
          optimizeKernelModule(*unit.module, **tm);
          unit.optimized = true;
        }
        llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object =
            emitObject(*unit.module, **tm, unit.name);
        if (!object)
          return object.takeError();
        unit.object = std::move(*object);
        llvm::Error stored = options_.cache
                                 ? options_.cache->store(unit.cacheKey, unit.object->getBuffer())
                                 : llvm::Error::success();
        std::lock_guard<std::mutex> lock(statsMutex);
        ++stats_.compiled;
        if (stored)
          stats_.cacheProblems.push_back(llvm::toString(std::move(stored)));
        return llvm::Error::success();
      });
  for (const ArtifactUnit& unit : units)
    stats_.cached += unit.cached;
  return error;
}

llvm::Error ArtifactBuilder::link(llvm::ArrayRef<ArtifactUnit> units, llvm::StringRef path) {
  return writeAtomically(path, [&](llvm::StringRef temp) -> llvm::Error {
    llvm::SmallString<256> directory;
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("dync-link", directory))
      return llvm::createStringError("cannot create a temporary directory: " + ec.message());
    auto removeDirectory =
        llvm::make_scope_exit([&] { llvm::sys::fs::remove_directories(directory); });
    std::vector<std::string> inputs;
    for (size_t i = 0; i < units.size(); ++i) {
      if (!units[i].object)
        return llvm::createStringError("module " + units[i].name +
                                       " was not compiled (a bug in dync)");
      llvm::SmallString<256> object(directory);
      llvm::sys::path::append(object, std::to_string(i) + ".o");
      if (llvm::Error error = writeFileAtomically(object, units[i].object->getBuffer()))
        return error;
      inputs.push_back(object.str().str());
    }
    // Only the descriptor getter is exported: kernels and everything else
    // stay local, so two artifacts in one process never see each other.
    llvm::SmallString<256> script(directory);
    llvm::sys::path::append(script, "exports.map");
    if (llvm::Error error =
            writeFileAtomically(script, "{ global: " DYNC_ARTIFACT_SYMBOL "; local: *; };\n"))
      return error;
    std::string linker = options_.linker.empty() ? DYNC_LLD_PATH : options_.linker;
    if (llvm::Error error = runLinker(linker, inputs, script, temp, path))
      return error;
    return sealLibrary(temp, path);
  });
}

void dync::codegen::printUnits(llvm::raw_ostream& os, llvm::ArrayRef<ArtifactUnit> units) {
  for (const ArtifactUnit& unit : units) {
    if (unit.kernelName.empty())
      os << "; dync module: " << unit.name << '\n';
    else
      os << "; dync module: kernel @" << unit.kernelName << " (" << unit.name << ")\n";
    if (unit.module)
      unit.module->print(os, nullptr);
    else
      os << "; (compiled object from the cache)\n";
    os << '\n';
  }
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>> dync::codegen::createHostTargetMachine() {
  llvm::Expected<TargetSpec> spec = resolveTarget("native");
  if (!spec)
    return spec.takeError();
  return createTargetMachine(*spec);
}

std::string dync::codegen::describeHostFeatures() {
  llvm::Expected<TargetSpec> spec = resolveTarget("native");
  if (!spec) {
    llvm::consumeError(spec.takeError());
    return "";
  }
  return spec->requiredFeatures;
}

llvm::Expected<std::unique_ptr<llvm::Module>>
dync::codegen::buildArtifactModule(llvm::LLVMContext& ctx, llvm::TargetMachine& tm,
                                   llvm::ArrayRef<ArtifactEntry> entries,
                                   const ArtifactOptions& options) {
  // The recorded features are those tm's subtarget has.
  std::string features;
  const llvm::MCSubtargetInfo* sti = tm.getMCSubtargetInfo();
  for (llvm::StringRef feature : loaderTestableFeatures()) {
    if (!sti->checkFeatures(("+" + feature).str()))
      continue;
    if (!features.empty())
      features += ',';
    features += feature;
  }
  return buildMainModule(ctx, tm, features, entries, options);
}

llvm::Error dync::codegen::writeIR(const llvm::Module& module, llvm::StringRef path) {
  return writeAtomically(path, [&](llvm::StringRef temp) -> llvm::Error {
    std::error_code ec;
    llvm::raw_fd_ostream os(temp, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return llvm::createStringError("cannot write '" + temp + "': " + ec.message());
    module.print(os, nullptr);
    os.close();
    if (os.has_error())
      return llvm::createStringError("writing '" + temp + "' failed: " + os.error().message());
    return llvm::Error::success();
  });
}

llvm::Error dync::codegen::writeObject(llvm::Module& module, llvm::TargetMachine& tm,
                                       llvm::StringRef path) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object = emitObject(module, tm, path);
  if (!object)
    return object.takeError();
  return writeFileAtomically(path, (*object)->getBuffer());
}

llvm::Error dync::codegen::writeSharedLibrary(llvm::Module& module, llvm::TargetMachine& tm,
                                              llvm::StringRef path,
                                              const ArtifactOptions& options) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object = emitObject(module, tm, path);
  if (!object)
    return object.takeError();
  TargetSpec spec;
  spec.triple = tm.getTargetTriple().str();
  spec.cpu = tm.getTargetCPU().str();
  spec.features = tm.getTargetFeatureString().str();
  BuildOptions buildOptions;
  buildOptions.target = std::move(spec);
  buildOptions.linker = options.linker;
  ArtifactBuilder builder(std::move(buildOptions));
  ArtifactUnit unit;
  unit.name = "main";
  unit.object = std::move(*object);
  return builder.link(unit, path);
}
