//===- TensorOracle.h - Tensor semantics, asked of PyTorch itself ----------===//
//
// The one interface through which capture learns what a tensor operation
// does. Fake tensors are torch's own (FakeTensorMode over a ShapeEnv); every
// ATen operator a call dispatches to, decomposed by torch's own core-ATen
// decompositions (and, if asked, those further ones that leave pointwise
// operators and reductions for a fuser), becomes a node of the graph being
// captured. Symbolic sizes
// live in the ShapeEnv while capture runs, and are translated into the graph
// IR's symbolic-integer language at the end: nothing of sympy survives
// capture.
//
// Values cross this interface as Python objects: fake tensors, torch.SymInt
// and torch.SymBool, and plain constants, in tuples, lists and dicts. The
// oracle remembers which graph value each fake tensor is.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/embedding/PyRef.h"
#include "ir/Assumptions.h"
#include "ir/Graph.h"
#include "ir/GraphBuilder.h"
#include "ir/Type.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dync::oracle {

/// A dimension the user declared dynamic. Dimensions given the same symbol
/// name are the same size.
struct DynamicDim {
  unsigned dim = 0;
  std::string symbol;
  ir::SymbolRange range;
  /// The size capture assumes instead of the example's, for a graph that
  /// serves part of the declared range; the graph may then pin the symbol
  /// to a constant (0 and 1 are constants from the start, as in torch).
  std::optional<int64_t> hint;
};

/// Which of torch's decompositions a call's operators go through before
/// they are recorded.
enum class Decompositions : uint8_t {
  /// torch's core-ATen decompositions: composite operators of core ATen
  /// (_softmax, native_layer_norm, gelu, var_mean, ...) stay whole.
  Core,
  /// Core ATen's, then torch's other registered decompositions wherever
  /// they lead only to pointwise operators, reductions and views, so that a
  /// loop fuser sees softmax as amax, sub, exp, sum, div. Matrix products,
  /// convolutions and the like stay whole (python/fusion_decompositions.py).
  Fusion,
};

/// "core" or "fusion", as the command line spells the setting.
llvm::StringRef spelling(Decompositions decompositions);
std::optional<Decompositions> parseDecompositions(llvm::StringRef text);

/// Whether the capture that just failed stopped because the program
/// observed a layout the fusion decompositions chose (a channels-last
/// convolution's strides, through view(), stride(), aliasing, ...). Then
/// the oracle has noted which choices to convert back to eager mode's
/// layout, and the next session runs the capture again with them; the
/// failed attempt's graph must be discarded. GIL held.
llvm::Expected<bool> takeLayoutRetry();

struct OracleOptions {
  Decompositions decompositions = Decompositions::Core;
  /// False: inputs are captured as tensors that do not require grad,
  /// whatever the real ones say (guards then check exactly that).
  bool inputsRequireGrad = true;
  /// True: the graph will run as ATen calls that autograd records in the
  /// grad mode capture starts in; a call on tensors that require grad in
  /// another mode (a no_grad() block inside the program) is an error.
  bool recordsAutograd = false;
};

class TensorOracle {
public:
  /// Starts a capture session that appends to \p graph. GIL held; torch
  /// must be importable. The oracle holds Python objects: destroy it with
  /// the GIL held too.
  static llvm::Expected<std::unique_ptr<TensorOracle>> create(ir::Graph& graph,
                                                              const OracleOptions& options = {});
  virtual ~TensorOracle() = default;

  /// The builder the oracle appends with. Add anything else the graph needs
  /// (other inputs, the output) through it too, so that value names stay
  /// unique.
  virtual ir::GraphBuilder& builder() = 0;

  /// Where in the user's program the next calls come from, e.g.
  /// "model.py:12"; messages about guards and specializations quote it.
  virtual void setLocation(llvm::StringRef where) = 0;

  /// Makes the real tensor \p real, found in the frame at \p source, a graph
  /// input named \p name; returns its fake twin. Dimensions not in
  /// \p dynamicDims are static. A dynamic dimension must have an example
  /// size of at least 2 (torch specializes 0 and 1) within its range, and
  /// dimensions sharing a symbol name must have equal example sizes and
  /// the same range; the symbol is named as given in the graph.
  virtual llvm::Expected<python::PyRef> addTensorInput(PyObject* real, llvm::StringRef name,
                                                       llvm::StringRef source,
                                                       llvm::ArrayRef<DynamicDim> dynamicDims) = 0;

