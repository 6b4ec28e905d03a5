//===- KernelCallLowering.cpp - Calls of generated kernels in a graph -----===//
//
// How a graph function calls a kernel (docs/kernels.md, "Calling kernels"):
// its outputs are allocated, or made views of memory planning's buffers; the
// inputs no kernel made are checked to have the layout the kernel was
// compiled for; and the kernel's function runs over the shim's parallel_for
// through a trampoline that unpacks its arguments.
//
//===----------------------------------------------------------------------===//

#include "codegen/GraphEmitter.h"
#include "codegen/KernelCodegen.h"
#include "passes/MemoryPlan.h"

using namespace dync;
using namespace dync::codegen;
using namespace dync::codegen::detail;

namespace {

/// Bytes per element of \p dtype, as torch stores it.
int64_t elementBytes(ir::DType dtype) {
  switch (dtype) {
  case ir::DType::F64:
  case ir::DType::I64:
  case ir::DType::C64:
    return 8;
  case ir::DType::F32:
  case ir::DType::I32:
    return 4;
  case ir::DType::F16:
  case ir::DType::BF16:
  case ir::DType::I16:
    return 2;
  case ir::DType::I8:
  case ir::DType::U8:
  case ir::DType::Bool:
    return 1;
  case ir::DType::C128:
    return 16;
  }
  return 16;
}

/// The bytes a tensor of \p type reaches from its first element: one past
/// the element at the largest index. A size of 0 counts as 1, which only
/// over-allocates.
ir::SymExpr byteExtent(ir::Context& ctx, const ir::Type& type) {
  ir::SymExpr last = ctx.constant(0);
  for (auto [size, stride] : llvm::zip_equal(type.sizes(), type.strides()))
    last = last + ir::SymExpr::max(size - 1, ctx.constant(0)) * stride;
  return (last + 1) * elementBytes(type.dtype());
}

/// The types of a kernel call's outputs, in order.
std::vector<const ir::Type*> outputTypes(const ir::Node& call) {
  std::vector<const ir::Type*> types;
  if (call.type().isSequence())
    for (const ir::Type& element : call.type().elements())
      types.push_back(&element);
  else
    types.push_back(&call.type());
  return types;
}

/// Outer iterations of a kernel one thread takes at least, in elements of
/// its largest operand: ATen's own grain for elementwise loops
/// (at::internal::GRAIN_SIZE), so a kernel over fewer elements runs on the
/// calling thread, where waking the pool would cost more than it saves.
constexpr int64_t kGrainElements = 32768;

} // namespace

llvm::Error GraphEmitter::planBuffers() {
  bool planned = false;
  for (const ir::Node& node : graph_.nodes())
    if (node.isKernelCall())
      for (std::optional<unsigned> slot : transforms::kernelBufferSlots(node))
        planned |= slot.has_value();
  if (!planned)
    return llvm::Error::success();
  // A wrong plan would let one kernel overwrite a value still in use; the
  // plan is text a user may have written, so it is checked, not trusted.
  if (llvm::Error error = transforms::checkMemoryPlan(graph_))
    return error;
  ir::Context& ctx = graph_.context();
  for (const ir::Node& node : graph_.nodes()) {
    if (!node.isKernelCall())
      continue;
    std::vector<const ir::Type*> types = outputTypes(node);
    std::vector<std::optional<unsigned>> slots = transforms::kernelBufferSlots(node);
    for (unsigned i = 0; i < types.size(); ++i) {
      if (!slots[i])
        continue;
      Buffer& buffer = buffers_[*slots[i]];
      ir::SymExpr bytes = byteExtent(ctx, *types[i]);
      buffer.bytes = buffer.bytes ? ir::SymExpr::max(buffer.bytes, bytes) : bytes;
      buffer.lastMember = {&node, i};
    }
  }
  return llvm::Error::success();
}

