//===- KernelCodegen.cpp - Kernels to native loop nests -------------------===//
//
// The loop nest (KernelSchedule.h): the kept dimensions outermost, the first
// one sliced by [begin, end); inside, each reduction in node order runs its
// own loop over the reduced dimensions, carrying an accumulator, and then
// the outputs are stored: those that span reduced dimensions from one more
// loop over them, the others directly. Values are computed where they are
// used and cached per loop level; LLVM's LICM and GVN hoist and merge what
// repeats. Outputs carry alias scopes saying they alias nothing, so the
// vectorizer needs no run-time overlap checks.
//
//===----------------------------------------------------------------------===//
#include "codegen/KernelCodegen.h"

#include "codegen/ElementLowering.h"
#include "codegen/KernelSchedule.h"
#include "codegen/SymLowering.h"

#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>

using namespace dync;
using namespace dync::codegen;
using llvm::Value;

std::string codegen::kernelSymbol(const ir::Graph& kernel) {
  std::string text;
  llvm::raw_string_ostream os(text);
  // What the kernel computes, not where its nodes were written: an edit
  // that only moves the user's lines keeps the symbol (and cached objects).
  kernel.print(os, /*withLocations=*/false);
  // The name appears once, in the header: `kernel @NAME(`.
  std::string header = "@" + kernel.name() + "(";
  size_t at = text.find(header);
  if (at != std::string::npos)
    text.replace(at, header.size(), "@(");
  std::array<uint8_t, 32> digest = llvm::SHA256::hash(llvm::arrayRefFromStringRef(text));
  return "dync_kernel_" + llvm::toHex(llvm::ArrayRef(digest).take_front(16), /*LowerCase=*/true);
}

ir::SymExpr codegen::kernelParallelExtent(const ir::Graph& kernel) {
  llvm::Expected<KernelSchedule> schedule = scheduleKernel(kernel);
  if (!schedule) {
    llvm::consumeError(schedule.takeError());
    return kernel.context().constant(1);
  }
  if (schedule->keptDims.empty())
    return kernel.context().constant(1);
  return schedule->loopSizes[schedule->keptDims.front()];
}

namespace {

class KernelEmitter {
public:
  KernelEmitter(llvm::Module& module, const ir::Graph& kernel, KernelSchedule schedule)
      : module_(module), kernel_(kernel), s_(std::move(schedule)), ctx_(module.getContext()),
        b_(ctx_), entryB_(ctx_) {}

  llvm::Error emit(llvm::StringRef symbol);

private:
  using Body = std::function<llvm::Error(llvm::ArrayRef<Value*> carried,
                                         llvm::SmallVectorImpl<Value*>& next)>;

  llvm::Error fail(const ir::Node* node, const llvm::Twine& why) const {
    std::string where = "kernel @" + kernel_.name();
    if (node)
      where += ", %" + node->name();
    // The user's line the node came from, when capture recorded it.
    std::string at = node ? node->location().suffix() : "";
    return llvm::createStringError(llvm::inconvertibleErrorCode(), where + ": " + why + at);
  }

  Value* emitSym(ir::SymExpr expr);
  /// Loop metadata that steers LLVM's vectorizer on an innermost loop
  /// (\p header to \p latch, leaving to \p exit): no full unrolling of a
  /// short loop, interleaving of a long body. \p tripCount is null for the
  /// parallel loop, whose range is known only at run time.
  void annotateInnermostLoop(llvm::BasicBlock* header, llvm::BasicBlock* exit,
                             llvm::BranchInst* latch, const ir::SymExpr* tripCount);
  /// Emits loops over \p dims (the first from \p begin to \p end when
  /// given, the others from 0 to their size) around \p body, carrying
  /// \p inits; returns the carried values after the loops.
  llvm::Expected<llvm::SmallVector<Value*, 2>> emitLoops(llvm::ArrayRef<unsigned> dims,
                                                         Value* begin, Value* end,
                                                         llvm::ArrayRef<Value*> inits,
                                                         const Body& body);
  /// The element of \p type at the current index, in the buffer at \p base.
  Value* address(const ir::Type& type, Value* base, const DimMap& map);
  llvm::Expected<TypedValue> value(const ir::ElementOperand& operand, const ir::Node& user);
  llvm::Expected<TypedValue> nodeValue(const ir::Node& node);
  bool isReduction(const ir::Node& node) const {
    auto it = s_.elements.find(&node);
    return it != s_.elements.end() && it->second.opClass == ir::KernelOpClass::Reduction;
  }
  llvm::Error emitReduction(const ir::Node& node);
  llvm::Error store(const ir::Node& node);
  void planStaging();
  /// Stores the staged values computed in the current reduction loop.
  void storeStaged();
  /// Puts the staged values, read back from their outputs, in the cache of
  /// the output loop.
  void loadStaged();

