//===- GraphEmitter.h - The state of one graph function's lowering -*- C++ -*-===//
//
// Internal to codegen: the class that lowers one ir::Graph to a graph
// function (GraphCodegen.h), shared by the files that implement its parts:
// GraphCodegen.cpp lowers inputs, ATen calls and the output;
// KernelCallLowering.cpp lowers calls of generated kernels (docs/kernels.md,
// "Calling kernels"); AutogradFunctionLowering.cpp applies autograd.Functions;
// CondLowering.cpp lowers torch.cond nodes; WhileLoopLowering.cpp lowers
// while_loop nodes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "codegen/GraphCodegen.h"
#include "codegen/SymLowering.h"
#include "runtime/artifact/dync_artifact.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <vector>

namespace dync::ir {
enum class ScalarOp : uint8_t;
} // namespace dync::ir

namespace dync::codegen::detail {

using llvm::IRBuilder;
using llvm::Value;

/// What a value of the graph is at run time.
enum class SlotKind { Tensor, Int, Double, Bool, None };

/// A number a `sym::` node takes: an i64, a double or an i32 bool.
struct ScalarNumber {
  SlotKind kind;
  llvm::Value* value;
};

/// \p n as a double, converted as Python's float() converts an int or bool.
inline llvm::Value* scalarAsDouble(llvm::IRBuilder<>& b, SlotKind kind, llvm::Value* n) {
  if (kind == SlotKind::Double)
    return n;
  return kind == SlotKind::Bool ? b.CreateUIToFP(n, b.getDoubleTy())
                                : b.CreateSIToFP(n, b.getDoubleTy());
}

/// \p n as an i64 (a bool is 0 or 1).
inline llvm::Value* scalarAsInt(llvm::IRBuilder<>& b, SlotKind kind, llvm::Value* n) {
  return kind == SlotKind::Bool ? b.CreateZExt(n, b.getInt64Ty()) : n;
}

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

/// What a node before \p node did that the caller could observe (an
/// operator writing a graph input, or one dync does not know), or an empty
/// string: a failure at \p node can then run the original code instead
/// (DataDependentSizes.cpp). Random draws are not among them: the graph
/// puts the generator back before falling back (FallBackGenerator.cpp).
std::string observableBefore(const ir::Graph& graph, const ir::Node& node);

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
    // The user's line the node came from, when capture recorded it.
    std::string at = node ? node->location().suffix() : "";
    return llvm::createStringError(where + ": " + what + " is not supported by codegen yet" + at);
  }

  llvm::Error classifyInputs();
  void computeLastUses();
  llvm::Error emitCall(const ir::Node& node, unsigned position);
  /// Releases the tensors \p node (at \p position) was the last to read, and
  /// its own results nobody reads.
  void releaseDead(const ir::Node& node, unsigned position);

  // torch.cond nodes (CondLowering.cpp): the branch subgraph's function,
  // emitted on first use, and the call of the one the predicate picks.
  /// The function of subgraph \p name, which \p node runs, emitted on
  /// first use and named after this graph's function.
  llvm::Expected<llvm::Function*> subgraphFunction(const ir::Node& node, llvm::StringRef name);
  llvm::Expected<llvm::Function*> branchFunction(const ir::Node& node, bool taken);
  llvm::Error emitCond(const ir::Node& node, unsigned position);
  // while_loop nodes (WhileLoopLowering.cpp): a loop calling the cond and
  // body subgraphs' functions.
  llvm::Error emitWhileLoop(const ir::Node& node, unsigned position);
  /// Calls subgraph function \p fn on \p inputs (\p numInputs handles)
  /// into \p outputs; a failure passes its status on.
  void callSubgraph(const ir::Node& node, llvm::Function* fn, Value* inputs, size_t numInputs,
                    Value* outputs, size_t numOutputs, const llvm::Twine& name);
  /// `dync::autograd_function.apply` (AutogradFunctionLowering.cpp).
  llvm::Error emitAutogradFunctionCall(const ir::Node& node, unsigned position);

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
  // Floats and bools computed from tensor data (ScalarLowering.cpp).
  /// A `sym::NAME.default` node: Python's operation, inline.
  llvm::Error emitScalarOp(const ir::Node& node);
  /// \p arg of \p node as the number it is, with its kind (Int, Double or
  /// Bool) in \p kind.
  llvm::Expected<Value*> scalarOperand(const ir::Node& node, const ir::Argument& arg,
                                       SlotKind& kind);
  /// Python's comparison or `& | ^` \p op on \p operands (ScalarLowering.cpp).
  llvm::Expected<Value*> boolScalarOp(const ir::Node& node, ir::ScalarOp op,
                                      llvm::ArrayRef<ScalarNumber> operands);
  /// Python's \p op on \p operands giving a float (ScalarLowering.cpp).
  llvm::Expected<Value*> floatScalarOp(const ir::Node& node, ir::ScalarOp op,
                                       llvm::ArrayRef<ScalarNumber> operands);
  /// Python's \p op on ints and bools giving an int (ScalarMath.cpp).
  llvm::Expected<Value*> intScalarOp(const ir::Node& node, ir::ScalarOp op,
                                     llvm::ArrayRef<ScalarNumber> operands);
  /// `**` with a bool on one side, giving an int (ScalarMath.cpp).
  llvm::Expected<Value*> boolIntPow(const ir::Node& node, llvm::ArrayRef<ScalarNumber> operands);
  /// int(), round(), math.floor and math.ceil of \p operand (ScalarMath.cpp).
  llvm::Expected<Value*> scalarToInt(const ir::Node& node, ir::ScalarOp op, ScalarNumber operand);
  /// round(k, n) of an int and a constant int n: int.__round__.
  llvm::Expected<Value*> intRoundDigits(const ir::Node& node,
                                        llvm::ArrayRef<ScalarNumber> operands);
  /// `**`, `//`, `%` of floats and math.sqrt, exp, log (ScalarMath.cpp).
  Value* floatPow(const ir::Node& node, Value* base, Value* exponent);
  Value* floatFloorDivMod(const ir::Node& node, ir::ScalarOp op, Value* a, Value* b);
  Value* floatMath(const ir::Node& node, ir::ScalarOp op, Value* x);
  /// Raises \p text (`ValueError: math domain error`, or the fall-back form
  /// of ir/RunTimeCheck.h) when \p failed holds.
  void raiseIf(const ir::Node& node, Value* failed, llvm::StringRef text, const llvm::Twine& name);
  /// A new 0-dim float64, bool or int64 tensor holding a float, bool or int
  /// \p slot, for the graph's outputs; its cell is released by the cleanup.
  llvm::Expected<Value*> scalarTensor(const Slot& slot);
  /// A number (int, symbolic int, float or bool) for a Tensor parameter.
  llvm::Error pushWrappedNumber(const ir::Node& node, const ir::Argument& arg);
  llvm::Error pushList(const ir::Node& node, const std::vector<ir::Argument>& elements);
  llvm::Error takeResults(const ir::Node& node, Value* stack, llvm::BasicBlock* fail);
  /// Data-dependent sizes (DataDependentSizes.cpp): reads the unbacked
  /// symbols \p node's result computes first, checks those it computes again,
  /// and then the ranges and relations of the symbols now known.
  llvm::Error bindUnbacked(const ir::Node& node);
  llvm::Expected<Value*> emitSym(const ir::Node* node, ir::SymExpr expr);
  llvm::Expected<const Slot*> slotOf(const ir::Node* node, const ir::ValueRef& ref);
  Value* tensorHandle(const Slot& slot);

  /// A block that reports \p prefix followed by \p detail (or the shim's last
  /// error when \p detail is null) and jumps to the cleanup.
  llvm::BasicBlock* failBlock(const llvm::Twine& prefix, Value* detailOrNull,
                              bool shimError = false, int status = DYNC_ARTIFACT_ERROR);
  /// The failure of a run-time check capture recorded (ir/RunTimeCheck.h):
  /// the exception \p text names, or a fall-back to the original code.
  llvm::BasicBlock* checkFailBlock(const ir::Node& node, llvm::StringRef text);
  /// Before \p node is emitted: marks where the generator's state is saved
  /// when \p node is the first to use the generator (FallBackGenerator.cpp).
  void noteGeneratorUse(const ir::Node& node);
  /// In a fall-back block: puts the saved generator state back, or fails
  /// with DYNC_ARTIFACT_ERROR when that fails; nothing before a draw.
  void restoreGeneratorForFallBack();
  /// In the block a failing subgraph call (a cond branch, a while_loop's
  /// cond or body) reports its \p status from: puts the saved state back
  /// when that status is a fall-back, leaving the insertion point where the
  /// caller then jumps to the cleanup.
  void restoreIfSubgraphFellBack(Value* status, const llvm::Twine& name);
  /// In the block a failing subgraph call run by \p node reports its
  /// \p status from: stores it, or, for a fall-back after this graph wrote
  /// an input, fails with a RuntimeError instead (the original code would
  /// write it again); then as restoreIfSubgraphFellBack.
  void reportSubgraphFailure(const ir::Node& node, Value* status, const llvm::Twine& name);
  /// After the last node: saves the state at the mark when a fall-back
  /// block puts it back.
  void finishGeneratorSave();
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
  std::string functionName_;
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
    /// The symbol is a sparse COO tensor input's nnz, not a dimension.
    bool nnz = false;
  };
  llvm::StringMap<SymbolSource> symbolSources_;
  // The values of the unbacked symbols computed so far, read from the
  // results of the nodes that computed them; the relations already checked.
  llvm::StringMap<Value*> unbackedValues_;
  llvm::DenseSet<const ir::Relation*> checkedRelations_;
  /// Reads symbols and reports zero divisors for sizes_, naming the node
  /// that needed the size.
  struct SizeHooks final : SymLowering::Hooks {
    explicit SizeHooks(GraphEmitter& emitter) : emitter(emitter) {}
    llvm::Expected<Value*> symbol(ir::SymExpr expr) override;
    void require(IRBuilder<>& b, Value* holds, SymCheck check, ir::SymExpr expr) override;
    GraphEmitter& emitter;
    const ir::Node* node = nullptr;
  };
  SizeHooks sizeHooks_{*this};
  SymLowering sizes_{SymLowering::Arithmetic::Wrapping, /*checkDivisor=*/true, sizeHooks_};
  llvm::DenseMap<unsigned, Value*> inputSizes_;
  std::vector<Value*> allCells_;
  // The generator's state (FallBackGenerator.cpp): the first node that
  // uses the generator, the cell the state is saved in, the blocks the save
  // goes between, and whether a fall-back puts it back.
  const ir::Node* firstDraw_ = nullptr;
  llvm::AllocaInst* savedGenerator_ = nullptr;
  llvm::BasicBlock* saveFrom_ = nullptr;
  llvm::BasicBlock* saveTo_ = nullptr;
  bool generatorRestored_ = false;

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

} // namespace dync::codegen::detail
