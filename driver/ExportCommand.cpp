//===- ExportCommand.cpp - `dync export ENTRY...` -------------------------===//
//
// Captures each entry as a graph with its guards, in one interpreter, and
// prints what --emit asks for. Writing the shared library comes later; until
// then --emit is required.
//
//===----------------------------------------------------------------------===//
#include "driver/ExportCommand.h"
#include "driver/CaptureDiagnostics.h"
#include "driver/Diagnostics.h"
#include "driver/PhaseTimes.h"
#include "driver/VersionCommand.h"

#include "frontend/capture/Capture.h"
#include "frontend/capture/DynamicSpec.h"
#include "frontend/oracle/TensorOracle.h"
#include "frontend/python/EmbeddedPython.h"
#include "frontend/python/EntryResolver.h"
#include "frontend/python/EntrySpec.h"
#include "frontend/python/InterpreterProbe.h"
#include "frontend/python/ModuleLoader.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/raw_ostream.h"

#include <CLI/CLI.hpp>

#include <map>
#include <optional>

namespace dync::driver {

namespace {

constexpr const char* ExportFooter = R"(Examples:
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

Capture takes the whole function as one graph (--fullgraph, the only mode so
far): anything it cannot capture is an error naming the line.)";

class ExportCommand : public Command {
public:
  CLI::App& install(CLI::App& app) override {
    CLI::App* command = app.add_subcommand(
        "export", "Capture functions as graphs, e.g. 'dync export model.py:Model.forward "
                  "--emit=graph'");
    command->add_option("ENTRY", entries_, "The functions to capture, as FILE.py:QUALNAME")
        ->type_name("FILE.py:QUALNAME")
        ->required();
    command
        ->add_option("--emit", emit_,
                     "What to print: the captured graph, its guards, or the types of its "
                     "results (signature)")
        ->type_name("KIND")
        ->check(CLI::IsMember({"graph", "guards", "signature"}));
    command->add_option("-o,--output", output_, "The shared library to write (not yet)")
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
    command->add_flag("--fullgraph", fullgraph_,
                      "Capture each function as one whole graph (the only mode so far)");
    command->add_flag("--keep-going", keepGoing_,
                      "Report each entry that fails and go on with the others");
    command->add_flag("--time-report", timeReport_,
                      "Print on stderr the time spent starting Python, importing, capturing and "
                      "writing output");
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
  bool keepGoing_ = false;
  bool timeReport_ = false;
};

/// Prints the types of a graph's results, one per line: what an eager run
/// can be compared with.
void printSignature(llvm::raw_ostream& os, const ir::Graph& graph) {
  const ir::Node* output = graph.output();
  if (!output)
    return;
  unsigned index = 0;
  std::function<void(const ir::Argument&, const std::string&)> print =
      [&](const ir::Argument& arg, const std::string& path) {
        os << "result " << path << ": ";
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
            print(element, path + "." + std::to_string(i++));
          return;
        }
        default:
          arg.print(os);
          os << '\n';
          return;
        }
      };
  for (const ir::Argument& arg : output->args())
    print(arg, std::to_string(index++));
}

llvm::Error ExportCommand::run(const GlobalOptions& options) {
  if (emit_.empty() || !output_.empty())
    return llvm::make_error<UsageError>(
        "writing a shared library (-o) is not implemented yet; use --emit=graph, "
        "--emit=guards or --emit=signature to see what capture produces");
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
    std::vector<std::pair<std::string, capture::GuardSet>> guardSets;
    for (const python::EntrySpec& spec : specs) {
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
        llvm::Expected<capture::GuardSet> guards =
            capture::captureGraph(*module, *entry, entryOptions, graph,
                                  [](ir::Graph& g) { return oracle::TensorOracle::create(g); });
        (*python)->flushStdio();
        if (!guards)
          return placeCaptureErrors(guards.takeError(), module->absolutePath, module->displayPath);
        guardSets.emplace_back(spec.text, std::move(*guards));
        return llvm::Error::success();
      }();
      if (error) {
        if (!keepGoing_)
          return error;
        failures = llvm::joinErrors(std::move(failures), std::move(error));
      }
    }

    PhaseTimes::Scope writing(times, "output");
    llvm::raw_ostream& os = llvm::outs();
    if (emit_ == "graph") {
      // Graphs of failed entries stay out of the output.
      for (const std::unique_ptr<ir::Graph>& graph : graphs.graphs())
        if (graph->output()) {
          graph->print(os);
          os << '\n';
        }
    } else {
      size_t i = 0;
      for (const std::unique_ptr<ir::Graph>& graph : graphs.graphs()) {
        if (!graph->output())
          continue;
        if (i >= guardSets.size())
          break;
        if (guardSets.size() > 1 || specs.size() > 1)
          os << "# entry: " << guardSets[i].first << '\n';
        if (emit_ == "guards")
          guardSets[i].second.print(os);
        else
          printSignature(os, *graph);
        ++i;
      }
    }
    os.flush();
  }
  return failures;
}

} // namespace

std::unique_ptr<Command> createExportCommand() { return std::make_unique<ExportCommand>(); }

} // namespace dync::driver
