//===- DyncLlc.cpp - Compile graph IR into a dync artifact ----------------===//
//
// The codegen's test driver, in the mould of llc: reads `.dync` graph IR,
// verifies it, and writes the artifact's LLVM IR, its object file, or the
// linked shared library the runtime loads.
//
//===----------------------------------------------------------------------===//
#include "codegen/ArtifactWriter.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/SourceMgr.h"

using namespace dync;

namespace {

enum class EmitKind { LLVM, Object, SharedLibrary };

llvm::cl::OptionCategory category("dync-llc options");

llvm::cl::opt<std::string> inputFile(llvm::cl::Positional, llvm::cl::desc("<input .dync file>"),
                                     llvm::cl::init("-"), llvm::cl::cat(category));

llvm::cl::opt<std::string> outputFile("o",
                                      llvm::cl::desc("Write the output to <file> ('-' for "
                                                     "stdout, only with --emit=llvm)"),
                                      llvm::cl::value_desc("file"), llvm::cl::init("-"),
                                      llvm::cl::cat(category));

llvm::cl::opt<EmitKind>
    emitKind("emit", llvm::cl::desc("What to write"), llvm::cl::init(EmitKind::SharedLibrary),
             llvm::cl::values(clEnumValN(EmitKind::LLVM, "llvm", "the artifact's LLVM IR, as text"),
                              clEnumValN(EmitKind::Object, "obj", "the compiled object file"),
                              clEnumValN(EmitKind::SharedLibrary, "so",
                                         "the linked artifact the runtime loads (default)")),
             llvm::cl::cat(category));

llvm::cl::opt<std::string>
    schemasFile("schemas",
                llvm::cl::desc("Operator schemas, one per line as torch prints them, used to "
                               "place keyword arguments"),
                llvm::cl::value_desc("file"), llvm::cl::cat(category));

llvm::cl::opt<std::string>
    pythonMagic("python-magic",
                llvm::cl::desc("importlib.util.MAGIC_NUMBER to record, 8 hex digits (default: "
                               "the interpreter dync was configured with)"),
                llvm::cl::value_desc("hex"), llvm::cl::init(DYNC_DEFAULT_PYTHON_MAGIC),
                llvm::cl::cat(category));

llvm::cl::opt<std::string>
    torchVersion("torch-version",
                 llvm::cl::desc("torch.__version__ to record (default: the torch dync was "
                                "configured with)"),
                 llvm::cl::value_desc("version"), llvm::cl::init(DYNC_DEFAULT_TORCH_VERSION),
                 llvm::cl::cat(category));

llvm::cl::opt<std::string>
    sourceFile("source",
               llvm::cl::desc("The Python file the graphs were captured from; its path and "
                              "SHA-256 are recorded"),
               llvm::cl::value_desc("file"), llvm::cl::cat(category));

llvm::cl::opt<std::string> linkerPath("linker", llvm::cl::desc("The ld.lld to link with"),
                                      llvm::cl::value_desc("path"), llvm::cl::cat(category));

constexpr const char* overview =
    "dync codegen driver\n\n"
    "Compiles graph IR (a .dync file, or stdin for '-') into a dync artifact: one\n"
    "entry per graph, named after it, holding the graph as __dync_graph_0. Every\n"
    "call node becomes one call into ATen through the runtime's shim; operators are\n"
    "resolved once, when the runtime initializes the artifact. A graph's guards\n"
    "block, when the file has one, becomes its entry's native guard function; a\n"
    "graph without one gets a guard that always misses. Entries hold no rewritten\n"
    "code (marshal.dumps(None)), so the artifact's graphs are meant to be called\n"
    "directly.\n"
    "Nothing is written to -o unless everything succeeded. See docs/codegen.md.\n\n"
    "Examples:\n"
    "  dync-llc model.dync --emit=llvm                 print the LLVM IR\n"
    "  dync-llc model.dync --emit=obj -o model.o       compile for this CPU\n"
    "  dync-llc model.dync -o model.so                 compile and link the artifact\n"
    "  dync-llc attn.dync --schemas=schemas.txt -o attn.so\n"
    "                                                  place keyword arguments\n";

int fail(const llvm::Twine& message) {
  llvm::errs() << "dync-llc: error: " << message << '\n';
  return 1;
}

} // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(argc, argv, overview);

  codegen::ArtifactOptions options;
  options.torchVersion = torchVersion;
  options.linker = linkerPath;
  std::string magic;
  if (pythonMagic.size() != 8 || !llvm::tryGetFromHex(pythonMagic, magic) || magic.size() != 4)
    return fail("--python-magic must be 8 hex digits, e.g. a70d0d0a");
  for (unsigned i = 0; i < 4; ++i)
    options.pythonMagic[i] = static_cast<uint8_t>(magic[i]);

  if (!sourceFile.empty()) {
    llvm::SmallString<256> absolute(sourceFile);
    if (std::error_code ec = llvm::sys::fs::make_absolute(absolute))
      return fail("cannot resolve '" + sourceFile + "': " + ec.message());
    auto source = llvm::MemoryBuffer::getFile(absolute, /*IsText=*/false);
    if (!source)
      return fail("cannot read '" + sourceFile + "': " + source.getError().message());
    std::array<uint8_t, 32> digest =
        llvm::SHA256::hash(llvm::arrayRefFromStringRef((*source)->getBuffer()));
    options.sourcePath = absolute.str().str();
    options.sourceSha256 = llvm::toHex(digest, /*LowerCase=*/true);
  }

  codegen::OpSchemas schemas;
  if (!schemasFile.empty()) {
    auto text = llvm::MemoryBuffer::getFile(schemasFile, /*IsText=*/true);
    if (!text)
      return fail("cannot read '" + schemasFile + "': " + text.getError().message());
    if (llvm::Error error = schemas.addLines((*text)->getBuffer()))
      return fail(llvm::toString(std::move(error)));
  }
  options.schemas = &schemas;

  if (emitKind != EmitKind::LLVM && outputFile == "-")
    return fail("--emit=obj and --emit=so need an output file (-o)");

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/true);
  if (std::error_code ec = buffer.getError())
    return fail("cannot read '" + inputFile + "': " + ec.message());
  llvm::SourceMgr sm;
  sm.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  ir::Context ctx;
  llvm::Expected<std::unique_ptr<ir::Module>> module = ir::parseModule(sm, ctx);
  if (!module) {
    llvm::errs() << llvm::toString(module.takeError()) << '\n';
    return 1;
  }
  if (llvm::Error error = ir::verify(**module, &sm)) {
    llvm::errs() << llvm::toString(std::move(error)) << '\n';
    return 1;
  }

  std::vector<codegen::ArtifactEntry> entries;
  for (const std::unique_ptr<ir::Graph>& graph : (*module)->graphs()) {
    codegen::ArtifactEntry entry;
    entry.qualifiedName = graph->name();
    entry.graphs.push_back({graph.get(), "__dync_graph_0"});
    entries.push_back(std::move(entry));
  }

  // A shared library holds the main module and one object per kernel the
  // graphs call, linked together, exactly as `dync export` builds it.
  if (emitKind == EmitKind::SharedLibrary) {
    codegen::BuildOptions buildOptions;
    llvm::Expected<codegen::TargetSpec> host = codegen::resolveTarget("native");
    if (!host)
      return fail(llvm::toString(host.takeError()));
    buildOptions.target = std::move(*host);
    buildOptions.linker = linkerPath;
    codegen::ArtifactBuilder builder(std::move(buildOptions));
    llvm::Expected<std::vector<codegen::ArtifactUnit>> units =
        builder.buildModules(entries, options);
    if (!units)
      return fail(llvm::toString(units.takeError()));
    if (llvm::Error error = builder.compile(*units))
      return fail(llvm::toString(std::move(error)));
    if (llvm::Error error = builder.link(*units, outputFile))
      return fail(llvm::toString(std::move(error)));
    return 0;
  }

  // The IR and the object are the main module's alone: graph functions,
  // init, guards and the descriptor; kernels are compiled with -o x.so.
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> tm = codegen::createHostTargetMachine();
  if (!tm)
    return fail(llvm::toString(tm.takeError()));
  llvm::LLVMContext llvmContext;
  llvm::Expected<std::unique_ptr<llvm::Module>> artifact =
      codegen::buildArtifactModule(llvmContext, **tm, entries, options);
  if (!artifact)
    return fail(llvm::toString(artifact.takeError()));

  llvm::Error written = llvm::Error::success();
  if (emitKind == EmitKind::LLVM && outputFile == "-")
    (*artifact)->print(llvm::outs(), nullptr);
  else if (emitKind == EmitKind::LLVM)
    written = codegen::writeIR(**artifact, outputFile);
  else
    written = codegen::writeObject(**artifact, **tm, outputFile);
  if (written)
    return fail(llvm::toString(std::move(written)));
  return 0;
}
