//===- GuardCodegen.cpp - A graph's guards to a native guard function -----===//
//
// The guard function is one chain of checks: each either continues in a new
// block or branches to the single `miss` block, which stores the failing
// check's reason and returns 0. Everything computed before a check therefore
// dominates every later one, which is what lets a source's object, a
// tensor's sizes and a symbol's value be computed once and reused.
//
//===----------------------------------------------------------------------===//

#include "codegen/GuardCodegen.h"

#include "codegen/SymLowering.h"
#include "ir/BigIntGuard.h"
#include "runtime/artifact/dync_artifact.h"
#include "runtime/shim/dync_shim.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Support/raw_ostream.h"

#include <limits>
#include <string>
#include <vector>

using namespace dync;
using namespace dync::codegen;
using llvm::Value;

static_assert(
    static_cast<int>(ir::GlobalState::DeterministicAlgorithms) ==
            DYNC_GLOBAL_DETERMINISTIC_ALGORITHMS &&
        static_cast<int>(ir::GlobalState::FlushDenormal) == DYNC_GLOBAL_FLUSH_DENORMAL &&
        static_cast<int>(ir::GlobalState::TorchFunctionModes) == DYNC_GLOBAL_TORCH_FUNCTION_MODES &&
        static_cast<int>(ir::GlobalState::TorchDispatchModes) == DYNC_GLOBAL_TORCH_DISPATCH_MODES &&
        static_cast<int>(ir::GlobalState::DeterministicFill) == DYNC_GLOBAL_DETERMINISTIC_FILL &&
        static_cast<int>(ir::GlobalState::Mkldnn) == DYNC_GLOBAL_MKLDNN &&
        static_cast<int>(ir::GlobalState::MkldnnDeterministic) ==
            DYNC_GLOBAL_MKLDNN_DETERMINISTIC &&
        static_cast<int>(ir::GlobalState::Nnpack) == DYNC_GLOBAL_NNPACK &&
        static_cast<int>(ir::GlobalState::CpuFp16Reduction) == DYNC_GLOBAL_CPU_FP16_REDUCTION &&
        static_cast<int>(ir::GlobalState::Fp32PrecisionMatmul) ==
            DYNC_GLOBAL_FP32_PRECISION_MATMUL &&
        static_cast<int>(ir::GlobalState::Fp32PrecisionConv) == DYNC_GLOBAL_FP32_PRECISION_CONV &&
        static_cast<int>(ir::GlobalState::Fp32PrecisionRnn) == DYNC_GLOBAL_FP32_PRECISION_RNN &&
        static_cast<int>(ir::GlobalState::FlashSdp) == DYNC_GLOBAL_FLASH_SDP &&
        static_cast<int>(ir::GlobalState::MathSdp) == DYNC_GLOBAL_MATH_SDP &&
        static_cast<int>(ir::GlobalState::MathSdpReduction) == DYNC_GLOBAL_MATH_SDP_REDUCTION,
    "a global_state guard names its item by the runtime's number");

namespace {

/// The dync_torch_constant kind and the name dync_py_torch_constant_is
/// compares for a dtype, device, layout or memory format constant: torch's
/// own names (`float16`, `cuda:0`, `torch.strided`, `torch.channels_last`).
std::pair<int, std::string> torchConstantName(const ir::Argument& constant) {
  switch (constant.kind()) {
  case ir::Argument::Kind::DType: {
    static constexpr const char* names[] = {"float32", "float64", "float16",   "bfloat16",
                                            "int64",   "int32",   "int16",     "int8",
                                            "uint8",   "bool",    "complex64", "complex128"};
    ir::DType dtype = constant.dtypeValue();
    static_assert(std::size(names) == static_cast<size_t>(ir::DType::C128) + 1,
                  "one torch name per dtype, in ir::DType's order");
    return {DYNC_TORCH_DTYPE, names[static_cast<size_t>(dtype)]};
  }
  case ir::Argument::Kind::Device: {
    std::string text;
    llvm::raw_string_ostream os(text);
    constant.deviceValue().print(os);
    return {DYNC_TORCH_DEVICE, text};
  }
  case ir::Argument::Kind::Layout:
    return {DYNC_TORCH_LAYOUT, "torch." + ir::spelling(constant.layoutValue()).str()};
  default:
    return {DYNC_TORCH_MEMORY_FORMAT, "torch." + ir::spelling(constant.memoryFormatValue()).str()};
  }
}

/// Appends \p key encoded as the shim's keyed dict readers take it
/// (dync_shim.h): a tag, then the value, numbers in the host's byte order.
void encodeKey(const ir::DictKey& key, std::string& out) {
  auto number = [&](const auto& value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof(value));
  };
  switch (key.kind) {
  case ir::DictKey::Kind::Int:
    out += 'i';
    number(key.intValue);
    return;
  case ir::DictKey::Kind::Str:
    out += 's';
    number(static_cast<int64_t>(key.strValue.size()));
    out += key.strValue;
    return;
  case ir::DictKey::Kind::Bool:
    out += 'b';
    out += key.boolValue ? '\1' : '\0';
    return;
  case ir::DictKey::Kind::Float:
    out += 'f';
    number(key.floatValue);
    return;
  case ir::DictKey::Kind::None:
    out += 'n';
    return;
  case ir::DictKey::Kind::Tuple:
    out += 't';
    number(static_cast<int64_t>(key.elements.size()));
    for (const ir::DictKey& element : key.elements)
      encodeKey(element, out);
    return;
  }
}

/// Where a symbol's value was read: a dimension of a guarded tensor.
struct Binding {
  Value* value = nullptr;
  /// The text form of the tensor guard that bound it, and the dimension.
  std::string guardText;
  unsigned dim = 0;
  /// `L['x'].size(0)`, or `L['n']` for an int.
  std::string where;
  /// Bound by an int guard rather than a tensor's dimension.
  bool isInt = false;
  /// Bound by a sparse tensor's nnz rather than a dimension.
  bool isNnz = false;
};

