//===- GraphCodegen.cpp - Graph IR to LLVM IR, one shim call per node -----===//

#include "codegen/GraphCodegen.h"

#include "codegen/GraphEmitter.h"
#include "ir/AutogradFunction.h"
#include "ir/ControlFlow.h"
#include "ir/RunTimeCheck.h"
#include "ir/ScalarOps.h"
#include "ir/WhileLoop.h"
#include "runtime/artifact/dync_artifact.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstddef>
#include <map>

using namespace dync;
using namespace dync::codegen;
using llvm::IRBuilder;
using llvm::Value;

namespace {

/// c10::MemoryFormat's values. The shim range-checks them; they are not part
/// of dync_shim.h yet.
int memoryFormatNumber(ir::MemoryFormat format) {
  switch (format) {
  case ir::MemoryFormat::Contiguous:
    return 0;
  case ir::MemoryFormat::Preserve:
    return 1;
  case ir::MemoryFormat::ChannelsLast:
    return 2;
  case ir::MemoryFormat::ChannelsLast3d:
    return 3;
  }
  return -1;
}

} // namespace

namespace dync::codegen::detail {

llvm::AllocaInst* GraphEmitter::entryAlloca(llvm::Type* type, Value* count,
                                            const llvm::Twine& name) {
  llvm::AllocaInst* a = allocas_.CreateAlloca(type, count, name);
  return a;
}

llvm::AllocaInst* GraphEmitter::newCell(const llvm::Twine& name) {
  llvm::AllocaInst* cell = entryAlloca(b_.getPtrTy(), nullptr, name);
  allocas_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), cell);
  allCells_.push_back(cell);
  return cell;
}

llvm::Error GraphEmitter::classifyInputs() {
  for (const ir::Node& node : graph_.inputs()) {
    const ir::Type& type = node.type();
    if (type.isTensor()) {
      unsigned index = tensorInputs_.size();
      tensorInputs_.push_back(&node);
      for (unsigned d = 0; d < type.sizes().size(); ++d) {
        ir::SymExpr size = type.sizes()[d];
        if (size.isSymbol() && !symbolSources_.count(size.symbolName()))
          symbolSources_[size.symbolName()] = {static_cast<int>(index), d, -1};
      }
      if (ir::SymExpr nnz = type.nnz();
          nnz && nnz.isSymbol() && !symbolSources_.count(nnz.symbolName()))
        symbolSources_[nnz.symbolName()] = {static_cast<int>(index), 0, -1, /*nnz=*/true};
    } else if (type.kind() == ir::Type::Kind::Int) {
      unsigned index = intInputs_.size();
      intInputs_.push_back(&node);
      // An int input known as a plain symbol binds it, and is the cheapest
      // place to read it from.
      if (type.intValue() && type.intValue().isSymbol())
        symbolSources_[type.intValue().symbolName()] = {-1, 0, static_cast<int>(index)};
    } else {
      return unsupported(&node, "an input of type " + type.str());
    }
  }
  return llvm::Error::success();
}

void GraphEmitter::computeLastUses() {
  unsigned position = 0;
  for (const ir::Node& node : graph_.nodes()) {
    ++position;
    auto mark = [&](const ir::ValueRef& ref) {
      const ir::Node* def = ref.node;
      if (!def->isCall())
        return;
      unsigned count = def->type().isSequence() ? def->type().elements().size() : 1;
      for (unsigned i = 0; i < count; ++i) {
        if (ref.index && *ref.index != i)
          continue;
        if (node.isOutput())
          returned_.insert({def, i});
        else
          lastUse_[{def, i}] = position;
      }
    };
    node.forEachUse(mark);
  }
}

llvm::Expected<const Slot*> GraphEmitter::slotOf(const ir::Node* node, const ir::ValueRef& ref) {
  auto it = values_.find(ref.node);
  if (it == values_.end())
    return unsupported(node, "a use of %" + ref.node->name() + " before its definition");
  const NodeValues& values = it->second;
  if (ref.index) {
    if (!values.sequence || *ref.index >= values.slots.size())
      return unsupported(node, "indexing %" + ref.node->name());
    return &values.slots[*ref.index];
  }
  if (values.sequence)
    return unsupported(node, "using the whole tuple %" + ref.node->name() + " as one value");
  return &values.slots[0];
}

Value* GraphEmitter::tensorHandle(const Slot& slot) {
  if (slot.value)
    return slot.value;
  return b_.CreateLoad(b_.getPtrTy(), slot.cell, "t");
}

llvm::BasicBlock* GraphEmitter::failBlock(const llvm::Twine& prefix, Value* detail, bool shimError,
                                          int status) {
  llvm::BasicBlock* saved = b_.GetInsertBlock();
  auto* block = llvm::BasicBlock::Create(ctx_, shimError ? "fail.shim" : "fail", fn_);
  b_.SetInsertPoint(block);
  Value* message = detail;
  if (shimError)
    message = shim_.call(b_, ShimFn::LastError, {}, "message");
  else if (!message)
    message = shim_.string("");
  // The original code runs next: it draws from where the graph found the
  // generator.
  if (status == DYNC_ARTIFACT_FALL_BACK)
    restoreGeneratorForFallBack();
  b_.CreateCall(shim_.setErrorFunction(),
                {fn_->getArg(6), fn_->getArg(7), shim_.string(prefix.str(), "msg"), message});
  b_.CreateStore(b_.getInt32(status), status_);
  b_.CreateBr(cleanup_);
  b_.SetInsertPoint(saved);
  return block;
}

