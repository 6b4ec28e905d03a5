//===- AutogradFunction.h - The node applying an autograd.Function -*- C++ -*-===//
//
// A graph that records autograd runs `Fn.apply(x, w)` of a custom
// torch.autograd.Function as its forward's ATen calls over detached inputs,
// then one node that gives the forward's outputs the history eager's apply
// gives them: a grad_fn whose backward is a graph of the module, captured
// from the user's `backward`, run with the tensors it read (saved tensors,
// tensors set on ctx) and the gradients of the outputs.
//
//   %5 = dync::autograd_function.apply("m.Clamp", "m.Clamp.backward",
//            [%x, %w], [%4], [%1, %4], [0, -1], [true], true, [], [-1])
//        : tuple<tensor<f32, [8]>>
//
// Positionally: the Function's qualified name; the backward graph's name;
// apply's tensor inputs (the edges); the forward's tensor outputs; the
// tensors backward reads, its first inputs, in order (its other inputs are
// one gradient per output); for each input, the index of backward's tensor
// output that is its gradient, or -1 (None); for each output, whether it is
// differentiable (not marked non-differentiable, a floating or complex
// dtype); whether undefined gradients are materialized as zeros; the
// symbolic sizes backward uses that none of its tensors has as a dimension
// (`[b]` for a batch size kept on ctx), its last inputs, as `int<b>`, after
// the gradients; for each output, the index of the input forward modified
// in place and returned there (`ctx.mark_dirty`), or -1. The result is one
// tensor per output, in order: a modified input's is the input itself,
// whose history the node replaces, as eager's apply does.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dync::ir {

/// The operator name the node carries.
inline constexpr llvm::StringLiteral AutogradFunctionOp = "dync::autograd_function.apply";

/// What one `dync::autograd_function.apply` node holds, by name.
struct AutogradFunctionCall {
  std::string function;
  std::string backward;
  std::vector<ValueRef> inputs;
  std::vector<ValueRef> outputs;
  std::vector<ValueRef> saved;
  std::vector<int64_t> gradIndex;
  std::vector<bool> differentiable;
  bool materializeGrads = true;
  std::vector<SymExpr> sizes;
  std::vector<int64_t> dirty;
};

inline bool isAutogradFunctionCall(const Node& node) {
  return node.isCall() && node.op() == AutogradFunctionOp;
}

/// The node named \p name for \p call; its type is the outputs' types.
std::unique_ptr<Node> makeAutogradFunctionCall(Context& ctx, std::string name,
                                               const AutogradFunctionCall& call);

/// Reads \p node's arguments back; an error says which is malformed.
llvm::Expected<AutogradFunctionCall> readAutogradFunctionCall(const Node& node);

/// The backward graphs \p graph's autograd nodes name, once each, in order.
std::vector<const Graph*> backwardGraphsOf(const Graph& graph);

/// Calls \p fn on each symbol \p graph's nodes mention, in their types,
/// arguments and keyword arguments, in order, repeats included.
void forEachMentionedSymbol(const Graph& graph, llvm::function_ref<void(SymExpr)> fn);

/// The symbols \p graph mentions (types, sizes in arguments) that none of
/// its inputs has as a whole dimension or int value, in order of first
/// mention: a graph function reads its symbols from those.
std::vector<SymExpr> unboundSymbols(const Graph& graph);

/// Why \p node does not fit its backward graph in \p module (counts,
/// indices, types), or the empty string when it does.
std::string checkAutogradFunctionCall(const Node& node, const Module* module);

} // namespace dync::ir
