//===- ExportCommand.cpp - `dync export ENTRY...` -------------------------===//
//
// Captures each entry as a graph with its guards, in one interpreter, then
// writes the artifact (-o) and prints what --emit asks for.
//
//===----------------------------------------------------------------------===//
#include "driver/ExportCommand.h"
#include "codegen/KernelCodegen.h"
#include "codegen/TargetSpec.h"
#include "driver/ArtifactExport.h"
#include "driver/CaptureDiagnostics.h"
#include "driver/Diagnostics.h"
#include "driver/EmitBytecode.h"
#include "driver/PhaseTimes.h"
#include "driver/VersionCommand.h"
#include "passes/transforms/KernelInlining.h"
#include "passes/transforms/Pipeline.h"

#include "frontend/capture/Capture.h"
#include "frontend/capture/DynamicSpec.h"
#include "frontend/oracle/TensorOracle.h"
#include "frontend/python/EmbeddedPython.h"
#include "frontend/python/EntryResolver.h"
#include "frontend/python/EntrySpec.h"
#include "frontend/python/InterpreterProbe.h"
#include "frontend/python/ModuleLoader.h"
#include "frontend/python/PyRef.h"
#include "frontend/rewrite/RewrittenCode.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <map>
#include <optional>

namespace dync::driver {

namespace {

constexpr const char* ExportFooter = R"(Examples:
  dync export model.py:MLP.forward -o mlp.so
      capture MLP.forward, compile its guards and graph, and write mlp.so;
      in Python, dync.load("mlp.so") then runs the compiled path whenever
      the guards hold ('dync inspect mlp.so' shows what it holds)
  dync export model.py:MLP.forward -o mlp.so --target-cpu x86-64-v3
      compile for any CPU with AVX2 and FMA instead of this machine's CPU
  dync export model.py:MLP.forward --emit=llvm
      print the artifact's LLVM IR: the main module, then each kernel's
  dync export model.py:MLP.forward --emit=graph
      capture MLP.forward on the module's example_inputs() and print the graph
  dync export model.py:MLP.forward --emit=guards --dynamic 'x:0=batch[1,1024]'
      keep dimension 0 of argument x symbolic, named batch, in [1, 1024], and
      print the guards the graph was captured under

ENTRY is FILE.py:QUALNAME, as for 'dync inspect'; several entries are captured
in one run. For Class.method entries, self is --init's expression, else the
module-level instance of that class, else Class(). The example arguments come
from --example's function, else the module's example_inputs().
--example QUALNAME=NAME gives one entry its own function, so that entries with
different parameters can be captured in one run; it repeats, and wins over a
plain --example NAME for that entry.

--dynamic ARG:DIM=SYMBOL[LO,HI] makes dimension DIM of tensor argument ARG
the symbol SYMBOL, optionally within [LO, HI] (either bound may be empty or
inf); the same SYMBOL on two dimensions declares them equal. Repeatable.

The artifact's modules (the main one, one per kernel) compile in parallel
(-j N threads, default one per core); compiled objects are cached in
$DYNC_CACHE_DIR, else $XDG_CACHE_HOME/dync or ~/.cache/dync, so exporting an
unchanged model again skips compiling; --no-cache turns the cache off. The
cache is kept under $DYNC_CACHE_MAX_MB megabytes (default 1024) by removing
the least recently used objects.

Capture takes the whole function as one graph (--fullgraph, the only mode so
far): anything it cannot capture is an error naming the line.)";

class ExportCommand : public Command {
public:
  CLI::App& install(CLI::App& app) override {
    CLI::App* command = app.add_subcommand(
        "export", "Capture functions and compile them into a shared library, e.g. 'dync "
                  "export model.py:Model.forward -o model.so'");
    command->add_option("ENTRY", entries_, "The functions to capture, as FILE.py:QUALNAME")
        ->type_name("FILE.py:QUALNAME")
        ->required();
    command
        ->add_option("--emit", emit_,
                     "What to print: the captured graph, the graph after the passes -O runs "
                     "with the kernels fusion made (optimized-graph), its guards, the types of its "
                     "results (signature), the listing of the rewritten bytecode (bytecode), "
                     "the rewritten code object, marshalled, for tools (code), or the "
                     "artifact's LLVM IR after optimization, main module then each kernel's "
                     "(llvm)")
        ->type_name("KIND")
        ->check(CLI::IsMember(
            {"graph", "optimized-graph", "guards", "signature", "bytecode", "code", "llvm"}));
    command
        ->add_option("-o,--output", output_,
                     "Write the artifact: a shared library with each entry's guards, graph and "
                     "rewritten bytecode, for dync.load()")
        ->type_name("FILE");
    command
        ->add_option("--dynamic", dynamic_,
                     "Keep a tensor dimension symbolic: ARG:DIM=SYMBOL or ARG:DIM=SYMBOL[LO,HI]")
        ->type_name("SPEC")
        // One value per occurrence, so that entries after it stay entries.
        ->allow_extra_args(false);
    command->add_option("--init", init_, "A Python expression giving self for Class.method")
        ->type_name("EXPR");
    command
        ->add_option("--example", examples_,
                     "The module function returning the example arguments "
                     "(default: example_inputs), or QUALNAME=NAME for one entry")
        ->type_name("[QUALNAME=]NAME")
        // One value per occurrence, so that entries after it stay entries.
        ->allow_extra_args(false);
    command
        ->add_option("--decompose", decompose_,
                     "Which of torch's decompositions capture applies: core ATen's (core), or "
                     "also those that turn softmax, layer norm, batch norm, ... into pointwise "
                     "operators and reductions a fuser can compute (fusion); default: fusion, "
                     "or core with -O0")
        ->type_name("SET")
        ->check(CLI::IsMember({"core", "fusion"}));
    command
        ->add_option("-O", optLevel_,
                     "Optimization level: 0 compiles each captured operator into one call "
                     "into ATen; 1 (default) first runs the graph passes: folding, common "
                     "subexpressions, dead code, fusion into generated kernels, memory "
                     "planning (docs/passes.md)")
        ->type_name("LEVEL")
        ->check(CLI::Range(0, 1));
    command->add_flag("--fullgraph", fullgraph_,
                      "Capture each function as one whole graph (the only mode so far)");
    command
        ->add_option("--target-cpu", targetCpu_,
                     "The CPU whose instructions the artifact may use, in LLVM's spelling "
                     "(znver4, skylake-avx512, x86-64-v3, ...); default: native, this machine. "
                     "Loading it on a CPU without those features is refused")
        ->type_name("CPU");
    command
        ->add_option("-j,--jobs", jobs_,
                     "Compile the artifact's modules on N threads (default: one per core)")
        ->type_name("N")
        ->check(CLI::PositiveNumber);
    command->add_flag("--no-cache", noCache_,
                      "Compile every module even if the object cache ($DYNC_CACHE_DIR, else "
                      "$XDG_CACHE_HOME/dync or ~/.cache/dync) holds it, and store nothing");
    command->add_flag("--keep-going", keepGoing_,
                      "Report each entry that fails and go on with the others");
    command->add_flag("--time-report", timeReport_,
                      "Print on stderr the time spent starting Python, importing, capturing, "
                      "generating code, compiling, linking and writing output");
    command->footer(ExportFooter);
    return *command;
  }