void GraphEmitter::checkOrFail(Value* failed, llvm::BasicBlock* failure, const llvm::Twine& name) {
  auto* next = llvm::BasicBlock::Create(ctx_, name, fn_);
  b_.CreateCondBr(failed, failure, next);
  b_.SetInsertPoint(next);
}

llvm::Expected<Value*> GraphEmitter::SizeHooks::symbol(ir::SymExpr expr) {
  GraphEmitter& e = emitter;
  if (Value* computed = e.unbackedValues_.lookup(expr.symbolName()))
    return computed;
  auto it = e.symbolSources_.find(expr.symbolName());
  if (it == e.symbolSources_.end())
    return e.unsupported(node, "the symbolic size " + expr.symbolName() +
                                   ", which is neither a dimension of a tensor input nor an "
                                   "int input,");
  const SymbolSource& source = it->second;
  IRBuilder<>& b = e.b_;
  if (source.intInput >= 0) {
    Value* addr = b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), e.fn_->getArg(2), source.intInput);
    return b.CreateLoad(b.getInt64Ty(), addr, expr.symbolName());
  }
  if (source.nnz) {
    // The input's guard checked its layout; the shim reads nnz for it.
    Value* handle = e.tensorHandle(e.values_[e.tensorInputs_[source.tensorInput]].slots[0]);
    llvm::AllocaInst* info = e.entryAlloca(e.shim_.tensorInfoType(), nullptr, "sparse.info");
    llvm::AllocaInst* fields = e.entryAlloca(b.getInt64Ty(), b.getInt32(3), "sparse.fields");
    e.shim_.call(b, ShimFn::SparseCooInfoOf, {handle, info, fields}, "sparse.ok");
    return b.CreateLoad(b.getInt64Ty(), b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), fields, 1),
                        expr.symbolName());
  }
  Value*& sizes = e.inputSizes_[source.tensorInput];
  if (!sizes)
    sizes = e.shim_.call(b, ShimFn::TensorSizes,
                         {e.tensorHandle(e.values_[e.tensorInputs_[source.tensorInput]].slots[0])},
                         "sizes." + e.tensorInputs_[source.tensorInput]->name());
  return b.CreateLoad(b.getInt64Ty(),
                      b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), sizes, source.dim),
                      expr.symbolName());
}

void GraphEmitter::SizeHooks::require(IRBuilder<>& b, Value* holds, SymCheck check,
                                      ir::SymExpr expr) {
  // Only a zero divisor is checked: the arithmetic wraps.
  assert(check == SymCheck::DivisionByZero && "graph sizes check only divisors");
  (void)check;
  GraphEmitter& e = emitter;
  llvm::BasicBlock* fail = e.failBlock(
      "graph " + e.graph_.name() + ": division by zero computing the size " + expr.str(), nullptr);
  auto* next = llvm::BasicBlock::Create(e.ctx_, "divisor.ok", e.fn_);
  b.CreateCondBr(holds, next, fail);
  b.SetInsertPoint(next);
}

llvm::Expected<Value*> GraphEmitter::emitSym(const ir::Node* node, ir::SymExpr expr) {
  // Capture already proved these sizes fit the symbols' ranges, which the
  // guards check before the graph runs, so the arithmetic wraps.
  sizeHooks_.node = node;
  return sizes_.lower(b_, expr);
}

