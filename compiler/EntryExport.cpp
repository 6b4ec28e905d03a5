//===- EntryExport.cpp - One entry's export -------------------------------===//
//
// Imports, warms up and captures one entry in its grad-mode variants and at
// the sizes its declared ranges need, and records what is kept; see
// EntryExport.h.
//
//===----------------------------------------------------------------------===//
#include "compiler/EntryExport.h"
#include "codegen/KernelCodegen.h"
#include "compiler/CaptureDiagnostics.h"
#include "compiler/EmitBytecode.h"
#include "compiler/ObliviousSizes.h"
#include "compiler/PhaseTimes.h"
#include "compiler/RangeSpecializations.h"
#include "passes/Pipeline.h"

#include "frontend/capture/Capture.h"
#include "frontend/capture/DynamicSpec.h"
#include "frontend/embedding/EmbeddedPython.h"
#include "frontend/embedding/EntryResolver.h"
#include "frontend/embedding/ModuleLoader.h"
#include "frontend/embedding/PyRef.h"
#include "frontend/embedding/PythonError.h"
#include "frontend/embedding/SourceError.h"
#include "frontend/oracle/TensorOracle.h"
#include "frontend/rewrite/RewrittenCode.h"
#include "ir/AutogradFunction.h"
#include "ir/ControlFlow.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <optional>