  /// A value computed in a reduction pass and needed again by an output
  /// that spans the reduced dimensions (softmax's exp): it is stored in that
  /// output's own buffer while the reduction runs, and read back by the
  /// output pass instead of being recomputed. The output overwrites it at
  /// the same index, so no extra memory is needed.
  struct Staged {
    const ir::Node* value;
    size_t output; // index into s_.outputs
    bool stored = false;
  };

  llvm::Module& module_;
  const ir::Graph& kernel_;
  KernelSchedule s_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  /// Inserts at the end of the entry block: loop-invariant sizes and
  /// strides are computed there once.
  llvm::IRBuilder<> entryB_;
  llvm::Function* fn_ = nullptr;
  llvm::StringMap<Value*> symbols_;
  /// The kernel's symbols are its parameters; its sizes and strides were
  /// bounded by capture and computed by the graph function before the call
  /// (which failed on a zero divisor), so nothing wraps or is reported here.
  struct SizeHooks final : SymLowering::Hooks {
    explicit SizeHooks(KernelEmitter& emitter) : emitter(emitter) {}
    llvm::Expected<Value*> symbol(ir::SymExpr expr) override {
      return emitter.symbols_.lookup(expr.symbolName());
    }
    void require(llvm::IRBuilder<>&, Value*, SymCheck, ir::SymExpr) override {
      llvm_unreachable("kernel sizes are never checked");
    }
    KernelEmitter& emitter;
  };
  SizeHooks sizeHooks_{*this};
  SymLowering sizes_{SymLowering::Arithmetic::NoSignedWrap, /*checkDivisor=*/false, sizeHooks_};
  llvm::DenseMap<const ir::Node*, Value*> inputPointers_;
  llvm::SmallVector<Value*, 2> outputPointers_;
  /// The current index of each loop dimension in scope.
  llvm::SmallVector<Value*, 4> index_;
  /// Values computed at each loop level in scope, innermost last.
  llvm::SmallVector<llvm::DenseMap<const ir::Node*, TypedValue>, 4> cache_;
  llvm::MDNode* inputNoAlias_ = nullptr;
  llvm::SmallVector<llvm::MDNode*, 2> outputScope_;
  llvm::SmallVector<llvm::MDNode*, 2> outputNoAlias_;
  llvm::SmallVector<Staged, 2> staged_;
  /// How many loops emitLoops has made, to tell an innermost loop.
  unsigned loopCount_ = 0;
};

Value* KernelEmitter::emitSym(ir::SymExpr expr) {
  // Symbols are the kernel's parameters, all bound before the body is
  // emitted, so lowering cannot fail.
  return llvm::cantFail(sizes_.lower(entryB_, expr));
}

llvm::Expected<llvm::SmallVector<Value*, 2>> KernelEmitter::emitLoops(llvm::ArrayRef<unsigned> dims,
                                                                      Value* begin, Value* end,
                                                                      llvm::ArrayRef<Value*> inits,
                                                                      const Body& body) {
  if (dims.empty()) {
    llvm::SmallVector<Value*, 2> next;
    if (auto err = body(inits, next))
      return err;
    return next;
  }
  unsigned dim = dims.front();
  Value* lo = begin ? begin : b_.getInt64(0);
  Value* hi = end ? end : emitSym(s_.loopSizes[dim]);
  std::string name = (llvm::Twine("i") + llvm::Twine(dim)).str();

  llvm::BasicBlock* pre = b_.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(ctx_, name + ".body", fn_);
  auto* exit = llvm::BasicBlock::Create(ctx_, name + ".exit", fn_);
  b_.CreateCondBr(b_.CreateICmpSLT(lo, hi), header, exit);

  b_.SetInsertPoint(header);
  llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, name);
  i->addIncoming(lo, pre);
  llvm::SmallVector<llvm::PHINode*, 2> phis;
  llvm::SmallVector<Value*, 2> carried;
  for (Value* init : inits) {
    phis.push_back(b_.CreatePHI(init->getType(), 2, "acc"));
    phis.back()->addIncoming(init, pre);
    carried.push_back(phis.back());
  }
  Value* saved = index_[dim];
  index_[dim] = i;
  cache_.emplace_back();
  unsigned loopsBefore = ++loopCount_;
  llvm::Expected<llvm::SmallVector<Value*, 2>> inner =
      emitLoops(dims.drop_front(), nullptr, nullptr, carried, body);
  bool innermost = loopCount_ == loopsBefore;
  cache_.pop_back();
  index_[dim] = saved;
  if (!inner)
    return inner.takeError();