llvm::Error GraphEmitter::pushList(const ir::Node& node,
                                   const std::vector<ir::Argument>& elements) {
  // The list's element kind is read from its elements: ints (constant,
  // symbolic, or int values) make int[], floats float[] (ints among them
  // promoted), bools bool[], tensors Tensor[], and tensors with `none`
  // Tensor?[]. An empty list is pushed as int[].
  bool anyFloat = false, anyInt = false, anyBool = false, anyTensor = false, anyNone = false;
  std::vector<const Slot*> slots(elements.size(), nullptr);
  for (size_t i = 0; i < elements.size(); ++i) {
    const ir::Argument& e = elements[i];
    switch (e.kind()) {
    case ir::Argument::Kind::Sym:
      anyInt = true;
      break;
    case ir::Argument::Kind::Float:
      anyFloat = true;
      break;
    case ir::Argument::Kind::Bool:
      anyBool = true;
      break;
    case ir::Argument::Kind::None:
      anyNone = true;
      break;
    case ir::Argument::Kind::Value: {
      llvm::Expected<const Slot*> slot = slotOf(&node, e.valueRef());
      if (!slot)
        return slot.takeError();
      slots[i] = *slot;
      switch ((*slot)->kind) {
      case SlotKind::Tensor:
        anyTensor = true;
        break;
      case SlotKind::Int:
        anyInt = true;
        break;
      case SlotKind::Double:
        anyFloat = true;
        break;
      case SlotKind::Bool:
        anyBool = true;
        break;
      case SlotKind::None:
        anyNone = true;
        break;
      }
      break;
    }
    default:
      return unsupported(&node, "a list holding a " +
                                    std::string(e.kind() == ir::Argument::Kind::List ||
                                                        e.kind() == ir::Argument::Kind::Tuple
                                                    ? "nested list"
                                                    : "literal of this kind"));
    }
  }
  size_t n = elements.size();
  Value* count = b_.getInt64(n);
  if (anyTensor) {
    if (anyInt || anyFloat || anyBool)
      return unsupported(&node, "a list mixing tensors and scalars");
    llvm::AllocaInst* array = entryAlloca(b_.getPtrTy(), allocas_.getInt64(n), "tensors");
    for (size_t i = 0; i < n; ++i) {
      Value* t = slots[i] && slots[i]->kind == SlotKind::Tensor
                     ? tensorHandle(*slots[i])
                     : llvm::ConstantPointerNull::get(b_.getPtrTy());
      b_.CreateStore(t, b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), array, i));
    }
    shim_.call(b_, anyNone ? ShimFn::PushOptionalTensorList : ShimFn::PushTensorList,
               {stack_, array, count});
    return llvm::Error::success();
  }
  if (anyNone)
    return unsupported(&node, "a list of none and scalars");
  if (anyBool && (anyInt || anyFloat))
    return unsupported(&node, "a list mixing bools and numbers");
  if (anyBool) {
    llvm::AllocaInst* array = entryAlloca(b_.getInt32Ty(), allocas_.getInt64(n), "bools");
    for (size_t i = 0; i < n; ++i) {
      Value* v = slots[i] ? slots[i]->value : b_.getInt32(elements[i].boolValue());
      b_.CreateStore(v, b_.CreateConstInBoundsGEP1_64(b_.getInt32Ty(), array, i));
    }
    shim_.call(b_, ShimFn::PushBoolList, {stack_, array, count});
    return llvm::Error::success();
  }
  if (anyFloat) {
    llvm::AllocaInst* array = entryAlloca(b_.getDoubleTy(), allocas_.getInt64(n), "floats");
    for (size_t i = 0; i < n; ++i) {
      Value* v;
      if (slots[i])
        v = slots[i]->kind == SlotKind::Int ? b_.CreateSIToFP(slots[i]->value, b_.getDoubleTy())
                                            : slots[i]->value;
      else if (elements[i].kind() == ir::Argument::Kind::Float)
        v = llvm::ConstantFP::get(b_.getDoubleTy(), elements[i].floatValue());
      else {
        llvm::Expected<Value*> iv = emitSym(&node, elements[i].symValue());
        if (!iv)
          return iv.takeError();
        v = b_.CreateSIToFP(*iv, b_.getDoubleTy());
      }
      b_.CreateStore(v, b_.CreateConstInBoundsGEP1_64(b_.getDoubleTy(), array, i));
    }
    shim_.call(b_, ShimFn::PushDoubleList, {stack_, array, count});
    return llvm::Error::success();
  }
  // Ints, or the empty list.
  Value* array = llvm::ConstantPointerNull::get(b_.getPtrTy());
  if (n) {
    array = entryAlloca(b_.getInt64Ty(), allocas_.getInt64(n), "ints");
    for (size_t i = 0; i < n; ++i) {
      Value* v;
      if (slots[i]) {
        v = slots[i]->value;
      } else {
        llvm::Expected<Value*> iv = emitSym(&node, elements[i].symValue());
        if (!iv)
          return iv.takeError();
        v = *iv;
      }
      b_.CreateStore(v, b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), array, i));
    }
  }
  shim_.call(b_, ShimFn::PushIntList, {stack_, array, count});
  return llvm::Error::success();
}

llvm::Error GraphEmitter::pushWrappedNumber(const ir::Node& node, const ir::Argument& arg) {
  if (arg.isValue()) {
    SlotKind kind = SlotKind::None;
    llvm::Expected<Value*> value = scalarOperand(node, arg, kind);
    if (!value)
      return value.takeError();
    ShimFn push = kind == SlotKind::Double ? ShimFn::PushWrappedDouble
                  : kind == SlotKind::Bool ? ShimFn::PushWrappedBool
                                           : ShimFn::PushWrappedInt;
    shim_.call(b_, push, {stack_, *value});
    return llvm::Error::success();
  }
  switch (arg.kind()) {
  case ir::Argument::Kind::Float:
    shim_.call(b_, ShimFn::PushWrappedDouble,
               {stack_, llvm::ConstantFP::get(b_.getDoubleTy(), arg.floatValue())});
    return llvm::Error::success();
  case ir::Argument::Kind::Bool:
    shim_.call(b_, ShimFn::PushWrappedBool, {stack_, b_.getInt32(arg.boolValue())});
    return llvm::Error::success();
  case ir::Argument::Kind::Complex:
    shim_.call(b_, ShimFn::PushWrappedComplex,
               {stack_, llvm::ConstantFP::get(b_.getDoubleTy(), arg.complexValue().real()),
                llvm::ConstantFP::get(b_.getDoubleTy(), arg.complexValue().imag())});
    return llvm::Error::success();
  default: {
    llvm::Expected<Value*> v = emitSym(&node, arg.symValue());
    if (!v)
      return v.takeError();
    shim_.call(b_, ShimFn::PushWrappedInt, {stack_, *v});
    return llvm::Error::success();
  }
  }
}