/// A size or stride whose expected expression mentions a symbol that only a
/// later tensor guard binds; checked once every tensor guard has run.
struct DeferredCheck {
  Value* actual;
  ir::SymExpr expected;
  std::string guardText;
  std::string reason;
};

template <typename T> std::string textOf(const T& printable) {
  std::string text;
  llvm::raw_string_ostream os(text);
  printable.print(os);
  return text;
}

class GuardEmitter {
public:
  GuardEmitter(ShimModule& shim, const ir::Graph& graph)
      : shim_(shim), graph_(graph), ctx_(shim.context()), b_(ctx_) {}

  llvm::Expected<llvm::Function*> emit(llvm::StringRef functionName);

private:
  llvm::Error error(const llvm::Twine& message) const {
    return llvm::createStringError("guards @" + graph_.name() + ": " + message);
  }

  /// Every symbol a check needs must be bound by some tensor guard's size;
  /// there is nowhere else at run time to read it from.
  llvm::Error checkSymbolsAreBound() const;
  /// Continues when \p ok is true; otherwise the guard misses with \p reason.
  void require(Value* ok, const llvm::Twine& reason);
  /// The object at \p source (borrowed), reading each step once per function.
  llvm::Expected<Value*> read(const ir::Source& source, llvm::StringRef guardText);
  /// The value of \p expr with Python's integer semantics; overflow and
  /// division by zero are misses that name \p context.
  llvm::Expected<Value*> sym(ir::SymExpr expr, llvm::StringRef context);
  bool isBound(ir::SymExpr expr) const;
  /// Requires \p actual == \p expected now, or after every tensor guard if
  /// \p expected mentions a symbol not bound yet.
  llvm::Error checkEquals(Value* actual, ir::SymExpr expected, const std::string& guardText,
                          std::string reason);

  llvm::Error emitGuard(const ir::Guard& guard);
  llvm::Error emitTensor(const ir::Guard& guard, Value* object, const std::string& text);
  /// A sparse COO tensor's sparse_dim, nnz (binding its symbol) and
  /// is_coalesced, from the three int64s dync_py_sparse_coo_info wrote.
  llvm::Error emitSparseFields(const ir::Type& type, Value* fields, const std::string& text,
                               const std::string& source);
  llvm::Error emitEquals(const ir::Guard& guard, Value* object, const std::string& text);
  llvm::Error emitKeys(const ir::Guard& guard, Value* object, const std::string& text);
  llvm::Error emitSymInt(const ir::Guard& guard, Value* object, const std::string& text);
  llvm::Error emitAssumptions();
  /// The dync_tensor_info every tensor guard reads into, in turn: each
  /// guard loads the fields it checks before the next one calls.
  Value* infoAlloca() {
    if (!info_) {
      llvm::BasicBlock& entry = fn_->getEntryBlock();
      llvm::IRBuilder<> allocas(&entry, entry.begin());
      info_ = allocas.CreateAlloca(shim_.tensorInfoType(), nullptr, "info");
    }
    return info_;
  }

  /// The three int64s dync_py_sparse_coo_info fills, shared like info.
  Value* sparseAlloca() {
    if (!sparse_) {
      llvm::BasicBlock& entry = fn_->getEntryBlock();
      llvm::IRBuilder<> allocas(&entry, entry.begin());
      sparse_ = allocas.CreateAlloca(b_.getInt64Ty(), b_.getInt32(3), "sparse");
    }
    return sparse_;
  }

  ShimModule& shim_;
  const ir::Graph& graph_;
  llvm::LLVMContext& ctx_;
  llvm::IRBuilder<> b_;
  llvm::Function* fn_ = nullptr;
  llvm::AllocaInst* info_ = nullptr;
  llvm::AllocaInst* sparse_ = nullptr;
  llvm::BasicBlock* miss_ = nullptr;
  llvm::PHINode* missReason_ = nullptr;
  llvm::MDNode* unlikely_ = nullptr;

  llvm::StringMap<Value*> objects_;
  llvm::StringMap<Binding> bindings_;
  /// Reads bound symbols and turns failed checks of size arithmetic into
  /// misses naming the guard being emitted.
  struct SizeHooks final : SymLowering::Hooks {
    explicit SizeHooks(GuardEmitter& emitter) : emitter(emitter) {}
    llvm::Expected<Value*> symbol(ir::SymExpr expr) override;
    void require(llvm::IRBuilder<>& b, Value* holds, SymCheck check, ir::SymExpr expr) override;
    GuardEmitter& emitter;
    llvm::StringRef context;
  };
  SizeHooks sizeHooks_{*this};
  // Guards run on any input: overflow and zero divisors are misses.
  SymLowering sizes_{SymLowering::Arithmetic::Checked, /*checkDivisor=*/true, sizeHooks_};
  std::vector<DeferredCheck> deferred_;
};