  llvm::Error run(const GlobalOptions& options) override;

private:
  std::vector<std::string> entries_;
  std::string emit_;
  std::string output_;
  std::vector<std::string> dynamic_;
  std::string init_;
  std::vector<std::string> examples_;
  bool fullgraph_ = false;
  /// Empty: chosen by the optimization level.
  std::string decompose_;
  int optLevel_ = 1;
  std::string targetCpu_;
  unsigned jobs_ = 0;
  bool noCache_ = false;
  bool keepGoing_ = false;
  bool timeReport_ = false;
};

/// Prints the structure of a graph's return value, one line per element:
/// `result: tuple`, then `result 0: tensor<f32, [32, 10]>` for its elements
/// (`result 1.0: ...` for nested ones), or a single `result: <type>` for a
/// value that is not a tuple or list. What an eager run can be compared with.
void printSignature(llvm::raw_ostream& os, const ir::Graph& graph) {
  const ir::Node* output = graph.output();
  if (!output || output->args().size() != 1)
    return;
  std::function<void(const ir::Argument&, const std::string&)> print =
      [&](const ir::Argument& arg, const std::string& path) {
        os << "result" << (path.empty() ? "" : " ") << path << ": ";
        switch (arg.kind()) {
        case ir::Argument::Kind::Value: {
          const ir::ValueRef& ref = arg.valueRef();
          if (const ir::Type* type = ref.node->resultType(ref.index))
            type->print(os);
          os << '\n';
          return;
        }
        case ir::Argument::Kind::Tuple:
        case ir::Argument::Kind::List: {
          os << (arg.kind() == ir::Argument::Kind::Tuple ? "tuple" : "list") << '\n';
          unsigned i = 0;
          for (const ir::Argument& element : arg.elements())
            print(element, (path.empty() ? "" : path + ".") + std::to_string(i++));
          return;
        }
        default:
          arg.print(os);
          os << '\n';
          return;
        }
      };
  print(output->returnValue(), "");
}

/// What --emit=bytecode shows of the rewritten code of \p code running
/// \p graph (its listing), or with \p marshalled what --emit=code writes
/// (marshal.dumps of it). GIL held.
llvm::Expected<std::string> rewrittenCode(PyCodeObject* code, const ir::Graph& graph,
                                          llvm::StringRef global, bool marshalled) {
  std::string text;
  if (marshalled) {
    llvm::Expected<std::vector<uint8_t>> bytes =
        rewrite::rewriteWholeFunction(reinterpret_cast<PyObject*>(code), graph, global);
    if (!bytes)
      return bytes.takeError();
    text.assign(bytes->begin(), bytes->end());
    return text;
  }
  llvm::Expected<PyObject*> rewritten =
      rewrite::buildWholeFunctionCode(reinterpret_cast<PyObject*>(code), graph, global);
  if (!rewritten)
    return rewritten.takeError();
  python::PyRef owned = python::PyRef::steal(*rewritten);
  llvm::raw_string_ostream os(text);
  if (llvm::Error error = emitBytecode(os, reinterpret_cast<PyCodeObject*>(owned.get())))
    return error;
  return text;
}

/// Python imports `name.so` before `name.py` from the same folder, so an
/// artifact named after its source module would replace the module for
/// `import name`.
void warnIfShadowing(llvm::StringRef output, llvm::StringRef sourcePath) {
  llvm::SmallString<256> outputDir(output), sourceDir(sourcePath);
  llvm::sys::fs::make_absolute(outputDir);
  llvm::sys::path::remove_filename(outputDir);
  llvm::sys::path::remove_filename(sourceDir);
  bool sameDir = llvm::sys::fs::equivalent(outputDir.empty() ? "." : outputDir.str(),
                                           sourceDir.empty() ? "." : sourceDir.str());
  if (sameDir && llvm::sys::path::stem(output) == llvm::sys::path::stem(sourcePath))
    llvm::WithColor::warning(llvm::errs(), "dync")
        << output << " is next to " << llvm::sys::path::filename(sourcePath) << ": 'import "
        << llvm::sys::path::stem(sourcePath)
        << "' from that folder now loads the library instead of the module; give the "
           "artifact another name\n";
}

llvm::Error ExportCommand::run(const GlobalOptions& options) {
  if (emit_.empty() && output_.empty())
    return llvm::make_error<UsageError>(
        "nothing to do: give -o FILE.so to write a shared library, or --emit=KIND to print "
        "what capture produces");
  capture::CaptureOptions captureOptions;
  captureOptions.init = init_;
  // A plain NAME applies to every entry; QUALNAME=NAME to that entry only.
  std::map<std::string, std::string> entryExamples;
  for (const std::string& text : examples_) {
    size_t equals = text.find('=');
    if (equals == std::string::npos) {
      captureOptions.example = text;
      continue;
    }
    std::string qualname = text.substr(0, equals), name = text.substr(equals + 1);
    if (qualname.empty() || name.empty())
      return llvm::make_error<UsageError>("malformed --example '" + text +
                                          "': expected NAME or QUALNAME=NAME");
    entryExamples[qualname] = name;
  }
  for (const std::string& text : dynamic_) {
    llvm::Expected<capture::DynamicSpec> spec = capture::parseDynamicSpec(text);
    if (!spec)
      return asUsageError(spec.takeError());
    captureOptions.dynamic.push_back(std::move(*spec));
  }
  std::vector<python::EntrySpec> specs;
  for (const std::string& text : entries_) {
    llvm::Expected<python::EntrySpec> spec = python::parseEntrySpec(text);
    if (!spec)
      return asUsageError(spec.takeError());
    if (llvm::Error error = python::checkModuleFile(spec->path))
      return error;
    specs.push_back(std::move(*spec));
  }
  for (const auto& [qualname, name] : entryExamples)
    if (llvm::none_of(specs,
                      [&](const python::EntrySpec& spec) { return spec.qualname == qualname; }))
      return llvm::make_error<UsageError>("--example '" + qualname + "=" + name +
                                          "' names no entry: " + qualname + " is not captured");
  if (!targetCpu_.empty() && output_.empty() && emit_ != "llvm")
    return llvm::make_error<UsageError>(
        "--target-cpu changes only the compiled code: give -o FILE.so or --emit=llvm");
  // Checked before Python starts: a misspelt CPU should not cost a capture.
  llvm::Expected<codegen::TargetSpec> target = codegen::resolveTarget(targetCpu_);
  if (!target)
    return asUsageError(target.takeError());
  if (emit_ == "code" && specs.size() != 1)
    return llvm::make_error<UsageError>(
        "--emit=code writes one code object; export one entry at a time");

  PhaseTimes times;
  auto reportTimes = llvm::make_scope_exit([&] {
    if (timeReport_)
      times.print(llvm::errs());
  });
  std::optional<PhaseTimes::Scope> startup(std::in_place, times, "python");
  llvm::Expected<python::InterpreterInfo> interpreter = python::findInterpreter();
  if (!interpreter)
    return interpreter.takeError();
  llvm::Expected<std::unique_ptr<python::EmbeddedPython>> python =
      python::EmbeddedPython::start(*interpreter, {specs.front().path});
  if (!python)
    return python.takeError();
  startup.reset();
  if (options.verbose) {
    printRunningInterpreter(llvm::errs(), **python, "dync: ");
    llvm::errs().flush();
  }

  llvm::Error failures = llvm::Error::success();
  // Python objects and graphs go before the interpreter is finalized.
  {
    ir::Context context;
    ir::Module graphs(context);
    // What each entry that was captured produced, in order; a failed entry
    // leaves nothing here, even if its graph got as far as a return.
    struct Exported {
      std::string spec;
      /// The graph, with the guards it was captured under.
      const ir::Graph* graph;
      /// --emit=bytecode's listing or --emit=code's bytes.
      std::string rewritten;
      /// The entry's code object and file, for -o.
      python::PyRef code;
      std::string sourcePath;
      /// The entry function and what its capture ran, for the artifact's
      /// code identity.
      python::PyRef function;
      std::vector<capture::FunctionRun> functionsRun;
    };
    std::vector<Exported> exported;
    // The passes run for what compiles or shows the optimized graph; the
    // graph they start from is decomposed for fusion unless asked otherwise.
    bool optimize =
        optLevel_ > 0 && (!output_.empty() || emit_ == "llvm" || emit_ == "optimized-graph");
    std::string decompose = !decompose_.empty() ? decompose_ : optLevel_ > 0 ? "fusion" : "core";
    for (const auto& [index, spec] : llvm::enumerate(specs)) {
      llvm::Error error = [&]() -> llvm::Error {
        std::optional<PhaseTimes::Scope> importing(std::in_place, times, "import");
        llvm::Expected<python::LoadedModule> module = python::importModuleFromPath(spec.path);
        if (!module)
          return module.takeError();
        importing.reset();
        llvm::Expected<python::ResolvedEntry> entry = python::resolveEntry(*module, spec.qualname);
        if (!entry)
          return entry.takeError();
        (*python)->flushStdio();
        ir::Graph& graph = graphs.addGraph(entry->qualname);
        PhaseTimes::Scope capturing(times, "capture");
        capture::CaptureOptions entryOptions = captureOptions;
        if (auto it = entryExamples.find(spec.qualname); it != entryExamples.end())
          entryOptions.example = it->second;
        std::vector<capture::FunctionRun> functionsRun;
        llvm::Error captured = capture::captureGraph(
            *module, *entry, entryOptions, graph,
            [&](ir::Graph& g) {
              return oracle::TensorOracle::create(g, {*oracle::parseDecompositions(decompose)});
            },
            &functionsRun);
        (*python)->flushStdio();
        if (captured)
          return placeCaptureErrors(std::move(captured), module->absolutePath, module->displayPath);
        std::string rewritten;
        if (emit_ == "graph") {
          // As captured, before the passes below change it.
          llvm::raw_string_ostream os(rewritten);
          graph.print(os);
          os << '\n';
        }
        if (optimize) {
          PhaseTimes::Scope optimizing(times, "passes");
          if (llvm::Error error = transforms::optimizeGraph(graphs, graph))
            return llvm::createStringError(
                module->displayPath + ": " + entry->qualname +
                ": optimizing the graph failed: " + llvm::toString(std::move(error)));
          // A kernel codegen cannot lower runs as the ATen calls it holds:
          // slower, never wrong, and the entry is still exported.
          llvm::Expected<unsigned> unfused =
              transforms::inlineKernelCalls(graphs, graph, [&](const ir::Graph& kernel) {
                llvm::Error why = codegen::checkKernel(kernel);
                if (!why)
                  return false;
                if (options.verbose)
                  llvm::errs() << "dync: " << entry->qualname << ": kernel @" << kernel.name()
                               << " runs as ATen calls: " << llvm::toString(std::move(why)) << '\n';
                else
                  llvm::consumeError(std::move(why));
                return true;
              });
          if (!unfused)
            return unfused.takeError();
        }
        if (emit_ == "bytecode" || emit_ == "code") {
          llvm::Expected<std::string> text = rewrittenCode(
              entry->codeObject(), graph, rewrite::graphGlobalName(graph, index), emit_ == "code");
          if (!text)
            return llvm::createStringError(module->displayPath + ": " + entry->qualname + ": " +
                                           llvm::toString(text.takeError()));
          rewritten = std::move(*text);
        }
        exported.push_back({spec.text, &graph, std::move(rewritten), entry->code,
                            module->absolutePath, entry->function, std::move(functionsRun)});
        return llvm::Error::success();
      }();
      if (error) {
        if (!keepGoing_)
          return error;
        failures = llvm::joinErrors(std::move(failures), std::move(error));
      }
    }

    bool buildArtifact = !output_.empty() || emit_ == "llvm";
    if (buildArtifact && !exported.empty()) {
      // One artifact holds the entries of one source file: the runtime
      // checks that file's hash and finds the entries in its module.
      std::vector<CapturedEntry> captured;
      for (const Exported& entry : exported) {
        if (entry.sourcePath != exported.front().sourcePath)
          return llvm::make_error<UsageError>(
              "-o writes the entries of one file, but " + entry.spec + " is not in " +
              exported.front().sourcePath + "; export each file to its own library");
        CapturedEntry& added = captured.emplace_back();
        added.graph = entry.graph;
        added.code = entry.code;
        added.function = entry.function;
        for (const capture::FunctionRun& run : entry.functionsRun)
          added.functionsRun.push_back({run.code, run.globals, run.qualname});
      }
      ArtifactRequest request;
      request.outputPath = output_;
      request.llvmIR = emit_ == "llvm" ? &llvm::outs() : nullptr;
      request.target = *target;
      request.jobs = jobs_;
      request.useCache = !noCache_;
      request.keepGoing = keepGoing_;
      request.log = options.verbose ? &llvm::errs() : nullptr;
      request.times = &times;
      llvm::Error skipped = llvm::Error::success();
      if (llvm::Error error =
              writeArtifact(captured, exported.front().sourcePath, request, skipped)) {
        llvm::consumeError(std::move(skipped));
        return llvm::joinErrors(std::move(failures), std::move(error));
      }
      failures = llvm::joinErrors(std::move(failures), std::move(skipped));
      if (!output_.empty())
        warnIfShadowing(output_, exported.front().sourcePath);
    } else if (buildArtifact) {
      failures = llvm::joinErrors(
          std::move(failures),
          llvm::createStringError("no entry was captured; " +
                                  (output_.empty() ? std::string("no LLVM IR to print")
                                                   : output_ + " was not written")));
    }
    PhaseTimes::Scope writing(times, "output");
    llvm::raw_ostream& os = llvm::outs();
    if (emit_ == "optimized-graph") {
      // The kernels first, as the text form orders them, then each graph.
      for (const auto& kernel : graphs.kernels()) {
        kernel->print(os);
        os << '\n';
      }
      for (const Exported& entry : exported) {
        entry.graph->print(os);
        os << '\n';
      }
    } else if (emit_ == "graph" || emit_ == "code") {
      for (const Exported& entry : exported)
        os << entry.rewritten;
    } else if (!emit_.empty() && emit_ != "llvm") {
      for (const Exported& entry : exported) {
        if (exported.size() > 1 || specs.size() > 1)
          os << "# entry: " << entry.spec << '\n';
        if (emit_ == "guards")
          entry.graph->guards().print(os, entry.graph->name());
        else if (emit_ == "signature")
          printSignature(os, *entry.graph);
        else
          os << entry.rewritten;
      }
    }
    os.flush();
  }
  return failures;
}

} // namespace

std::unique_ptr<Command> createExportCommand() { return std::make_unique<ExportCommand>(); }

} // namespace dync::driver
