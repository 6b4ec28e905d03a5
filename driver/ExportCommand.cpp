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
#include "driver/OutputPath.h"
#include "driver/PhaseTimes.h"
#include "driver/RangeSpecializations.h"
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
#include "frontend/python/PythonError.h"
#include "frontend/python/SourceError.h"
#include "frontend/rewrite/RewrittenCode.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
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
--dynamic auto makes every dimension of every tensor argument symbolic
(ARG_DIM), then notes on stderr which ones the program specialized, at which
line, and the --dynamic spellings that hold.
With -o, every size of a declared range is served: where the graph leaves
single sizes out (sizes 0 and 1, which torch specializes; a size the program
treats apart, such as a slice covering a whole buffer) or the program cuts
the range at a boundary (if n > 4), the artifact also holds a graph captured
at that size or past the cut, and export notes each one on stderr with the
line that made it; --strict-dynamic makes that an error instead.

The artifact's modules (the main one, one per kernel) compile in parallel
(-j N threads, default one per core); compiled objects are cached in
$DYNC_CACHE_DIR, else $XDG_CACHE_HOME/dync or ~/.cache/dync, so exporting an
unchanged model again skips compiling; --no-cache turns the cache off. The
cache is kept under $DYNC_CACHE_MAX_MB megabytes (default 1024) by removing
the least recently used objects.

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
                     "an int argument: ARG=SYMBOL[LO,HI]; 'auto' tries every dimension and "
                     "reports which stay dynamic")
        ->type_name("SPEC")
        // One value per occurrence, so that entries after it stay entries.
        ->allow_extra_args(false);
    command->add_flag("--strict-dynamic", strictDynamic_,
                      "With -o, stop with an error where the graph for a --dynamic range "
                      "leaves sizes of it out, instead of adding a graph for those sizes");
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
  bool strictDynamic_ = false;
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
            if (isObject)
              ns << arg.attributeNames()[i];
            else
              arg.dictKeys()[i].print(ns);
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

/// What a variant's graph does about autograd, which capture checks.
enum class Autograd {
  /// Anything (what --emit shows of a plain capture).
  Any,
  /// Nothing it returns requires grad: it may be fused.
  None,
  /// As None, and no input requires grad whatever the real ones say.
  Frozen,
  /// Its ATen calls run one by one and autograd records them, in the grad
  /// mode of the capture: the program may not switch it over tensors that
  /// require grad.
  Records,
};

/// torch.is_grad_enabled(). GIL held.
bool gradModeNow() {
  python::PyRef torch = python::PyRef::steal(PyImport_ImportModule("torch"));
  python::PyRef enabled =
      torch ? python::PyRef::steal(PyObject_CallMethod(torch.get(), "is_grad_enabled", nullptr))
            : python::PyRef();
  PyErr_Clear();
  return !enabled || enabled.get() == Py_True;
}

/// Runs \p fn with torch's grad mode set to \p enabled, then restores it.
/// GIL held.
llvm::Error withGradMode(bool enabled, llvm::function_ref<llvm::Error()> fn) {
  python::PyRef torch = python::PyRef::steal(PyImport_ImportModule("torch"));
  if (!torch)
    return python::takePythonError("importing torch");
  bool before = gradModeNow();
  auto set = [&](bool mode) -> llvm::Error {
    python::PyRef done = python::PyRef::steal(
        PyObject_CallMethod(torch.get(), "set_grad_enabled", "O", mode ? Py_True : Py_False));
    if (!done)
      return python::takePythonError("setting torch's grad mode");
    return llvm::Error::success();
  };
  if (llvm::Error error = set(enabled))
    return error;
  llvm::Error result = fn();
  if (llvm::Error error = set(before))
    return llvm::joinErrors(std::move(result), std::move(error));
  return result;
}