  Value* iNext = b_.CreateNSWAdd(i, b_.getInt64(1), name + ".next");
  llvm::BasicBlock* latch = b_.GetInsertBlock();
  llvm::BranchInst* back = b_.CreateCondBr(b_.CreateICmpSLT(iNext, hi), header, exit);
  if (innermost)
    annotateInnermostLoop(header, exit, back, begin ? nullptr : &s_.loopSizes[dim]);
  i->addIncoming(iNext, latch);
  for (auto [phi, next] : llvm::zip(phis, *inner))
    phi->addIncoming(next, latch);

  b_.SetInsertPoint(exit);
  llvm::SmallVector<Value*, 2> results;
  for (auto [init, next] : llvm::zip(inits, *inner)) {
    llvm::PHINode* out = b_.CreatePHI(init->getType(), 2);
    out->addIncoming(init, pre);
    out->addIncoming(next, latch);
    results.push_back(out);
  }
  return results;
}

namespace {

/// The loop from \p header, phis aside: the blocks reachable from it without
/// leaving through \p exit or going round again.
struct LoopBody {
  /// How many instructions it has.
  unsigned size = 0;
  /// How many instructions its longest chain of data dependences has: the
  /// latency one iteration takes however wide the core is.
  unsigned depth = 0;
};

LoopBody measureLoopBody(llvm::BasicBlock* header, llvm::BasicBlock* exit) {
  llvm::SmallPtrSet<llvm::BasicBlock*, 8> seen{header, exit};
  llvm::SmallVector<llvm::BasicBlock*, 8> work{header};
  llvm::SmallVector<llvm::BasicBlock*, 8> blocks;
  while (!work.empty()) {
    llvm::BasicBlock* block = work.pop_back_val();
    blocks.push_back(block);
    for (llvm::BasicBlock* next : llvm::successors(block))
      if (seen.insert(next).second)
        work.push_back(next);
  }
  LoopBody body;
  llvm::DenseMap<const llvm::Instruction*, unsigned> depth;
  // Blocks are visited in dominance order (the body is straight-line code
  // and nested loops entered from it), so operands come first, except
  // across a nested loop's phis, which start chains afresh.
  for (llvm::BasicBlock* block : blocks)
    for (llvm::Instruction& inst : *block) {
      if (llvm::isa<llvm::PHINode>(inst))
        continue;
      ++body.size;
      unsigned d = 0;
      for (const llvm::Value* operand : inst.operands())
        if (auto* def = llvm::dyn_cast<llvm::Instruction>(operand))
          d = std::max(d, depth.lookup(def));
      depth[&inst] = d + 1;
      body.depth = std::max(body.depth, d + 1);
    }
  return body;
}

} // namespace