llvm::Error GuardEmitter::checkSymbolsAreBound() const {
  llvm::StringSet<> bound;
  for (const ir::Guard& guard : graph_.guards().guards())
    if (guard.kind == ir::GuardKind::Tensor && guard.tensorType) {
      for (ir::SymExpr size : guard.tensorType->sizes())
        if (size.isSymbol())
          bound.insert(size.symbolName());
      // A sparse tensor's nnz is read like a size.
      if (ir::SymExpr nnz = guard.tensorType->nnz(); nnz && nnz.isSymbol())
        bound.insert(nnz.symbolName());
    }
  // A symbolic int argument binds its symbol too.
  for (const ir::Guard& guard : graph_.guards().guards())
    if (guard.kind == ir::GuardKind::SymInt && guard.constant &&
        guard.constant->kind() == ir::Argument::Kind::Sym && guard.constant->symValue().isSymbol())
      bound.insert(guard.constant->symValue().symbolName());

  auto need = [&](llvm::StringRef symbol, const llvm::Twine& where) -> llvm::Error {
    if (bound.contains(symbol))
      return llvm::Error::success();
    return error("the symbol " + symbol + " (" + where +
                 ") is neither the size of any guarded tensor's dimension nor a guarded int, so "
                 "the guard function has nowhere to read it from");
  };
  auto needAll = [&](ir::SymExpr expr, const llvm::Twine& where) -> llvm::Error {
    llvm::Error result = llvm::Error::success();
    expr.walkSymbols([&](ir::SymExpr symbol) {
      if (!result)
        result = need(symbol.symbolName(), where);
    });
    return result;
  };

  // Data-dependent symbols, and the relations that mention them, are
  // checked by the graph when it computes them, never by its guards.
  for (const ir::SymbolDecl& decl : graph_.symbols())
    if (!decl.unbacked)
      if (llvm::Error e = need(decl.name, "declared by the graph"))
        return e;
  for (const ir::Relation& relation : graph_.relations()) {
    if (ir::mentionsUnbacked(relation, graph_.symbols()))
      continue;
    std::string text = textOf(relation);
    for (const ir::Comparison& comparison : relation.comparisons())
      for (ir::SymExpr side : {comparison.lhs, comparison.rhs})
        if (llvm::Error e = needAll(side, "in the relation " + text))
          return e;
  }
  for (const ir::Guard& guard : graph_.guards().guards()) {
    if (guard.kind != ir::GuardKind::Tensor || !guard.tensorType)
      continue;
    std::string text = textOf(guard);
    for (ir::SymExpr size : guard.tensorType->sizes())
      if (llvm::Error e = needAll(size, "in " + text))
        return e;
    if (!guard.tensorType->hasContiguousStrides())
      for (ir::SymExpr stride : guard.tensorType->strides())
        if (llvm::Error e = needAll(stride, "in " + text))
          return e;
  }
  return llvm::Error::success();
}

void GuardEmitter::require(Value* ok, const llvm::Twine& reason) {
  auto* next = llvm::BasicBlock::Create(ctx_, "ok", fn_);
  b_.CreateCondBr(ok, next, miss_, unlikely_);
  missReason_->addIncoming(shim_.string(reason.str(), "guard.reason"), b_.GetInsertBlock());
  b_.SetInsertPoint(next);
}

llvm::Expected<Value*> GuardEmitter::read(const ir::Source& source, llvm::StringRef guardText) {
  std::string key = source.str();
  if (Value* known = objects_.lookup(key))
    return known;
  // Names and keys reach the shim as C strings.
  if (source.kind() != ir::Source::Kind::Item || !source.hasIndex())
    if (source.name().find('\0') != std::string::npos)
      return error("the source " + key + " has a NUL character in a name");

  Value* object = nullptr;
  switch (source.kind()) {
  case ir::Source::Kind::Local: {
    const std::vector<std::string>& locals = graph_.guards().localNames();
    auto it = llvm::find(locals, source.name());
    if (it == locals.end())
      return error("the source " + key + " names no local of the frame (its locals are " +
                   llvm::join(locals, ", ") + ")");
    Value* slot = b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), fn_->getArg(0),
                                                static_cast<uint64_t>(it - locals.begin()));
    object = b_.CreateLoad(b_.getPtrTy(), slot, "local." + source.name());
    break;
  }
  case ir::Source::Kind::Global:
    object = shim_.call(b_, ShimFn::PyDictItem,
                        {fn_->getArg(1), shim_.string(source.name(), "guard.name")}, "global");
    break;
  case ir::Source::Kind::Module:
    object =
        shim_.call(b_, ShimFn::PyModule, {shim_.string(source.name(), "guard.name")}, "module");
    break;
  case ir::Source::Kind::ClassAttr:
  case ir::Source::Kind::Cell: {
    llvm::Expected<Value*> base = read(*source.base(), guardText);
    if (!base)
      return base.takeError();
    object = source.kind() == ir::Source::Kind::Cell
                 ? shim_.call(b_, ShimFn::PyClosureCell, {*base, b_.getInt64(source.indexValue())},
                              "cell")
                 : shim_.call(b_, ShimFn::PyClassAttr,
                              {*base, shim_.string(source.name(), "guard.name")}, "class_attr");
    break;
  }
  case ir::Source::Kind::Attr:
  case ir::Source::Kind::Item:
  case ir::Source::Kind::ValueAt:
  case ir::Source::Kind::KeyAt: {
    llvm::Expected<Value*> base = read(*source.base(), guardText);
    if (!base)
      return base.takeError();
    if (source.kind() == ir::Source::Kind::Attr) {
      object = shim_.call(b_, ShimFn::PyInstanceAttr,
                          {*base, shim_.string(source.name(), "guard.name")}, "attr");
    } else if (source.kind() == ir::Source::Kind::ValueAt) {
      // A dict's value at a position (dync_py_sequence_item's dict case).
      object = shim_.call(b_, ShimFn::PySequenceItem, {*base, b_.getInt64(source.indexValue())},
                          "value_at");
    } else if (source.kind() == ir::Source::Kind::KeyAt) {
      object =
          shim_.call(b_, ShimFn::PyDictKeyAt, {*base, b_.getInt64(source.indexValue())}, "key_at");
    } else if (source.hasIndex()) {
      // Python's base[i]: a list's or tuple's item, a dict's int key.
      object =
          shim_.call(b_, ShimFn::PySubscriptInt, {*base, b_.getInt64(source.indexValue())}, "item");
    } else if (const ir::DictKey* key = source.typedKey()) {
      std::string encoded;
      encodeKey(*key, encoded);
      object = shim_.call(b_, ShimFn::PyDictItemKeyed,
                          {*base, shim_.string(encoded, "guard.key"),
                           b_.getInt64(static_cast<int64_t>(encoded.size()))},
                          "item");
    } else {
      object = shim_.call(b_, ShimFn::PyDictItem,
                          {*base, shim_.string(source.name(), "guard.name")}, "item");
    }
    break;
  }
  }
  require(b_.CreateIsNotNull(object), guardText + ": " + key + " could not be read");
  objects_[key] = object;
  return object;
}

