//===- GraphCodegen.cpp - Graph IR to LLVM IR, one shim call per node -----===//

#include "codegen/GraphCodegen.h"

#include "codegen/KernelCodegen.h"
#include "passes/transforms/MemoryPlan.h"
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

/// How to call one field of dync_shim_api. Types are spelled as letters:
/// p pointer, i C int (also dync_status), l int64_t/size_t, d double, v void.
struct ShimFnInfo {
  const char* name;
  size_t offset;
  char result;
  const char* params;
};

#define DYNC_FIELD(field) #field, offsetof(dync_shim_api, field)
const ShimFnInfo shimFns[] = {
    {DYNC_FIELD(last_error), 'p', ""},
    {DYNC_FIELD(op_lookup), 'i', "ppp"},
    {DYNC_FIELD(op_call), 'i', "pp"},
    {DYNC_FIELD(stack_new), 'p', ""},
    {DYNC_FIELD(stack_free), 'v', "p"},
    {DYNC_FIELD(stack_push_tensor), 'i', "pp"},
    {DYNC_FIELD(stack_push_int), 'i', "pl"},
    {DYNC_FIELD(stack_push_symint), 'i', "pl"},
    {DYNC_FIELD(stack_push_double), 'i', "pd"},
    {DYNC_FIELD(stack_push_bool), 'i', "pi"},
    {DYNC_FIELD(stack_push_none), 'i', "p"},
    {DYNC_FIELD(stack_push_default), 'i', "p"},
    {DYNC_FIELD(stack_push_int_list), 'i', "ppl"},
    {DYNC_FIELD(stack_push_double_list), 'i', "ppl"},
    {DYNC_FIELD(stack_push_bool_list), 'i', "ppl"},
    {DYNC_FIELD(stack_push_tensor_list), 'i', "ppl"},
    {DYNC_FIELD(stack_push_optional_tensor_list), 'i', "ppl"},
    {DYNC_FIELD(stack_push_dtype), 'i', "pi"},
    {DYNC_FIELD(stack_push_layout), 'i', "pi"},
    {DYNC_FIELD(stack_push_memory_format), 'i', "pi"},
    {DYNC_FIELD(stack_push_device), 'i', "pii"},
    {DYNC_FIELD(stack_push_string), 'i', "pp"},
    {DYNC_FIELD(stack_take_tensor), 'i', "plp"},
    {DYNC_FIELD(stack_take_int), 'i', "plp"},
    {DYNC_FIELD(stack_take_double), 'i', "plp"},
    {DYNC_FIELD(stack_take_bool), 'i', "plp"},
    {DYNC_FIELD(stack_take_tensor_list), 'i', "plplp"},
    {DYNC_FIELD(tensor_retain), 'v', "p"},
    {DYNC_FIELD(tensor_release), 'v', "p"},
    {DYNC_FIELD(tensor_dim), 'l', "p"},
    {DYNC_FIELD(tensor_sizes), 'p', "p"},
    {DYNC_FIELD(tensor_strides), 'p', "p"},
    {DYNC_FIELD(tensor_dtype), 'i', "p"},
    {DYNC_FIELD(tensor_device_type), 'i', "p"},
    {DYNC_FIELD(tensor_device_index), 'i', "p"},
    {DYNC_FIELD(tensor_requires_grad), 'i', "p"},
    {DYNC_FIELD(tensor_is_contiguous), 'i', "p"},
    {DYNC_FIELD(tensor_borrow_from_pyobject), 'p', "p"},
    {DYNC_FIELD(grad_mode_enabled), 'i', ""},
    {DYNC_FIELD(default_dtype), 'i', ""},
    {DYNC_FIELD(py_instance_attr), 'p', "pp"},
    {DYNC_FIELD(py_dict_item), 'p', "pp"},
    {DYNC_FIELD(py_sequence_item), 'p', "pl"},
    {DYNC_FIELD(py_type_is), 'i', "ppp"},
    {DYNC_FIELD(py_is_none), 'i', "p"},
    {DYNC_FIELD(py_equals_bool), 'i', "pi"},
    {DYNC_FIELD(py_equals_int), 'i', "pl"},
    {DYNC_FIELD(py_equals_float), 'i', "pd"},
    {DYNC_FIELD(py_equals_str), 'i', "ppl"},
    {DYNC_FIELD(stack_push_wrapped_double), 'i', "pd"},
    {DYNC_FIELD(stack_push_wrapped_int), 'i', "pl"},
    {DYNC_FIELD(stack_push_wrapped_bool), 'i', "pi"},
    {DYNC_FIELD(tensor_data_ptr), 'p', "p"},
    {DYNC_FIELD(tensor_empty_strided), 'i', "pplip"},
    {DYNC_FIELD(parallel_for), 'i', "lllpp"},
    {DYNC_FIELD(tensor_view_storage), 'i', "ppplip"},
    {DYNC_FIELD(tensor_info), 'i', "pp"},
    {DYNC_FIELD(py_length), 'l', "p"},
    {DYNC_FIELD(py_dict_keys_are), 'i', "pppl"},
    {DYNC_FIELD(py_tensor_info), 'i', "pp"},
    {DYNC_FIELD(py_module), 'p', "p"},
    {DYNC_FIELD(py_class_attr), 'p', "pp"},
    {DYNC_FIELD(py_closure_cell), 'p', "pl"},
    {DYNC_FIELD(py_is_empty_dict), 'i', "p"},
    {DYNC_FIELD(py_instance_attr_absent), 'i', "pp"},
    {DYNC_FIELD(py_function_is), 'i', "pppl"},
    {DYNC_FIELD(py_builtin_is), 'i', "ppp"},
};
#undef DYNC_FIELD
static_assert(std::size(shimFns) == static_cast<size_t>(ShimFn::PyBuiltinIs) + 1,
              "one entry per ShimFn, in order");