llvm::Expected<Value*> GraphEmitter::symArray(const ir::Node& node,
                                              llvm::ArrayRef<ir::SymExpr> exprs,
                                              const llvm::Twine& name) {
  llvm::AllocaInst* array =
      entryAlloca(b_.getInt64Ty(), allocas_.getInt64(std::max<size_t>(exprs.size(), 1)), name);
  for (auto [i, expr] : llvm::enumerate(exprs)) {
    llvm::Expected<Value*> v = emitSym(&node, expr);
    if (!v)
      return v.takeError();
    b_.CreateStore(*v, b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), array, i));
  }
  return array;
}

llvm::Expected<Value*> GraphEmitter::bufferHandle(const ir::Node& node, unsigned slot) {
  Buffer& buffer = buffers_[slot];
  if (buffer.cell)
    return b_.CreateLoad(b_.getPtrTy(), buffer.cell, "buffer");
  // Allocated at the first member's call, where every symbol is known, as a
  // byte tensor its members view with their own dtypes.
  llvm::Expected<Value*> bytes = emitSym(&node, buffer.bytes);
  if (!bytes)
    return bytes.takeError();
  llvm::AllocaInst* sizes = entryAlloca(b_.getInt64Ty(), nullptr, "buffer.size");
  llvm::AllocaInst* strides = entryAlloca(b_.getInt64Ty(), nullptr, "buffer.stride");
  b_.CreateStore(*bytes, sizes);
  b_.CreateStore(b_.getInt64(1), strides);
  buffer.cell = newCell("buffer." + llvm::Twine(slot));
  Value* status =
      shim_.call(b_, ShimFn::TensorEmptyStrided,
                 {sizes, strides, b_.getInt64(1), b_.getInt32(DYNC_DTYPE_UINT8), buffer.cell},
                 "status.buffer");
  checkOrFail(b_.CreateICmpNE(status, b_.getInt32(DYNC_OK)),
              failBlock(nodePrefix(node) + "allocating buffer " + llvm::Twine(slot) + ": ", nullptr,
                        /*shimError=*/true),
              "buffer.ok");
  return b_.CreateLoad(b_.getPtrTy(), buffer.cell, "buffer");
}

llvm::Function* GraphEmitter::trampoline(const std::string& symbol) {
  llvm::Module& module = shim_.module();
  std::string name = "dync.trampoline." + symbol;
  if (llvm::Function* existing = module.getFunction(name))
    return existing;
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* voidTy = b_.getVoidTy();
  // The kernel itself is defined in another object (or, in tests, emitted
  // into this module); here it is only declared.
  llvm::FunctionCallee kernel = module.getOrInsertFunction(
      symbol, llvm::FunctionType::get(voidTy, {ptr, ptr, i64, i64}, false));
  auto* type = llvm::FunctionType::get(voidTy, {ptr, i64, i64}, false);
  llvm::Function* f =
      llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, name, module);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  f->getArg(0)->setName("ctx");
  f->getArg(1)->setName("begin");
  f->getArg(2)->setName("end");
  IRBuilder<> b(llvm::BasicBlock::Create(ctx_, "entry", f));
  Value* buffers = b.CreateLoad(ptr, f->getArg(0), "buffers");
  Value* symbols = b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, f->getArg(0), 1), "symbols");
  b.CreateCall(kernel, {buffers, symbols, f->getArg(1), f->getArg(2)});
  b.CreateRetVoid();
  return f;
}