namespace dync::compiler {

namespace {

/// The pipeline export runs at -O1; `dync-opt --pipeline=export-O1` runs
/// the same one.
const transforms::PipelineInfo& exportPipeline() {
  const transforms::PipelineInfo* pipeline = transforms::findPipeline("export-O1");
  assert(pipeline && "the registry lists export-O1");
  return *pipeline;
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

/// The sum of \p point's sizes: the smaller, the likelier a user calls it
/// (batch 1, a length of 1).
int64_t sumOfSizes(const SizePoint& point) {
  int64_t total = 0;
  for (const auto& entry : point)
    total += entry.second;
  return total;
}

/// The point of \p specs' declared ranges that no graph of \p done serves
/// with the smallest sum of sizes, if the ranges can be walked.
std::optional<UncoveredSize> firstGap(const std::vector<GraphAt>& done,
                                      const std::vector<capture::DynamicSpec>& specs) {
  std::optional<std::vector<SizePoint>> gaps = unservedPoints(done, specs);
  if (!gaps || gaps->empty())
    return std::nullopt;
  const SizePoint* best = &gaps->front();
  for (const SizePoint& point : *gaps)
    if (sumOfSizes(point) < sumOfSizes(*best))
      best = &point;
  UncoveredSize gap;
  gap.point = *best;
  gap.gap = true;
  return gap;
}

/// Exports the variants of an entry at the examples' sizes, then at each
/// size of a declared range their graph leaves out (sizes 0 and 1, single
/// sizes the program treats apart), until every declared size is served or
/// the entry was captured \p maxGraphs times; the sizes that found no room
/// go to \p skipped, and why the program cannot run at the first size no
/// graph serves, if so, to \p gapFailure. Each specialization is noted on stderr; with
/// \p strict, the first size left out is the error instead. A
/// specialization that cannot be captured means the program does not run at
/// that size: the range contradicts it.
llvm::Error exportSpecializations(llvm::function_ref<llvm::Expected<ir::Graph*>()> exportFamily,
                                  SizePoint& sizePoint,
                                  const std::vector<capture::DynamicSpec>& specs, bool strict,
                                  size_t maxGraphs, std::vector<UncoveredSize>& skipped,
                                  std::string& gapFailure, const python::LoadedModule& module,
                                  llvm::StringRef qualname) {
  // Sizes found left out and not captured yet, and the one being captured.
  std::vector<UncoveredSize> pending;
  std::optional<UncoveredSize> capturing;
  // Each graph made so far, with the sizes it was captured at.
  std::vector<std::pair<const ir::Graph*, SizePoint>> done;
  bool gapFailed = false;
  auto servedByDone = [&](const SizePoint& point) {
    return llvm::any_of(done, [&](const auto& made) {
      return made.second == point || servesPoint(*made.first, made.second, point);
    });
  };
  // Adds \p size to the pending ones unless a graph made serves it or it is
  // pending already; whether it was added.
  auto consider = [&](UncoveredSize& size) -> llvm::Expected<bool> {
    if (servedByDone(size.point) ||
        llvm::any_of(pending, [&](const UncoveredSize& q) { return q.point == size.point; }))
      return false;
    // A size torch specializes is captured even so: it may be the
    // general graph there (foldSizes decides).
    if (strict && !size.torchSpecializes)
      return llvm::make_error<python::SourceError>(
          python::SourceLocation{module.displayPath, 0, 0, 0, ""},
          "--dynamic '" + size.spec +
              "' is not served whole by one graph (--strict-dynamic): " + size.why + ", so " +
              size.symbol + " = " + std::to_string(size.size) + " would need a graph of its own");
    pending.push_back(std::move(size));
    return true;
  };
  // Adds the sizes \p graph leaves out; of those one relation leaves out
  // several of, the first no graph serves yet (the graph captured there
  // usually serves the rest, and each is considered again once none is
  // pending).
  auto considerAll = [&](const ir::Graph& graph, const SizePoint& at,
                         bool oneOfManyOnly) -> llvm::Error {
    bool oneOfManyQueued = false;
    for (UncoveredSize& size : uncoveredSizes(graph, specs, at)) {
      if ((oneOfManyOnly && !size.oneOfMany) || (size.oneOfMany && oneOfManyQueued))
        continue;
      llvm::Expected<bool> queued = consider(size);
      if (!queued)
        return queued.takeError();
      oneOfManyQueued |= *queued && size.oneOfMany;
    }
    return llvm::Error::success();
  };
  // The sizes a user is likeliest to call come first where --max-graphs
  // leaves room for some only: the smallest (batch 1, a length of 1), by
  // the sum of the point's sizes, then in the order found.
  auto likeliest = [](const UncoveredSize& a, const UncoveredSize& b) {
    return sumOfSizes(a.point) < sumOfSizes(b.point);
  };
  for (size_t next = 0;; ++next) {
    if (next > 0) {
      llvm::erase_if(pending, [&](const UncoveredSize& q) { return servedByDone(q.point); });
      if (pending.empty() && next < maxGraphs)
        for (const auto& [graph, at] : done)
          if (llvm::Error e = considerAll(*graph, at, /*oneOfManyOnly=*/true))
            return e;
      // A size no graph leaves out by name may still be served by none (one
      // below a part whose graph pinned the symbol): the smallest such
      // point of the declared ranges competes with the single sizes
      // relations leave out one at a time, once no cut, size torch
      // specializes or single `!=` size is waiting (their graphs serve
      // whole parts).
      if (next < maxGraphs && !gapFailed &&
          llvm::all_of(pending, [](const UncoveredSize& q) { return q.oneOfMany; }))
        if (std::optional<UncoveredSize> gap = firstGap(done, specs))
          if (llvm::none_of(pending, [&](const UncoveredSize& q) { return q.point == gap->point; }))
            pending.push_back(std::move(*gap));
      if (pending.empty())
        return llvm::Error::success();
      // No room: warnUnserved names what no graph serves once the graphs
      // are folded.
      if (next >= maxGraphs) {
        for (UncoveredSize& size : pending)
          skipped.push_back(std::move(size));
        return llvm::Error::success();
      }
      auto chosen = std::min_element(pending.begin(), pending.end(), likeliest);
      capturing = std::move(*chosen);
      pending.erase(chosen);
      if (capturing->gap)
        llvm::WithColor::note(llvm::errs(), "dync")
            << qualname << ": no graph made so far serves " << describePoint(capturing->point)
            << " of the declared ranges; adding a graph for it\n";
      else
        llvm::WithColor::note(llvm::errs(), "dync")
            << qualname << ": --dynamic '" << capturing->spec << "': " << capturing->why
            << "; adding a graph for " << describePoint(capturing->point) << '\n';
      sizePoint = capturing->point;
    }
    llvm::Expected<ir::Graph*> first = exportFamily();
    if (!first) {
      if (next == 0)
        return first.takeError();
      // Where the program cannot run at a size the graphs leave out
      // unnamed (a reshape that needs a multiple of 8), that size and the
      // like run the original code, and warnUnserved names them.
      if (capturing->gap) {
        std::string why = llvm::toString(first.takeError());
        gapFailure = "at " + describePoint(capturing->point) + " the program cannot be captured: " +
                     llvm::StringRef(why).take_until([](char c) { return c == '\n'; }).str();
        gapFailed = true;
        continue;
      }
      // The program does not run (or cannot be captured) at that size.
      const UncoveredSize& why = *capturing;
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
    if (llvm::Error e = considerAll(**first, sizePoint, /*oneOfManyOnly=*/false))
      return e;
  }
}

/// The --dynamic text that declares \p symbol.
std::string specDeclaring(const std::vector<capture::DynamicSpec>& specs, llvm::StringRef symbol) {
  for (const capture::DynamicSpec& spec : specs)
    if (spec.symbol == symbol)
      return spec.text;
  return symbol.str();
}

/// The backward graphs \p graph's autograd.Function nodes run declare the
/// entry's symbols with the entry's ranges; where the entry's range of
/// \p symbol now starts at \p lo (the fold proved them one program there,
/// ObliviousSizes.cpp), theirs does too.
void widenBackwardRanges(const ir::Graph& graph, llvm::StringRef symbol, int64_t lo) {
  for (const ir::Graph* backward : ir::backwardGraphsOf(graph)) {
    // The module owns its graphs; the record only looks at them.
    for (ir::SymbolDecl& decl : const_cast<ir::Graph*>(backward)->symbols())
      if (decl.name == symbol && decl.range.lo && *decl.range.lo == lo + 1)
        *decl.range.lo = lo;
    widenBackwardRanges(*backward, symbol, lo);
  }
}

/// Folds the graphs of one entry's specializations (exported from
/// \p firstOfEntry on) into the graph they specialize where they are the
/// same program there (ObliviousSizes.h), and notes each size that stays
/// apart with the difference that keeps it.
llvm::Error foldSizes(std::vector<ExportedGraph>& exported, size_t firstOfEntry,
                      const std::vector<capture::DynamicSpec>& specs, bool strict,
                      const python::LoadedModule& module, llvm::StringRef qualname) {
  std::vector<std::string> variants;
  for (size_t i = firstOfEntry; i < exported.size(); ++i)
    if (!llvm::is_contained(variants, exported[i].variant))
      variants.push_back(exported[i].variant);
  std::vector<size_t> dropped;
  llvm::StringSet<> noted;
  for (const std::string& variant : variants) {
    std::vector<size_t> indices;
    std::vector<CapturedAt> family;
    for (size_t i = firstOfEntry; i < exported.size(); ++i)
      if (exported[i].variant == variant) {
        indices.push_back(i);
        family.push_back({exported[i].graph, exported[i].sizePoint});
      }
    FoldPlan plan = planSizeFolds(family);
    for (const SizeFold& fold : plan.folds) {
      // The module owns its graphs; the record only looks at them.
      auto& graph = const_cast<ir::Graph&>(*exported[indices[fold.into]].graph);
      for (const std::string& symbol : fold.widened)
        for (ir::SymbolDecl& decl : graph.symbols())
          if (decl.name == symbol) {
            *decl.range.lo -= 1;
            widenBackwardRanges(graph, symbol, *decl.range.lo);
            std::string range;
            llvm::raw_string_ostream os(range);
            decl.range.print(os);
            std::string note = "--dynamic '" + specDeclaring(specs, symbol) + "': the graph for " +
                               symbol + " = " + std::to_string(*decl.range.lo) +
                               " is the general graph there; one graph serves " + symbol + " in " +
                               range;
            if (noted.insert(note).second)
              llvm::WithColor::note(llvm::errs(), "dync") << qualname << ": " << note << '\n';
          }
      for (size_t b : fold.absorbed)
        dropped.push_back(indices[b]);
    }
    for (const KeptApart& kept : plan.kept) {
      if (strict)
        return llvm::make_error<python::SourceError>(
            python::SourceLocation{module.displayPath, 0, 0, 0, ""},
            "--dynamic '" + specDeclaring(specs, kept.symbol) +
                "' is not served whole by one graph (--strict-dynamic): torch specializes " +
                kept.symbol + " = " + std::to_string(kept.size) +
                ", and the graph captured there is not the general graph: " + kept.why);
      // Once per size of an entry: its other variants, and the graphs of
      // other sizes it specializes too, say the same.
      if (!noted.insert(kept.symbol + "=" + std::to_string(kept.size)).second)
        continue;
      llvm::WithColor::note(llvm::errs(), "dync")
          << qualname << ": --dynamic '" << specDeclaring(specs, kept.symbol) << "': the graph for "
          << kept.symbol << " = " << kept.size << " stays apart: " << kept.why << '\n';
    }
  }
  llvm::sort(dropped);
  // A specialization is never an entry's first variant, which --emit shows.
  for (size_t i : llvm::reverse(dropped))
    exported.erase(exported.begin() + i);
  if (strict)
    for (size_t i = firstOfEntry; i < exported.size(); ++i)
      for (const auto& [symbol, size] : exported[i].sizePoint)
        if (!exported[i].graph->findSymbol(symbol))
          return llvm::make_error<python::SourceError>(
              python::SourceLocation{module.displayPath, 0, 0, 0, ""},
              "--dynamic '" + specDeclaring(specs, symbol) +
                  "' is not served whole by one graph (--strict-dynamic): torch specializes " +
                  symbol + " = " + std::to_string(size) + ", which no other graph serves");
  return llvm::Error::success();
}

/// Warns of the sizes of the declared ranges that no graph of the entry
/// serves once its graphs are folded: calls at those sizes miss the guards
/// and run the original code. \p skipped are the sizes export found no room
/// for under \p maxGraphs; where the ranges are too large to walk, they
/// are what is named.
void warnUnserved(const std::vector<ExportedGraph>& exported, size_t firstOfEntry,
                  const std::vector<capture::DynamicSpec>& specs,
                  const std::vector<UncoveredSize>& skipped, llvm::StringRef gapFailure,
                  size_t maxGraphs, llvm::StringRef qualname) {
  std::vector<GraphAt> graphs;
  for (size_t i = firstOfEntry; i < exported.size(); ++i)
    if (exported[i].variant.empty())
      graphs.emplace_back(exported[i].graph, exported[i].sizePoint);
  auto served = [&](const SizePoint& point) {
    return llvm::any_of(
        graphs, [&](const GraphAt& made) { return servesPoint(*made.first, made.second, point); });
  };
  std::optional<std::vector<SizePoint>> walked = unservedPoints(graphs, specs);
  std::vector<SizePoint> points;
  if (walked)
    points = std::move(*walked);
  else
    for (const UncoveredSize& size : skipped)
      if (!served(size.point))
        points.push_back(size.point);
  if (points.empty())
    return;
  std::string because =
      !skipped.empty() ? "export captures an entry at most " + std::to_string(maxGraphs) +
                             " times for its ranges (--max-graphs)"
      : !gapFailure.empty() ? "the graphs' relations leave them out, and " + gapFailure.str()
                            : "the graphs' relations leave them out";
  llvm::WithColor::warning(llvm::errs(), "dync")
      << qualname << ": " << points.size() << (points.size() == 1 ? " size" : " sizes")
      << " of the declared ranges " << (points.size() == 1 ? "runs" : "run")
      << " the original code, no graph serving " << (points.size() == 1 ? "it" : "them") << ": "
      << describePoints(points) << "; " << because << '\n';
}

} // namespace

llvm::Error EntryExport::run() {
  if (llvm::Error error = load())
    return error;
  if (entryOptions_.warmupCalls > 0)
    if (llvm::Error error = warmUp())
      return error;
  // --dynamic auto's findings are noted once the entry is done, whether it
  // was exported or not.
  auto printAutoReport = llvm::make_scope_exit([&] {
    for (const std::string& line : autoReport_)
      llvm::WithColor::note(llvm::errs(), "dync")
          << entry_->qualname << ": --dynamic auto: " << line << '\n';
    for (const std::string& line : dataNotes_)
      llvm::WithColor::note(llvm::errs(), "dync") << entry_->qualname << ": " << line << '\n';
  });
  if (shared_.buildArtifact)
    return exportForArtifact();
  return exportForEmit();
}

llvm::Error EntryExport::load() {
  std::optional<PhaseTimes::Scope> importing(std::in_place, *options_.artifact.times, "import");
  llvm::Expected<python::LoadedModule> module = python::importModuleFromPath(spec_.path);
  if (!module)
    return module.takeError();
  module_ = std::move(*module);
  importing.reset();
  llvm::Expected<python::ResolvedEntry> entry = python::resolveEntry(*module_, spec_.qualname);
  if (!entry)
    return entry.takeError();
  entry_ = std::move(*entry);
  entryOptions_ = options_.capture;
  if (auto it = options_.entryExamples.find(spec_.qualname); it != options_.entryExamples.end())
    entryOptions_.example = it->second;
  return llvm::Error::success();
}

// --warmup: the entry's calls run once per entry, before any variant's
// capture, which all see the state they left. They run under no_grad, as a
// model is served: what they cache (a tensor computed from parameters) then
// does not require grad, as it does not after a first call under no_grad()
// or inference_mode().
llvm::Error EntryExport::warmUp() {
  shared_.python.flushStdio();
  python::PyRef warmed;
  llvm::Error error = withGradMode(false, [&]() -> llvm::Error {
    llvm::Expected<python::PyRef> self = capture::warmUpEntry(*module_, *entry_, entryOptions_);
    if (!self)
      return self.takeError();
    warmed = std::move(*self);
    return llvm::Error::success();
  });
  shared_.python.flushStdio();
  if (error)
    return placeCaptureErrors(std::move(error), module_->absolutePath, module_->displayPath);
  entryOptions_.self = std::move(warmed);
  return llvm::Error::success();
}

llvm::Error EntryExport::exportForArtifact() {
  std::vector<ExportedGraph>& exported = shared_.exported;
  size_t firstOfEntry = exported.size();
  std::vector<UncoveredSize> skipped;
  std::string gapFailure;
  if (llvm::Error error = exportSpecializations([this] { return exportFamily(); }, sizePoint_,
                                                options_.capture.dynamic, options_.strictDynamic,
                                                options_.maxGraphs, skipped, gapFailure, *module_,
                                                entry_->qualname))
    return error;
  if (llvm::Error error = foldSizes(exported, firstOfEntry, options_.capture.dynamic,
                                    options_.strictDynamic, *module_, entry_->qualname))
    return error;
  warnUnserved(exported, firstOfEntry, options_.capture.dynamic, skipped, gapFailure,
               options_.maxGraphs, entry_->qualname);
  for (size_t i = firstOfEntry; i < exported.size(); ++i)
    if (llvm::Error error = finishVariant(exported[i]))
      return error;
  return llvm::Error::success();
}

// What --emit prints: a capture in the current grad mode, or for the
// optimized graph, the artifact's first variant (under no_grad).
llvm::Error EntryExport::exportForEmit() {
  bool optimize = shared_.optimize;
  llvm::Expected<ir::Graph*> captured =
      captureVariant(optimize ? false : gradModeNow(), shared_.decompose, "",
                     optimize ? Autograd::None : Autograd::Any);
  if (!captured)
    return captured.takeError();
  return addVariant(**captured, "");
}

// Captures one variant of the entry into \p into, named with \p nameSuffix,
// under \p gradEnabled with \p decomposition; with \p frozen no input
// requires grad. Returns its graph.
llvm::Expected<ir::Graph*> EntryExport::captureVariant(bool gradEnabled,
                                                       llvm::StringRef decomposition,
                                                       llvm::StringRef nameSuffix,
                                                       Autograd autograd, ir::Module* into) {
  shared_.python.flushStdio();
  ir::Graph& graph =
      (into ? *into : shared_.graphs)
          .addGraph(entry_->qualname + specializationSuffix(sizePoint_) + nameSuffix.str());
  PhaseTimes::Scope capturing(*options_.artifact.times, "capture");
  oracle::OracleOptions oracleOptions;
  oracleOptions.decompositions = *oracle::parseDecompositions(decomposition);
  oracleOptions.inputsRequireGrad = autograd != Autograd::Frozen;
  oracleOptions.recordsAutograd = autograd == Autograd::Records;
  capture::CaptureOptions variantOptions = entryOptions_;
  variantOptions.sizeHints = sizePoint_;
  // An artifact serves a range the program cuts with a graph per part
  // (exportSpecializations); --strict-dynamic refuses the cut.
  variantOptions.splitRanges = shared_.buildArtifact && !options_.strictDynamic;
  // --dynamic auto reports what the first capture found.
  variantOptions.autoReport = autoReport_.empty() ? &autoReport_ : nullptr;
  variantOptions.dataNotes = &dataNotes_;
  // Under no_grad nothing records autograd, and what requires grad is an
  // input, a view of one, or a tensor made so, as in eager.
  variantOptions.noAutograd =
      gradEnabled && (autograd == Autograd::None || autograd == Autograd::Frozen);
  // An artifact's variant for no_grad runs without autograd: what an
  // enable_grad() block in the function records (and eager returns with
  // its history) it cannot give, and such calls run the original code
  // (exportWithoutNoGrad).
  variantOptions.noHistory = !gradEnabled && autograd == Autograd::None && shared_.buildArtifact;
  runsBackward_ = false;
  variantOptions.runsBackward = &runsBackward_;
  refusedHistory_ = false;
  variantOptions.refusedHistory = &refusedHistory_;
  llvm::Error captured = withGradMode(gradEnabled, [&] {
    return capture::captureGraph(
        *module_, *entry_, variantOptions, graph,
        [&](ir::Graph& g) { return oracle::TensorOracle::create(g, oracleOptions); },
        &functionsRun_[&graph]);
  });
  shared_.python.flushStdio();
  if (captured)
    return placeCaptureErrors(std::move(captured), module_->absolutePath, module_->displayPath);
  return &graph;
}

// The pipeline -O names (export-O1), as `dync-opt --pipeline` runs it: a
// kernel codegen cannot lower runs as the ATen calls it holds, slower, never
// wrong, and the entry is still exported.
llvm::Error EntryExport::optimizeVariant(ir::Graph& graph) {
  PhaseTimes::Scope optimizing(*options_.artifact.times, "passes");
  transforms::PassOptions passOptions;
  passOptions.checkKernel = codegen::checkKernel;
  passOptions.onUnfused = [&](const ir::Graph& kernel, llvm::Error why) {
    if (options_.artifact.log)
      *options_.artifact.log << "dync: " << entry_->qualname << ": kernel @" << kernel.name()
                             << " runs as ATen calls: " << llvm::toString(std::move(why)) << '\n';
    else
      llvm::consumeError(std::move(why));
  };
  if (llvm::Error error =
          transforms::runPipeline(exportPipeline(), shared_.graphs, graph, passOptions))
    return llvm::createStringError(
        module_->displayPath + ": " + entry_->qualname +
        ": optimizing the graph failed: " + llvm::toString(std::move(error)));
  return llvm::Error::success();
}

// Optimizes a recorded variant; --emit=bytecode and --emit=code show the
// first one's rewritten code.
llvm::Error EntryExport::finishVariant(ExportedGraph& made) {
  // The module owns its graphs; the record only looks at them.
  ir::Graph& graph = const_cast<ir::Graph&>(*made.graph);
  if (shared_.optimize)
    if (llvm::Error error = optimizeVariant(graph))
      return error;
  if (made.shown && (options_.emit == "bytecode" || options_.emit == "code")) {
    llvm::Expected<std::string> code =
        rewrittenCode(entry_->codeObject(), graph, rewrite::graphGlobalName(graph, index_),
                      options_.emit == "code");
    if (!code)
      return llvm::createStringError(module_->displayPath + ": " + entry_->qualname + ": " +
                                     llvm::toString(code.takeError()));
    made.rewritten = std::move(*code);
  }
  return llvm::Error::success();
}

// Optimizes a variant and records it; --emit shows the first one (the graph
// as captured, or the rewritten bytecode).
llvm::Error EntryExport::addVariant(ir::Graph& graph, llvm::StringRef variant) {
  std::vector<ExportedGraph>& exported = shared_.exported;
  std::string text;
  if (first_ && options_.emit == "graph") {
    llvm::raw_string_ostream os(text);
    // The backward graphs of its autograd.Functions and the branches of
    // its cond nodes first, as the module prints them.
    for (const ir::Graph* backward : ir::backwardGraphsOf(graph)) {
      backward->print(os);
      os << '\n';
    }
    for (const ir::Graph* subgraph : ir::condSubgraphs(graph)) {
      subgraph->print(os);
      os << '\n';
    }
    graph.print(os);
    os << '\n';
  }
  std::string rangeFree = shared_.buildArtifact ? rangeFreeText(graph) : std::string();
  std::optional<size_t> replaces;
  if (shared_.buildArtifact)
    replaces = mergeRange(graph, rangeFree);
  ExportedGraph made{spec_.text,
                     &graph,
                     std::move(text),
                     entry_->code,
                     module_->absolutePath,
                     first_,
                     entry_->function,
                     std::move(functionsRun_[&graph]),
                     std::move(rangeFree),
                     sizePoint_,
                     variant.str()};
  if (entry_->kind == python::EntryKind::BoundMethod)
    made.boundPath = entry_->qualname;
  if (replaces) {
    made.shown = exported[*replaces].shown;
    exported[*replaces] = std::move(made);
  } else {
    exported.push_back(std::move(made));
  }
  // An artifact's graphs are optimized once every size is captured: a graph
  // may yet take in a size captured apart (foldSizes).
  if (!shared_.buildArtifact)
    if (llvm::Error error = finishVariant(exported.back()))
      return error;
  first_ = false;
  return llvm::Error::success();
}

// Equal graphs of a split range: \p graph, over the union of the two
// ranges, takes the earlier one's place (its kernels go with it), so the
// artifact holds one graph and one set of kernels. Returns the index of the
// earlier one in the export's list, if there is one.
std::optional<size_t> EntryExport::mergeRange(ir::Graph& graph, llvm::StringRef rangeFree) {
  std::vector<ExportedGraph>& exported = shared_.exported;
  for (size_t i = 0; i < exported.size(); ++i) {
    if (exported[i].spec != spec_.text || exported[i].rangeFree != rangeFree)
      continue;
    std::optional<MergedRange> merged = mergedRange(*exported[i].graph, graph);
    if (!merged)
      continue;
    for (ir::SymbolDecl& decl : graph.symbols())
      if (decl.name == merged->symbol)
        decl.range = merged->range;
    // Once per entry, not per grad-mode variant.
    if (mergeNotes_.insert(merged->what).second)
      llvm::WithColor::note(llvm::errs(), "dync")
          << entry_->qualname << ": the graphs for " << merged->what
          << " are the same; one graph serves both\n";
    // The merged graph takes the earlier one's name too (the earlier one
    // stays in the module, unexported, under another).
    if (ir::Graph* earlier = shared_.graphs.findGraph(exported[i].graph->name())) {
      std::string name = earlier->name();
      earlier->setName(name + "$merged");
      graph.setName(name);
    }
    return i;
  }
  return std::nullopt;
}

// Calls the artifact does not compile run the original code. Users are told
// whatever the verbosity: a training loop whose every call falls back to the
// original code is slow for a reason they can act on.
void EntryExport::notCompiled(llvm::StringRef calls, llvm::Error why) {
  std::string text =
      entry_->qualname + ": " + calls.str() +
      " are not compiled (they run the original code): " + llvm::toString(std::move(why));
  if (options_.artifact.log)
    *options_.artifact.log << "dync: " << text << '\n';
  else
    llvm::WithColor::note(llvm::errs(), "dync") << text << '\n';
}

// The variants of one point of the declared ranges; returns the first, which
// decides which sizes it leaves out.
//
// The artifact serves an entry with one variant per grad mode
// (docs/capture.md, "Grad mode and autograd"), tried in order. Captured
// under no_grad, a graph records no autograd and is fused. Captured with
// grad mode on, a graph in which something requires grad runs as the ATen
// calls eager makes, which autograd records as eager's do.
llvm::Expected<ir::Graph*> EntryExport::exportFamily() {
  const std::string& decompose = shared_.decompose;
  llvm::Expected<ir::Graph*> inference = captureVariant(false, decompose, "", Autograd::None);
  if (!inference)
    return exportWithoutNoGrad(inference.takeError());
  if (runsBackward_) {
    // A gradient taken in an enable_grad() block runs under no_grad, but
    // under inference_mode eager's block records nothing and the call
    // raises: the variant for no_grad, which serves both, would not.
    // The module keeps the graph, unexported.
    (*inference)->setName((*inference)->name() + "$unused");
    return exportWithoutNoGrad(llvm::createStringError(
        "the function runs torch.autograd.grad, which raises under inference_mode (an "
        "enable_grad() block records nothing there), and the variant for no_grad would serve "
        "inference_mode too"));
  }
  ir::Graph* firstVariant = *inference;
  // Composite operators are decomposed for fusion only where fusion can
  // run: autograd must record eager's operators, not pieces. Something
  // requires grad when an input does or when the program makes a tensor
  // require grad itself (requires_grad_(), a factory's requires_grad=True).
  bool inputRequiresGrad = llvm::any_of((*inference)->guards().guards(), [](const ir::Guard& g) {
    return g.tensorType && g.tensorType->requiresGrad();
  });
  bool anyRequiresGrad =
      inputRequiresGrad || llvm::any_of((*inference)->nodes(), [](const ir::Node& node) {
        return node.isCall() && node.op() == "aten::requires_grad_.default";
      });
  llvm::Expected<ir::Graph*> grad = anyRequiresGrad
                                        ? captureVariant(true, "core", "$grad", Autograd::Records)
                                        : captureVariant(true, decompose, "$grad", Autograd::None);
  if (grad && !anyRequiresGrad && sameButGradMode(**inference, **grad)) {
    // Nothing requires grad and the program never looked at the grad mode:
    // one graph serves both modes.
    dropGradModeGuard(**inference);
    if (llvm::Error error = addVariant(**inference, ""))
      return error;
    return firstVariant;
  }
  if (llvm::Error error = addVariant(**inference, ""))
    return error;
  if (!grad)
    notCompiled("calls with grad mode on", grad.takeError());
  else if (llvm::Error error = addVariant(**grad, "$grad"))
    return error;
  if (inputRequiresGrad)
    if (llvm::Error error = addFrozenVariant())
      return error;
  return firstVariant;
}

// When the variant for no_grad cannot be captured, the function may be one
// whose calls need grad mode: torch.autograd.grad raises under no_grad in
// eager (nothing was recorded to differentiate), and what an enable_grad()
// block computes is returned with its history, which a graph run without
// autograd cannot give. Then the variant for grad mode on, recording
// autograd, is the entry's first, and calls under no_grad or
// inference_mode miss its grad-mode guard and run the original code, as
// eager runs it (raising where eager raises). Any other failure is the
// export's error.
llvm::Expected<ir::Graph*> EntryExport::exportWithoutNoGrad(llvm::Error noGradError) {
  bool refusedHistory = refusedHistory_;
  llvm::Expected<ir::Graph*> grad = captureVariant(true, "core", "$grad", Autograd::Records);
  if (!grad) {
    // A function that took a gradient before failing is about its variant
    // for grad mode: under no_grad, eager's torch.autograd.grad raises
    // only because nothing was recorded.
    if (runsBackward_) {
      llvm::consumeError(std::move(noGradError));
      return grad.takeError();
    }
    llvm::consumeError(grad.takeError());
    return noGradError;
  }
  if (!runsBackward_ && !refusedHistory) {
    // The module keeps the graph, unexported.
    (*grad)->setName((*grad)->name() + "$unused");
    return noGradError;
  }
  notCompiled("calls under no_grad", std::move(noGradError));
  if (llvm::Error error = addVariant(**grad, "$grad"))
    return error;
  bool inputRequiresGrad = llvm::any_of((*grad)->guards().guards(), [](const ir::Guard& g) {
    return g.tensorType && g.tensorType->requiresGrad();
  });
  if (inputRequiresGrad)
    if (llvm::Error error = addFrozenVariant())
      return error;
  return *grad;
}

// Parameters frozen for inference (requires_grad_(False)): the variants
// exportFamily captured first pin requires_grad as the example had it, so a
// third is captured as if no input required grad. When its graph and guards
// are the same with grad mode off, the program never looked at the grad mode
// and the variant serves both modes.
llvm::Error EntryExport::addFrozenVariant() {
  llvm::Expected<ir::Graph*> frozen =
      captureVariant(true, shared_.decompose, "$frozen", Autograd::Frozen);
  if (!frozen) {
    notCompiled("calls with frozen parameters", frozen.takeError());
    return llvm::Error::success();
  }
  // A gradient taken in an enable_grad() block raises under inference_mode,
  // where a variant without a grad-mode guard would compute it.
  bool runsBackward = runsBackward_;
  ir::Module scratch(shared_.context);
  llvm::Expected<ir::Graph*> frozenNoGrad =
      captureVariant(false, shared_.decompose, "$frozen", Autograd::Frozen, &scratch);
  if (!frozenNoGrad)
    llvm::consumeError(frozenNoGrad.takeError());
  else if (!runsBackward && !runsBackward_ && sameButGradMode(**frozen, **frozenNoGrad))
    dropGradModeGuard(**frozen);
  return addVariant(**frozen, "$frozen");
}

} // namespace dync::compiler