/// The text of \p graph and its guards without its name (the header up to
/// its first parenthesis), the grad-mode guard and runs of blanks (the
/// header's indentation follows the name).
std::string textButGradMode(const ir::Graph& graph) {
  std::string text;
  llvm::raw_string_ostream os(text);
  graph.print(os);
  for (const ir::Guard& guard : graph.guards().guards())
    if (guard.kind != ir::GuardKind::GradMode) {
      guard.print(os);
      os << '\n';
    }
  llvm::StringRef body = llvm::StringRef(text).drop_until([](char c) { return c == '('; });
  std::string normal;
  for (char c : body)
    if (c != ' ' || normal.empty() || normal.back() != ' ')
      normal.push_back(c);
  return normal;
}

/// Whether \p a and \p b, the same entry captured in two grad modes, are the
/// same graph under the same guards but for the grad mode.
bool sameButGradMode(const ir::Graph& a, const ir::Graph& b) {
  return textButGradMode(a) == textButGradMode(b);
}

void dropGradModeGuard(ir::Graph& graph) {
  ir::GuardSet kept;
  kept.localNames() = graph.guards().localNames();
  kept.setLoc(graph.guards().loc());
  for (const ir::Guard& guard : graph.guards().guards())
    if (guard.kind != ir::GuardKind::GradMode)
      kept.add(guard);
  graph.guards() = std::move(kept);
}

