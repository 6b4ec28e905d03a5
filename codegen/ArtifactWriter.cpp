//===- ArtifactWriter.cpp - Graphs to a loadable dync artifact ------------===//

#include "codegen/ArtifactWriter.h"
#include "codegen/GraphCodegen.h"
#include "codegen/GuardCodegen.h"
#include "codegen/Manifest.h"

#include "runtime/artifact/dync_artifact.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/ModuleUtils.h"

#include <cstddef>

using namespace dync;
using namespace dync::codegen;

#ifndef DYNC_LLD_PATH
#define DYNC_LLD_PATH "ld.lld"
#endif

namespace {

/// The features the runtime's loader can test (runtime/artifact/CpuFeatures.cpp),
/// in the compiler's spelling. Recording a feature outside this list would make
/// every load fail, since an untestable feature counts as missing.
constexpr llvm::StringLiteral testableFeatures[] = {"cmov",       "mmx",          "popcnt",
                                                    "sse",        "sse2",         "sse3",
                                                    "ssse3",      "sse4.1",       "sse4.2",
                                                    "avx",        "avx2",         "fma",
                                                    "bmi",        "bmi2",         "aes",
                                                    "pclmul",     "avx512f",      "avx512vl",
                                                    "avx512bw",   "avx512dq",     "avx512cd",
                                                    "avx512vbmi", "avx512ifma",   "avx512vbmi2",
                                                    "avx512vnni", "avx512bitalg", "avx512vpopcntdq",
                                                    "avx512bf16", "gfni",         "vpclmulqdq"};

std::string hostFeatureString() {
  llvm::SubtargetFeatures features;
  for (const auto& feature : llvm::sys::getHostCPUFeatures())
    features.AddFeature(feature.first(), feature.second);
  return features.getString();
}

/// Runs \p write on a fresh temporary file next to \p path, then renames it
/// to \p path; on any failure the temporary is removed.
llvm::Error writeAtomically(llvm::StringRef path,
                            llvm::function_ref<llvm::Error(llvm::StringRef temp)> write) {
  llvm::SmallString<256> model(llvm::sys::path::parent_path(path));
  llvm::sys::path::append(model, "." + llvm::sys::path::filename(path) + ".tmp-%%%%%%%%");
  int fd;
  llvm::SmallString<256> temp;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, temp))
    return llvm::createStringError("cannot create a temporary file next to '" + path +
                                   "': " + ec.message());
  llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  llvm::FileRemover remover(temp);
  if (llvm::Error error = write(temp))
    return error;
  if (std::error_code ec = llvm::sys::fs::rename(temp, path))
    return llvm::createStringError("cannot write '" + path + "': " + ec.message());
  remover.releaseFile();
  return llvm::Error::success();
}

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
                                                ptr_, ptr_, ptr_, ptr_, ptr_, ptr_, i32_, ptr_},
                                               "dync_artifact_descriptor");
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
    const llvm::StructLayout* layout = dl.getStructLayout(descriptorType_);
    if (layout->getElementOffset(12) != offsetof(dync_artifact_descriptor, entries) ||
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
         llvm::ConstantInt::get(i32_, entryValues.size()), entriesGlobal});
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
  std::string targetCpu_;
  std::string cpuFeatures_;
};

} // namespace

llvm::Expected<std::unique_ptr<llvm::TargetMachine>> dync::codegen::createHostTargetMachine() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  std::string triple = llvm::sys::getProcessTriple();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no LLVM target for " + triple + ": " + error);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), hostFeatureString(), options, llvm::Reloc::PIC_));
  if (!tm)
    return llvm::createStringError("cannot create a target machine for " + triple);
  return tm;
}

std::string dync::codegen::describeHostFeatures() {
  llvm::StringMap<bool, llvm::MallocAllocator> host = llvm::sys::getHostCPUFeatures();
  std::string list;
  for (llvm::StringRef feature : testableFeatures) {
    auto it = host.find(feature);
    if (it == host.end() || !it->second)
      continue;
    if (!list.empty())
      list += ',';
    list += feature;
  }
  return list;
}

llvm::Expected<std::unique_ptr<llvm::Module>>
dync::codegen::buildArtifactModule(llvm::LLVMContext& ctx, llvm::TargetMachine& tm,
                                   llvm::ArrayRef<ArtifactEntry> entries,
                                   const ArtifactOptions& options) {
  auto module = std::make_unique<llvm::Module>("dync.artifact", ctx);
  module->setTargetTriple(tm.getTargetTriple().str());
  module->setDataLayout(tm.createDataLayout());
  ShimModule shim(*module);
  DescriptorBuilder builder(*module, shim);
  builder.setTarget(tm.getTargetCPU().str(), describeHostFeatures());
  if (llvm::Error error = builder.emit(entries, options))
    return error;
  std::string problems;
  llvm::raw_string_ostream os(problems);
  if (llvm::verifyModule(*module, &os))
    return llvm::createStringError("codegen produced invalid LLVM IR (a bug in dync): " + problems);
  return module;
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
  return writeAtomically(path, [&](llvm::StringRef temp) -> llvm::Error {
    std::error_code ec;
    llvm::raw_fd_ostream os(temp, ec, llvm::sys::fs::OF_None);
    if (ec)
      return llvm::createStringError("cannot write '" + temp + "': " + ec.message());
    llvm::legacy::PassManager passes;
    if (tm.addPassesToEmitFile(passes, os, nullptr, llvm::CodeGenFileType::ObjectFile))
      return llvm::createStringError("the target cannot emit object files");
    passes.run(module);
    os.close();
    if (os.has_error())
      return llvm::createStringError("writing '" + temp + "' failed: " + os.error().message());
    return llvm::Error::success();
  });
}

llvm::Error dync::codegen::writeSharedLibrary(llvm::Module& module, llvm::TargetMachine& tm,
                                              llvm::StringRef path,
                                              const ArtifactOptions& options) {
  return writeAtomically(path, [&](llvm::StringRef temp) -> llvm::Error {
    llvm::SmallString<256> object(temp);
    object += ".o";
    llvm::FileRemover objectRemover(object);
    if (llvm::Error error = writeObject(module, tm, object))
      return error;
    llvm::SmallString<256> log(temp);
    log += ".log";
    llvm::FileRemover logRemover(log);

    std::string linker = options.linker.empty() ? DYNC_LLD_PATH : options.linker;
    // --no-undefined with no libraries: the artifact reaches everything
    // through the shim table, so any undefined symbol is a codegen bug, and
    // it is caught here rather than by dlopen in a user's process.
    llvm::SmallVector<llvm::StringRef> args = {
        linker, "-shared",     "--no-undefined",   "-z",         "now", "-z", "relro",
        "-z",   "noexecstack", "--hash-style=gnu", "--build-id", "-o",  temp, object};
    std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log),
                                                  llvm::StringRef(log)};
    std::string execError;
    int rc = llvm::sys::ExecuteAndWait(linker, args, std::nullopt, redirects, 0, 0, &execError);
    if (rc != 0) {
      std::string output;
      if (auto buffer = llvm::MemoryBuffer::getFile(log))
        output = (*buffer)->getBuffer().trim().str();
      return llvm::createStringError("linking '" + path + "' with " + linker + " failed" +
                                     (execError.empty() ? "" : ": " + execError) +
                                     (output.empty() ? "" : "\n" + output));
    }
    return llvm::Error::success();
  });
}