void KernelEmitter::annotateInnermostLoop(llvm::BasicBlock* header, llvm::BasicBlock* exit,
                                          llvm::BranchInst* latch, const ir::SymExpr* tripCount) {
  llvm::SmallVector<llvm::Metadata*, 2> hints;
  // LLVM fully unrolls an innermost loop of a few iterations before its
  // loop vectorizer runs, which then vectorizes the loop around it instead:
  // across a dimension with a large stride, in gathers and scatters. A
  // channels-last kernel's innermost loop is over channels (16, 32, 64), so
  // such loops are kept whole; the vectorizer makes their few iterations
  // one or two contiguous vectors. Long loops are never fully unrolled.
  constexpr int64_t FullUnrollBelow = 512;
  bool shortLoop =
      tripCount && tripCount->isConstant() && tripCount->constantValue() < FullUnrollBelow;
  if (shortLoop)
    hints.push_back(
        llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.unroll.disable")}));
  // A long body (a chain of exp, tanh, divisions) is one dependence chain
  // per element, hundreds of cycles deep: one vector iteration at a time
  // leaves the core waiting on latency, and the out-of-order window is too
  // small to overlap iterations of that size. LLVM's vectorizer interleaves
  // only small loops by itself, so a large one is asked for independent
  // vector iterations side by side: 4, and 8 when its longest chain of
  // dependences is deep too (sigmoid, tanh, exp and a division in a row;
  // GELU alone is wide rather than deep and loses a little with 8 to
  // register spills). docs/kernels.md has the measurements.
  constexpr unsigned LongBody = 40;
  constexpr unsigned DeepBody = 40;
  LoopBody body = measureLoopBody(header, exit);
  if (!shortLoop && body.size >= LongBody) {
    unsigned interleave = body.depth >= DeepBody ? 8 : 4;
    hints.push_back(
        llvm::MDNode::get(ctx_, {llvm::MDString::get(ctx_, "llvm.loop.interleave.count"),
                                 llvm::ConstantAsMetadata::get(b_.getInt32(interleave))}));
  }
  if (hints.empty())
    return;
  // A loop's metadata node lists itself first, which makes it distinct.
  hints.insert(hints.begin(), nullptr);
  llvm::MDNode* loop = llvm::MDNode::getDistinct(ctx_, hints);
  loop->replaceOperandWith(0, loop);
  latch->setMetadata(llvm::LLVMContext::MD_loop, loop);
}

Value* KernelEmitter::address(const ir::Type& type, Value* base, const DimMap& map) {
  Value* offset = b_.getInt64(0);
  for (size_t d = 0; d < map.size(); ++d) {
    if (map[d] < 0)
      continue;
    Value* stride = emitSym(type.strides()[d]);
    offset = b_.CreateNSWAdd(offset, b_.CreateNSWMul(index_[map[d]], stride));
  }
  return b_.CreateInBoundsGEP(storageType(ctx_, type.dtype()), base, offset);
}

llvm::Expected<TypedValue> KernelEmitter::value(const ir::ElementOperand& operand,
                                                const ir::Node& user) {
  switch (operand.kind) {
  case ir::ElementOperand::Kind::Float:
    return TypedValue{llvm::ConstantFP::get(b_.getDoubleTy(), operand.floatValue), ir::DType::F64,
                      ValueRange::point(operand.floatValue)};
  case ir::ElementOperand::Kind::Int:
    return TypedValue{emitSym(operand.intValue), ir::DType::I64,
                      operand.intValue.isConstant()
                          ? ValueRange::point(double(operand.intValue.constantValue()))
                          : ValueRange::all()};
  case ir::ElementOperand::Kind::Bool:
    return TypedValue{b_.getInt1(operand.boolValue), ir::DType::Bool,
                      ValueRange::point(operand.boolValue ? 1 : 0)};
  case ir::ElementOperand::Kind::Absent:
    return TypedValue{};
  case ir::ElementOperand::Kind::Tensor:
    break;
  }
  const ir::Node& node = *operand.value.node;
  if (!s_.isLoaded(node))
    return nodeValue(node);
  llvm::Expected<DimMap> map = s_.inputDimMap(node, user);
  if (!map)
    return fail(nullptr, llvm::toString(map.takeError()));
  ir::DType dtype = node.type().dtype();
  auto* load = b_.CreateLoad(storageType(ctx_, dtype),
                             address(node.type(), inputPointers_.lookup(&node), *map), node.name());
  load->setMetadata(llvm::LLVMContext::MD_noalias, inputNoAlias_);
  return TypedValue{fromStorage(b_, load, dtype), dtype};
}

llvm::Expected<TypedValue> KernelEmitter::nodeValue(const ir::Node& node) {
  for (auto& level : llvm::reverse(cache_))
    if (auto it = level.find(&node); it != level.end())
      return it->second;
  const ir::ElementDescription& desc = s_.elements.find(&node)->second;
  if (desc.opClass == ir::KernelOpClass::Reduction)
    return fail(&node, "used before it is reduced");
  llvm::SmallVector<std::optional<TypedValue>, 3> operands;
  for (const ir::ElementOperand& operand : desc.operands) {
    if (operand.kind == ir::ElementOperand::Kind::Absent) {
      operands.push_back(std::nullopt);
      continue;
    }
    llvm::Expected<TypedValue> v = value(operand, node);
    if (!v)
      return v.takeError();
    operands.push_back(*v);
  }
  llvm::Expected<TypedValue> result = lowerElement(b_, desc.op, operands, node.type().dtype());
  if (!result)
    return fail(&node, llvm::toString(result.takeError()));
  cache_.back()[&node] = *result;
  return *result;
}

llvm::Error KernelEmitter::emitReduction(const ir::Node& node) {
  const ir::ElementDescription& desc = s_.elements.find(&node)->second;
  ir::DType result = node.type().dtype();
  ir::DType accDType = accumulatorDType(desc.op, result);
  Value* init = reductionInit(b_, desc.op, accDType);
  llvm::Expected<llvm::SmallVector<Value*, 2>> acc = emitLoops(
      s_.reducedDims, nullptr, nullptr, {init},
      [&](llvm::ArrayRef<Value*> carried, llvm::SmallVectorImpl<Value*>& next) -> llvm::Error {
        llvm::Expected<TypedValue> element = value(desc.operands[0], node);
        if (!element)
          return element.takeError();
        next.push_back(
            reductionCombine(b_, desc.op, accDType, carried[0], convert(b_, *element, accDType)));
        storeStaged();
        return llvm::Error::success();
      });
  if (!acc)
    return acc.takeError();
  Value* v = (*acc)[0];
  if (desc.op == ir::ElementOp::Mean) {
    Value* count = b_.getInt64(1);
    for (unsigned d : s_.reducedDims)
      count = b_.CreateMul(count, emitSym(s_.loopSizes[d]));
    v = b_.CreateFDiv(v, b_.CreateSIToFP(count, v->getType()));
  }
  cache_.back()[&node] = TypedValue{convert(b_, {v, accDType}, result), result};
  return llvm::Error::success();
}

llvm::Error KernelEmitter::store(const ir::Node& node) {
  llvm::Expected<TypedValue> v = nodeValue(node);
  if (!v)
    return v.takeError();
  Value* stored = toStorage(b_, *v);
  for (size_t k = 0; k < s_.outputs.size(); ++k) {
    if (s_.outputs[k] != &node)
      continue;
    const DimMap& map = s_.dimMaps.find(&node)->second;
    Value* addr = address(node.type(), outputPointers_[k], map);
    auto* st = b_.CreateStore(stored, addr);
    st->setMetadata(llvm::LLVMContext::MD_alias_scope, outputScope_[k]);
    st->setMetadata(llvm::LLVMContext::MD_noalias, outputNoAlias_[k]);
  }
  return llvm::Error::success();
}

/// Whether computing \p op costs far more than a store and a load: the
/// functions of KernelMath and divisions.
bool isCostly(ir::ElementOp op) {
  switch (op) {
  case ir::ElementOp::Div:
  case ir::ElementOp::DivTrunc:
  case ir::ElementOp::Reciprocal:
  case ir::ElementOp::Sqrt:
  case ir::ElementOp::Rsqrt:
  case ir::ElementOp::Exp:
  case ir::ElementOp::Log:
  case ir::ElementOp::Sigmoid:
  case ir::ElementOp::Tanh:
  case ir::ElementOp::Erf:
  case ir::ElementOp::Gelu:
  case ir::ElementOp::GeluTanh:
    return true;
  default:
    return false;
  }
}

void KernelEmitter::planStaging() {
  // The inner nodes each node's element is computed from, up to kernel
  // inputs and reduction results (which are outer values).
  auto innerTree = [&](const ir::Node& root, bool includeRoot) {
    llvm::SmallPtrSet<const ir::Node*, 16> seen;
    llvm::SmallVector<const ir::Node*, 16> work;
    auto visitOperands = [&](const ir::Node& node) {
      for (const ir::ElementOperand& operand : s_.elements.find(&node)->second.operands)
        if (operand.kind == ir::ElementOperand::Kind::Tensor && !s_.isLoaded(*operand.value.node))
          work.push_back(operand.value.node);
    };
    if (includeRoot)
      work.push_back(&root);
    else
      visitOperands(root);
    while (!work.empty()) {
      const ir::Node* node = work.pop_back_val();
      const ir::ElementDescription& desc = s_.elements.find(node)->second;
      if (desc.opClass == ir::KernelOpClass::Reduction || !seen.insert(node).second)
        continue;
      visitOperands(*node);
    }
    return seen;
  };
  llvm::DenseMap<const ir::Node*, unsigned> order;
  llvm::SmallPtrSet<const ir::Node*, 16> reduced;
  for (const ir::Node& node : kernel_.nodes()) {
    order[&node] = order.size();
    if (isReduction(node))
      for (const ir::Node* n : innerTree(node, /*includeRoot=*/false))
        reduced.insert(n);
  }
  llvm::SmallPtrSet<const ir::Node*, 4> taken;
  for (auto [k, out] : llvm::enumerate(s_.outputs)) {
    const DimMap& map = s_.dimMaps.find(out)->second;
    if (!s_.spansReduced(map) || taken.count(out) || out->type().dtype() == ir::DType::Bool)
      continue;
    taken.insert(out);
    // The latest node in graph order holds the most work; it must lie
    // exactly where the output does, in the output's dtype, so that storing
    // it there rounds nothing.
    const ir::Node* best = nullptr;
    for (const ir::Node* candidate : innerTree(*out, /*includeRoot=*/false))
      if (reduced.count(candidate) && candidate->type().dtype() == out->type().dtype() &&
          s_.dimMaps.find(candidate)->second == map &&
          (!best || order.lookup(best) < order.lookup(candidate)))
        best = candidate;
    if (!best)
      continue;
    bool costly = false;
    for (const ir::Node* n : innerTree(*best, /*includeRoot=*/true))
      costly |= isCostly(s_.elements.find(n)->second.op);
    if (costly)
      staged_.push_back({best, k});
  }
}

void KernelEmitter::storeStaged() {
  for (Staged& st : staged_) {
    if (st.stored)
      continue;
    auto it = cache_.back().find(st.value);
    if (it == cache_.back().end())
      continue;
    const ir::Node* out = s_.outputs[st.output];
    auto* store =
        b_.CreateStore(toStorage(b_, it->second), address(out->type(), outputPointers_[st.output],
                                                          s_.dimMaps.find(out)->second));
    store->setMetadata(llvm::LLVMContext::MD_alias_scope, outputScope_[st.output]);
    store->setMetadata(llvm::LLVMContext::MD_noalias, outputNoAlias_[st.output]);
    st.stored = true;
  }
}

void KernelEmitter::loadStaged() {
  for (const Staged& st : staged_) {
    if (!st.stored)
      continue;
    const ir::Node* out = s_.outputs[st.output];
    ir::DType dtype = out->type().dtype();
    auto* load = b_.CreateLoad(
        storageType(ctx_, dtype),
        address(out->type(), outputPointers_[st.output], s_.dimMaps.find(out)->second),
        "staged." + st.value->name());
    load->setMetadata(llvm::LLVMContext::MD_alias_scope, outputScope_[st.output]);
    load->setMetadata(llvm::LLVMContext::MD_noalias, outputNoAlias_[st.output]);
    cache_.back()[st.value] = TypedValue{fromStorage(b_, load, dtype), dtype};
  }
}

llvm::Error KernelEmitter::emit(llvm::StringRef symbol) {
  auto* ptrTy = llvm::PointerType::getUnqual(ctx_);
  auto* fnTy = llvm::FunctionType::get(b_.getVoidTy(),
                                       {ptrTy, ptrTy, b_.getInt64Ty(), b_.getInt64Ty()}, false);
  fn_ = llvm::Function::Create(fnTy, llvm::Function::ExternalLinkage, symbol, module_);
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  fn_->addFnAttr(llvm::Attribute::NoFree);
  fn_->addFnAttr(llvm::Attribute::NoSync);
  fn_->addFnAttr(llvm::Attribute::WillReturn);
  for (unsigned i = 0; i < 2; ++i) {
    fn_->addParamAttr(i, llvm::Attribute::NoCapture);
    fn_->addParamAttr(i, llvm::Attribute::ReadOnly);
    fn_->addParamAttr(i, llvm::Attribute::NoAlias);
  }
  Value* buffers = fn_->getArg(0);
  Value* symbolArray = fn_->getArg(1);
  buffers->setName("buffers");
  symbolArray->setName("symbols");
  fn_->getArg(2)->setName("begin");
  fn_->getArg(3)->setName("end");

  auto* entry = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  auto* start = llvm::BasicBlock::Create(ctx_, "start", fn_);
  entryB_.SetInsertPoint(llvm::BranchInst::Create(start, entry));

  // Outputs alias nothing: each has its own scope, and every other access
  // is declared not to alias it.
  llvm::MDBuilder md(ctx_);
  llvm::MDNode* domain = md.createAnonymousAliasScopeDomain(kernel_.name());
  llvm::SmallVector<llvm::Metadata*, 2> scopes;
  for (size_t k = 0; k < s_.outputs.size(); ++k) {
    llvm::MDNode* scope = md.createAnonymousAliasScope(domain, "out" + std::to_string(k));
    outputScope_.push_back(llvm::MDNode::get(ctx_, {scope}));
    scopes.push_back(scope);
  }
  inputNoAlias_ = llvm::MDNode::get(ctx_, scopes);
  for (size_t k = 0; k < s_.outputs.size(); ++k) {
    llvm::SmallVector<llvm::Metadata*, 2> others;
    for (size_t j = 0; j < scopes.size(); ++j)
      if (j != k)
        others.push_back(scopes[j]);
    outputNoAlias_.push_back(llvm::MDNode::get(ctx_, others));
  }

  planStaging();

  // Symbols, then buffer pointers: inputs in order, then outputs.
  for (auto [i, decl] : llvm::enumerate(kernel_.symbols())) {
    Value* addr = entryB_.CreateConstInBoundsGEP1_64(entryB_.getInt64Ty(), symbolArray, i);
    symbols_[decl.name] = entryB_.CreateLoad(entryB_.getInt64Ty(), addr, decl.name);
  }
  unsigned slot = 0;
  auto pointer = [&](const llvm::Twine& name) {
    Value* addr = entryB_.CreateConstInBoundsGEP1_64(ptrTy, buffers, slot++);
    return entryB_.CreateLoad(ptrTy, addr, name);
  };
  for (const ir::Node& node : kernel_.inputs())
    inputPointers_[&node] = pointer(node.name());
  for (const ir::Node* out : s_.outputs)
    outputPointers_.push_back(pointer("out." + out->name()));
  // Unknown symbols are an error before any code uses them.
  for (const ir::Node& node : kernel_.nodes()) {
    llvm::Error err = llvm::Error::success();
    node.type().walkSymExprs([&](ir::SymExpr e) {
      e.walkSymbols([&](ir::SymExpr sym) {
        if (!err && !symbols_.count(sym.symbolName()))
          err = fail(&node,
                     "uses the symbol " + sym.symbolName() + ", which the kernel does not declare");
      });
    });
    if (err)
      return err;
    for (const ir::Argument& arg : node.args())
      arg.forEachSym([&](ir::SymExpr e) {
        e.walkSymbols([&](ir::SymExpr sym) {
          if (!err && !symbols_.count(sym.symbolName()))
            err = fail(&node, "uses the symbol " + sym.symbolName() +
                                  ", which the kernel does not declare");
        });
      });
    if (err)
      return err;
  }

  // A view reads its root's buffer from its first element on.
  for (const ir::Node& node : kernel_.nodes())
    if (auto it = s_.views.find(&node); it != s_.views.end())
      inputPointers_[&node] = entryB_.CreateGEP(storageType(ctx_, node.type().dtype()),
                                                inputPointers_.lookup(it->second.root.node),
                                                emitSym(it->second.offset), "view." + node.name());

  b_.SetInsertPoint(start);
  index_.assign(s_.loopSizes.size(), nullptr);
  cache_.emplace_back();

  // The outer loops: the first kept dimension over [begin, end). A kernel
  // without kept dimensions runs its body once, for the slice [0, 1): its
  // outer loop is over an extra index no value reads.
  llvm::SmallVector<unsigned, 4> outer(s_.keptDims);
  if (outer.empty()) {
    outer.push_back(index_.size());
    index_.push_back(nullptr);
  }
  llvm::Expected<llvm::SmallVector<Value*, 2>> done =
      emitLoops(outer, fn_->getArg(2), fn_->getArg(3), {},
                [&](llvm::ArrayRef<Value*>, llvm::SmallVectorImpl<Value*>&) -> llvm::Error {
                  for (const ir::Node& node : kernel_.nodes())
                    if (isReduction(node))
                      if (auto err = emitReduction(node))
                        return err;
                  llvm::SmallVector<const ir::Node*, 2> full;
                  for (const ir::Node* out : s_.outputs) {
                    if (llvm::is_contained(full, out))
                      continue;
                    if (s_.spansReduced(s_.dimMaps.find(out)->second)) {
                      full.push_back(out);
                      continue;
                    }
                    if (auto err = store(*out))
                      return err;
                  }
                  if (full.empty())
                    return llvm::Error::success();
                  llvm::Expected<llvm::SmallVector<Value*, 2>> stored = emitLoops(
                      s_.reducedDims, nullptr, nullptr, {},
                      [&](llvm::ArrayRef<Value*>, llvm::SmallVectorImpl<Value*>&) -> llvm::Error {
                        loadStaged();
                        for (const ir::Node* out : full)
                          if (auto err = store(*out))
                            return err;
                        return llvm::Error::success();
                      });
                  return stored ? llvm::Error::success() : stored.takeError();
                });
  if (!done)
    return done.takeError();
  b_.CreateRetVoid();
  return llvm::Error::success();
}

} // namespace

