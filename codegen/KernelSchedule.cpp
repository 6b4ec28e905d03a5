//===- KernelSchedule.cpp - The loop nest a kernel runs in ----------------===//
#include "codegen/KernelSchedule.h"

#include "llvm/ADT/STLExtras.h"

#include <limits>

using namespace dync;
using namespace dync::codegen;

namespace {

llvm::Error fail(const ir::Graph& kernel, const ir::Node* node, const llvm::Twine& why) {
  std::string where = "kernel @" + kernel.name();
  if (node)
    where += ", %" + node->name();
  // The user's line the node came from, when capture recorded it.
  std::string at = node ? node->location().suffix() : "";
  return llvm::createStringError(llvm::inconvertibleErrorCode(), where + ": " + why + at);
}

bool isOne(ir::SymExpr size) { return size.isConstant() && size.constantValue() == 1; }

const ir::Type& typeOf(const ir::Node& node) { return node.type(); }

/// Nests the kept loops in the order of the first output's memory layout,
/// the dimension of largest stride outermost, so that the innermost loop
/// (the one LLVM vectorizes) walks the output with the smallest stride. In
/// logical order a channels-last result would be written (and its operands,
/// laid out alike, read) a channel apart at each step: scattered stores and
/// gathered loads instead of contiguous vectors. Kept as they are when a
/// stride is symbolic, and for equal strides (size-1 dimensions).
void orderKeptDimsByLayout(KernelSchedule& schedule) {
  const ir::Node* out = schedule.outputs.front();
  const DimMap& map = schedule.dimMaps.find(out)->second;
  llvm::ArrayRef<ir::SymExpr> strides = out->type().strides();
  llvm::DenseMap<unsigned, int64_t> strideOf;
  for (size_t j = 0; j < map.size() && j < strides.size(); ++j) {
    if (map[j] < 0)
      continue;
    if (!strides[j].isConstant())
      return;
    strideOf[static_cast<unsigned>(map[j])] = strides[j].constantValue();
  }
  // A kept dimension the output does not vary along has size 1: it goes
  // outermost, where it costs nothing.
  auto stride = [&](unsigned d) {
    auto it = strideOf.find(d);
    return it == strideOf.end() ? std::numeric_limits<int64_t>::max() : it->second;
  };
  llvm::stable_sort(schedule.keptDims,
                    [&](unsigned a, unsigned b) { return stride(a) > stride(b); });
}

} // namespace

bool KernelSchedule::spansReduced(const DimMap& map) const {
  return llvm::any_of(map, [&](int d) { return d >= 0 && llvm::is_contained(reducedDims, d); });
}

llvm::Expected<DimMap> KernelSchedule::inputDimMap(const ir::Node& input,
                                                   const ir::Node& user) const {
  llvm::ArrayRef<ir::SymExpr> sizes = typeOf(input).sizes();
  auto mismatch = [&] {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "%" + user.name() + " reads %" + input.name() +
                                       " at an index the kernel's loop nest does not have");
  };
  DimMap map;
  const ir::ElementDescription& desc = elements.find(&user)->second;
  if (desc.opClass == ir::KernelOpClass::Reduction) {
    // A reduction's operand has exactly the shape of the iteration space.
    if (sizes.size() != loopSizes.size())
      return mismatch();
    for (unsigned d = 0; d < sizes.size(); ++d) {
      if (sizes[d] != loopSizes[d])
        return mismatch();
      map.push_back(isOne(sizes[d]) ? -1 : static_cast<int>(d));
    }
    return map;
  }
  // Broadcasting aligns the input's dimensions with the user's last ones.
  const DimMap& result = dimMaps.find(&user)->second;
  llvm::ArrayRef<ir::SymExpr> resultSizes = typeOf(user).sizes();
  if (sizes.size() > result.size())
    return mismatch();
  size_t shift = result.size() - sizes.size();
  for (unsigned i = 0; i < sizes.size(); ++i) {
    if (isOne(sizes[i])) {
      map.push_back(-1);
      continue;
    }
    if (sizes[i] != resultSizes[i + shift] || result[i + shift] < 0)
      return mismatch();
    map.push_back(result[i + shift]);
  }
  return map;
}