bool GuardEmitter::isBound(ir::SymExpr expr) const {
  bool bound = true;
  expr.walkSymbols([&](ir::SymExpr symbol) { bound &= bindings_.contains(symbol.symbolName()); });
  return bound;
}

llvm::Expected<Value*> GuardEmitter::SizeHooks::symbol(ir::SymExpr expr) {
  auto it = emitter.bindings_.find(expr.symbolName());
  if (it == emitter.bindings_.end())
    return emitter.error("the symbol " + expr.symbolName() +
                         " is used before a tensor guard binds it");
  return it->second.value;
}

void GuardEmitter::SizeHooks::require(llvm::IRBuilder<>&, Value* holds, SymCheck check,
                                      ir::SymExpr expr) {
  emitter.require(holds, context +
                             (check == SymCheck::Overflow ? ": overflow computing "
                                                          : ": division by zero computing ") +
                             expr.str());
}

llvm::Expected<Value*> GuardEmitter::sym(ir::SymExpr expr, llvm::StringRef context) {
  sizeHooks_.context = context;
  return sizes_.lower(b_, expr);
}

llvm::Error GuardEmitter::checkEquals(Value* actual, ir::SymExpr expected,
                                      const std::string& guardText, std::string reason) {
  if (!isBound(expected)) {
    deferred_.push_back({actual, expected, guardText, std::move(reason)});
    return llvm::Error::success();
  }
  llvm::Expected<Value*> value = sym(expected, guardText);
  if (!value)
    return value.takeError();
  require(b_.CreateICmpEQ(actual, *value), reason);
  return llvm::Error::success();
}

llvm::Error GuardEmitter::emitTensor(const ir::Guard& guard, Value* object,
                                     const std::string& text) {
  if (!guard.tensorType || !guard.tensorType->isTensor())
    return error(text + ": a tensor guard needs a tensor type");
  const ir::Type& type = *guard.tensorType;
  std::string source = guard.source->str();

  // Every field checked below comes from this one call, which also checks
  // the exact type (torch.Tensor or nn.Parameter: a subclass may override
  // what operations do).
  Value* info = infoAlloca();
  Value* sparse = nullptr;
  if (type.isSparse()) {
    // A sparse COO tensor also fills sparse_dim, nnz and is_coalesced;
    // a strided one is refused by the call, as a sparse one is by the other.
    sparse = sparseAlloca();
    require(
        b_.CreateICmpNE(shim_.call(b_, ShimFn::PySparseCooInfo, {object, info, sparse}, "info.ok"),
                        b_.getInt32(0)),
        text + ": not exactly a torch.Tensor or nn.Parameter of layout sparse_coo");
  } else {
    require(b_.CreateICmpNE(shim_.call(b_, ShimFn::PyTensorInfo, {object, info}, "info.ok"),
                            b_.getInt32(0)),
            text + ": not exactly a torch.Tensor or nn.Parameter with plain sizes and strides");
  }
  // Negative and conjugate views hold data that is not what they mean
  // until resolved; other keys route operations elsewhere.
  Value* flags = shim_.tensorInfoField(b_, info, TensorInfoField::Flags, "flags");
  require(b_.CreateICmpEQ(b_.CreateAnd(flags, b_.getInt32(DYNC_TENSOR_NEG)), b_.getInt32(0)),
          text + ": the negative bit is set");
  require(b_.CreateICmpEQ(b_.CreateAnd(flags, b_.getInt32(DYNC_TENSOR_CONJ)), b_.getInt32(0)),
          text + ": the conjugate bit is set");
  require(b_.CreateICmpEQ(b_.CreateAnd(flags, b_.getInt32(DYNC_TENSOR_OTHER_KEYS)), b_.getInt32(0)),
          text + ": dispatch keys beyond a plain dense tensor's (Python, functorch, "
                 "functionalization or zero tensor)");

  int dtype = dtypeNumber(type.dtype());
  if (dtype < 0)
    return error(text + ": the dtype " + ir::spelling(type.dtype()) + " has no shim number");
  require(b_.CreateICmpEQ(shim_.tensorInfoField(b_, info, TensorInfoField::DType, "dtype"),
                          b_.getInt32(dtype)),
          text + ": dtype is not " + ir::spelling(type.dtype()));

  ir::Device device = type.device();
  int deviceType;
  switch (device.kind) {
  case ir::DeviceKind::CPU:
    deviceType = DYNC_DEVICE_CPU;
    break;
  case ir::DeviceKind::CUDA:
    deviceType = DYNC_DEVICE_CUDA;
    break;
  // A module kept on the meta device as a stateless template (the base of
  // torch.func.functional_call over stacked ensemble parameters) is read
  // for its tensors' sizes and dtypes only; those are what is guarded.
  case ir::DeviceKind::Meta:
    deviceType = DYNC_DEVICE_META;
    break;
  default:
    return error(text + ": guards on " + ir::spelling(device.kind) +
                 " tensors are not supported yet");
  }
  std::string deviceText = textOf(device);
  require(b_.CreateICmpEQ(shim_.tensorInfoField(b_, info, TensorInfoField::DeviceType, "device"),
                          b_.getInt32(deviceType)),
          text + ": device is not " + deviceText);
  // A device written without an index (`cpu`) matches any index.
  if (device.index >= 0)
    require(b_.CreateICmpEQ(
                shim_.tensorInfoField(b_, info, TensorInfoField::DeviceIndex, "device.index"),
                b_.getInt32(device.index)),
            text + ": device is not " + deviceText);

  size_t rank = type.sizes().size();
  require(b_.CreateICmpEQ(shim_.tensorInfoField(b_, info, TensorInfoField::Dim, "dim"),
                          b_.getInt64(rank)),
          text + ": dim() is not " + std::to_string(rank));

  Value* sizes = rank ? shim_.tensorInfoField(b_, info, TensorInfoField::Sizes, "sizes") : nullptr;
  for (unsigned d = 0; d < rank; ++d) {
    ir::SymExpr expected = type.sizes()[d];
    std::string dim = "size(" + std::to_string(d) + ")";
    Value* actual = b_.CreateLoad(b_.getInt64Ty(),
                                  b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), sizes, d), dim);
    if (expected.isSymbol() && !bindings_.contains(expected.symbolName())) {
      // First sight: this dimension is where the symbol's value comes from.
      actual->setName(expected.symbolName());
      bindings_[expected.symbolName()] = {actual, text, d, source + "." + dim};
      continue;
    }
    std::string reason = text + ": " + dim + " is not " + expected.str();
    if (expected.isSymbol())
      reason += " = " + bindings_[expected.symbolName()].where;
    if (llvm::Error e = checkEquals(actual, expected, text, std::move(reason)))
      return e;
  }

  if (sparse) {
    if (llvm::Error e = emitSparseFields(type, sparse, text, source))
      return e;
  } else if (type.hasContiguousStrides()) {
    require(b_.CreateICmpNE(
                shim_.tensorInfoField(b_, info, TensorInfoField::IsContiguous, "contiguous"),
                b_.getInt32(0)),
            text + ": not contiguous");
  } else {
    Value* strides = shim_.tensorInfoField(b_, info, TensorInfoField::Strides, "strides");
    for (unsigned d = 0; d < rank; ++d) {
      std::string dim = "stride(" + std::to_string(d) + ")";
      Value* actual = b_.CreateLoad(
          b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), strides, d), dim);
      if (llvm::Error e = checkEquals(actual, type.strides()[d], text,
                                      text + ": " + dim + " is not " + type.strides()[d].str()))
        return e;
    }
  }

  require(b_.CreateICmpEQ(
              shim_.tensorInfoField(b_, info, TensorInfoField::RequiresGrad, "requires_grad"),
              b_.getInt32(type.requiresGrad() ? 1 : 0)),
          text + ": requires_grad is not " + (type.requiresGrad() ? "true" : "false"));
  return llvm::Error::success();
}