/// The table's size before fields were first appended (ABI version 1 as
/// released): an artifact never accepts a shorter one.
constexpr size_t baseApiSize = offsetof(dync_shim_api, grad_mode_enabled);

llvm::Type* letterType(llvm::LLVMContext& ctx, char letter) {
  switch (letter) {
  case 'p':
    return llvm::PointerType::getUnqual(ctx);
  case 'i':
    return llvm::Type::getInt32Ty(ctx);
  case 'l':
    return llvm::Type::getInt64Ty(ctx);
  case 'd':
    return llvm::Type::getDoubleTy(ctx);
  default:
    return llvm::Type::getVoidTy(ctx);
  }
}

llvm::FunctionType* shimFnType(llvm::LLVMContext& ctx, const ShimFnInfo& info) {
  llvm::SmallVector<llvm::Type*, 5> params;
  for (const char* p = info.params; *p; ++p)
    params.push_back(letterType(ctx, *p));
  return llvm::FunctionType::get(letterType(ctx, info.result), params, false);
}

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
  llvm::FunctionType* type = shimFnType(context(), info);
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
// Graph functions
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

/// What a value of the graph is at run time.
enum class SlotKind { Tensor, Int, Double, Bool, None };

/// One value: a tensor lives in a pointer-sized cell (so the cleanup code can
/// release whatever is still held), scalars are SSA values.
struct Slot {
  SlotKind kind = SlotKind::None;
  Value* cell = nullptr;  // Tensor: address of the handle
  Value* value = nullptr; // Int, Double, Bool; Tensor inputs: the handle
  bool borrowed = false;  // a graph input: never released here
};

/// The run-time values of one node: one slot for a single result, one per
/// element for a tuple or list result.
struct NodeValues {
  std::vector<Slot> slots;
  bool sequence = false;
};

class GraphEmitter {
public:
  GraphEmitter(ShimModule& shim, const ir::Graph& graph, const OpSchemas* schemas)
      : shim_(shim), graph_(graph), schemas_(schemas), ctx_(shim.context()), b_(ctx_),
        allocas_(ctx_) {}

  llvm::Expected<GraphSignature> emit(llvm::StringRef functionName);

private:
  // Errors for what codegen cannot compile yet, naming the node.
  llvm::Error unsupported(const ir::Node* node, const llvm::Twine& what) {
    std::string where;
    llvm::raw_string_ostream os(where);
    os << "graph @" << graph_.name();
    if (node && node->isCall())
      os << ", %" << node->name() << " = " << node->op();
    else if (node && node->isOutput())
      os << ", return";
    else if (node)
      os << ", input %" << node->name();
    return llvm::createStringError(where + ": " + what + " is not supported by codegen yet");
  }