  /// Makes the Python int \p real, found in the frame at \p source, the
  /// graph's int input \p name holding the symbol \p symbol (a size: at
  /// least 2, as a dynamic dimension's; \p symbol.dim is unused); returns
  /// its torch.SymInt. A symbol a tensor dimension already uses is the
  /// same size.
  virtual llvm::Expected<python::PyRef> addIntInput(PyObject* real, llvm::StringRef name,
                                                    llvm::StringRef source,
                                                    const DynamicDim& symbol) {
    return llvm::createStringError("this tensor oracle makes no symbolic int inputs");
  }

  /// Runs `callable(*args, **kwargs)` on fake values, recording each ATen
  /// operator it dispatches to as a graph node; returns the fake result.
  /// \p callable is a torch builtin, a Tensor method, an operator overload,
  /// or any other callable over fake values (operator.add on SymInts
  /// records nothing); a property descriptor such as Tensor.T is read from
  /// the one argument. A Python exception raised by torch (a shape error, a
  /// data-dependent decision) comes back as an error carrying its message,
  /// and the graph is left as it was before the call.
  virtual llvm::Expected<python::PyRef> call(PyObject* callable, PyObject* args,
                                             PyObject* kwargs) = 0;

  /// A tensor the graph returns, laid out as eager mode lays it out: the
  /// fake itself, or a recorded copy of it when a layout choice of the
  /// fusion decompositions (channels-last convolutions) changed its strides.
  virtual llvm::Expected<python::PyRef> eagerLayout(PyObject* fake) = 0;

  /// The graph value a fake tensor stands for, if the oracle made it.
  virtual std::optional<ir::ValueRef> valueOf(PyObject* fake) const = 0;
  /// Makes \p fake, a tensor the oracle made, stand for \p ref from now on:
  /// a result of a node capture placed itself (an autograd.Function's
  /// outputs, docs/capture.md).
  virtual void bindValue(PyObject* fake, ir::ValueRef ref) {}

  // Subgraphs (torch.cond's branches; ir/ControlFlow.h). While one is open,
  // calls are recorded into it rather than into the graph the oracle was
  // created for; inputs found while capturing still go to that graph.

  /// Records the calls that follow into \p subgraph (of kind Subgraph)
  /// until endSubgraph; subgraphs nest. A value of an enclosing graph that
  /// a call uses becomes an input of \p subgraph, once.
  virtual void beginSubgraph(ir::Graph& subgraph) {}
  /// Ends the innermost subgraph. Returns, for each of its inputs in order,
  /// the value of the enclosing graph it stands for. Fake tensors made in
  /// it stand for no value from then on.
  virtual std::vector<ir::ValueRef> endSubgraph() { return {}; }
  /// The builder of the graph calls are recorded into: the innermost open
  /// subgraph's, or builder().
  virtual ir::GraphBuilder& recordingBuilder() { return builder(); }
  /// Appends a call no call on fake tensors made (a cond node) to the graph
  /// calls are recorded into, as a node of it.
  virtual ir::Node* addRecordedCall(llvm::StringRef op, std::vector<ir::Argument> args,
                                    ir::Type type) {
    return recordingBuilder().addCall(op, std::move(args), std::move(type));
  }
  /// The value \p fake stands for in the graph calls are recorded into; a
  /// value of an enclosing graph becomes an input of the open subgraph.
  virtual llvm::Expected<ir::ValueRef> recordedValueOf(PyObject* fake) {
    return llvm::createStringError("this tensor oracle records into one graph");
  }
  /// A fake tensor that stands for \p value of the graph calls are recorded
  /// into or of one enclosing it, while capture holds one.
  virtual llvm::Expected<python::PyRef> fakeOf(ir::ValueRef value) {
    return llvm::createStringError("this tensor oracle finds no fake tensors by value");
  }
  /// A new fake tensor with \p model's dtype, sizes, strides and device and
  /// \p requiresGrad, standing for \p value from now on: the result of a
  /// node no call on fake tensors made (a cond's).
  virtual llvm::Expected<python::PyRef> freshValue(PyObject* model, bool requiresGrad,
                                                   ir::ValueRef value) {
    return llvm::createStringError("this tensor oracle makes no fresh values");
  }