llvm::Error GraphEmitter::pushArgument(const ir::Node& node, const ir::Argument& arg) {
  using Kind = ir::Argument::Kind;
  switch (arg.kind()) {
  case Kind::Value: {
    llvm::Expected<const Slot*> slotOrError = slotOf(&node, arg.valueRef());
    if (!slotOrError) {
      // A whole list result passed on (`aten::cat(%parts, 1)`) is a tensor
      // list of its elements.
      const ir::Node* def = arg.valueRef().node;
      if (!arg.valueRef().index && def->type().kind() == ir::Type::Kind::List) {
        llvm::consumeError(slotOrError.takeError());
        std::vector<ir::Argument> elements;
        for (unsigned i = 0; i < def->type().elements().size(); ++i)
          elements.push_back(ir::Argument::value(const_cast<ir::Node*>(def), i));
        return pushList(node, elements);
      }
      return slotOrError.takeError();
    }
    const Slot& slot = **slotOrError;
    switch (slot.kind) {
    case SlotKind::Tensor:
      shim_.call(b_, ShimFn::PushTensor, {stack_, tensorHandle(slot)});
      break;
    case SlotKind::Int:
      shim_.call(b_, ShimFn::PushSymInt, {stack_, slot.value});
      break;
    case SlotKind::Double:
      shim_.call(b_, ShimFn::PushDouble, {stack_, slot.value});
      break;
    case SlotKind::Bool:
      shim_.call(b_, ShimFn::PushBool, {stack_, slot.value});
      break;
    case SlotKind::None:
      shim_.call(b_, ShimFn::PushNone, {stack_});
      break;
    }
    return llvm::Error::success();
  }
  case Kind::Sym: {
    ir::SymExpr e = arg.symValue();
    if (e.isConstant()) {
      shim_.call(b_, ShimFn::PushInt, {stack_, b_.getInt64(e.constantValue())});
      return llvm::Error::success();
    }
    llvm::Expected<Value*> v = emitSym(&node, e);
    if (!v)
      return v.takeError();
    shim_.call(b_, ShimFn::PushSymInt, {stack_, *v});
    return llvm::Error::success();
  }
  case Kind::Float:
    shim_.call(b_, ShimFn::PushDouble,
               {stack_, llvm::ConstantFP::get(b_.getDoubleTy(), arg.floatValue())});
    return llvm::Error::success();
  case Kind::Complex:
    shim_.call(b_, ShimFn::PushComplex,
               {stack_, llvm::ConstantFP::get(b_.getDoubleTy(), arg.complexValue().real()),
                llvm::ConstantFP::get(b_.getDoubleTy(), arg.complexValue().imag())});
    return llvm::Error::success();
  case Kind::Bool:
    shim_.call(b_, ShimFn::PushBool, {stack_, b_.getInt32(arg.boolValue())});
    return llvm::Error::success();
  case Kind::None:
    shim_.call(b_, ShimFn::PushNone, {stack_});
    return llvm::Error::success();
  case Kind::String:
    shim_.call(b_, ShimFn::PushString, {stack_, shim_.string(arg.stringValue(), "arg.str")});
    return llvm::Error::success();
  case Kind::DType:
    shim_.call(b_, ShimFn::PushDType, {stack_, b_.getInt32(dtypeNumber(arg.dtypeValue()))});
    return llvm::Error::success();
  case Kind::Device: {
    ir::Device device = arg.deviceValue();
    if (device.kind == ir::DeviceKind::Meta)
      return unsupported(&node, "the meta device as an argument");
    int type = device.kind == ir::DeviceKind::CPU ? DYNC_DEVICE_CPU : DYNC_DEVICE_CUDA;
    shim_.call(b_, ShimFn::PushDevice, {stack_, b_.getInt32(type), b_.getInt32(device.index)});
    return llvm::Error::success();
  }
  case Kind::Layout:
    // Only strided's c10 number (0) is settled enough to embed; the sparse
    // layouts have been renumbered across releases.
    if (arg.layoutValue() != ir::Layout::Strided)
      return unsupported(&node, "the layout " + ir::spelling(arg.layoutValue()).str());
    shim_.call(b_, ShimFn::PushLayout, {stack_, b_.getInt32(0)});
    return llvm::Error::success();
  case Kind::MemoryFormat:
    shim_.call(b_, ShimFn::PushMemoryFormat,
               {stack_, b_.getInt32(memoryFormatNumber(arg.memoryFormatValue()))});
    return llvm::Error::success();
  case Kind::List:
  case Kind::Tuple:
    // ATen schemas take lists; a tuple literal (`(1, 1)`) is Python's
    // spelling of the same int[].
    return pushList(node, arg.elements());
  case Kind::Dict:
  case Kind::Object:
  case Kind::Named:
    // Only a graph's return value holds these (the verifier checks).
    break;
  }
  return unsupported(&node, "this argument");
}

