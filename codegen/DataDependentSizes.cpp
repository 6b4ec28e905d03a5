//===- DataDependentSizes.cpp - Sizes a graph computes from data ----------===//
//
// A graph's unbacked symbols (ir/Assumptions.h) have no value until a node
// computes them: `aten::nonzero.default(%x) : tensor<i64 [u0, 2]>` gives u0
// as the size of its result's dimension 0, `_local_scalar_dense` as its int
// result. The graph function reads each from the first node that computes
// it, right after that node; later nodes' sizes, kernel extents and
// arguments then use that value. Its range and every relation that mentions
// it (torch._check's assumptions, which torch.export keeps as run-time
// asserts) are checked as soon as all their symbols are known; a failure
// raises RuntimeError, as eager mode's torch._check does. A later node
// whose dimension is the same symbol is checked to agree.
//
// A symbol's range is what torch's fake implementations inferred, which is
// not always what eager computes (masked_select under a mask that
// broadcasts its input bounds the result by the input's own element
// count), narrowed by the program's torch._check calls (the graph cannot
// tell the two apart). So a value outside it runs the original code when
// the graph has done nothing the caller could observe yet (written no
// input: side effects are replayed after the graph, and the generator's
// state is put back, FallBackGenerator.cpp): the graph returns
// DYNC_ARTIFACT_FALL_BACK and the runtime runs the original code, recording
// the reason as a miss; eager then returns, or its torch._check raises.
// After a write it raises, saying why it cannot fall back. The relations,
// torch._check's, keep raising as eager's torch._check does.
//
//===----------------------------------------------------------------------===//
#include "codegen/GraphEmitter.h"

#include "ir/Graph.h"
#include "ir/OpTraits.h"
#include "ir/ScalarOps.h"

#include "llvm/ADT/SmallPtrSet.h"

