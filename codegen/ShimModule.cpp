//===- ShimModule.cpp - Calls into the runtime's shim table ---------------===//

#include "codegen/ShimModule.h"

#include "runtime/artifact/dync_artifact.h"

#include <algorithm>
#include <cstddef>
#include <type_traits>

using namespace dync;
using namespace dync::codegen;
using llvm::IRBuilder;
using llvm::Value;

namespace {

/// The LLVM type of a C parameter or result type of the shim table: every
/// pointer (function pointers included) is `ptr`, enums and integers the
/// integer of their width, double `double`.
template <typename T> llvm::Type* llvmTypeOf(llvm::LLVMContext& ctx) {
  if constexpr (std::is_void_v<T>) {
    return llvm::Type::getVoidTy(ctx);
  } else if constexpr (std::is_pointer_v<T>) {
    return llvm::PointerType::getUnqual(ctx);
  } else if constexpr (std::is_floating_point_v<T>) {
    static_assert(sizeof(T) == 8, "the shim passes only double");
    return llvm::Type::getDoubleTy(ctx);
  } else {
    static_assert(std::is_integral_v<T> || std::is_enum_v<T>, "a type the shim cannot pass");
    return llvm::Type::getIntNTy(ctx, 8 * sizeof(T));
  }
}

/// The LLVM function type of a slot, from the C type of its field.
template <typename Slot> struct SlotType;
template <typename Result, typename... Params> struct SlotType<Result (*)(Params...)> {
  static llvm::FunctionType* get(llvm::LLVMContext& ctx) {
    return llvm::FunctionType::get(llvmTypeOf<Result>(ctx), {llvmTypeOf<Params>(ctx)...}, false);
  }
};

/// How to call one field of dync_shim_api.
struct ShimFnInfo {
  const char* name;
  size_t offset;
  llvm::FunctionType* (*type)(llvm::LLVMContext&);
};

const ShimFnInfo shimFns[] = {
#define DYNC_SHIM_FN(Name, field, function, Result, Params)                                        \
  {#field, offsetof(dync_shim_api, field), &SlotType<decltype(dync_shim_api::field)>::get},
#include "runtime/shim/ShimApi.def"
};

/// The table's size before fields were first appended (ABI version 1 as
/// released): an artifact never accepts a shorter one.
constexpr size_t baseApiSize = offsetof(dync_shim_api, grad_mode_enabled);

} // namespace

//===----------------------------------------------------------------------===//
// ShimModule
//===----------------------------------------------------------------------===//

ShimModule::ShimModule(llvm::Module& module) : module_(module), requiredApiSize_(baseApiSize) {
  api_ = new llvm::GlobalVariable(
      module_, llvm::PointerType::getUnqual(context()), false, llvm::GlobalValue::InternalLinkage,
      llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(context())), "dync.api");
}

llvm::Value* ShimModule::load(IRBuilder<>& b, ShimFn fn) {
  const ShimFnInfo& info = shimFns[static_cast<size_t>(fn)];
  requiredApiSize_ = std::max(requiredApiSize_, info.offset + sizeof(void*));
  llvm::Value* table = b.CreateLoad(b.getPtrTy(), api_, "api");
  llvm::Value* slot = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), table, info.offset);
  return b.CreateLoad(b.getPtrTy(), slot, llvm::Twine("api.") + info.name);
}

llvm::CallInst* ShimModule::call(IRBuilder<>& b, ShimFn fn, llvm::ArrayRef<Value*> args,
                                 const llvm::Twine& name) {
  const ShimFnInfo& info = shimFns[static_cast<size_t>(fn)];
  llvm::Value* callee = load(b, fn);
  llvm::FunctionType* type = info.type(context());
  return b.CreateCall(type, callee, args, type->getReturnType()->isVoidTy() ? "" : name);
}

