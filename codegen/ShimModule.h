//===- ShimModule.h - Calls into the runtime's shim table -------*- C++ -*-===//
//
// How generated code reaches ATen: every call goes through the function
// table (dync_shim_api) the artifact's init function receives. The table's
// slots, their order and their C signatures come from one list,
// runtime/shim/ShimApi.def; this file gives the code generator its view of
// it (a ShimFn per slot, the LLVM type of each derived from the C type), and
// the module-wide state every graph and guard function of an artifact
// shares.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/TensorAttributes.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace dync::codegen {

/// A field of dync_shim_api that generated code calls through, one per row
/// of ShimApi.def, in table order.
enum class ShimFn {
#define DYNC_SHIM_FN(Name, field, function, Result, Params) Name,
#include "runtime/shim/ShimApi.def"
};

/// The fields of dync_tensor_info (runtime/shim/dync_shim.h), in order.
enum class TensorInfoField {
  Sizes,
  Strides,
  Dim,
  DType,
  DeviceType,
  DeviceIndex,
  RequiresGrad,
  IsContiguous,
  Flags
};

/// State every graph of one artifact shares: the global holding the shim
/// table init receives, one global per distinct operator overload, and the
/// helpers generated code calls.
class ShimModule {
public:
  explicit ShimModule(llvm::Module& module);

  llvm::Module& module() { return module_; }
  llvm::LLVMContext& context() { return module_.getContext(); }

  /// Loads the function pointer of \p fn from the shim table and calls it.
  llvm::CallInst* call(llvm::IRBuilder<>& b, ShimFn fn, llvm::ArrayRef<llvm::Value*> args,
                       const llvm::Twine& name = "");
  /// Loads the function pointer of \p fn from the shim table (NULL when the
  /// runtime left the slot empty, as it does for the Python fields in a
  /// process without Python).
  llvm::Value* load(llvm::IRBuilder<>& b, ShimFn fn);
  /// Calls tensor_info on \p tensor into \p info (an alloca of
  /// tensorInfoType()); the result is 1 when the fields were read.
  llvm::Value* readTensorInfo(llvm::IRBuilder<>& b, llvm::Value* tensor, llvm::Value* info);
  /// dync_tensor_info as an LLVM struct.
  llvm::StructType* tensorInfoType();
  /// Loads \p field of the dync_tensor_info at \p info.
  llvm::Value* tensorInfoField(llvm::IRBuilder<>& b, llvm::Value* info, TensorInfoField field,
                               const llvm::Twine& name = "");
  /// The global that init fills with the handle of \p op
  /// (`aten::addmm.default`); created on first use.
  llvm::GlobalVariable* op(llvm::StringRef op);
  /// A private NUL-terminated string constant.
  llvm::Constant* string(llvm::StringRef text, const llvm::Twine& name = "str");
  /// `void dync.set_error(char* error, size_t size, const char* a, const char* b)`:
  /// writes a then b into the caller's buffer, truncated, NUL-terminated.
  llvm::Function* setErrorFunction();
  /// Emits the init function (dync_init_fn): checks the shim table's
  /// version and that it is long enough for every slot generated code
  /// reads, keeps it, and resolves every operator op() was asked for.
  /// Call after every graph and guard has been emitted.
  llvm::Function* emitInit(llvm::StringRef name = "dync.init");

private:
  llvm::Module& module_;
  llvm::GlobalVariable* api_;
  llvm::MapVector<llvm::StringRef, llvm::GlobalVariable*> ops_;
  llvm::StringMap<llvm::Constant*> strings_;
  llvm::Function* setError_ = nullptr;
  /// The table size the slots read so far need.
  size_t requiredApiSize_;
};

/// The dync_dtype (c10::ScalarType) number of \p dtype.
int dtypeNumber(ir::DType dtype);

/// The dync_dtype (c10::ScalarType) number of \p dtype.
int dtypeNumber(ir::DType dtype);

} // namespace dync::codegen