llvm::Error GraphEmitter::takeResults(const ir::Node& node, Value* stack, llvm::BasicBlock* fail) {
  NodeValues& values = values_[&node];
  const ir::Type& type = node.type();

  auto scalarKind = [](const ir::Type& t) -> std::optional<SlotKind> {
    switch (t.kind()) {
    case ir::Type::Kind::Tensor:
      return SlotKind::Tensor;
    case ir::Type::Kind::Int:
      return SlotKind::Int;
    case ir::Type::Kind::Float:
      return SlotKind::Double;
    case ir::Type::Kind::Bool:
      return SlotKind::Bool;
    case ir::Type::Kind::None:
      return SlotKind::None;
    default:
      return std::nullopt;
    }
  };

  // Takes stack result `index` of kind `kind` into a new slot.
  auto take = [&](SlotKind kind, unsigned index, Value* cell) -> Slot {
    Slot slot;
    slot.kind = kind;
    Value* status = nullptr;
    switch (kind) {
    case SlotKind::Tensor:
      slot.cell = cell;
      status = shim_.call(b_, ShimFn::TakeTensor, {stack, b_.getInt64(index), cell}, "took");
      break;
    case SlotKind::Int: {
      llvm::AllocaInst* tmp = entryAlloca(b_.getInt64Ty(), nullptr, "int.result");
      status = shim_.call(b_, ShimFn::TakeInt, {stack, b_.getInt64(index), tmp}, "took");
      slot.value = b_.CreateLoad(b_.getInt64Ty(), tmp, node.name());
      break;
    }
    case SlotKind::Double: {
      llvm::AllocaInst* tmp = entryAlloca(b_.getDoubleTy(), nullptr, "float.result");
      status = shim_.call(b_, ShimFn::TakeDouble, {stack, b_.getInt64(index), tmp}, "took");
      slot.value = b_.CreateLoad(b_.getDoubleTy(), tmp, node.name());
      break;
    }
    case SlotKind::Bool: {
      llvm::AllocaInst* tmp = entryAlloca(b_.getInt32Ty(), nullptr, "bool.result");
      status = shim_.call(b_, ShimFn::TakeBool, {stack, b_.getInt64(index), tmp}, "took");
      slot.value = b_.CreateLoad(b_.getInt32Ty(), tmp, node.name());
      break;
    }
    case SlotKind::None:
      return slot;
    }
    checkOrFail(b_.CreateICmpNE(status, b_.getInt32(DYNC_OK)), fail, "took." + node.name());
    return slot;
  };

  if (std::optional<SlotKind> kind = scalarKind(type)) {
    Value* cell = *kind == SlotKind::Tensor ? newCell("cell." + node.name()) : nullptr;
    values.slots.push_back(take(*kind, 0, cell));
    return llvm::Error::success();
  }
  values.sequence = true;
  if (type.kind() == ir::Type::Kind::Tuple) {
    for (unsigned i = 0; i < type.elements().size(); ++i) {
      std::optional<SlotKind> kind = scalarKind(type.elements()[i]);
      if (!kind)
        return unsupported(&node, "a result of type " + type.str());
      Value* cell = *kind == SlotKind::Tensor
                        ? newCell("cell." + node.name() + "." + llvm::Twine(i))
                        : nullptr;
      values.slots.push_back(take(*kind, i, cell));
    }
    return llvm::Error::success();
  }
  // A list result is one Tensor[] on the stack; its length is in the type.
  for (const ir::Type& element : type.elements())
    if (!element.isTensor())
      return unsupported(&node, "a result of type " + type.str());
  unsigned n = type.elements().size();
  llvm::AllocaInst* array = entryAlloca(b_.getPtrTy(), allocas_.getInt64(n), "list." + node.name());
  for (unsigned i = 0; i < n; ++i) {
    Value* cell = allocas_.CreateConstInBoundsGEP1_64(allocas_.getPtrTy(), array, i);
    allocas_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), cell);
    allCells_.push_back(cell);
    Slot slot;
    slot.kind = SlotKind::Tensor;
    slot.cell = cell;
    values.slots.push_back(slot);
  }
  llvm::AllocaInst* count = entryAlloca(b_.getInt64Ty(), nullptr, "list.count");
  Value* status = shim_.call(b_, ShimFn::TakeTensorList,
                             {stack, b_.getInt64(0), array, b_.getInt64(n), count}, "took");
  checkOrFail(b_.CreateICmpNE(status, b_.getInt32(DYNC_OK)), fail, "took." + node.name());
  llvm::BasicBlock* wrongLength =
      failBlock(nodePrefix(node) + "the operator returned a list of another length than the " +
                    llvm::Twine(n) + " tensors its type says",
                nullptr);
  checkOrFail(b_.CreateICmpNE(b_.CreateLoad(b_.getInt64Ty(), count), b_.getInt64(n)), wrongLength,
              "length.ok");
  return llvm::Error::success();
}