llvm::StructType* ShimModule::tensorInfoType() {
  static constexpr llvm::StringLiteral name = "dync_tensor_info";
  if (llvm::StructType* existing = llvm::StructType::getTypeByName(context(), name))
    return existing;
  llvm::Type* ptr = llvm::PointerType::getUnqual(context());
  llvm::Type* i32 = llvm::Type::getInt32Ty(context());
  return llvm::StructType::create(
      context(), {ptr, ptr, llvm::Type::getInt64Ty(context()), i32, i32, i32, i32, i32, i32}, name);
}

// The LLVM struct above must lay out as the C one.
static_assert(offsetof(dync_tensor_info, strides) == 8 && offsetof(dync_tensor_info, dim) == 16 &&
                  offsetof(dync_tensor_info, dtype) == 24 &&
                  offsetof(dync_tensor_info, device_type) == 28 &&
                  offsetof(dync_tensor_info, device_index) == 32 &&
                  offsetof(dync_tensor_info, requires_grad) == 36 &&
                  offsetof(dync_tensor_info, is_contiguous) == 40 &&
                  offsetof(dync_tensor_info, flags) == 44 && sizeof(dync_tensor_info) == 48,
              "dync_tensor_info's layout");

llvm::Value* ShimModule::readTensorInfo(IRBuilder<>& b, llvm::Value* tensor, llvm::Value* info) {
  return call(b, ShimFn::TensorInfo, {tensor, info}, "info.ok");
}

llvm::Value* ShimModule::tensorInfoField(IRBuilder<>& b, llvm::Value* info, TensorInfoField field,
                                         const llvm::Twine& name) {
  llvm::StructType* type = tensorInfoType();
  unsigned index = static_cast<unsigned>(field);
  return b.CreateLoad(type->getElementType(index), b.CreateStructGEP(type, info, index), name);
}

llvm::GlobalVariable* ShimModule::op(llvm::StringRef name) {
  auto it = ops_.find(name);
  if (it != ops_.end())
    return it->second;
  llvm::PointerType* ptr = llvm::PointerType::getUnqual(context());
  auto* global = new llvm::GlobalVariable(module_, ptr, false, llvm::GlobalValue::InternalLinkage,
                                          llvm::ConstantPointerNull::get(ptr), "op." + name);
  // The key must outlive the map; the global's name is a stable copy of it,
  // minus the prefix.
  ops_.insert({global->getName().drop_front(3), global});
  return global;
}

llvm::Constant* ShimModule::string(llvm::StringRef text, const llvm::Twine& name) {
  auto it = strings_.find(text);
  if (it != strings_.end())
    return it->second;
  llvm::Constant* data = llvm::ConstantDataArray::getString(context(), text, true);
  auto* global = new llvm::GlobalVariable(module_, data->getType(), true,
                                          llvm::GlobalValue::PrivateLinkage, data, name);
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  global->setAlignment(llvm::Align(1));
  strings_[text] = global;
  return global;
}