llvm::Error GuardEmitter::emitSparseFields(const ir::Type& type, Value* fields,
                                           const std::string& text, const std::string& source) {
  auto field = [&](unsigned i, const char* name) -> Value* {
    return b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), fields, i),
                         name);
  };
  require(b_.CreateICmpEQ(field(0, "sparse_dim"), b_.getInt64(type.sparseDim())),
          text + ": sparse_dim() is not " + std::to_string(type.sparseDim()));
  require(b_.CreateICmpEQ(field(2, "coalesced"), b_.getInt64(type.coalesced() ? 1 : 0)),
          text + ": is_coalesced() is not " + (type.coalesced() ? "true" : "false"));
  // nnz binds its symbol as a size does: one graph serves every nnz.
  ir::SymExpr nnz = type.nnz();
  Value* actual = field(1, "nnz");
  if (nnz.isSymbol() && !bindings_.contains(nnz.symbolName())) {
    actual->setName(nnz.symbolName());
    bindings_[nnz.symbolName()] = {actual,        text, 0, source + "._nnz()", /*isInt=*/false,
                                   /*isNnz=*/true};
    return llvm::Error::success();
  }
  std::string reason = text + ": _nnz() is not " + nnz.str();
  if (nnz.isSymbol())
    reason += " = " + bindings_[nnz.symbolName()].where;
  return checkEquals(actual, nnz, text, std::move(reason));
}