llvm::Error GraphEmitter::emitCall(const ir::Node& node, unsigned position) {
  // Arguments in schema order: positional ones first, keywords at their
  // schema positions, the gaps filled with the schema's defaults.
  std::vector<const ir::Argument*> ordered;
  for (const ir::Argument& arg : node.args())
    ordered.push_back(&arg);
  for (const ir::KeywordArgument& kw : node.kwargs()) {
    if (!schemas_ || !schemas_->contains(node.op()))
      return unsupported(&node, "the keyword argument '" + kw.name +
                                    "' without the operator's schema (give it with --schemas)");
    std::optional<unsigned> index = schemas_->position(node.op(), kw.name);
    if (!index)
      return llvm::createStringError("graph @" + graph_.name() + ", %" + node.name() + " = " +
                                     node.op() + ": the operator has no argument named '" +
                                     kw.name + "'" + node.location().suffix());
    if (*index < node.args().size() || (*index < ordered.size() && ordered[*index]))
      return llvm::createStringError("graph @" + graph_.name() + ", %" + node.name() + " = " +
                                     node.op() + ": argument '" + kw.name + "' is given twice" +
                                     node.location().suffix());
    if (ordered.size() <= *index)
      ordered.resize(*index + 1, nullptr);
    ordered[*index] = &kw.value;
  }

  // torch's Python binding wraps a number passed for a Tensor parameter
  // (`aten::mul.Tensor(%x, 0.25)`) into a wrapped-number tensor, which takes
  // part in type promotion as a Python scalar; the shim builds the same.
  std::vector<bool> wrapped(ordered.size(), false);
  for (unsigned i = 0; i < ordered.size() && schemas_; ++i) {
    std::optional<llvm::StringRef> type = schemas_->type(node.op(), i);
    const ir::Argument* arg = ordered[i];
    // A number value (a float or bool computed from tensor data) too.
    const ir::Type* valueType = arg && arg->isValue() && arg->valueRef().node
                                    ? arg->valueRef().node->resultType(arg->valueRef().index)
                                    : nullptr;
    bool number = valueType && (valueType->kind() == ir::Type::Kind::Float ||
                                valueType->kind() == ir::Type::Kind::Bool ||
                                valueType->kind() == ir::Type::Kind::Int);
    wrapped[i] =
        type && (*type == "Tensor" || *type == "Tensor?") && arg &&
        (arg->kind() == ir::Argument::Kind::Sym || arg->kind() == ir::Argument::Kind::Float ||
         arg->kind() == ir::Argument::Kind::Bool || arg->kind() == ir::Argument::Kind::Complex ||
         number);
  }

  llvm::GlobalVariable* op = shim_.op(node.op());
  for (auto [arg, wrap] : llvm::zip_equal(ordered, wrapped)) {
    if (!arg) {
      shim_.call(b_, ShimFn::PushDefault, {stack_});
      continue;
    }
    llvm::Error error = wrap ? pushWrappedNumber(node, *arg) : pushArgument(node, *arg);
    if (error)
      return error;
  }
  Value* handle = b_.CreateLoad(b_.getPtrTy(), op, "op");
  Value* status = shim_.call(b_, ShimFn::OpCall, {handle, stack_}, "status." + node.name());
  // A run-time check capture recorded for a branch that only raises
  // (`aten::_assert_async.msg(%ok, "ValueError: ...")`) fails with its own
  // text, which the runtime raises as that exception; its one-element
  // tensor was checked while capturing, so failing means the check failed.
  bool check = node.op() == "aten::_assert_async.msg" && node.args().size() == 2 &&
               node.args()[1].kind() == ir::Argument::Kind::String;
  llvm::BasicBlock* fail = check ? checkFailBlock(node, node.args()[1].stringValue())
                                 : failBlock(nodePrefix(node), nullptr, /*shimError=*/true);
  checkOrFail(b_.CreateICmpNE(status, b_.getInt32(DYNC_OK)), fail, "called." + node.name());
  if (llvm::Error error = takeResults(node, stack_, fail))
    return error;
  if (llvm::Error error = bindUnbacked(node))
    return error;
  releaseDead(node, position);
  return llvm::Error::success();
}

llvm::BasicBlock* GraphEmitter::checkFailBlock(const ir::Node& node, llvm::StringRef text) {
  std::optional<llvm::StringRef> what = ir::fallBackCheckWhat(text);
  if (!what)
    return failBlock("", shim_.string(text, "check"), /*shimError=*/false,
                     DYNC_ARTIFACT_CHECK_FAILED);
  // Eager raises an exception capture could not make again: the original
  // code raises it, while nothing the caller sees is done.
  std::string done = observableBefore(graph_, node);
  if (done.empty())
    return failBlock(*what + "; ran the original code", nullptr, /*shimError=*/false,
                     DYNC_ARTIFACT_FALL_BACK);
  return failBlock("RuntimeError: " + *what +
                       "; the graph cannot fall back to the original code, which raises "
                       "it, because " +
                       done + " before it",
                   nullptr, /*shimError=*/false, DYNC_ARTIFACT_CHECK_FAILED);
}

void GraphEmitter::releaseDead(const ir::Node& node, unsigned position) {
  auto releaseIfDead = [&](const ir::Node* def, unsigned i, const Slot& slot) {
    if (slot.kind != SlotKind::Tensor || slot.borrowed || returned_.count({def, i}))
      return;
    auto it = lastUse_.find({def, i});
    unsigned last = it == lastUse_.end() ? 0 : it->second;
    if (last != position && !(def == &node && last == 0))
      return;
    shim_.call(b_, ShimFn::TensorRelease, {b_.CreateLoad(b_.getPtrTy(), slot.cell, "dead")});
    b_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), slot.cell);
  };
  llvm::SmallPtrSet<const ir::Node*, 8> seen;
  node.forEachUse([&](const ir::ValueRef& ref) {
    if (!ref.node->isCall() || !seen.insert(ref.node).second)
      return;
    const NodeValues& used = values_[ref.node];
    for (unsigned i = 0; i < used.slots.size(); ++i)
      releaseIfDead(ref.node, i, used.slots[i]);
  });
  const NodeValues& own = values_[&node];
  for (unsigned i = 0; i < own.slots.size(); ++i)
    releaseIfDead(&node, i, own.slots[i]);
}