llvm::Error codegen::emitKernel(llvm::Module& module, const ir::Graph& kernel,
                                llvm::StringRef symbol, VectorIsa isa) {
  llvm::Expected<KernelSchedule> schedule = scheduleKernel(kernel);
  if (!schedule)
    return schedule.takeError();
  if (module.getFunction(symbol))
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "kernel @" + kernel.name() +
                                                                       ": the module already has " +
                                                                       symbol);
  // Kernels sharing a module share its ISA: the first one records it.
  if (vectorIsaOf(module) == VectorIsa::Generic)
    setVectorIsa(module, isa);
  KernelEmitter emitter(module, kernel, std::move(*schedule));
  llvm::Error err = emitter.emit(symbol);
  // A failed kernel leaves nothing half-built behind in the module.
  if (err)
    if (llvm::Function* partial = module.getFunction(symbol))
      partial->eraseFromParent();
  return err;
}

void codegen::optimizeKernelModule(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  tuning.LoopUnrolling = true;
  llvm::PassBuilder builder(&tm, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(module, mam);
  inlineVectorIsaCalls(module, mam);
}

llvm::Error codegen::checkKernel(const ir::Graph& kernel) {
  llvm::LLVMContext context;
  llvm::Module scratch("dync.kernel.check", context);
  return emitKernel(scratch, kernel, kernelSymbol(kernel));
}