llvm::Error GuardEmitter::emitEquals(const ir::Guard& guard, Value* object,
                                     const std::string& text) {
  if (!guard.constant)
    return error(text + ": an equals guard needs a constant");
  const ir::Argument& constant = *guard.constant;
  Value* equal = nullptr;
  // An int beyond 64 bits: its two's-complement bytes (ir/BigIntGuard.h).
  if (std::optional<llvm::StringRef> digits = ir::bigIntOf(guard)) {
    std::vector<uint8_t> bytes = ir::twosComplementBytes(*digits);
    llvm::StringRef data(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    equal = shim_.call(b_, ShimFn::PyEqualsIntBytes,
                       {object, shim_.string(data, "guard.int_bytes"),
                        b_.getInt64(static_cast<int64_t>(bytes.size()))});
    require(b_.CreateICmpNE(equal, b_.getInt32(0)), text);
    return llvm::Error::success();
  }
  switch (constant.kind()) {
  case ir::Argument::Kind::Bool:
    equal = shim_.call(b_, ShimFn::PyEqualsBool, {object, b_.getInt32(constant.boolValue())});
    break;
  case ir::Argument::Kind::Sym:
    if (!constant.symValue().isConstant())
      return error(text + ": equals with a symbolic value is not supported yet");
    equal = shim_.call(b_, ShimFn::PyEqualsInt,
                       {object, b_.getInt64(constant.symValue().constantValue())});
    break;
  case ir::Argument::Kind::Float:
    equal = shim_.call(b_, ShimFn::PyEqualsFloat,
                       {object, llvm::ConstantFP::get(b_.getDoubleTy(), constant.floatValue())});
    break;
  case ir::Argument::Kind::String:
    equal = shim_.call(b_, ShimFn::PyEqualsStr,
                       {object, shim_.string(constant.stringValue(), "guard.str"),
                        b_.getInt64(constant.stringValue().size())});
    break;
  case ir::Argument::Kind::DType:
  case ir::Argument::Kind::Device:
  case ir::Argument::Kind::Layout:
  case ir::Argument::Kind::MemoryFormat: {
    auto [kind, name] = torchConstantName(constant);
    equal = shim_.call(b_, ShimFn::PyTorchConstantIs,
                       {object, b_.getInt32(kind), shim_.string(name, "guard.torch_constant")});
    break;
  }
  default:
    return error(text + ": equals compares with a bool, int, float, str, dtype, device, layout "
                        "or memory format constant only");
  }
  require(b_.CreateICmpNE(equal, b_.getInt32(0)), text);
  return llvm::Error::success();
}

llvm::Error GuardEmitter::emitKeys(const ir::Guard& guard, Value* object, const std::string& text) {
  bool strings = llvm::all_of(
      guard.keys, [](const ir::DictKey& key) { return key.kind == ir::DictKey::Kind::Str; });
  if (!strings) {
    // Keys of other types: one encoded run the shim walks the dict against.
    std::string encoded;
    for (const ir::DictKey& key : guard.keys)
      encodeKey(key, encoded);
    Value* same = shim_.call(b_, ShimFn::PyDictKeysAreKeyed,
                             {object, shim_.string(encoded, "guard.keys"),
                              b_.getInt64(static_cast<int64_t>(encoded.size())),
                              b_.getInt64(static_cast<int64_t>(guard.keys.size()))},
                             "keys_are");
    require(b_.CreateICmpNE(same, b_.getInt32(0)), text);
    return llvm::Error::success();
  }
  // The keys and their sizes are constant tables; the shim walks the dict
  // once against them.
  llvm::Module& module = *b_.GetInsertBlock()->getModule();
  std::vector<llvm::Constant*> keys, sizes;
  for (const ir::DictKey& key : guard.keys) {
    keys.push_back(shim_.string(key.strValue, "guard.key"));
    sizes.push_back(b_.getInt64(key.strValue.size()));
  }
  auto table = [&](llvm::Type* element, llvm::ArrayRef<llvm::Constant*> items, const char* name) {
    auto* type = llvm::ArrayType::get(element, items.size());
    return new llvm::GlobalVariable(module, type, /*isConstant=*/true,
                                    llvm::GlobalValue::PrivateLinkage,
                                    llvm::ConstantArray::get(type, items), name);
  };
  Value* same =
      shim_.call(b_, ShimFn::PyDictKeysAre,
                 {object, table(b_.getPtrTy(), keys, "guard.keys"),
                  table(b_.getInt64Ty(), sizes, "guard.key_sizes"), b_.getInt64(keys.size())},
                 "keys_are");
  require(b_.CreateICmpNE(same, b_.getInt32(0)), text);
  return llvm::Error::success();
}

/// A symbolic int argument: an exact int whose value binds its symbol on
/// first sight, as a tensor's dimension does, or must equal its expression.
llvm::Error GuardEmitter::emitSymInt(const ir::Guard& guard, Value* object,
                                     const std::string& text) {
  if (!guard.constant || guard.constant->kind() != ir::Argument::Kind::Sym)
    return error(text + ": an int guard needs a symbolic integer");
  ir::SymExpr expected = guard.constant->symValue();
  llvm::IRBuilder<> allocas(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
  llvm::AllocaInst* slot = allocas.CreateAlloca(b_.getInt64Ty(), nullptr, "int.slot");
  require(
      b_.CreateICmpNE(shim_.call(b_, ShimFn::PyIntValue, {object, slot}, "is_int"), b_.getInt32(0)),
      text + ": not exactly an int in the 64-bit range");
  std::string source = guard.source->str();
  Value* actual = b_.CreateLoad(b_.getInt64Ty(), slot, "int");
  if (expected.isSymbol() && !bindings_.contains(expected.symbolName())) {
    actual->setName(expected.symbolName());
    bindings_[expected.symbolName()] = {actual, text, 0, source, /*isInt=*/true};
    return llvm::Error::success();
  }
  std::string reason = text + ": " + source + " is not " + expected.str();
  if (expected.isSymbol())
    reason += " = " + bindings_[expected.symbolName()].where;
  return checkEquals(actual, expected, text, std::move(reason));
}

llvm::Error GuardEmitter::emitGuard(const ir::Guard& guard) {
  // The loader checks versions, once per load.
  if (guard.kind == ir::GuardKind::Version)
    return llvm::Error::success();
  std::string text = textOf(guard);

  switch (guard.kind) {
  case ir::GuardKind::GradMode:
    require(b_.CreateICmpEQ(shim_.call(b_, ShimFn::GradModeEnabled, {}, "grad_mode"),
                            b_.getInt32(guard.flag ? 1 : 0)),
            text);
    return llvm::Error::success();
  case ir::GuardKind::DefaultDType:
    require(b_.CreateICmpEQ(shim_.call(b_, ShimFn::DefaultDType, {}, "default_dtype"),
                            b_.getInt32(dtypeNumber(guard.dtype))),
            text);
    return llvm::Error::success();
  case ir::GuardKind::GlobalState: {
    // ir::GlobalState numbers its items as dync_global_state does.
    Value* value = shim_.call(b_, ShimFn::GlobalStateOf,
                              {b_.getInt32(static_cast<int>(guard.state))}, "global_state");
    require(b_.CreateICmpEQ(value, b_.getInt64(guard.stateValue)), text);
    return llvm::Error::success();
  }
  default:
    break;
  }

  if (!guard.source)
    return error(text + ": this guard needs a source");
  if (guard.kind == ir::GuardKind::Absent && guard.source->kind() == ir::Source::Kind::Item) {
    // A dict's entry of a str key: the dict must have none.
    if (guard.source->hasIndex() || guard.source->typedKey())
      return error(text + ": an absent entry is named by a str key");
    llvm::Expected<Value*> base = read(*guard.source->base(), text);
    if (!base)
      return base.takeError();
    const std::string& key = guard.source->name();
    Value* absent = shim_.call(
        b_, ShimFn::PyDictLacksStr,
        {*base, shim_.string(key, "guard.key"), b_.getInt64(static_cast<int64_t>(key.size()))},
        "absent");
    require(b_.CreateICmpNE(absent, b_.getInt32(0)), text);
    return llvm::Error::success();
  }
  if (guard.kind == ir::GuardKind::Absent) {
    // The attribute itself is not read: base's dict (or its class's) must
    // not hold it.
    bool ofClass = guard.source->kind() == ir::Source::Kind::ClassAttr;
    if (guard.source->kind() != ir::Source::Kind::Attr && !ofClass)
      return error(text + ": an absent guard names an attribute");
    llvm::Expected<Value*> base = read(*guard.source->base(), text);
    if (!base)
      return base.takeError();
    if (guard.source->name().find('\0') != std::string::npos)
      return error(text + ": a name has a NUL character");
    Value* absent =
        shim_.call(b_, ofClass ? ShimFn::PyClassAttrAbsent : ShimFn::PyInstanceAttrAbsent,
                   {*base, shim_.string(guard.source->name(), "guard.name")}, "absent");
    require(b_.CreateICmpNE(absent, b_.getInt32(0)), text);
    return llvm::Error::success();
  }
  llvm::Expected<Value*> object = read(*guard.source, text);
  if (!object)
    return object.takeError();
  switch (guard.kind) {
  case ir::GuardKind::Tensor:
    return emitTensor(guard, *object, text);
  case ir::GuardKind::Type:
  case ir::GuardKind::Class: {
    if (guard.typeModule.find('\0') != std::string::npos ||
        guard.typeQualname.find('\0') != std::string::npos)
      return error(text + ": a type name has a NUL character");
    Value* same =
        shim_.call(b_, guard.kind == ir::GuardKind::Type ? ShimFn::PyTypeIs : ShimFn::PyClassIs,
                   {*object, shim_.string(guard.typeModule, "guard.module"),
                    shim_.string(guard.typeQualname, "guard.qualname")},
                   "type_is");
    require(b_.CreateICmpNE(same, b_.getInt32(0)), text);
    return llvm::Error::success();
  }
  case ir::GuardKind::Equals:
    return emitEquals(guard, *object, text);
  case ir::GuardKind::None:
    require(b_.CreateICmpNE(shim_.call(b_, ShimFn::PyIsNone, {*object}, "is_none"), b_.getInt32(0)),
            text);
    return llvm::Error::success();
  case ir::GuardKind::Length:
    // -1 (not an exact list, tuple or dict) never equals a length.
    require(b_.CreateICmpEQ(shim_.call(b_, ShimFn::PyLength, {*object}, "length"),
                            b_.getInt64(guard.length)),
            text);
    return llvm::Error::success();
  case ir::GuardKind::Keys:
    return emitKeys(guard, *object, text);
  case ir::GuardKind::SymInt:
    return emitSymInt(guard, *object, text);
  case ir::GuardKind::Empty:
    require(b_.CreateICmpNE(shim_.call(b_, ShimFn::PyIsEmptyDict, {*object}, "is_empty"),
                            b_.getInt32(0)),
            text);
    return llvm::Error::success();
  case ir::GuardKind::AutogradLeaf:
    require(
        b_.CreateICmpNE(shim_.call(b_, ShimFn::PyTensorAutogradLeaf, {*object}, "autograd_leaf"),
                        b_.getInt32(0)),
        text);
    return llvm::Error::success();
  case ir::GuardKind::Same:
  case ir::GuardKind::Distinct: {
    // Identity: both sources read (a source that cannot be read misses),
    // then the two objects' addresses compared.
    if (!guard.other)
      return error(text + ": this guard needs the source it compares with");
    llvm::Expected<Value*> other = read(*guard.other, text);
    if (!other)
      return other.takeError();
    require(guard.kind == ir::GuardKind::Same ? b_.CreateICmpEQ(*object, *other)
                                              : b_.CreateICmpNE(*object, *other),
            text);
    return llvm::Error::success();
  }
  case ir::GuardKind::HasKey:
  case ir::GuardKind::LacksKey: {
    // `key in dict`, answered only where no user code takes part (-1
    // otherwise, which neither guard accepts).
    if (!guard.other)
      return error(text + ": this guard needs the source of the key");
    llvm::Expected<Value*> key = read(*guard.other, text);
    if (!key)
      return key.takeError();
    Value* has = shim_.call(b_, ShimFn::PyDictHasKey, {*object, *key}, "has_key");
    require(b_.CreateICmpEQ(has, b_.getInt32(guard.kind == ir::GuardKind::HasKey ? 1 : 0)), text);
    return llvm::Error::success();
  }
  case ir::GuardKind::Function:
  case ir::GuardKind::Builtin: {
    if (guard.typeModule.find('\0') != std::string::npos ||
        guard.typeQualname.find('\0') != std::string::npos)
      return error(text + ": a function name has a NUL character");
    Value* module = shim_.string(guard.typeModule, "guard.module");
    Value* name = shim_.string(guard.typeQualname, "guard.qualname");
    Value* same =
        guard.kind == ir::GuardKind::Function
            ? shim_.call(b_, ShimFn::PyFunctionIs,
                         {*object, module, name, b_.getInt64(guard.firstLine)}, "function_is")
            : shim_.call(b_, ShimFn::PyBuiltinIs, {*object, module, name}, "builtin_is");
    require(b_.CreateICmpNE(same, b_.getInt32(0)), text);
    return llvm::Error::success();
  }
  default:
    return error(text + ": unknown guard kind");
  }
}

llvm::Error GuardEmitter::emitAssumptions() {
  for (DeferredCheck& check : deferred_) {
    llvm::Expected<Value*> value = sym(check.expected, check.guardText);
    if (!value)
      return value.takeError();
    require(b_.CreateICmpEQ(check.actual, *value), check.reason);
  }

  for (const ir::SymbolDecl& decl : graph_.symbols()) {
    const ir::SymbolRange& range = decl.range;
    if ((!range.lo && !range.hi) || decl.unbacked)
      continue;
    const Binding& binding = bindings_[decl.name];
    Value* inside = nullptr;
    if (range.lo)
      inside = b_.CreateICmpSGE(binding.value, b_.getInt64(*range.lo), decl.name + ".above_lo");
    if (range.hi) {
      Value* belowHi =
          b_.CreateICmpSLE(binding.value, b_.getInt64(*range.hi), decl.name + ".below_hi");
      inside = inside ? b_.CreateAnd(inside, belowHi, decl.name + ".inside") : belowHi;
    }
    require(inside, binding.guardText + ": " +
                        (binding.isInt   ? binding.where
                         : binding.isNnz ? std::string("_nnz()")
                                         : "size(" + std::to_string(binding.dim) + ")") +
                        " (" + decl.name + ") is outside " + textOf(range));
  }

  for (const ir::Relation& relation : graph_.relations()) {
    if (ir::mentionsUnbacked(relation, graph_.symbols()))
      continue;
    // The reason says where each symbol was read.
    std::string reason = "relation " + textOf(relation) + " does not hold (";
    llvm::StringSet<> named;
    auto name = [&](ir::SymExpr symbol) {
      if (!named.insert(symbol.symbolName()).second)
        return;
      if (named.size() > 1)
        reason += ", ";
      reason += (symbol.symbolName() + " = " + bindings_[symbol.symbolName()].where).str();
    };
    relation.walkSymbols(name);
    reason += ")";
    if (named.empty())
      reason = "relation " + textOf(relation) + " does not hold";

    llvm::Expected<Value*> holds =
        lowerRelation(b_, relation, [&](ir::SymExpr side) { return sym(side, reason); });
    if (!holds)
      return holds.takeError();
    require(*holds, reason);
  }
  return llvm::Error::success();
}

llvm::Expected<llvm::Function*> GuardEmitter::emit(llvm::StringRef functionName) {
  if (llvm::Error e = checkSymbolsAreBound())
    return e;

  llvm::Type* ptr = b_.getPtrTy();
  auto* type = llvm::FunctionType::get(b_.getInt32Ty(), {ptr, ptr, ptr}, false);
  fn_ = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, functionName,
                               shim_.module());
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  fn_->getArg(0)->setName("fast_locals");
  fn_->getArg(1)->setName("globals");
  fn_->getArg(2)->setName("reason");
  unlikely_ = llvm::MDBuilder(ctx_).createBranchWeights(1u << 20, 1);

  auto* entry = llvm::BasicBlock::Create(ctx_, "entry", fn_);
  miss_ = llvm::BasicBlock::Create(ctx_, "miss", fn_);
  b_.SetInsertPoint(miss_);
  missReason_ = b_.CreatePHI(ptr, 8, "why");
  auto* store = llvm::BasicBlock::Create(ctx_, "miss.store", fn_);
  auto* missRet = llvm::BasicBlock::Create(ctx_, "miss.ret", fn_);
  b_.CreateCondBr(b_.CreateIsNotNull(fn_->getArg(2)), store, missRet);
  b_.SetInsertPoint(store);
  b_.CreateStore(missReason_, fn_->getArg(2));
  b_.CreateBr(missRet);
  b_.SetInsertPoint(missRet);
  b_.CreateRet(b_.getInt32(0));

  b_.SetInsertPoint(entry);
  // Grad mode first: it is the cheapest check, and the one that tells apart
  // the variants of a function, so a call tries the wrong variant for one
  // read of a thread-local flag.
  for (const ir::Guard& guard : graph_.guards().guards())
    if (guard.kind == ir::GuardKind::GradMode)
      if (llvm::Error e = emitGuard(guard))
        return e;
  // A process without the Python runtime leaves the Python readers NULL; a
  // guard there misses instead of calling through them.
  bool readsObjects = llvm::any_of(graph_.guards().guards(), [](const ir::Guard& g) {
    return g.source && g.kind != ir::GuardKind::Version;
  });
  if (readsObjects)
    require(b_.CreateIsNotNull(shim_.load(b_, ShimFn::PyInstanceAttr)),
            "guards of " + graph_.name() +
                ": the runtime's shim table has no Python object readers (a process "
                "without the dync Python runtime)");

  for (const ir::Guard& guard : graph_.guards().guards())
    if (guard.kind != ir::GuardKind::GradMode)
      if (llvm::Error e = emitGuard(guard))
        return e;
  if (llvm::Error e = emitAssumptions())
    return e;
  b_.CreateRet(b_.getInt32(1));
  return fn_;
}

} // namespace

llvm::Expected<llvm::Function*> dync::codegen::emitGuardFunction(ShimModule& shim,
                                                                 const ir::Graph& graph,
                                                                 llvm::StringRef functionName) {
  return GuardEmitter(shim, graph).emit(functionName);
}