llvm::Error GraphEmitter::checkLayout(const ir::Node& node, unsigned index, Value* handle,
                                      const ir::Type& type) {
  const ir::ValueRef& ref = node.args()[index].valueRef();
  std::string what = nodePrefix(node) + "argument " + std::to_string(index) + " (%" +
                     ref.node->name() +
                     (ref.index ? "#" + std::to_string(*ref.index) : std::string()) + ")";
  size_t rank = type.sizes().size();
  // One shim call reads every field checked below.
  llvm::AllocaInst* info = entryAlloca(shim_.tensorInfoType(), nullptr, "info");
  checkOrFail(b_.CreateICmpEQ(shim_.readTensorInfo(b_, handle, info), b_.getInt32(0)),
              failBlock(what + " has no plain sizes and strides", nullptr), "info.ok");
  Value* dim = shim_.tensorInfoField(b_, info, TensorInfoField::Dim, "dim");
  checkOrFail(b_.CreateICmpNE(dim, b_.getInt64(rank)),
              failBlock(what + " does not have " + llvm::Twine(rank) + " dimensions", nullptr),
              "rank.ok");
  Value* dtype = shim_.tensorInfoField(b_, info, TensorInfoField::DType, "dtype");
  Value* device = shim_.tensorInfoField(b_, info, TensorInfoField::DeviceType, "device");
  Value* bad = b_.CreateOr(b_.CreateICmpNE(dtype, b_.getInt32(dtypeNumber(type.dtype()))),
                           b_.CreateICmpNE(device, b_.getInt32(DYNC_DEVICE_CPU)));
  Value* sizes = shim_.tensorInfoField(b_, info, TensorInfoField::Sizes, "sizes");
  Value* strides = shim_.tensorInfoField(b_, info, TensorInfoField::Strides, "strides");
  for (size_t d = 0; d < rank; ++d) {
    llvm::Expected<Value*> size = emitSym(&node, type.sizes()[d]);
    if (!size)
      return size.takeError();
    llvm::Expected<Value*> stride = emitSym(&node, type.strides()[d]);
    if (!stride)
      return stride.takeError();
    Value* actualSize =
        b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), sizes, d));
    Value* actualStride =
        b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), strides, d));
    // As torch's contiguity: a dimension of size 1 is never stepped along,
    // so its stride does not matter.
    Value* strideBad = b_.CreateAnd(b_.CreateICmpNE(actualStride, *stride),
                                    b_.CreateICmpNE(actualSize, b_.getInt64(1)));
    bad = b_.CreateOr(bad, b_.CreateOr(b_.CreateICmpNE(actualSize, *size), strideBad));
  }
  checkOrFail(bad,
              failBlock(what + " is not a CPU tensor laid out as " + type.str() +
                            " (dtype, sizes and strides); the kernel reads it that way",
                        nullptr),
              "layout.ok");
  return llvm::Error::success();
}

llvm::Expected<Value*> GraphEmitter::grainSize(const ir::Node& node, const ir::Graph& kernel,
                                               Value* extent) {
  // The work of one outer iteration is estimated as the element count of
  // the kernel's largest operand (the iteration space's size) over the
  // extent.
  std::vector<ir::SymExpr> counts;
  auto addCount = [&](const ir::Type& type) {
    ir::SymExpr n = graph_.context().constant(1);
    for (ir::SymExpr size : type.sizes())
      n = n * size;
    counts.push_back(n);
  };
  for (const ir::Node& input : kernel.inputs())
    addCount(input.type());
  for (const ir::Type* type : outputTypes(node))
    addCount(*type);
  llvm::Expected<Value*> elements = emitSym(&node, ir::SymExpr::max(counts));
  if (!elements)
    return elements.takeError();
  auto umax = [&](Value* a, Value* b) { return b_.CreateSelect(b_.CreateICmpUGT(a, b), a, b); };
  Value* one = b_.getInt64(1);
  Value* perIteration = umax(b_.CreateUDiv(*elements, umax(extent, one)), one);
  Value* grain =
      b_.CreateUDiv(b_.CreateAdd(b_.getInt64(kGrainElements - 1), perIteration), perIteration);
  return umax(grain, one);
}

