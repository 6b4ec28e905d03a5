//===- ExportCommandLine.cpp - `dync export ENTRY...` ---------------------===//
//
// The command line of `dync export`: its options and help, their checks
// (before Python starts, so a mistyped option costs no capture), and the
// printing of what --emit asks for. The export itself is the compiler
// library's (compiler/Export.h).
//
//===----------------------------------------------------------------------===//
#include "codegen/TargetSpec.h"
#include "compiler/Export.h"
#include "compiler/PhaseTimes.h"
#include "driver/Diagnostics.h"
#include "driver/ExportCommand.h"
#include "driver/OutputPath.h"
#include "driver/VersionCommand.h"

#include "frontend/capture/DataBranches.h"
#include "frontend/capture/DynamicSpec.h"
#include "frontend/embedding/EntrySpec.h"
#include "frontend/embedding/ModuleLoader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <cstdlib>
#include <functional>
#include <map>

namespace dync::driver {

namespace {

constexpr const char* ExportFooter = R"(Examples:
  dync export model.py:MLP.forward -o mlp.dync.so
      capture MLP.forward, compile its guards and graph, and write
      mlp.dync.so; in Python, dync.load("mlp.dync.so") then runs the compiled
      path whenever the guards hold ('dync inspect mlp.dync.so' shows what it
      holds)
  dync export model.py:MLP.forward -o mlp.dync.so --target-cpu x86-64-v3
      compile for any CPU with AVX2 and FMA instead of this machine's CPU
  dync export model.py:MLP.forward --emit=llvm
      print the artifact's LLVM IR: the main module, then each kernel's
  dync export model.py:MLP.forward --emit=graph
      capture MLP.forward on the module's example_inputs() and print the graph
  dync export model.py:MLP.forward --emit=guards --dynamic 'x:0=batch[1,1024]'
      keep dimension 0 of argument x symbolic, named batch, in [1, 1024], and
      print the guards the graph was captured under
  dync export model.py:Model.forward --warmup 1 -o model.dync.so
      call Model.forward once on its example inputs before capturing it, so
      state it fills on its first call (a cache) is captured filled

ENTRY is FILE.py:QUALNAME, as for 'dync inspect'; several entries are captured
in one run. For Class.method entries, self is --init's expression, else the
module-level instance of that class, else Class(). The example arguments come
from --example's function, else the module's example_inputs(); keyword
arguments from the module's example_kwargs() (for --example NAME_inputs,
NAME_kwargs(); for another NAME, NAME_kwargs()), a dict by parameter name.
--example QUALNAME=NAME gives one entry its own function, so that entries with
different parameters can be captured in one run; it repeats, and wins over a
plain --example NAME for that entry.

--dynamic ARG:DIM=SYMBOL[LO,HI] makes dimension DIM of tensor argument ARG
the symbol SYMBOL, optionally within [LO, HI] (either bound may be empty or
inf); the same SYMBOL on two dimensions declares them equal. Repeatable.
--dynamic ARG=SYMBOL[LO,HI] makes the Python int argument ARG a symbolic size;
--dynamic 'cfg.n=n[1,64]', 'dims[1]=n', "opts['n']=n" do so for an int held
in an argument's attribute (a dataclass or config object) or in an item of a
tuple, list or dict, wherever the program reads it from there; the path may
name a class attribute or a property, the int it reads being the symbol.
--dynamic auto makes every dimension of every tensor argument (ARG_DIM) and
every int argument of 2 or more (ARG, keywords in **kwargs too) symbolic,
then notes on stderr which ones the program specialized, at which line, and
the --dynamic spellings that hold; an int whose symbol stops capture
(range(n)) is kept constant, noted with the reason.
With -o, every size of a declared range is served: where the graph leaves
single sizes out (sizes 0 and 1, which torch specializes; a size the program
treats apart, such as a slice covering a whole buffer) or the program cuts
the range at a boundary (if n > 4), the artifact also holds a graph captured
at that size or past the cut, and export notes each one on stderr with the
line that made it; a graph captured at a size torch specializes that is the
general graph there is folded into it (one graph serves [1, N]), and one that
differs is noted with the difference and its line; --strict-dynamic makes a
size left apart an error instead. An entry is captured at most --max-graphs
times for its ranges (default 16); the sizes left out then run the original
code, and a warning names them.

The artifact's modules (the main one, one per kernel) compile in parallel
(-j N threads, default one per core); compiled objects are cached in
$DYNC_CACHE_DIR, else $XDG_CACHE_HOME/dync or ~/.cache/dync, so exporting an
unchanged model again skips compiling; the tensor oracle's call results
are cached there too (oracle-calls/), so capturing a model again skips
torch's meta functions for each call it made before; --no-cache turns both
off. The object cache is kept under $DYNC_CACHE_MAX_MB megabytes (default
1024), the call cache under $DYNC_ORACLE_CACHE_MAX_MB (default 256), by
removing the least recently used entries.

-o replaces only an artifact an earlier export wrote, never another file,
and refuses a name that would shadow a module of its folder: Python imports
model.so before model.py, so name artifacts NAME.dync.so, which no import
reaches.

Capture takes the whole function as one graph (--fullgraph, the only mode so
far): anything it cannot capture is an error naming the line.)";