  llvm::Error classifyInputs();
  void computeLastUses();
  llvm::Error emitCall(const ir::Node& node, unsigned position);
  /// Releases the tensors \p node (at \p position) was the last to read, and
  /// its own results nobody reads.
  void releaseDead(const ir::Node& node, unsigned position);

  // Kernel calls (docs/kernels.md, "Calling kernels").
  llvm::Error planBuffers();
  llvm::Error emitKernelCall(const ir::Node& node, unsigned position);
  /// Fails the call unless \p handle is a CPU tensor of exactly \p type
  /// (dtype, sizes, and strides but those of dimensions of size 1).
  llvm::Error checkLayout(const ir::Node& node, unsigned index, Value* handle,
                          const ir::Type& type);
  /// An i64 array holding \p exprs, computed at run time.
  llvm::Expected<Value*> symArray(const ir::Node& node, llvm::ArrayRef<ir::SymExpr> exprs,
                                  const llvm::Twine& name);
  /// The handle of buffer \p slot, allocated at its first member's call.
  llvm::Expected<Value*> bufferHandle(const ir::Node& node, unsigned slot);
  /// `void(void* ctx, int64 begin, int64 end)` calling kernel \p symbol with
  /// the buffers and symbols ctx points to; one per kernel per module.
  llvm::Function* trampoline(const std::string& symbol);
  /// How many outer iterations one thread takes at least.
  llvm::Expected<Value*> grainSize(const ir::Node& node, const ir::Graph& kernel, Value* extent);
  llvm::AllocaInst* newCell(const llvm::Twine& name);
  llvm::Error pushArgument(const ir::Node& node, const ir::Argument& arg);
  /// A number (int, symbolic int, float or bool) for a Tensor parameter.
  llvm::Error pushWrappedNumber(const ir::Node& node, const ir::Argument& arg);
  llvm::Error pushList(const ir::Node& node, const std::vector<ir::Argument>& elements);
  llvm::Error takeResults(const ir::Node& node, Value* stack, llvm::BasicBlock* fail);
  llvm::Expected<Value*> emitSym(const ir::Node* node, ir::SymExpr expr);
  llvm::Expected<const Slot*> slotOf(const ir::Node* node, const ir::ValueRef& ref);
  Value* tensorHandle(const Slot& slot);

  /// A block that reports \p prefix followed by \p detail (or the shim's last
  /// error when \p detail is null) and jumps to the cleanup.
  llvm::BasicBlock* failBlock(const llvm::Twine& prefix, Value* detailOrNull,
                              bool shimError = false, int status = DYNC_ARTIFACT_ERROR);
  /// Continues in a new block when \p failed is false; branches to a failure
  /// block otherwise.
  void checkOrFail(Value* failed, llvm::BasicBlock* failure, const llvm::Twine& name);
  llvm::AllocaInst* entryAlloca(llvm::Type* type, Value* count, const llvm::Twine& name);
  std::string nodePrefix(const ir::Node& node) const {
    return "graph " + graph_.name() + ", %" + node.name() + " = " + node.op() + ": ";
  }

  ShimModule& shim_;
  const ir::Graph& graph_;
  const OpSchemas* schemas_;
  llvm::LLVMContext& ctx_;
  IRBuilder<> b_;
  IRBuilder<> allocas_;
  llvm::Function* fn_ = nullptr;
  llvm::BasicBlock* cleanup_ = nullptr;
  llvm::AllocaInst* status_ = nullptr;
  llvm::AllocaInst* stackCell_ = nullptr;
  Value* stack_ = nullptr;

  std::vector<const ir::Node*> tensorInputs_;
  std::vector<const ir::Node*> intInputs_;
  llvm::DenseMap<const ir::Node*, NodeValues> values_;
  // For each tensor cell a call defines, the position of the last node that
  // reads it; cells the output reads are held to the end.
  llvm::DenseMap<std::pair<const ir::Node*, unsigned>, unsigned> lastUse_;
  llvm::DenseSet<std::pair<const ir::Node*, unsigned>> returned_;
  // Where each symbol can be read at run time: a dimension of a tensor input,
  // or an int input.
  struct SymbolSource {
    int tensorInput = -1;
    unsigned dim = 0;
    int intInput = -1;
  };
  llvm::StringMap<SymbolSource> symbolSources_;
  llvm::DenseMap<ir::SymExpr, Value*> symValues_;
  llvm::DenseMap<unsigned, Value*> inputSizes_;
  std::vector<Value*> allCells_;

