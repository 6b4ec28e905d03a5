//===- Capture.h - Capturing one entry function as a graph ----------------===//
//
// The frontend's capture entry point: builds the entry's inputs (self and
// the example arguments), runs the symbolic interpreter over its bytecode,
// and leaves a verified graph and the guards it was captured under.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/capture/DataBranches.h"
#include "frontend/capture/DynamicSpec.h"
#include "frontend/embedding/EntryResolver.h"
#include "frontend/embedding/ModuleLoader.h"
#include "frontend/oracle/TensorOracle.h"
#include "ir/Graph.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dync::capture {

struct CaptureOptions {
  /// Dimensions of tensor arguments to keep symbolic.
  std::vector<DynamicSpec> dynamic;
  /// A Python expression, evaluated in the module, giving `self` for a
  /// `Class.method` entry; empty to find or make one.
  std::string init;
  /// The module function returning the example arguments; empty for
  /// `example_inputs`.
  std::string example;
  /// The graph will run without recording autograd (fused kernels): a
  /// result that requires grad, which eager's autograd would have recorded
  /// (a tensor made with requires_grad=True, an enable_grad() block over
  /// parameters), stops capture.
  bool noAutograd = false;
  /// The graph will run under no_grad, recording no autograd: a result
  /// with autograd history (an enable_grad() block in the function, which
  /// eager's autograd records under no_grad too) stops capture.
  bool noHistory = false;
  /// Set when noHistory stopped capture (null: not asked).
  bool* refusedHistory = nullptr;
  /// Set when capture ends, failed or not: whether the function ran
  /// autograd's backward (torch.autograd.grad; null: not asked).
  bool* runsBackward = nullptr;
  /// Sizes to capture at instead of the examples', by symbol: the graph
  /// then serves the part of the declared ranges around them (a
  /// specialization, see docs/capture.md "Specializations of a declared
  /// range") and may pin those symbols to constants.
  std::map<std::string, int64_t> sizeHints;
  /// Whether the caller splits a declared range the program cuts at a
  /// boundary (`batch < 16`) into graphs of their own: then the graph may
  /// serve part of the range, and its symbol's range and origin say which
  /// part and why. Otherwise such a cut is an error at the line.
  bool splitRanges = false;
  /// `--dynamic auto`: every dimension of every tensor argument (of size 2
  /// or more) starts symbolic, and capture reports in \p autoReport, one
  /// line each, which the program specialized and where, and the
  /// `--dynamic` spellings that hold.
  bool autoDynamic = false;
  /// --assume-compiling: torch.compiler.is_compiling() answers True while
  /// capturing, as under torch.compile, so the graph is the program's
  /// compiled path; by default it answers False, what eager answers when
  /// the served call is made (CompilerQueries.h).
  bool assumeCompiling = false;
  /// --assume-exporting: torch.compiler.is_compiling() and
  /// torch.compiler.is_exporting() both answer True, as under torch.export
  /// (CompilerQueries.h).
  bool assumeExporting = false;
  std::vector<std::string>* autoReport = nullptr;
  /// What capture does at a decision on tensor data (DataBranches.h).
  DataBranches dataBranches = DataBranches::Specialize;
  /// Where each decision on data was specialized to the example's side,
  /// one line each, appended when capture succeeds (null: not kept).
  std::vector<std::string>* dataNotes = nullptr;
  /// --warmup N: calls of the entry on its example inputs before capture
  /// (warmUpEntry).
  unsigned warmupCalls = 0;
  /// The entry's `self` when the caller has it already (the object the
  /// warm-up calls ran on); null to find or make one (--init, ...).
  python::PyRef self;
};

using OracleFactory =
    std::function<llvm::Expected<std::unique_ptr<oracle::TensorOracle>>(ir::Graph&)>;

/// A Python function whose bytecode capture ran: its code, globals and
/// __qualname__.
struct FunctionRun {
  python::PyRef code;
  python::PyRef globals;
  std::string qualname;
};

/// Captures \p entry of \p module into \p graph (which must be empty): its
/// nodes, symbols and relations, and in graph.guards() what it was captured
/// under, over the entry's local names. When \p functionsRun is given it
/// receives every Python function whose code capture ran, the entry first,
/// for the artifact's code identity. Errors are CaptureErrors (with the
/// user's file and line when capture stopped inside the program) or plain
/// messages about the inputs. GIL held.
llvm::Error captureGraph(const python::LoadedModule& module, const python::ResolvedEntry& entry,
                         const CaptureOptions& options, ir::Graph& graph,
                         const OracleFactory& makeOracle,
                         std::vector<FunctionRun>* functionsRun = nullptr);

/// Calls \p entry options.warmupCalls times on fresh example inputs, for
/// real, so that state the program fills on its first call (caches, grids,
/// hooks installed once) is in place when capture reads it. Returns the
/// `self` the calls ran on (null for a plain function), for
/// CaptureOptions::self. An exception the call raises is an error placed at
/// the module's file. GIL held.
llvm::Expected<python::PyRef> warmUpEntry(const python::LoadedModule& module,
                                          const python::ResolvedEntry& entry,
                                          const CaptureOptions& options);

} // namespace dync::capture
