//===- ConstantFolding.cpp - Replace values known at compile time ---------===//
//
// Two kinds of rewrite, both exact:
//
// * A pure call whose result type carries its value (`int<s0>`, as torch's
//   meta functions gave it for `aten::sym_size.int`) is that value: uses
//   become the literal. Elements of tuple results are folded the same way.
// * A call that is an identity on its first argument, shown by its result
//   type being equal to that argument's type, is replaced by the argument.
//   Only overloads whose meaning makes equal types imply equal elements are
//   listed; what must hold about aliasing differs between views and copies
//   (see foldIdentity).
//
// Float and bool results carry no value in their types and are not folded:
// computing them here would mean re-implementing ATen's arithmetic.
//
//===----------------------------------------------------------------------===//
#include "passes/CallEffects.h"
#include "passes/Passes.h"
#include "passes/Uses.h"

#include "ir/Graph.h"

#include "llvm/ADT/StringSwitch.h"

namespace dync::transforms {

using namespace ir;

namespace {

enum class Identity {
  /// Not an identity.
  None,
  /// A view: with an equal type it has the argument's sizes, strides and
  /// storage offset, so it reads the same memory the same way.
  View,
  /// A fresh tensor holding exactly the argument's elements.
  Copy,
};

/// Whether \p arg is the literal 1 (integer or float).
bool isOne(const Argument& arg) {
  if (arg.kind() == Argument::Kind::Sym)
    return arg.symValue().isConstant() && arg.symValue().constantValue() == 1;
  return arg.kind() == Argument::Kind::Float && arg.floatValue() == 1.0;
}

/// What \p call is when its result type equals its first argument's.
Identity identityKind(const Node& call) {
  llvm::StringRef op = call.op();
  Identity kind = llvm::StringSwitch<Identity>(op)
                      // Captured graphs hold these as no-ops: the alias
                      // decompositions leave, `expand` to the same shape
                      // before `bmm` in attention, `x[:, :]` as slices over
                      // whole dimensions, views to the same shape. None of
                      // them moves the storage offset, except slice.Tensor,
                      // whose size only stays the same when it starts at 0.
                      .Case("aten::alias.default", Identity::View)
                      .Case("aten::view.default", Identity::View)
                      .Case("aten::expand.default", Identity::View)
                      .Case("aten::permute.default", Identity::View)
                      .Case("aten::slice.Tensor", Identity::View)
                      .Case("aten::squeeze.dim", Identity::View)
                      .Case("aten::squeeze.dims", Identity::View)
                      // A copy to the same dtype, device and strides: left
                      // by `.clone()` and `.to()` on values that are
                      // already what they ask for.
                      .Case("aten::clone.default", Identity::Copy)
                      .Case("aten::_to_copy.default", Identity::Copy)
                      .Default(Identity::None);
  // Tensor types do not record the layout: a copy to a sparse layout is no
  // identity even with an equal type.
  for (const KeywordArgument& kwarg : call.kwargs())
    if (kwarg.name == "layout" && kwarg.value.kind() == Argument::Kind::Layout &&
        kwarg.value.layoutValue() != Layout::Strided)
      return Identity::None;
  if (kind != Identity::None)
    return kind;
  // x * 1 and x / 1 equal x bitwise (NaNs stay NaN, -0.0 stays -0.0) for
  // every dtype once the result type shows no promotion happened. x + 0 is
  // not exact (-0.0 + 0 is 0.0) and is not folded.
  bool byOne = llvm::StringSwitch<bool>(op)
                   .Cases("aten::mul.Tensor", "aten::mul.Scalar", "aten::div.Tensor",
                          "aten::div.Scalar", true)
                   .Default(false);
  if (byOne && call.args().size() == 2 && call.kwargs().empty() && isOne(call.args()[1]))
    return Identity::Copy;
  return Identity::None;
}

class Folder {
public:
  explicit Folder(Graph& graph) : graph_(graph), classes_(graph), users_(collectUsers(graph)) {}

  void run() {
    for (Node& node : graph_.nodes()) {
      if (!node.isCall() || !callEffects(node).pure)
        continue;
      foldKnownIntegers(node);
      foldIdentity(node);
    }
  }

private:
  /// Replaces uses of \p node's `int<value>` results (whole or as tuple
  /// elements) by the value.
  void foldKnownIntegers(Node& node) {
    auto literal = [](const Type& type) -> std::optional<Argument> {
      if (type.kind() == Type::Kind::Int && type.intValue())
        return Argument::sym(type.intValue());
      return std::nullopt;
    };
    if (std::optional<Argument> value = literal(node.type()))
      replaceUses(graph_, ValueRef{&node, std::nullopt}, *value);
    if (node.type().isSequence())
      for (auto [index, element] : llvm::enumerate(node.type().elements()))
        if (std::optional<Argument> value = literal(element))
          replaceUses(graph_, ValueRef{&node, static_cast<unsigned>(index)}, *value);
  }

  void foldIdentity(Node& node) {
    if (node.args().empty() || !node.args()[0].isValue() || !node.type().isTensor())
      return;
    ValueRef source = node.args()[0].valueRef();
    const Type* sourceType = source.node->resultType(source.index);
    if (!sourceType || *sourceType != node.type())
      return;
    Identity kind = identityKind(node);
    if (kind == Identity::None)
      return;
    // A write anywhere to the storage involved could make the call's result
    // and its argument differ from then on (for a view: `transpose_` on the
    // base changes the base's metadata, not the view's).
    if (classes_.isWritten(&node) || classes_.isWritten(source.node))
      return;
    if (kind == Identity::View) {
      // Already the same storage; only the tensor object differs, and the
      // caller of the graph would see that in a returned value.
      if (llvm::any_of(users_.lookup(&node), [](const Node* user) { return user->isOutput(); }))
        return;
    } else {
      // Forwarding makes the copy's users share the source's storage. A
      // returned copy must stay a tensor of its own unless the source is an
      // intermediate nothing else returns.
      if (classes_.isReturned(&node) &&
          (classes_.isReturned(source.node) || classes_.holdsInput(source.node)))
        return;
    }
    replaceUses(graph_, ValueRef{&node, std::nullopt}, Argument::value(source.node, source.index));
    for (Node* user : users_.lookup(&node))
      users_[source.node].push_back(user);
    users_.erase(&node);
    classes_.merge(&node, source.node);
  }

  Graph& graph_;
  AliasClasses classes_;
  UserMap users_;
};

} // namespace

llvm::Error runConstantFolding(Graph& graph) {
  Folder(graph).run();
  return llvm::Error::success();
}

} // namespace dync::transforms