llvm::Error GraphEmitter::emitKernelCall(const ir::Node& node, unsigned position) {
  const ir::Module* module = graph_.module();
  const ir::Graph* kernel = module ? module->findKernel(node.kernelName()) : nullptr;
  if (!kernel)
    return llvm::createStringError("graph @" + graph_.name() + ", %" + node.name() + " = " +
                                   node.op() + ": no kernel @" + node.kernelName().str() +
                                   " in the graph's module" + node.location().suffix());
  std::vector<const ir::Node*> inputs;
  for (const ir::Node& input : kernel->inputs())
    inputs.push_back(&input);
  if (inputs.size() != node.args().size())
    return unsupported(&node, "a kernel call whose arguments do not match the kernel's inputs");
  std::vector<const ir::Type*> types = outputTypes(node);
  std::vector<std::optional<unsigned>> slots = transforms::kernelBufferSlots(node);
  unsigned numBuffers = inputs.size() + types.size();
  llvm::PointerType* ptr = b_.getPtrTy();
  llvm::AllocaInst* buffers =
      entryAlloca(ptr, allocas_.getInt64(numBuffers), "buffers." + node.name());

  // A data pointer is NULL only for a tensor without storage or with no
  // elements; the kernel touches none of the latter.
  auto storeData = [&](Value* handle, const ir::Type& type, unsigned index) -> llvm::Error {
    Value* data = shim_.call(b_, ShimFn::TensorDataPtr, {handle}, "data");
    ir::SymExpr count = graph_.context().constant(1);
    for (ir::SymExpr size : type.sizes())
      count = count * size;
    llvm::Expected<Value*> n = emitSym(&node, count);
    if (!n)
      return n.takeError();
    checkOrFail(b_.CreateAnd(b_.CreateICmpEQ(data, llvm::ConstantPointerNull::get(ptr)),
                             b_.CreateICmpNE(*n, b_.getInt64(0))),
                failBlock(nodePrefix(node) + "buffer " + llvm::Twine(index) +
                              " has no data to read or write",
                          nullptr),
                "data.ok");
    b_.CreateStore(data, b_.CreateConstInBoundsGEP1_64(ptr, buffers, index));
    return llvm::Error::success();
  };

  for (unsigned i = 0; i < inputs.size(); ++i) {
    const ir::Argument& arg = node.args()[i];
    if (!arg.isValue())
      return unsupported(&node, "a kernel argument that is not a value");
    llvm::Expected<const Slot*> slot = slotOf(&node, arg.valueRef());
    if (!slot)
      return slot.takeError();
    if ((*slot)->kind != SlotKind::Tensor)
      return unsupported(&node, "a kernel argument that is not a tensor");
    Value* handle = tensorHandle(**slot);
    // A kernel's outputs are allocated here exactly as their types say;
    // anything else (graph inputs, ATen results) is checked, since the
    // kernel reads memory by the type's sizes and strides.
    if (!arg.valueRef().node->isKernelCall())
      if (llvm::Error error = checkLayout(node, i, handle, inputs[i]->type()))
        return error;
    if (llvm::Error error = storeData(handle, inputs[i]->type(), i))
      return error;
  }

  NodeValues& values = values_[&node];
  values.sequence = node.type().isSequence();
  for (unsigned j = 0; j < types.size(); ++j) {
    const ir::Type& type = *types[j];
    llvm::Expected<Value*> sizes = symArray(node, type.sizes(), "sizes");
    if (!sizes)
      return sizes.takeError();
    llvm::Expected<Value*> strides = symArray(node, type.strides(), "strides");
    if (!strides)
      return strides.takeError();
    llvm::AllocaInst* cell = newCell("cell." + node.name() +
                                     (values.sequence ? "." + std::to_string(j) : std::string()));
    Value* rank = b_.getInt64(type.sizes().size());
    Value* dtype = b_.getInt32(dtypeNumber(type.dtype()));
    Value* status;
    if (slots[j]) {
      llvm::Expected<Value*> base = bufferHandle(node, *slots[j]);
      if (!base)
        return base.takeError();
      status = shim_.call(b_, ShimFn::TensorViewStorage,
                          {*base, *sizes, *strides, rank, dtype, cell}, "status.view");
    } else {
      status = shim_.call(b_, ShimFn::TensorEmptyStrided, {*sizes, *strides, rank, dtype, cell},
                          "status.alloc");
    }
    checkOrFail(b_.CreateICmpNE(status, b_.getInt32(DYNC_OK)),
                failBlock(nodePrefix(node) + "allocating output " + llvm::Twine(j) + ": ", nullptr,
                          /*shimError=*/true),
                "output.ok");
    Slot slot;
    slot.kind = SlotKind::Tensor;
    slot.cell = cell;
    values.slots.push_back(slot);
    if (llvm::Error error = storeData(b_.CreateLoad(ptr, cell, "out"), type, inputs.size() + j))
      return error;
    // The graph's reference to a buffer goes with its last member's view;
    // the views keep the storage alive as long as they are used.
    if (slots[j] && buffers_[*slots[j]].lastMember == std::make_pair(&node, j)) {
      Value* bufferCell = buffers_[*slots[j]].cell;
      shim_.call(b_, ShimFn::TensorRelease, {b_.CreateLoad(ptr, bufferCell, "buffer")});
      b_.CreateStore(llvm::ConstantPointerNull::get(ptr), bufferCell);
    }
  }

  std::vector<ir::SymExpr> symbols;
  for (const ir::SymbolDecl& decl : kernel->symbols())
    symbols.push_back(graph_.context().symbol(decl.name));
  llvm::Expected<Value*> symbolValues = symArray(node, symbols, "symbols." + node.name());
  if (!symbolValues)
    return symbolValues.takeError();
  llvm::AllocaInst* context = entryAlloca(ptr, allocas_.getInt64(2), "kernel.ctx." + node.name());
  b_.CreateStore(buffers, context);
  b_.CreateStore(*symbolValues, b_.CreateConstInBoundsGEP1_64(ptr, context, 1));

  llvm::Expected<Value*> extent = emitSym(&node, kernelParallelExtent(*kernel));
  if (!extent)
    return extent.takeError();
  llvm::Expected<Value*> grain = grainSize(node, *kernel, *extent);
  if (!grain)
    return grain.takeError();
  // A range no longer than one grain runs here, on the calling thread, as
  // at::parallel_for would run it too; calling the trampoline directly
  // saves the trip through the shim and ATen's thread-pool bookkeeping,
  // which costs as much as a small kernel's work.
  llvm::Function* run = trampoline(kernelSymbol(*kernel));
  auto* inlineBlock = llvm::BasicBlock::Create(ctx_, "inline." + node.name(), fn_);
  auto* inlineRun = llvm::BasicBlock::Create(ctx_, "inline.run." + node.name(), fn_);
  auto* parallelBlock = llvm::BasicBlock::Create(ctx_, "parallel." + node.name(), fn_);
  b_.CreateCondBr(b_.CreateICmpSLE(*extent, *grain, "small." + node.name()), inlineBlock,
                  parallelBlock);
  b_.SetInsertPoint(parallelBlock);
  Value* status =
      shim_.call(b_, ShimFn::ParallelFor, {b_.getInt64(0), *extent, *grain, run, context},
                 "status." + node.name());
  checkOrFail(b_.CreateICmpNE(status, b_.getInt32(DYNC_OK)),
              failBlock(nodePrefix(node), nullptr, /*shimError=*/true), "called." + node.name());
  llvm::BasicBlock* called = b_.GetInsertBlock();
  // An empty range runs nothing, as parallel_for does.
  b_.SetInsertPoint(inlineBlock);
  b_.CreateCondBr(b_.CreateICmpSGT(*extent, b_.getInt64(0)), inlineRun, called);
  b_.SetInsertPoint(inlineRun);
  b_.CreateCall(run, {context, b_.getInt64(0), *extent});
  b_.CreateBr(called);
  b_.SetInsertPoint(called);
  releaseDead(node, position);
  return llvm::Error::success();
}