llvm::Function* ShimModule::setErrorFunction() {
  if (setError_)
    return setError_;
  llvm::LLVMContext& ctx = context();
  llvm::Type* ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, i64, ptr, ptr}, false);
  setError_ =
      llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, "dync.set_error", module_);
  llvm::Function* f = setError_;
  llvm::Value* dst = f->getArg(0);
  llvm::Value* size = f->getArg(1);
  dst->setName("error");
  size->setName("size");
  f->getArg(2)->setName("a");
  f->getArg(3)->setName("b");

  // A hand-written copy loop rather than snprintf: the artifact links no
  // libc, so it has no undefined symbols at all.
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", f);
  auto* copyA = llvm::BasicBlock::Create(ctx, "copy.a", f);
  auto* copyB = llvm::BasicBlock::Create(ctx, "copy.b", f);
  auto* done = llvm::BasicBlock::Create(ctx, "done", f);
  auto* ret = llvm::BasicBlock::Create(ctx, "ret", f);
  IRBuilder<> b(entry);
  llvm::Value* limit = b.CreateSub(size, b.getInt64(1), "limit");
  b.CreateCondBr(b.CreateICmpEQ(size, b.getInt64(0)), ret, copyA);

  // Copies src[j] to dst[i] while src[j] != 0 and i < limit; returns the
  // final i in the exit block's phi.
  auto emitCopy = [&](llvm::BasicBlock* block, llvm::Value* src, llvm::Value* start,
                      llvm::BasicBlock* pred, llvm::BasicBlock* exit) -> llvm::PHINode* {
    b.SetInsertPoint(block);
    llvm::PHINode* i = b.CreatePHI(i64, 2, "i");
    llvm::PHINode* j = b.CreatePHI(i64, 2, "j");
    i->addIncoming(start, pred);
    j->addIncoming(b.getInt64(0), pred);
    llvm::Value* c = b.CreateLoad(b.getInt8Ty(), b.CreateGEP(b.getInt8Ty(), src, j), "c");
    auto* body = llvm::BasicBlock::Create(ctx, block->getName() + ".body", f);
    llvm::Value* more = b.CreateAnd(b.CreateICmpNE(c, b.getInt8(0)), b.CreateICmpULT(i, limit));
    llvm::BasicBlock* head = b.GetInsertBlock();
    b.CreateCondBr(more, body, exit);
    b.SetInsertPoint(body);
    b.CreateStore(c, b.CreateGEP(b.getInt8Ty(), dst, i));
    i->addIncoming(b.CreateAdd(i, b.getInt64(1)), body);
    j->addIncoming(b.CreateAdd(j, b.getInt64(1)), body);
    b.CreateBr(head);
    b.SetInsertPoint(exit);
    llvm::PHINode* end = b.CreatePHI(i64, 1, "end");
    end->addIncoming(i, head);
    return end;
  };
  llvm::PHINode* afterA = emitCopy(copyA, f->getArg(2), b.getInt64(0), entry, copyB);
  // emitCopy leaves the builder in copy.b with afterA as its first phi; the
  // second copy's loop starts in a block of its own.
  auto* loopB = llvm::BasicBlock::Create(ctx, "copy.b.loop", f);
  b.CreateBr(loopB);
  llvm::PHINode* afterB = emitCopy(loopB, f->getArg(3), afterA, copyB, done);
  b.CreateStore(b.getInt8(0), b.CreateGEP(b.getInt8Ty(), dst, afterB));
  b.CreateBr(ret);
  b.SetInsertPoint(ret);
  b.CreateRetVoid();
  return setError_;
}