/// Exports the variants of an entry at the examples' sizes, then at each
/// size of a declared range their graph leaves out (sizes 0 and 1, single
/// sizes the program treats apart), until every declared size is served or
/// \p MaxSpecializations graphs were made. Each specialization is noted on
/// stderr; with \p strict, the first size left out is the error instead. A
/// specialization that cannot be captured means the program does not run at
/// that size: the range contradicts it.
llvm::Error exportSpecializations(llvm::function_ref<llvm::Expected<ir::Graph*>()> exportFamily,
                                  SizePoint& sizePoint,
                                  const std::vector<capture::DynamicSpec>& specs, bool strict,
                                  const python::LoadedModule& module, llvm::StringRef qualname) {
  constexpr size_t MaxSpecializations = 8;
  std::vector<UncoveredSize> queue;
  // Each graph made so far, with the sizes it was captured at.
  std::vector<std::pair<const ir::Graph*, SizePoint>> done;
  for (size_t next = 0;; ++next) {
    if (next > 0) {
      if (next > queue.size())
        return llvm::Error::success();
      sizePoint = queue[next - 1].point;
    }
    llvm::Expected<ir::Graph*> first = exportFamily();
    if (!first) {
      if (next == 0)
        return first.takeError();
      // The program does not run (or cannot be captured) at that size.
      const UncoveredSize& why = queue[next - 1];
      std::string prefix = "--dynamic '" + why.spec + "' contradicts the program: at " +
                           describePoint(sizePoint) + " (" + why.why + "), ";
      return llvm::handleErrors(
          first.takeError(),
          [&](const python::SourceError& error) {
            return llvm::make_error<python::SourceError>(error.location(), prefix + error.text());
          },
          [&](const llvm::ErrorInfoBase& error) {
            return llvm::createStringError(prefix + error.message());
          });
    }
    done.emplace_back(*first, sizePoint);
    for (UncoveredSize& size : uncoveredSizes(**first, specs, sizePoint)) {
      if (llvm::any_of(done,
                       [&](const auto& made) {
                         return made.second == size.point ||
                                servesPoint(*made.first, made.second, size.point);
                       }) ||
          llvm::any_of(queue, [&](const UncoveredSize& q) { return q.point == size.point; }))
        continue;
      if (strict)
        return llvm::make_error<python::SourceError>(
            python::SourceLocation{module.displayPath, 0, 0, 0, ""},
            "--dynamic '" + size.spec +
                "' is not served whole by one graph (--strict-dynamic): " + size.why + ", so " +
                size.symbol + " = " + std::to_string(size.size) + " would need a graph of its own");
      if (queue.size() + 1 >= MaxSpecializations) {
        llvm::WithColor::warning(llvm::errs(), "dync")
            << qualname << ": --dynamic '" << size.spec << "': " << size.symbol << " = "
            << size.size << " is not served (" << size.why << "); the artifact already holds "
            << MaxSpecializations << " graphs for its ranges\n";
        continue;
      }
      llvm::WithColor::note(llvm::errs(), "dync")
          << qualname << ": --dynamic '" << size.spec << "': " << size.why
          << "; adding a graph for " << describePoint(size.point) << '\n';
      queue.push_back(std::move(size));
    }
  }
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
  // Checked before Python starts: a capture must not be spent on an output
  // that would replace the user's source or shadow a module.
  if (!output_.empty())
    if (llvm::Error error = checkOutputPath(output_))
      return error;

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
      /// Whether --emit shows it: the first variant of each entry.
      bool shown = true;
      /// The entry function and what its capture ran, for the artifact's
      /// code identity.
      python::PyRef function;
      std::vector<capture::FunctionRun> functionsRun;
      /// The captured graph's rangeFreeText, for merging equal graphs of a
      /// split range; empty when not exported to an artifact.
      std::string rangeFree = {};
    };
    std::vector<Exported> exported;
    // The passes run for what compiles or shows the optimized graph; the
    // graph they start from is decomposed for fusion unless asked otherwise.
    bool optimize =
        optLevel_ > 0 && (!output_.empty() || emit_ == "llvm" || emit_ == "optimized-graph");
    std::string decompose = !decompose_.empty() ? decompose_ : optLevel_ > 0 ? "fusion" : "core";
    bool buildArtifact = !output_.empty() || emit_ == "llvm";
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
        capture::CaptureOptions entryOptions = captureOptions;
        if (auto it = entryExamples.find(spec.qualname); it != entryExamples.end())
          entryOptions.example = it->second;

        // Captures one variant of the entry into \p into, named with
        // \p nameSuffix, under \p gradEnabled with \p decomposition; with
        // \p frozen no input requires grad. Returns its graph.
        // What each variant's capture ran, by graph, for the code identity.
        std::map<const ir::Graph*, std::vector<capture::FunctionRun>> functionsRun;
        // The sizes the variants being captured serve part of the declared
        // ranges at (empty: the examples'); see RangeSpecializations.h.
        SizePoint sizePoint;
        std::vector<std::string> autoReport;
        auto printAutoReport = llvm::make_scope_exit([&] {
          for (const std::string& line : autoReport)
            llvm::WithColor::note(llvm::errs(), "dync")
                << entry->qualname << ": --dynamic auto: " << line << '\n';
        });
        auto captureVariant = [&](bool gradEnabled, llvm::StringRef decomposition,
                                  llvm::StringRef nameSuffix, Autograd autograd,
                                  ir::Module* into = nullptr) -> llvm::Expected<ir::Graph*> {
          (*python)->flushStdio();
          ir::Graph& graph =
              (into ? *into : graphs)
                  .addGraph(entry->qualname + specializationSuffix(sizePoint) + nameSuffix.str());
          PhaseTimes::Scope capturing(times, "capture");
          oracle::OracleOptions oracleOptions;
          oracleOptions.decompositions = *oracle::parseDecompositions(decomposition);
          oracleOptions.inputsRequireGrad = autograd != Autograd::Frozen;
          oracleOptions.recordsAutograd = autograd == Autograd::Records;
          capture::CaptureOptions variantOptions = entryOptions;
          variantOptions.sizeHints = sizePoint;
          // An artifact serves a range the program cuts with a graph per
          // part (exportSpecializations); --strict-dynamic refuses the cut.
          variantOptions.splitRanges = buildArtifact && !strictDynamic_;
          // --dynamic auto reports what the first capture found.
          variantOptions.autoReport = autoReport.empty() ? &autoReport : nullptr;
          // Under no_grad nothing records autograd, and what requires grad
          // is an input, a view of one, or a tensor made so, as in eager.
          variantOptions.noAutograd =
              gradEnabled && (autograd == Autograd::None || autograd == Autograd::Frozen);
          llvm::Error captured = withGradMode(gradEnabled, [&] {
            return capture::captureGraph(
                *module, *entry, variantOptions, graph,
                [&](ir::Graph& g) { return oracle::TensorOracle::create(g, oracleOptions); },
                &functionsRun[&graph]);
          });
          (*python)->flushStdio();
          if (captured)
            return placeCaptureErrors(std::move(captured), module->absolutePath,
                                      module->displayPath);
          return &graph;
        };
        auto optimizeVariant = [&](ir::Graph& graph) -> llvm::Error {
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
          return unfused ? llvm::Error::success() : unfused.takeError();
        };

        // Optimizes a variant and records it; --emit shows the first one
        // (the graph as captured, or the rewritten bytecode).
        bool first = true;
        llvm::StringSet<> mergeNotes;
        auto addVariant = [&](ir::Graph& graph) -> llvm::Error {
          std::string text;
          if (first && emit_ == "graph") {
            llvm::raw_string_ostream os(text);
            graph.print(os);
            os << '\n';
          }
          // Equal graphs of a split range: this one, over the union of the
          // two ranges, takes the earlier one's place (its kernels go with
          // it), so the artifact holds one graph and one set of kernels.
          std::string rangeFree = buildArtifact ? rangeFreeText(graph) : std::string();
          std::optional<size_t> replaces;
          for (size_t i = 0; buildArtifact && i < exported.size() && !replaces; ++i) {
            if (exported[i].spec != spec.text || exported[i].rangeFree != rangeFree)
              continue;
            std::optional<MergedRange> merged = mergedRange(*exported[i].graph, graph);
            if (!merged)
              continue;
            for (ir::SymbolDecl& decl : graph.symbols())
              if (decl.name == merged->symbol)
                decl.range = merged->range;
            // Once per entry, not per grad-mode variant.
            if (mergeNotes.insert(merged->what).second)
              llvm::WithColor::note(llvm::errs(), "dync")
                  << entry->qualname << ": the graphs for " << merged->what
                  << " are the same; one graph serves both\n";
            // The merged graph takes the earlier one's name too (the
            // earlier one stays in the module, unexported, under another).
            if (ir::Graph* earlier = graphs.findGraph(exported[i].graph->name())) {
              std::string name = earlier->name();
              earlier->setName(name + "$merged");
              graph.setName(name);
            }
            replaces = i;
          }
          if (optimize)
            if (llvm::Error error = optimizeVariant(graph))
              return error;
          if (first && (emit_ == "bytecode" || emit_ == "code")) {
            llvm::Expected<std::string> code =
                rewrittenCode(entry->codeObject(), graph, rewrite::graphGlobalName(graph, index),
                              emit_ == "code");
            if (!code)
              return llvm::createStringError(module->displayPath + ": " + entry->qualname + ": " +
                                             llvm::toString(code.takeError()));
            text = std::move(*code);
          }
          Exported made{spec.text,
                        &graph,
                        std::move(text),
                        entry->code,
                        module->absolutePath,
                        first,
                        entry->function,
                        std::move(functionsRun[&graph]),
                        std::move(rangeFree)};
          if (replaces) {
            made.shown = exported[*replaces].shown;
            exported[*replaces] = std::move(made);
          } else {
            exported.push_back(std::move(made));
          }
          first = false;
          return llvm::Error::success();
        };
        // The variants of one point of the declared ranges; returns the
        // first, which decides which sizes it leaves out.
        auto exportFamily = [&]() -> llvm::Expected<ir::Graph*> {
          // The artifact serves an entry with one variant per grad mode
          // (docs/capture.md, "Grad mode and autograd"), tried in order.
          // Captured under no_grad, a graph records no autograd and is
          // fused. Captured with grad mode on, a graph in which something
          // requires grad runs as the ATen calls eager makes, which
          // autograd records as eager's do.
          auto notCompiled = [&](llvm::StringRef calls, llvm::Error why) {
            if (options.verbose)
              llvm::errs() << "dync: " << entry->qualname << ": " << calls
                           << " are not compiled (they run the original code): "
                           << llvm::toString(std::move(why)) << '\n';
            else
              llvm::consumeError(std::move(why));
          };

          llvm::Expected<ir::Graph*> inference =
              captureVariant(false, decompose, "", Autograd::None);
          if (!inference)
            return inference.takeError();
          ir::Graph* firstVariant = *inference;
          // Composite operators are decomposed for fusion only where fusion
          // can run: autograd must record eager's operators, not pieces.
          bool anyRequiresGrad =
              llvm::any_of((*inference)->guards().guards(), [](const ir::Guard& g) {
                return g.tensorType && g.tensorType->requiresGrad();
              });
          llvm::Expected<ir::Graph*> grad =
              anyRequiresGrad ? captureVariant(true, "core", "$grad", Autograd::Records)
                              : captureVariant(true, decompose, "$grad", Autograd::None);
          if (grad && !anyRequiresGrad && sameButGradMode(**inference, **grad)) {
            // Nothing requires grad and the program never looked at the
            // grad mode: one graph serves both modes.
            dropGradModeGuard(**inference);
            if (llvm::Error error = addVariant(**inference))
              return error;
            return firstVariant;
          }
          if (llvm::Error error = addVariant(**inference))
            return error;
          if (!grad)
            notCompiled("calls with grad mode on", grad.takeError());
          else if (llvm::Error error = addVariant(**grad))
            return error;
          if (!anyRequiresGrad)
            return firstVariant;

          // Parameters frozen for inference (requires_grad_(False)): the
          // variants above pin requires_grad as the example had it, so a
          // third is captured as if no input required grad. When its graph
          // and guards are the same with grad mode off, the program never
          // looked at the grad mode and the variant serves both modes.
          llvm::Expected<ir::Graph*> frozen =
              captureVariant(true, decompose, "$frozen", Autograd::Frozen);
          if (!frozen) {
            notCompiled("calls with frozen parameters", frozen.takeError());
            return firstVariant;
          }
          ir::Module scratch(context);
          llvm::Expected<ir::Graph*> frozenNoGrad =
              captureVariant(false, decompose, "$frozen", Autograd::Frozen, &scratch);
          if (!frozenNoGrad)
            llvm::consumeError(frozenNoGrad.takeError());
          else if (sameButGradMode(**frozen, **frozenNoGrad))
            dropGradModeGuard(**frozen);
          if (llvm::Error error = addVariant(**frozen))
            return error;
          return firstVariant;
        };
        if (buildArtifact)
          return exportSpecializations(exportFamily, sizePoint, captureOptions.dynamic,
                                       strictDynamic_, *module, entry->qualname);

        // What --emit prints: a capture in the current grad mode, or for the
        // optimized graph, the artifact's first variant (under no_grad).
        llvm::Expected<ir::Graph*> captured =
            captureVariant(optimize ? false : gradModeNow(), decompose, "",
                           optimize ? Autograd::None : Autograd::Any);
        if (!captured)
          return captured.takeError();
        return addVariant(**captured);
      }();
      if (error) {
        if (!keepGoing_)
          return error;
        failures = llvm::joinErrors(std::move(failures), std::move(error));
      }
    }

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
    } else if (buildArtifact) {
      failures = llvm::joinErrors(
          std::move(failures),
          llvm::createStringError("no entry was captured; " +
                                  (output_.empty() ? std::string("no LLVM IR to print")
                                                   : output_ + " was not written")));
    }
    PhaseTimes::Scope writing(times, "output");
    llvm::raw_ostream& os = llvm::outs();
    // Each entry's first variant; `dync inspect` shows an artifact's all.
    std::vector<const Exported*> shown;
    for (const Exported& entry : exported)
      if (entry.shown)
        shown.push_back(&entry);
    if (emit_ == "optimized-graph") {
      // The kernels first, as the text form orders them, then each graph.
      llvm::StringSet<> called;
      for (const Exported* entry : shown)
        for (const ir::Node& node : entry->graph->nodes())
          if (node.isKernelCall())
            called.insert(node.kernelName());
      for (const auto& kernel : graphs.kernels()) {
        if (!called.contains(kernel->name()))
          continue;
        kernel->print(os);
        os << '\n';
      }
      for (const Exported* entry : shown) {
        entry->graph->print(os);
        os << '\n';
      }
    } else if (emit_ == "graph" || emit_ == "code") {
      for (const Exported* entry : shown)
        os << entry->rewritten;
    } else if (!emit_.empty() && emit_ != "llvm") {
      for (const Exported* entryPointer : shown) {
        const Exported& entry = *entryPointer;
        if (shown.size() > 1 || specs.size() > 1)
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