class ExportCommand : public Command {
public:
  CLI::App& install(CLI::App& app) override {
    CLI::App* command = app.add_subcommand(
        "export", "Capture functions and compile them into a shared library, e.g. 'dync "
                  "export model.py:Model.forward -o model.dync.so'");
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
                     "Keep a tensor dimension symbolic: ARG:DIM=SYMBOL or ARG:DIM=SYMBOL[LO,HI]; "
                     "an int argument: ARG=SYMBOL[LO,HI]; an int inside one: "
                     "ARG.ATTR=SYMBOL, ARG[I]=SYMBOL, ARG['KEY']=SYMBOL; 'auto' tries every "
                     "dimension and int argument and reports which stay dynamic")
        ->type_name("SPEC")
        // One value per occurrence, so that entries after it stay entries.
        ->allow_extra_args(false);
    command->add_flag("--strict-dynamic", strictDynamic_,
                      "With -o, stop with an error where the graph for a --dynamic range "
                      "leaves sizes of it out, instead of adding a graph for those sizes");
    command
        ->add_option("--max-graphs", maxGraphs_,
                     "With -o, capture each entry at most N times for the sizes of its "
                     "--dynamic ranges (the example's capture included); sizes left out then "
                     "run the original code, and export names them (default: 16)")
        ->type_name("N")
        ->check(CLI::Range(1, 1024));
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
    command
        ->add_option("--data-branches", dataBranches_,
                     "What capture does at a decision on tensor data (`if mask.any():`, "
                     "`if n.item() > 3:`, max() of two tensors): take the side the example "
                     "inputs take, checked when the graph runs, a call taking the other side "
                     "running the original code, with a note naming the line (specialize, the "
                     "default); or stop there with an error, as torch.export does (refuse)")
        ->type_name("MODE")
        ->check(CLI::IsMember({"specialize", "refuse"}));
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
                      "Capture and compile afresh even if the cache ($DYNC_CACHE_DIR, else "
                      "$XDG_CACHE_HOME/dync or ~/.cache/dync) holds the tensor oracle's call "
                      "results or compiled modules, and store nothing");
    command->add_flag(
        "--assume-compiling", assumeCompiling_,
        "Answer True to torch.compiler.is_compiling() while capturing, as torch.compile does, "
        "so the artifact serves the program's compiled path; only for programs that compute "
        "the same on both paths (transformers' models do). Default: False, what eager answers");
    command->add_flag(
        "--assume-exporting", assumeExporting_,
        "Answer True to torch.compiler.is_compiling() and torch.compiler.is_exporting() while "
        "capturing, as torch.export does, so the artifact serves the path the program keeps "
        "for export; the same caveat as --assume-compiling");
    command
        ->add_option("--warmup", warmupCalls_,
                     "Call each entry N times on its example inputs, for real, before capturing "
                     "it, so a program that fills its own state on its first call (a cache, "
                     "grids built for a size, hooks installed once) is captured in the state "
                     "later calls see; the artifact then serves the calls after the first, as "
                     "an export of a model called once serves them (default: 0)")
        ->type_name("N");
    command->add_flag("--keep-going", keepGoing_,
                      "Report each entry that fails and go on with the others");
    command->add_flag("--time-report", timeReport_,
                      "Print on stderr the time spent starting Python, importing, capturing, "
                      "generating code, compiling, linking and writing output: wall-clock time "
                      "and the process's CPU time");
    command->footer(ExportFooter);
    return *command;
  }

  llvm::Error run(const GlobalOptions& options) override;

