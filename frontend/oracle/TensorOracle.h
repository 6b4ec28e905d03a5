//===- TensorOracle.h - Tensor semantics, asked of PyTorch itself ----------===//
//
// The one interface through which capture learns what a tensor operation
// does. Fake tensors are torch's own (FakeTensorMode over a ShapeEnv); every
// ATen operator a call dispatches to, decomposed by torch's own core-ATen
// decompositions, becomes a node of the graph being captured. Symbolic sizes
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

#include "frontend/python/PyRef.h"
#include "passes/ir/Assumptions.h"
#include "passes/ir/Graph.h"
#include "passes/ir/Type.h"

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
};

class TensorOracle {
public:
  /// Starts a capture session that appends to \p graph. GIL held.
  static llvm::Expected<std::unique_ptr<TensorOracle>> create(ir::Graph& graph);
  virtual ~TensorOracle() = default;

  /// Makes the real tensor \p real, found in the frame at \p source, a graph
  /// input named \p name; returns its fake twin. Dimensions not in
  /// \p dynamicDims are static.
  virtual llvm::Expected<python::PyRef> addTensorInput(PyObject* real, llvm::StringRef name,
                                                       llvm::StringRef source,
                                                       llvm::ArrayRef<DynamicDim> dynamicDims) = 0;

  /// Runs `callable(*args, **kwargs)` on fake values, recording each ATen
  /// operator it dispatches to as a graph node; returns the fake result.
  /// \p callable is a torch builtin, a Tensor method or property getter, or
  /// an operator overload. A Python exception raised by torch (a shape error,
  /// a data-dependent decision) comes back as an error carrying its message.
  virtual llvm::Expected<python::PyRef> call(PyObject* callable, PyObject* args,
                                             PyObject* kwargs) = 0;

  /// The graph value a fake tensor stands for, if the oracle made it.
  virtual std::optional<ir::ValueRef> valueOf(PyObject* fake) const = 0;

  /// A fake tensor's type, its symbolic sizes and strides translated.
  virtual llvm::Expected<ir::Type> typeOf(PyObject* fake) = 0;

  /// A torch.SymInt (or plain int) as a symbolic integer of the graph.
  virtual llvm::Expected<ir::SymExpr> symExprOf(PyObject* symInt) = 0;

  /// Declares the graph's symbols with the ranges the ShapeEnv ended with,
  /// and its relations from the guards the ShapeEnv recorded. Call once,
  /// after capture.
  virtual llvm::Error finalize() = 0;
};

} // namespace dync::oracle
