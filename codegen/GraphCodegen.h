//===- GraphCodegen.h - Graph IR to LLVM IR, one shim call per node -*- C++ -*-===//
//
// Compiles an ir::Graph into an LLVM function with dync_artifact.h's graph
// signature. Every ATen call node becomes one boxed call into ATen through
// the runtime's shim table (dync_shim_api): arguments pushed in schema
// order, dync_op_call, results taken. Operator handles are resolved once, by
// the artifact's init function, and kept in module globals. A call of a
// generated kernel allocates its outputs and runs the kernel's function over
// the shim's parallel_for (docs/kernels.md, "Calling kernels").
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/OpSchemas.h"
#include "passes/ir/Graph.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

#include <string>

namespace dync::codegen {

/// A field of dync_shim_api that generated code calls through.
enum class ShimFn {
  LastError,
  OpLookup,
  OpCall,
  StackNew,
  StackFree,
  PushTensor,
  PushInt,
  PushSymInt,
  PushDouble,
  PushBool,
  PushNone,
  PushDefault,
  PushIntList,
  PushDoubleList,
  PushBoolList,
  PushTensorList,
  PushOptionalTensorList,
  PushDType,
  PushLayout,
  PushMemoryFormat,
  PushDevice,
  PushString,
  TakeTensor,
  TakeInt,
  TakeDouble,
  TakeBool,
  TakeTensorList,
  TensorRetain,
  TensorRelease,
  TensorDim,
  TensorSizes,
  // What guards read (docs/codegen.md, "Guards").
  TensorStrides,
  TensorDType,
  TensorDeviceType,
  TensorDeviceIndex,
  TensorRequiresGrad,
  TensorIsContiguous,
  TensorBorrowFromPyObject,
  GradModeEnabled,
  DefaultDType,
  PyInstanceAttr,
  PyDictItem,
  PySequenceItem,
  PyTypeIs,
  PyIsNone,
  PyEqualsBool,
  PyEqualsInt,
  PyEqualsFloat,
  PyEqualsStr,
  PushWrappedDouble,
  PushWrappedInt,
  PushWrappedBool,
  // What calling a generated kernel needs (docs/kernels.md).
  TensorDataPtr,
  TensorEmptyStrided,
  ParallelFor,
  TensorViewStorage,
  // One call for what guards and layout checks read of a tensor.
  TensorInfo,
  // len() of an exact list, tuple or dict, for `length` guards.
  PyLength,
  // The keys of an exact dict, in order, for `keys` guards.
  PyDictKeysAre,
  // A complete guard set: exact tensor types and dispatch keys, sys.modules
  // roots, class attributes, closure cells, hook tables, shadowing and
  // functions.
  PyTensorInfo,
  PyModule,
  PyClassAttr,
  PyClosureCell,
  PyIsEmptyDict,
  PyInstanceAttrAbsent,
  PyFunctionIs,
  PyBuiltinIs,
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

/// The counts the descriptor records for a graph.
struct GraphSignature {
  unsigned numInputs = 0;
  unsigned numIntInputs = 0;
  unsigned numOutputs = 0;
};

/// Emits \p graph as an internal function named \p functionName with the
/// dync_graph_fn signature. Tensor inputs are the graph's tensor-typed
/// inputs in order, int inputs its int-typed ones. A call of a kernel
/// (`@k0`) allocates the outputs (or views of memory planning's buffers),
/// checks the layout of inputs not made by a kernel, and runs the external
/// function kernelSymbol() names over parallel_for; that function comes
/// from another object (ArtifactBuilder) or from emitKernel in the same
/// module. \p schemas places keyword
/// arguments; a graph with keyword arguments of an operator it does not know
/// is an error. Constructs codegen does not support yet are errors naming
/// the node, never miscompiled.
llvm::Expected<GraphSignature> emitGraphFunction(ShimModule& shim, const ir::Graph& graph,
                                                 llvm::StringRef functionName,
                                                 const OpSchemas* schemas = nullptr);

} // namespace dync::codegen
