//===- WhileLoop.h - torch's while_loop as a node over two subgraphs -*- C++ -*-===//
//
// `while_loop(cond_fn, body_fn, carried_inputs)` whose cond_fn returns a
// tensor runs a number of iterations known only when the graph runs, so
// the graph holds both functions as subgraphs of the module
// (GraphKind::Subgraph) and one node that runs them:
//
//   subgraph @f.while0.cond(%i: tensor<i64, []>, %x: tensor<f32, [4]>) {
//     %0 = aten::lt.Scalar(%i, 3) : tensor<b8, []>
//     return (%0,)
//   }
//   subgraph @f.while0.body(%i: tensor<i64, []>, %x: tensor<f32, [4]>) {
//     %0 = aten::add.Tensor(%i, 1) : tensor<i64, []>
//     %1 = aten::mul.Tensor(%x, 2) : tensor<f32, [4]>
//     return (%0, %1)
//   }
//   %5 = higher_order::while_loop("f.while0.cond", "f.while0.body", [%3, %4], [])
//          : tuple<tensor<i64, []>, tensor<f32, [4]>>
//
// The arguments are the two subgraphs' names, the carried values (a list)
// and the additional inputs (a list: tensors the functions read that are
// not carried, such as parameters). Both subgraphs take the carried values
// then the additional inputs. cond returns one bool tensor of no
// dimensions; body returns the next carried values, each of its carried
// value's type. The node runs body while cond's result is true and
// returns the last carried values: the carried operands themselves when
// body never ran (capture passes fresh clones). Its type is the tuple of
// the carried types, requires_grad aside. Passes treat it as opaque, as
// they treat cond nodes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/Twine.h"

namespace dync::ir {

/// The operator of a while_loop node, as torch.export names it.
inline constexpr llvm::StringLiteral kWhileLoopOperator = "higher_order::while_loop";

/// Whether \p node is a call of kWhileLoopOperator.
bool isWhileLoopCall(const Node& node);

/// A well-formed while_loop node's parts (the verifier checks the form).
llvm::StringRef whileLoopCondName(const Node& loop);
llvm::StringRef whileLoopBodyName(const Node& loop);
llvm::ArrayRef<Argument> whileLoopCarried(const Node& loop);
llvm::ArrayRef<Argument> whileLoopAdditional(const Node& loop);

/// Calls \p report with each rule \p loop, a while_loop node of \p caller,
/// breaks: its arguments' forms, the subgraphs it names (they exist, take
/// its operands' types, cond returns a bool tensor of no dimensions and
/// body the carried types), its type, and the symbols the subgraphs
/// mention (declared by the caller).
void checkWhileLoopCall(const Graph& caller, const Node& loop,
                        llvm::function_ref<void(const llvm::Twine&)> report);

} // namespace dync::ir