private:
  std::vector<std::string> entries_;
  std::string emit_;
  std::string output_;
  std::vector<std::string> dynamic_;
  bool strictDynamic_ = false;
  size_t maxGraphs_ = 16;
  std::string init_;
  std::vector<std::string> examples_;
  bool fullgraph_ = false;
  std::string dataBranches_ = "specialize";
  /// Empty: chosen by the optimization level.
  std::string decompose_;
  int optLevel_ = 1;
  std::string targetCpu_;
  unsigned jobs_ = 0;
  bool noCache_ = false;
  bool keepGoing_ = false;
  bool assumeCompiling_ = false;
  bool assumeExporting_ = false;
  unsigned warmupCalls_ = 0;
  bool timeReport_ = false;
};

/// Prints the structure of a graph's return value, one line per element:
/// `result: tuple`, then `result 0: tensor<f32, [32, 10]>` for its elements
/// (`result 1.0: ...` for nested ones; a dict's or object's entries by key
/// or attribute, `result "logits": ...`), or a single `result: <type>` for
/// a value that is not a container. What an eager run can be compared with.
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
        case ir::Argument::Kind::Dict:
        case ir::Argument::Kind::Object: {
          // `result: dict`, `result: object model:Out`, then each entry
          // named by its key (printed as the IR does) or attribute.
          bool isObject = arg.kind() == ir::Argument::Kind::Object;
          os << (isObject ? "object" : "dict");
          if (arg.hasTypeName())
            os << ' ' << arg.typeModule() << ':' << arg.typeQualname();
          os << '\n';
          for (size_t i = 0; i < arg.elements().size(); ++i) {
            std::string name;
            llvm::raw_string_ostream ns(name);
            size_t attributes = isObject ? arg.attributeNames().size() : 0;
            if (i < attributes) {
              ns << arg.attributeNames()[i];
            } else {
              // An object's items are named `[key]`, a dict's entries `key`.
              ns << (isObject ? "[" : "");
              arg.dictKeys()[i - attributes].print(ns);
              ns << (isObject ? "]" : "");
            }
            print(arg.elements()[i], (path.empty() ? "" : path + ".") + name);
          }
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

/// Prints what \p emit (--emit's kind) asks for of what \p compiler
/// exported from \p entryCount entries.
void printExported(llvm::StringRef emit, const compiler::ExportCompiler& compiler,
                   size_t entryCount) {
  llvm::raw_ostream& os = llvm::outs();
  // Each entry's first variant; `dync inspect` shows an artifact's all.
  std::vector<const compiler::ExportedGraph*> shown;
  for (const compiler::ExportedGraph& entry : compiler.exported())
    if (entry.shown)
      shown.push_back(&entry);
  if (emit == "optimized-graph") {
    // The kernels first, as the text form orders them, then each graph.
    llvm::StringSet<> called;
    for (const compiler::ExportedGraph* entry : shown)
      for (const ir::Node& node : entry->graph->nodes())
        if (node.isKernelCall())
          called.insert(node.kernelName());
    for (const auto& kernel : compiler.graphs().kernels()) {
      if (!called.contains(kernel->name()))
        continue;
      kernel->print(os);
      os << '\n';
    }
    for (const compiler::ExportedGraph* entry : shown) {
      entry->graph->print(os);
      os << '\n';
    }
  } else if (emit == "graph" || emit == "code") {
    for (const compiler::ExportedGraph* entry : shown)
      os << entry->rewritten;
  } else if (!emit.empty() && emit != "llvm") {
    for (const compiler::ExportedGraph* entryPointer : shown) {
      const compiler::ExportedGraph& entry = *entryPointer;
      if (shown.size() > 1 || entryCount > 1)
        os << "# entry: " << entry.spec << '\n';
      if (emit == "guards")
        entry.graph->guards().print(os, entry.graph->name());
      else if (emit == "signature")
        printSignature(os, *entry.graph);
      else
        os << entry.rewritten;
    }
  }
  os.flush();
}

llvm::Error ExportCommand::run(const GlobalOptions& options) {
  if (emit_.empty() && output_.empty())
    return llvm::make_error<UsageError>(
        "nothing to do: give -o FILE.so to write a shared library, or --emit=KIND to print "
        "what capture produces");
  compiler::ExportOptions exportOptions;
  capture::CaptureOptions& captureOptions = exportOptions.capture;
  captureOptions.init = init_;
  captureOptions.assumeCompiling = assumeCompiling_;
  captureOptions.dataBranches =
      capture::parseDataBranches(dataBranches_).value_or(capture::DataBranches::Specialize);
  captureOptions.assumeExporting = assumeExporting_;
  captureOptions.warmupCalls = warmupCalls_;
  // A plain NAME applies to every entry; QUALNAME=NAME to that entry only.
  std::map<std::string, std::string>& entryExamples = exportOptions.entryExamples;
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
    if (text == "auto") {
      captureOptions.autoDynamic = true;
      continue;
    }
    llvm::Expected<capture::DynamicSpec> spec = capture::parseDynamicSpec(text);
    if (!spec)
      return asUsageError(spec.takeError());
    captureOptions.dynamic.push_back(std::move(*spec));
  }
  if (llvm::Error error = capture::checkDynamicSpecs(captureOptions.dynamic))
    return asUsageError(std::move(error));
  std::vector<python::EntrySpec>& specs = exportOptions.entries;
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
  // Checked before Python starts: a capture must not be spent on an output
  // that would replace the user's source or shadow a module.
  if (!output_.empty())
    if (llvm::Error error = checkOutputPath(output_))
      return error;

  compiler::PhaseTimes times;
  auto reportTimes = llvm::make_scope_exit([&] {
    if (timeReport_)
      times.print(llvm::errs());
  });
  exportOptions.emit = emit_;
  exportOptions.optLevel = optLevel_;
  exportOptions.decompose = decompose_;
  exportOptions.strictDynamic = strictDynamic_;
  exportOptions.maxGraphs = maxGraphs_;
  compiler::ArtifactRequest& artifact = exportOptions.artifact;
  artifact.outputPath = output_;
  artifact.target = *target;
  artifact.jobs = jobs_;
  artifact.useCache = !noCache_;
  artifact.keepGoing = keepGoing_;
  artifact.log = options.verbose ? &llvm::errs() : nullptr;
  artifact.times = &times;
  // Declared after the times: the interpreter is finalized before they print.
  compiler::ExportCompiler compiler(std::move(exportOptions));
  // The oracle's call cache is read by its Python half, which looks at the
  // environment when the interpreter imports it.
  if (noCache_)
    ::setenv("DYNC_ORACLE_CACHE", "off", /*overwrite=*/1);
  if (llvm::Error error = compiler.startPython())
    return error;
  if (options.verbose) {
    printRunningInterpreter(llvm::errs(), compiler.python(), "dync: ");
    llvm::errs().flush();
  }
  llvm::Error failures = llvm::Error::success();
  if (llvm::Error error = compiler.run(failures)) {
    llvm::consumeError(std::move(failures));
    return error;
  }
  {
    compiler::PhaseTimes::Scope writing(times, "output");
    printExported(emit_, compiler, specs.size());
  }
  return failures;
}

} // namespace

std::unique_ptr<Command> createExportCommand() { return std::make_unique<ExportCommand>(); }

} // namespace dync::driver