llvm::Function* ShimModule::emitInit(llvm::StringRef name) {
  llvm::LLVMContext& ctx = context();
  llvm::Type* ptr = llvm::PointerType::getUnqual(ctx);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  auto* type = llvm::FunctionType::get(llvm::Type::getInt32Ty(ctx), {ptr, ptr, i64}, false);
  llvm::Function* f =
      llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, name, module_);
  llvm::Value* table = f->getArg(0);
  llvm::Value* error = f->getArg(1);
  llvm::Value* errorSize = f->getArg(2);
  table->setName("api");
  error->setName("error");
  errorSize->setName("error_size");

  auto* entry = llvm::BasicBlock::Create(ctx, "entry", f);
  auto* otherAbi = llvm::BasicBlock::Create(ctx, "shim.other_abi", f);
  auto* tooOld = llvm::BasicBlock::Create(ctx, "shim.too_old", f);
  auto* failed = llvm::BasicBlock::Create(ctx, "lookup.failed", f);
  IRBuilder<> b(entry);
  // A table from another shim ABI, or one shorter than the fields this code
  // reads (a runtime older than the slots appended since), is refused
  // before anything is called through it. The slots init itself calls are
  // in every table.
  llvm::Value* size = b.CreateLoad(b.getInt32Ty(), table, "api.size");
  llvm::Value* abi = b.CreateLoad(
      b.getInt32Ty(), b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), table, 4), "api.abi_version");
  auto* sameAbi = llvm::BasicBlock::Create(ctx, "shim.same_abi", f);
  b.CreateCondBr(b.CreateICmpEQ(abi, b.getInt32(DYNC_SHIM_ABI_VERSION)), sameAbi, otherAbi);
  b.SetInsertPoint(sameAbi);
  size_t required = requiredApiSize_;
  auto* store = llvm::BasicBlock::Create(ctx, "keep", f);
  b.CreateCondBr(b.CreateICmpUGE(size, b.getInt32(required)), store, tooOld);
  b.SetInsertPoint(store);
  b.CreateStore(table, api_);

  for (auto& [opName, global] : ops_) {
    // `aten::max.dim` is looked up as name `aten::max`, overload `dim`.
    size_t colons = opName.find("::");
    size_t dot = opName.find('.', colons);
    llvm::StringRef base = opName.take_front(dot);
    llvm::StringRef overload = opName.substr(dot + 1);
    llvm::Value* status =
        call(b, ShimFn::OpLookup,
             {string(base, "op.name"), string(overload, "op.overload"), global}, "lookup");
    auto* next = llvm::BasicBlock::Create(ctx, "resolved", f);
    b.CreateCondBr(b.CreateICmpEQ(status, b.getInt32(DYNC_OK)), next, failed);
    b.SetInsertPoint(next);
  }
  b.CreateRet(b.getInt32(DYNC_ARTIFACT_OK));

  b.SetInsertPoint(otherAbi);
  b.CreateCall(setErrorFunction(),
               {error, errorSize,
                string("the runtime's shim table is not the one this artifact was built for "
                       "(shim ABI version " +
                       std::to_string(DYNC_SHIM_ABI_VERSION) + ")"),
                string("")});
  b.CreateRet(b.getInt32(DYNC_ARTIFACT_ERROR));

  b.SetInsertPoint(tooOld);
  b.CreateCall(setErrorFunction(),
               {error, errorSize,
                string("the runtime's shim table is older than this artifact: it needs the "
                       "table's first " +
                       std::to_string(required) +
                       " bytes (the functions appended for guards); use a newer dync runtime"),
                string("")});
  b.CreateRet(b.getInt32(DYNC_ARTIFACT_ERROR));

  b.SetInsertPoint(failed);
  llvm::Value* message = call(b, ShimFn::LastError, {}, "message");
  b.CreateCall(setErrorFunction(), {error, errorSize, string(""), message});
  b.CreateRet(b.getInt32(DYNC_ARTIFACT_ERROR));
  return f;
}

//===----------------------------------------------------------------------===//
// Numbering
//===----------------------------------------------------------------------===//

int dync::codegen::dtypeNumber(ir::DType dtype) {
  switch (dtype) {
  case ir::DType::F32:
    return DYNC_DTYPE_FLOAT32;
  case ir::DType::F64:
    return DYNC_DTYPE_FLOAT64;
  case ir::DType::F16:
    return DYNC_DTYPE_FLOAT16;
  case ir::DType::BF16:
    return DYNC_DTYPE_BFLOAT16;
  case ir::DType::I64:
    return DYNC_DTYPE_INT64;
  case ir::DType::I32:
    return DYNC_DTYPE_INT32;
  case ir::DType::I16:
    return DYNC_DTYPE_INT16;
  case ir::DType::I8:
    return DYNC_DTYPE_INT8;
  case ir::DType::U8:
    return DYNC_DTYPE_UINT8;
  case ir::DType::Bool:
    return DYNC_DTYPE_BOOL;
  case ir::DType::C64:
    return DYNC_DTYPE_COMPLEX64;
  case ir::DType::C128:
    return DYNC_DTYPE_COMPLEX128;
  }
  return -1;
}
