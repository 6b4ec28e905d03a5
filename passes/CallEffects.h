//===- CallEffects.h - What a call may do besides computing its result -*- C++ -*-===//
//
// Passes that delete, merge or forward values must know which calls have
// effects and which values may share storage. Both answers come from
// torch's own records (OpTraits); a call whose overload is not in the table
// is assumed to write and alias every argument.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "llvm/ADT/DenseMap.h"

#include <vector>

namespace dync::ir {
class Graph;
class Node;
struct OpTraits;
} // namespace dync::ir

namespace dync::transforms {

struct CallEffects {
  /// The result depends only on the arguments and nothing else observes the
  /// call: it may be removed when unused and merged with an equal call.
  bool pure = false;
  /// The call may write the storage of its tensor arguments.
  bool mayWrite = true;
  /// The result may share storage with the arguments.
  bool mayAlias = true;
};

/// The effects of call node \p call. Calls of generated kernels (`@k0`)
/// are pure and return fresh tensors: a kernel only writes the outputs it is
/// given. A call with no result (`none`) exists for its effect and is never
/// pure.
CallEffects callEffects(const ir::Node& call);

/// Which values of a graph may share storage, and which of those storages
/// the graph writes or returns. Values are grouped into classes: a view's
/// result joins its arguments' class, and all inputs share one class since
/// the caller may pass one tensor (or views of it) for several of them.
class AliasClasses {
public:
  explicit AliasClasses(const ir::Graph& graph);

  /// Whether the class of \p node's result is written by some call.
  bool isWritten(const ir::Node* node) const { return flags(node).written; }
  /// Whether the class of \p node's result holds a tensor the graph returns.
  bool isReturned(const ir::Node* node) const { return flags(node).returned; }
  /// Whether the class of \p node's result holds a graph input.
  bool holdsInput(const ir::Node* node) const { return flags(node).input; }
  /// The class of \p node's result, as a number equal for equal classes.
  unsigned classOf(const ir::Node* node) const;

  /// Records that uses of \p from now read \p to.
  void merge(const ir::Node* from, const ir::Node* to);

private:
  struct Flags {
    bool written = false;
    bool returned = false;
    bool input = false;
  };
  unsigned find(unsigned id) const;
  unsigned unite(unsigned a, unsigned b);
  unsigned id(const ir::Node* node) const;
  const Flags& flags(const ir::Node* node) const { return flags_[classOf(node)]; }

  llvm::DenseMap<const ir::Node*, unsigned> ids_;
  mutable std::vector<unsigned> parent_;
  std::vector<Flags> flags_;
};

} // namespace dync::transforms