  // Memory planning's buffers: the bytes each must hold (the most any
  // member needs), the member whose call releases the graph's reference to
  // it (its views keep the storage alive), and its cell once allocated.
  struct Buffer {
    ir::SymExpr bytes;
    std::pair<const ir::Node*, unsigned> lastMember;
    Value* cell = nullptr;
  };
  std::map<unsigned, Buffer> buffers_;
};

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

llvm::Expected<Value*> GraphEmitter::emitSym(const ir::Node* node, ir::SymExpr expr) {
  if (Value* known = symValues_.lookup(expr))
    return known;
  Value* result = nullptr;
  llvm::SmallVector<Value*, 4> operands;
  if (!expr.isConstant() && !expr.isSymbol())
    for (ir::SymExpr operand : expr.operands()) {
      llvm::Expected<Value*> v = emitSym(node, operand);
      if (!v)
        return v.takeError();
      operands.push_back(*v);
    }
  switch (expr.kind()) {
  case ir::SymKind::Const:
    result = b_.getInt64(expr.constantValue());
    break;
  case ir::SymKind::Symbol: {
    auto it = symbolSources_.find(expr.symbolName());
    if (it == symbolSources_.end())
      return unsupported(node, "the symbolic size " + expr.symbolName() +
                                   ", which is neither a dimension of a tensor input nor an "
                                   "int input,");
    const SymbolSource& source = it->second;
    if (source.intInput >= 0) {
      Value* addr = b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), fn_->getArg(2), source.intInput);
      result = b_.CreateLoad(b_.getInt64Ty(), addr, expr.symbolName());
    } else {
      Value*& sizes = inputSizes_[source.tensorInput];
      if (!sizes)
        sizes = shim_.call(b_, ShimFn::TensorSizes,
                           {tensorHandle(values_[tensorInputs_[source.tensorInput]].slots[0])},
                           "sizes." + tensorInputs_[source.tensorInput]->name());
      result = b_.CreateLoad(b_.getInt64Ty(),
                             b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), sizes, source.dim),
                             expr.symbolName());
    }
    break;
  }
  // Arithmetic wraps on overflow: capture already proved these sizes fit the
  // symbols' ranges, which the guards check before the graph runs.
  case ir::SymKind::Add:
    result = operands[0];
    for (Value* v : llvm::drop_begin(operands))
      result = b_.CreateAdd(result, v);
    break;
  case ir::SymKind::Mul:
    result = operands[0];
    for (Value* v : llvm::drop_begin(operands))
      result = b_.CreateMul(result, v);
    break;
  case ir::SymKind::Min:
  case ir::SymKind::Max: {
    bool isMin = expr.kind() == ir::SymKind::Min;
    result = operands[0];
    for (Value* v : llvm::drop_begin(operands))
      result = b_.CreateSelect(isMin ? b_.CreateICmpSLT(v, result) : b_.CreateICmpSGT(v, result), v,
                               result);
    break;
  }
  case ir::SymKind::FloorDiv:
  case ir::SymKind::Mod: {
    Value* a = operands[0];
    Value* d = operands[1];
    ir::SymExpr divisor = expr.operands()[1];
    if (!divisor.isConstant() || divisor.constantValue() == 0) {
      llvm::BasicBlock* fail = failBlock("graph " + graph_.name() +
                                             ": division by zero computing the size " + expr.str(),
                                         nullptr);
      checkOrFail(b_.CreateICmpEQ(d, b_.getInt64(0)), fail, "divisor.ok");
    }
    // Python's semantics: the quotient rounds toward negative infinity and
    // the remainder takes the divisor's sign. A divisor of -1 is special
    // cased so INT64_MIN / -1 cannot trap.
    Value* minusOne = b_.CreateICmpEQ(d, b_.getInt64(-1));
    Value* safeD = b_.CreateSelect(minusOne, b_.getInt64(1), d);
    Value* q = b_.CreateSDiv(a, safeD);
    Value* r = b_.CreateSRem(a, safeD);
    Value* adjust = b_.CreateAnd(b_.CreateICmpNE(r, b_.getInt64(0)),
                                 b_.CreateICmpSLT(b_.CreateXor(r, d), b_.getInt64(0)));
    if (expr.kind() == ir::SymKind::FloorDiv) {
      Value* floorQ = b_.CreateSelect(adjust, b_.CreateSub(q, b_.getInt64(1)), q);
      result = b_.CreateSelect(minusOne, b_.CreateNeg(a), floorQ, "floordiv");
    } else {
      Value* floorR = b_.CreateSelect(adjust, b_.CreateAdd(r, d), r);
      result = b_.CreateSelect(minusOne, b_.getInt64(0), floorR, "mod");
    }
    break;
  }
  }
  symValues_[expr] = result;
  return result;
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
  switch (arg.kind()) {
  case ir::Argument::Kind::Float:
    shim_.call(b_, ShimFn::PushWrappedDouble,
               {stack_, llvm::ConstantFP::get(b_.getDoubleTy(), arg.floatValue())});
    return llvm::Error::success();
  case ir::Argument::Kind::Bool:
    shim_.call(b_, ShimFn::PushWrappedBool, {stack_, b_.getInt32(arg.boolValue())});
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
                                     kw.name + "'");
    if (*index < node.args().size() || (*index < ordered.size() && ordered[*index]))
      return llvm::createStringError("graph @" + graph_.name() + ", %" + node.name() + " = " +
                                     node.op() + ": argument '" + kw.name + "' is given twice");
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
    wrapped[i] =
        type && (*type == "Tensor" || *type == "Tensor?") && arg &&
        (arg->kind() == ir::Argument::Kind::Sym || arg->kind() == ir::Argument::Kind::Float ||
         arg->kind() == ir::Argument::Kind::Bool);
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
  llvm::BasicBlock* fail = check
                               ? failBlock("", shim_.string(node.args()[1].stringValue(), "check"),
                                           /*shimError=*/false, DYNC_ARTIFACT_CHECK_FAILED)
                               : failBlock(nodePrefix(node), nullptr, /*shimError=*/true);
  checkOrFail(b_.CreateICmpNE(status, b_.getInt32(DYNC_OK)), fail, "called." + node.name());
  if (llvm::Error error = takeResults(node, stack_, fail))
    return error;
  releaseDead(node, position);
  return llvm::Error::success();
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