namespace dync::codegen::detail {

namespace {

const ir::SymbolDecl* unbackedDecl(const ir::Graph& graph, ir::SymExpr symbol) {
  if (!symbol || !symbol.isSymbol())
    return nullptr;
  for (const ir::SymbolDecl& decl : graph.symbols())
    if (decl.unbacked && decl.name == symbol.symbolName())
      return &decl;
  return nullptr;
}

/// Whether \p ref is a graph input or a view of one (any call whose result
/// may alias an argument, followed back).
bool reachesInput(const ir::ValueRef& ref, llvm::SmallPtrSetImpl<const ir::Node*>& seen) {
  const ir::Node* node = ref.node;
  if (!node || !seen.insert(node).second)
    return false;
  if (node->isInput())
    return true;
  const ir::OpTraits* traits = node->isCall() ? ir::findOpTraits(node->op()) : nullptr;
  if (!traits || !traits->returnsAlias)
    return false;
  bool found = false;
  node->forEachUse([&](const ir::ValueRef& used) { found = found || reachesInput(used, seen); });
  return found;
}

std::string textOf(const ir::Relation& relation) {
  std::string text;
  llvm::raw_string_ostream os(text);
  relation.print(os);
  return text;
}

} // namespace

/// What a node before \p node did that the caller could observe, or an
/// empty string: an operator that writes a graph input (or a view of one),
/// or one dync does not know. Fused kernels write no input (an in-place
/// call ends a group, docs/fusion.md). Draws from the random generator are
/// undone before falling back (FallBackGenerator.cpp).
std::string observableBefore(const ir::Graph& graph, const ir::Node& node) {
  for (const ir::Node& earlier : graph.nodes()) {
    if (&earlier == &node)
      break;
    // Python's arithmetic on numbers (ir/ScalarOps.h) changes nothing.
    if (!earlier.isCall() || earlier.isKernelCall() || ir::scalarOpOf(earlier))
      continue;
    const ir::OpTraits* traits = ir::findOpTraits(earlier.op());
    if (!traits)
      return "%" + earlier.name() + " (" + earlier.op() + ", an operator dync does not know)";
    if (!traits->mutatesArgument)
      continue;
    bool writesInput = false;
    llvm::SmallPtrSet<const ir::Node*, 8> seen;
    earlier.forEachUse(
        [&](const ir::ValueRef& used) { writesInput = writesInput || reachesInput(used, seen); });
    if (writesInput)
      return "%" + earlier.name() + " (" + earlier.op() + ") wrote an input";
  }
  return "";
}

llvm::Error GraphEmitter::bindUnbacked(const ir::Node& node) {
  if (llvm::none_of(graph_.symbols(), [](const ir::SymbolDecl& decl) { return decl.unbacked; }))
    return llvm::Error::success();
  auto valuesIt = values_.find(&node);
  if (valuesIt == values_.end())
    return llvm::Error::success();
  std::vector<Slot>& slots = valuesIt->second.slots;
  const ir::Type& type = node.type();
  std::vector<const ir::Type*> types;
  if (type.isSequence())
    for (const ir::Type& element : type.elements())
      types.push_back(&element);
  else
    types.push_back(&type);

  std::vector<const ir::SymbolDecl*> fresh;
  auto bindOrCheck = [&](const ir::SymbolDecl& decl, Value* actual, const llvm::Twine& what) {
    if (Value* known = unbackedValues_.lookup(decl.name)) {
      llvm::BasicBlock* fail =
          failBlock("RuntimeError: " + what.str() + " of %" + node.name() + " (" + node.op() +
                        ") differs from the data-dependent value " + decl.name +
                        " computed before it" + node.location().suffix(),
                    nullptr, /*shimError=*/false, DYNC_ARTIFACT_CHECK_FAILED);
      checkOrFail(b_.CreateICmpNE(actual, known), fail, "same." + decl.name);
      return;
    }
    unbackedValues_[decl.name] = actual;
    fresh.push_back(&decl);
  };
  for (unsigned i = 0; i < types.size() && i < slots.size(); ++i) {
    const ir::Type& element = *types[i];
    const Slot& slot = slots[i];
    if (element.isTensor() && slot.kind == SlotKind::Tensor) {
      Value* sizes = nullptr;
      for (unsigned d = 0; d < element.sizes().size(); ++d) {
        const ir::SymbolDecl* decl = unbackedDecl(graph_, element.sizes()[d]);
        if (!decl)
          continue;
        if (!sizes)
          sizes = shim_.call(b_, ShimFn::TensorSizes, {tensorHandle(slot)}, "sizes." + node.name());
        Value* size = b_.CreateLoad(
            b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), sizes, d), decl->name);
        bindOrCheck(*decl, size, "dimension " + llvm::Twine(d));
      }
    } else if (element.kind() == ir::Type::Kind::Int && slot.kind == SlotKind::Int) {
      if (const ir::SymbolDecl* decl = unbackedDecl(graph_, element.intValue()))
        bindOrCheck(*decl, slot.value, "the value");
    }
  }
  if (fresh.empty())
    return llvm::Error::success();

  // The ranges of the symbols just computed.
  for (const ir::SymbolDecl* decl : fresh) {
    const ir::SymbolRange& range = decl->range;
    if (!range.lo && !range.hi)
      continue;
    Value* value = unbackedValues_.lookup(decl->name);
    Value* outside = nullptr;
    if (range.lo)
      outside = b_.CreateICmpSLT(value, b_.getInt64(*range.lo));
    if (range.hi) {
      Value* above = b_.CreateICmpSGT(value, b_.getInt64(*range.hi));
      outside = outside ? b_.CreateOr(outside, above) : above;
    }
    std::string rangeText;
    llvm::raw_string_ostream os(rangeText);
    range.print(os);
    std::string what = "the data-dependent value " + decl->name + " computed by %" + node.name() +
                       " (" + node.op() + ") is outside " + rangeText +
                       (decl->origin.empty() ? "" : " (" + decl->origin + ")") +
                       ", the range capture assumed" + node.location().suffix();
    // Eager returns there: run the original code while nothing is done.
    std::string done = observableBefore(graph_, node);
    llvm::BasicBlock* fail =
        done.empty() ? failBlock(what + "; ran the original code", nullptr, /*shimError=*/false,
                                 DYNC_ARTIFACT_FALL_BACK)
                     : failBlock("RuntimeError: " + what +
                                     "; the graph cannot fall back to the original "
                                     "code because " +
                                     done + " before it",
                                 nullptr, /*shimError=*/false, DYNC_ARTIFACT_CHECK_FAILED);
    checkOrFail(outside, fail, decl->name + ".inside");
  }

  // Relations whose symbols are all known now.
  for (const ir::Relation& relation : graph_.relations()) {
    if (checkedRelations_.count(&relation) || !ir::mentionsUnbacked(relation, graph_.symbols()))
      continue;
    bool ready = true;
    auto known = [&](ir::SymExpr symbol) {
      if (unbackedDecl(graph_, symbol) && !unbackedValues_.count(symbol.symbolName()))
        ready = false;
    };
    relation.walkSymbols(known);
    if (!ready)
      continue;
    checkedRelations_.insert(&relation);
    llvm::Expected<Value*> holds =
        lowerRelation(b_, relation, [&](ir::SymExpr side) { return emitSym(&node, side); });
    if (!holds)
      return holds.takeError();
    llvm::BasicBlock* fail =
        failBlock("RuntimeError: the data-dependent check " + textOf(relation) + " failed" +
                      (relation.origin.empty() ? node.location().suffix() : relation.origin),
                  nullptr, /*shimError=*/false, DYNC_ARTIFACT_CHECK_FAILED);
    checkOrFail(b_.CreateNot(*holds), fail, "check.holds");
  }
  return llvm::Error::success();
}

} // namespace dync::codegen::detail