llvm::Expected<KernelSchedule> codegen::scheduleKernel(const ir::Graph& kernel) {
  KernelSchedule schedule;
  const ir::Node* output = kernel.output();
  if (!output)
    return fail(kernel, nullptr, "has no return");

  // What each node computes.
  const ir::Node* firstReduction = nullptr;
  for (const ir::Node& node : kernel.nodes()) {
    if (node.isInput()) {
      if (!node.type().isTensor())
        return fail(kernel, &node, "kernel inputs must be tensors");
      if (!ir::isKernelDType(node.type().dtype()))
        return fail(kernel, &node, "the input's dtype is not one kernels load");
      continue;
    }
    if (!node.isCall())
      continue;
    if (ir::viewOffset(node, kernel.context())) {
      ir::ValueRef self{const_cast<ir::Node*>(&node), std::nullopt};
      ir::ViewedBase base = ir::viewedBase(self, kernel.context());
      if (!base.root.node->isInput())
        return fail(kernel, &node,
                    "views a value the kernel computes; kernels read views of "
                    "their inputs only");
      schedule.views.try_emplace(&node, base);
      continue;
    }
    llvm::Expected<ir::ElementDescription> desc = ir::describeElement(node);
    if (!desc)
      return fail(kernel, nullptr, llvm::toString(desc.takeError()));
    for (const ir::ElementOperand& operand : desc->operands)
      if (operand.isTensor() && operand.value.index)
        return fail(kernel, &node, "uses an element of a tuple value");
    if (desc->opClass == ir::KernelOpClass::Reduction && !firstReduction)
      firstReduction = &node;
    schedule.elements.try_emplace(&node, std::move(*desc));
  }

  // The returned values, one buffer each.
  const ir::Argument& returned = output->returnValue();
  auto addOutput = [&](const ir::Argument& arg) -> llvm::Error {
    if (!arg.isValue() || arg.valueRef().index || !arg.valueRef().node->isCall() ||
        schedule.views.contains(arg.valueRef().node))
      return fail(kernel, nullptr, "must return values its nodes compute");
    schedule.outputs.push_back(arg.valueRef().node);
    return llvm::Error::success();
  };
  if (returned.kind() == ir::Argument::Kind::Tuple) {
    for (const ir::Argument& element : returned.elements())
      if (auto err = addOutput(element))
        return err;
  } else if (auto err = addOutput(returned)) {
    return err;
  }
  if (schedule.outputs.empty())
    return fail(kernel, nullptr, "returns nothing");

  // The iteration space.
  llvm::SmallVector<unsigned, 4> reduced;
  if (firstReduction) {
    const ir::ElementDescription& desc = schedule.elements.find(firstReduction)->second;
    const ir::Type& operand = desc.operands[0].value.node->type();
    schedule.loopSizes.assign(operand.sizes().begin(), operand.sizes().end());
    reduced.assign(desc.reducedDims.begin(), desc.reducedDims.end());
  } else {
    const ir::Node* widest = schedule.outputs.front();
    for (const ir::Node* out : schedule.outputs)
      if (out->type().sizes().size() > widest->type().sizes().size())
        widest = out;
    schedule.loopSizes.assign(widest->type().sizes().begin(), widest->type().sizes().end());
  }
  for (unsigned d = 0; d < schedule.loopSizes.size(); ++d)
    (llvm::is_contained(reduced, d) ? schedule.reducedDims : schedule.keptDims).push_back(d);
  const int rank = static_cast<int>(schedule.loopSizes.size());

  // Where each node's result lies in the iteration space, in node order.
  for (const ir::Node& node : kernel.nodes()) {
    if (!node.isCall() || schedule.views.contains(&node))
      continue;
    const ir::ElementDescription& desc = schedule.elements.find(&node)->second;
    llvm::ArrayRef<ir::SymExpr> sizes = node.type().sizes();
    DimMap map;
    if (desc.opClass == ir::KernelOpClass::Reduction) {
      const ir::Node& operand = *desc.operands[0].value.node;
      llvm::ArrayRef<ir::SymExpr> operandSizes = operand.type().sizes();
      if (!llvm::equal(operandSizes, schedule.loopSizes))
        return fail(kernel, &node,
                    "reduces a value shaped unlike the kernel's first reduction's operand");
      if (!llvm::equal(desc.reducedDims, schedule.reducedDims))
        return fail(kernel, &node, "reduces other dimensions than the kernel's first reduction");
      DimMap operandMap;
      if (schedule.isLoaded(operand)) {
        llvm::Expected<DimMap> read = schedule.inputDimMap(operand, node);
        if (!read)
          return fail(kernel, nullptr, llvm::toString(read.takeError()));
        operandMap = *read;
      } else {
        operandMap = schedule.dimMaps.find(&operand)->second;
      }
      for (int d = 0; d < rank; ++d) {
        if (operandMap[d] != -1 && operandMap[d] != d)
          return fail(kernel, &node, "reduces a value whose dimensions are permuted");
        bool isReduced = llvm::is_contained(schedule.reducedDims, static_cast<unsigned>(d));
        if (!isReduced)
          map.push_back(operandMap[d]);
        else if (desc.keepDim)
          map.push_back(-1);
      }
    } else {
      // Dimensions follow the loop dimension of the values computed in the
      // kernel that are broadcast into them; the rest line up with the
      // iteration space's last dimensions, as broadcasting kernel inputs do.
      map.assign(sizes.size(), -2);
      for (const ir::ElementOperand& operand : desc.operands) {
        if (!operand.isTensor() || schedule.isLoaded(*operand.value.node))
          continue;
        const DimMap& operandMap = schedule.dimMaps.find(operand.value.node)->second;
        if (operandMap.size() > map.size())
          return fail(kernel, &node, "an operand has more dimensions than the result");
        size_t shift = map.size() - operandMap.size();
        for (size_t i = 0; i < operandMap.size(); ++i) {
          if (operandMap[i] < 0)
            continue;
          int& slot = map[i + shift];
          if (slot != -2 && slot != operandMap[i])
            return fail(kernel, &node, "combines values the loop nest indexes differently");
          slot = operandMap[i];
        }
      }
      for (size_t j = 0; j < map.size(); ++j) {
        if (map[j] != -2)
          continue;
        if (isOne(sizes[j])) {
          map[j] = -1;
          continue;
        }
        int loopDim = static_cast<int>(j) + rank - static_cast<int>(sizes.size());
        if (loopDim < 0 || schedule.loopSizes[loopDim] != sizes[j])
          return fail(kernel, &node, "has a dimension the kernel's iteration space does not have");
        map[j] = loopDim;
      }
      for (size_t j = 0; j < map.size(); ++j)
        for (size_t k = j + 1; k < map.size(); ++k)
          if (map[j] >= 0 && map[j] == map[k])
            return fail(kernel, &node, "indexes two dimensions with one loop");
    }
    schedule.dimMaps[&node] = std::move(map);
    // Kernel inputs this node reads must fit where its result lies.
    for (const ir::ElementOperand& operand : desc.operands)
      if (operand.isTensor() && schedule.isLoaded(*operand.value.node)) {
        llvm::Expected<DimMap> read = schedule.inputDimMap(*operand.value.node, node);
        if (!read)
          return fail(kernel, nullptr, llvm::toString(read.takeError()));
      }
  }

  // Each output element is written by exactly one iteration of the kept
  // loops: an output must vary along each of them.
  for (const ir::Node* out : schedule.outputs) {
    const DimMap& map = schedule.dimMaps.find(out)->second;
    for (unsigned d : schedule.keptDims)
      if (!isOne(schedule.loopSizes[d]) && !llvm::is_contained(map, static_cast<int>(d)))
        return fail(kernel, out, "is returned but does not span the kernel's outer loops");
  }
  orderKeptDimsByLayout(schedule);
  return schedule;
}