//===----------------------------------------------------------------------===//
// Kernel calls
//===----------------------------------------------------------------------===//

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
                                   " in the graph's module");
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
    if (llvm::Error error =
            node.isKernelCall() ? emitKernelCall(node, position) : emitCall(node, position))
      return error;
  }

  // Outputs are new references; the cleanup below then drops the graph's
  // own references, so a returned intermediate changes hands without a copy.
  for (unsigned k = 0; k < leaves.size(); ++k) {
    llvm::Expected<const Slot*> slot = slotOf(output, leaves[k]);
    if (!slot)
      return slot.takeError();
    if ((*slot)->kind != SlotKind::Tensor)
      return unsupported(output, "returning a non-tensor value");
    Value* handle = tensorHandle(**slot);
    shim_.call(b_, ShimFn::TensorRetain, {handle});
    b_.CreateStore(handle, b_.CreateConstInBoundsGEP1_64(ptr, fn_->getArg(4), k));
  }
  b_.CreateStore(b_.getInt32(DYNC_ARTIFACT_OK), status_);
  b_.CreateBr(cleanup_);

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

} // namespace

llvm::Expected<GraphSignature> dync::codegen::emitGraphFunction(ShimModule& shim,
                                                                const ir::Graph& graph,
                                                                llvm::StringRef functionName,
                                                                const OpSchemas* schemas) {
  GraphEmitter emitter(shim, graph, schemas);
  llvm::Expected<GraphSignature> signature = emitter.emit(functionName);
  if (!signature) {
    if (llvm::Function* partial = shim.module().getFunction(functionName))
      partial->eraseFromParent();
  }
  return signature;
}