  /// A fake tensor's type, its symbolic sizes and strides translated.
  virtual llvm::Expected<ir::Type> typeOf(PyObject* fake) = 0;

  /// A torch.SymInt (or plain int) as a symbolic integer of the graph.
  virtual llvm::Expected<ir::SymExpr> symExprOf(PyObject* symInt) = 0;

  /// Declares the graph's symbols with the ranges the ShapeEnv ended with,
  /// and its relations from the guards the ShapeEnv recorded. A symbol that
  /// capture equated with an expression over others is replaced by it
  /// throughout the graph; one forced to a single value is an error naming
  /// the dimensions and what forced it, as is a guard the graph IR cannot
  /// state. Call once, after capture.
  virtual llvm::Error finalize() = 0;

  /// The Python exception behind the last call's error, when torch raised
  /// one (not the oracle's own complaints), and only once: what a program's
  /// `try`/`except` around the call may catch. Null otherwise.
  virtual python::PyRef takeRaisedException() { return {}; }

  /// When the pending Python exception is torch's refusal to decide a
  /// condition on a data-dependent value (bool() of `u0 > 0`), clears it and
  /// returns the message for that branch in plain words; otherwise leaves
  /// it pending and returns nothing.
  virtual std::optional<std::string> explainUndecidableBranch() { return std::nullopt; }
  /// The truth the example inputs give \p fake, a one-element fake tensor
  /// of this capture, computed by running the graph's calls so far on the
  /// real example tensors (oracle_example_values.py); or why there is none
  /// (a value the example run does not know, an input written or random
  /// numbers drawn before it).
  struct ExampleTruth {
    std::optional<bool> value;
    std::string whyNot;
  };
  virtual llvm::Expected<ExampleTruth> exampleTruth(PyObject* fake) {
    (void)fake;
    return ExampleTruth{std::nullopt, "the oracle keeps no example values"};
  }

  /// The ints read from tensor data (unbacked symbols) that \p symInt, or
  /// else what the last failed call needed to know (a trip count, a size
  /// torch's guards decide), is computed from, at the example's values
  /// (oracle_example_values.py). Each comes with `holds`, the SymBool
  /// `u0 == value` the graph checks. No ints and no whyNot: there is
  /// nothing to specialize (no int read from data, or a float or bool).
  /// A float read from data (a SymFloat's symbol, `zuf0`) comes as one
  /// too, with isFloat set: `holds` is then the float itself, the graph
  /// value compared with \p real.
  struct ExampleInt {
    python::PyRef holds;
    std::string name;
    long long value = 0;
    std::string origin; ///< "by torch.nonzero at model.py:7"
    bool isFloat = false;
    double real = 0;
  };
  struct ExampleInts {
    std::vector<ExampleInt> ints;
    std::string whyNot;
  };
  virtual llvm::Expected<ExampleInts> exampleInts(PyObject* symInt) {
    (void)symInt;
    return ExampleInts{};
  }
  /// From here on, the unbacked int \p name is \p value to torch, as after
  /// torch._check(name == value); the graph's fall-back check states it.
  virtual llvm::Error specializeInt(const std::string& name, long long value) {
    (void)name;
    (void)value;
    return llvm::Error::success();
  }
  /// From here on, the float read from data whose symbol is \p name is
  /// \p value to torch; the graph's fall-back check states it.
  virtual llvm::Error specializeFloat(const std::string& name, double value) {
    (void)name;
    (void)value;
    return llvm::Error::success();
  }
  /// The side an earlier decision on SymBool \p symBool took, if any.
  virtual std::optional<bool> decidedTruth(PyObject* symBool) {
    (void)symBool;
    return std::nullopt;
  }
  /// From here on, the SymBool \p symBool is \p side in every call given it.
  virtual llvm::Error noteDecided(PyObject* symBool, bool side) {
    (void)symBool;
    (void)side;
    return llvm::Error::success();
  }

  /// How many facts torch's ShapeEnv holds (guards, replacements, runtime
  /// asserts, divisibilities): it only grows, and nothing can take a fact
  /// back, so a capture that speculates compares it before and after to
  /// know that the path it abandons decided no symbolic size.
  virtual size_t shapeFactCount() { return 0; }
};

} // namespace dync::oracle