llvm::Expected<GraphSignature> GraphEmitter::emit(llvm::StringRef functionName) {
  if (llvm::Error error = classifyInputs())
    return error;
  const ir::Node* output = graph_.output();
  if (!output)
    return unsupported(nullptr, "a graph without a return");
  GraphSignature signature;
  signature.numInputs = tensorInputs_.size();
  signature.numIntInputs = intInputs_.size();
  // The tensors in the returned value are the outputs; the rewritten
  // bytecode rebuilds the rest of the value around them.
  std::vector<ir::ValueRef> leaves = ir::outputLeaves(graph_);
  signature.numOutputs = leaves.size();
  computeLastUses();
  if (llvm::Error error = planBuffers())
    return error;

  llvm::PointerType* ptr = b_.getPtrTy();
  llvm::Type* i64 = b_.getInt64Ty();
  auto* type =
      llvm::FunctionType::get(b_.getInt32Ty(), {ptr, i64, ptr, i64, ptr, i64, ptr, i64}, false);
  fn_ = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, functionName,
                               shim_.module());
  functionName_ = functionName.str();
  const char* argNames[] = {"inputs",  "num_inputs",  "int_inputs", "num_int_inputs",
                            "outputs", "num_outputs", "error",      "error_size"};
  for (unsigned i = 0; i < 8; ++i)
    fn_->getArg(i)->setName(argNames[i]);

  auto* entry = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  auto* body = llvm::BasicBlock::Create(ctx_, "body", fn_);
  cleanup_ = llvm::BasicBlock::Create(ctx_, "cleanup", fn_);
  allocas_.SetInsertPoint(entry);
  status_ = allocas_.CreateAlloca(b_.getInt32Ty(), nullptr, "status");
  allocas_.CreateStore(b_.getInt32(DYNC_ARTIFACT_ERROR), status_);
  stackCell_ = allocas_.CreateAlloca(ptr, nullptr, "stack.cell");
  allocas_.CreateStore(llvm::ConstantPointerNull::get(b_.getPtrTy()), stackCell_);
  b_.SetInsertPoint(body);

  // The counts are the caller's claim; a mismatch fails before anything is
  // read, with every output slot the caller passed set to NULL.
  {
    Value* wrong = b_.CreateOr(
        b_.CreateOr(b_.CreateICmpNE(fn_->getArg(1), b_.getInt64(signature.numInputs)),
                    b_.CreateICmpNE(fn_->getArg(3), b_.getInt64(signature.numIntInputs))),
        b_.CreateICmpNE(fn_->getArg(5), b_.getInt64(signature.numOutputs)));
    auto* clear = llvm::BasicBlock::Create(ctx_, "arity.wrong", fn_);
    auto* clearLoop = llvm::BasicBlock::Create(ctx_, "arity.clear", fn_);
    auto* clearDone = llvm::BasicBlock::Create(ctx_, "arity.report", fn_);
    auto* next = llvm::BasicBlock::Create(ctx_, "arity.ok", fn_);
    b_.CreateCondBr(wrong, clear, next);
    b_.SetInsertPoint(clear);
    b_.CreateCondBr(b_.CreateICmpEQ(fn_->getArg(4), llvm::ConstantPointerNull::get(ptr)), clearDone,
                    clearLoop);
    b_.SetInsertPoint(clearLoop);
    llvm::PHINode* i = b_.CreatePHI(i64, 2, "i");
    i->addIncoming(b_.getInt64(0), clear);
    Value* inRange = b_.CreateICmpULT(i, fn_->getArg(5));
    auto* store = llvm::BasicBlock::Create(ctx_, "arity.clear.one", fn_);
    b_.CreateCondBr(inRange, store, clearDone);
    b_.SetInsertPoint(store);
    b_.CreateStore(llvm::ConstantPointerNull::get(ptr), b_.CreateGEP(ptr, fn_->getArg(4), i));
    i->addIncoming(b_.CreateAdd(i, b_.getInt64(1)), store);
    b_.CreateBr(clearLoop);
    b_.SetInsertPoint(clearDone);
    std::string message;
    llvm::raw_string_ostream os(message);
    os << "graph " << graph_.name() << " takes " << signature.numInputs << " tensor inputs and "
       << signature.numIntInputs << " int inputs and returns " << signature.numOutputs
       << " tensors; called with other counts";
    b_.CreateCall(shim_.setErrorFunction(),
                  {fn_->getArg(6), fn_->getArg(7), shim_.string(message, "msg"), shim_.string("")});
    b_.CreateRet(b_.getInt32(DYNC_ARTIFACT_ERROR));
    b_.SetInsertPoint(next);
    for (unsigned k = 0; k < signature.numOutputs; ++k)
      b_.CreateStore(llvm::ConstantPointerNull::get(ptr),
                     b_.CreateConstInBoundsGEP1_64(ptr, fn_->getArg(4), k));
  }

  // Inputs: tensors are borrowed handles. Their ranks are checked here
  // because symbolic sizes are read from them; everything else about them
  // is the guards' business.
  for (unsigned k = 0; k < tensorInputs_.size(); ++k) {
    const ir::Node* input = tensorInputs_[k];
    Value* handle =
        b_.CreateLoad(ptr, b_.CreateConstInBoundsGEP1_64(ptr, fn_->getArg(0), k), input->name());
    llvm::BasicBlock* isNull = failBlock(
        "graph " + graph_.name() + ": tensor input %" + input->name() + " is NULL", nullptr);
    checkOrFail(b_.CreateICmpEQ(handle, llvm::ConstantPointerNull::get(ptr)), isNull, "input.ok");
    Value* dim = shim_.call(b_, ShimFn::TensorDim, {handle}, "dim." + input->name());
    size_t rank = input->type().sizes().size();
    llvm::BasicBlock* wrongRank =
        failBlock("graph " + graph_.name() + ": tensor input %" + input->name() + " must have " +
                      llvm::Twine(rank) + " dimensions",
                  nullptr);
    checkOrFail(b_.CreateICmpNE(dim, b_.getInt64(rank)), wrongRank, "rank.ok");
    Slot slot;
    slot.kind = SlotKind::Tensor;
    slot.value = handle;
    slot.borrowed = true;
    values_[input].slots.push_back(slot);
  }
  for (unsigned k = 0; k < intInputs_.size(); ++k) {
    Slot slot;
    slot.kind = SlotKind::Int;
    slot.value = b_.CreateLoad(i64, b_.CreateConstInBoundsGEP1_64(i64, fn_->getArg(2), k),
                               intInputs_[k]->name());
    values_[intInputs_[k]].slots.push_back(slot);
  }

  // One stack serves every call: each push after a call starts the next.
  stack_ = shim_.call(b_, ShimFn::StackNew, {}, "stack");
  b_.CreateStore(stack_, stackCell_);
  checkOrFail(b_.CreateICmpEQ(stack_, llvm::ConstantPointerNull::get(ptr)),
              failBlock("graph " + graph_.name() + ": out of memory", nullptr), "stack.ok");

  unsigned position = 0;
  for (const ir::Node& node : graph_.nodes()) {
    ++position;
    if (!node.isCall())
      continue;
    noteGeneratorUse(node);
    llvm::Error error = node.isKernelCall()         ? emitKernelCall(node, position)
                        : ir::isCondCall(node)      ? emitCond(node, position)
                        : ir::isWhileLoopCall(node) ? emitWhileLoop(node, position)
                        : ir::scalarOpOf(node)      ? emitScalarOp(node)
                        : ir::isAutogradFunctionCall(node)
                            ? emitAutogradFunctionCall(node, position)
                            : emitCall(node, position);
    if (error)
      return error;
  }

  // Outputs are new references; the cleanup below then drops the graph's
  // own references, so a returned intermediate changes hands without a copy.
  // Returned numbers become tensors first, since that may fail, and nothing
  // may fail once an output is written.
  std::vector<Value*> handles;
  for (const ir::ValueRef& leaf : leaves) {
    llvm::Expected<const Slot*> slot = slotOf(output, leaf);
    if (!slot)
      return slot.takeError();
    if ((*slot)->kind == SlotKind::Double || (*slot)->kind == SlotKind::Bool ||
        (*slot)->kind == SlotKind::Int) {
      llvm::Expected<Value*> made = scalarTensor(**slot);
      if (!made)
        return made.takeError();
      handles.push_back(*made);
    } else if ((*slot)->kind == SlotKind::Tensor) {
      handles.push_back(nullptr);
    } else {
      return unsupported(output, "returning a non-tensor value");
    }
  }
  for (unsigned k = 0; k < leaves.size(); ++k) {
    Value* handle = handles[k];
    if (!handle)
      handle = tensorHandle(**slotOf(output, leaves[k]));
    shim_.call(b_, ShimFn::TensorRetain, {handle});
    b_.CreateStore(handle, b_.CreateConstInBoundsGEP1_64(ptr, fn_->getArg(4), k));
  }
  b_.CreateStore(b_.getInt32(DYNC_ARTIFACT_OK), status_);
  b_.CreateBr(cleanup_);
  finishGeneratorSave();

  // Success and failure meet here: whatever cells still hold is released
  // (releasing NULL does nothing), and the stack is freed.
  b_.SetInsertPoint(cleanup_);
  for (Value* cell : allCells_)
    shim_.call(b_, ShimFn::TensorRelease, {b_.CreateLoad(ptr, cell, "held")});
  Value* stack = b_.CreateLoad(ptr, stackCell_, "stack");
  auto* freeStack = llvm::BasicBlock::Create(ctx_, "free.stack", fn_);
  auto* done = llvm::BasicBlock::Create(ctx_, "done", fn_);
  b_.CreateCondBr(b_.CreateICmpEQ(stack, llvm::ConstantPointerNull::get(ptr)), done, freeStack);
  b_.SetInsertPoint(freeStack);
  shim_.call(b_, ShimFn::StackFree, {stack});
  b_.CreateBr(done);
  b_.SetInsertPoint(done);
  b_.CreateRet(b_.CreateLoad(b_.getInt32Ty(), status_, "result"));

  allocas_.CreateBr(body);
  // Keep the blocks in reading order: the cleanup after the main path.
  cleanup_->moveAfter(&*std::prev(fn_->end(), 1));
  freeStack->moveAfter(cleanup_);
  done->moveAfter(freeStack);
  return signature;
}

} // namespace dync::codegen::detail

llvm::Expected<GraphSignature> dync::codegen::emitGraphFunction(ShimModule& shim,
                                                                const ir::Graph& graph,
                                                                llvm::StringRef functionName,
                                                                const OpSchemas* schemas) {
  detail::GraphEmitter emitter(shim, graph, schemas);
  llvm::Expected<GraphSignature> signature = emitter.emit(functionName);
  if (!signature) {
    if (llvm::Function* partial = shim.module().getFunction(functionName))
      partial->eraseFromParent();
  }
  return signature;
}
