//===- Guard.h - What a graph assumed about the frame it was captured in --===//
//
// A guard is one assumption a captured graph was built under, about the
// value at a source (or about process-wide state). A GuardSet belongs to one
// graph; together with the graph's symbols, ranges and relations (which the
// guards on tensors bind) it is everything the compiled guard function
// checks before the graph may run (decision 5).
//
// Text form: a top-level block after the graph it guards, in the module
// text, naming the frame's local variables in localsplus order (the guard
// function reads L['name'] from that slot):
//
//   guards @MLP.forward(self, x) {
//     tensor L['x'] : tensor<f32, [batch, 784]>
//     type L['self'] : model:MLP
//     equals L['self'].training : true
//     equals L['self']._modules['attn'].heads : 4
//     equals L['mode'] : "fast"
//     none L['mask']
//     empty L['self']._forward_hooks
//     absent L['self'].scale
//     equals type(L['self']).scale : 0.5
//     function type(L['self']).forward : model:MLP.forward line 12
//     builtin G['act'] : torch:relu
//     grad_mode true
//     default_dtype f32
//     global_state deterministic_algorithms false
//     global_state flush_denormal false
//     global_state torch_function_modes 0
//     global_state torch_dispatch_modes 0
//     global_state deterministic_fill true
//     global_state mkldnn true
//     global_state mkldnn_deterministic false
//     global_state nnpack true
//     global_state cpu_fp16_reduction false
//     global_state fp32_precision_matmul ieee
//     global_state fp32_precision_conv ieee
//     global_state fp32_precision_rnn ieee
//     global_state flash_sdp true
//     global_state math_sdp true
//     global_state math_sdp_reduction false
//     version torch "2.13.0+cpu"
//     version python "3.11.7"
//   }
//
// `tensor` checks the type exactly as the IR spells it: dtype, device, rank,
// each size (a static size must match; a symbol binds on first sight and
// must match after), strides when the type lists them (else contiguous), and
// requires_grad; the object must be exactly a torch.Tensor or an
// nn.Parameter (a subclass may override what operations do) whose
// dispatch keys are a plain dense tensor's: no negative or conjugate bit
// (lazy views whose data is not what they mean), no Python, functorch,
// functionalization or zero-tensor keys. The graph's symbol ranges and relations are then checked
// on the bound values. `equals` compares with a constant of the type the
// literal has (bool, int, float, str: an exact type check, then the value).
// `length` compares len() of an exact list, tuple, dict or OrderedDict (any
// other type fails), so that a container input that grew or shrank is not read as the
// one captured. `type` compares the object's type's __module__ and
// __qualname__, written
// `module:qualname` as entry points are (each part quoted when it is not made
// of `[A-Za-z0-9_.<>$]`). A source that cannot be evaluated (a missing key, an
// index out of range, a container of another type) fails its guard.
//
// `keys` lists a dict's keys as the graph IR writes constants (`["a", 0,
// true, none, 1.5, (1, "b")]`); each must be of the same exact type and
// equal (1, 1.0 and True differ).
//
// `autograd_leaf` holds for exactly a torch.Tensor or an nn.Parameter with
// no autograd history (no grad_fn) and no hook registered on it: a graph that takes a gradient
// inside (torch.autograd.grad) computed it from the history capture saw, which starts at its
// inputs, where eager's backward would go on into the caller's history and run the caller's hooks.
//
// `empty` holds for an exact dict or collections.OrderedDict without
// entries (nn.Module's hook tables). `absent` is written with an attribute
// source `base.name` and holds when base's instance __dict__ has no key
// `name` (or base has no __dict__): a value capture read from the class is
// not shadowed by the instance. Written with a class source
// `type(base).name`, it holds when no class in type(base)'s MRO has `name`
// in its own __dict__. `function` holds for a Python function
// (exactly types.FunctionType) whose __module__ and code's __qualname__
// and first line are the ones given, `builtin` for a built-in function
// (exactly types.BuiltinFunctionType) with that __module__ and __name__:
// what a function, method or helper capture inlined or called still is.
//
// `int` is a Python int argument declared dynamic (`int L['n'] : n`): the
// value must be exactly an int (a bool or an int subclass fails) in
// int64_t; a bare symbol binds there on first sight, as a tensor's size
// does, and is then checked against the graph's ranges and relations.
//
// `global_state` compares one item of torch's process- or thread-wide state
// that changes what the same calls compute, read natively per call: whether
// deterministic algorithms are on (`false`, `true` or `warn_only`), whether
// denormals flush to zero (the calling thread's FTZ/DAZ bits), and how many
// torch function modes and torch dispatch modes are active (a mode, such as
// the one torch.set_default_device pushes, reroutes every call, factory
// calls included, which the graph has already made), and the switches
// that decide which CPU kernels eager runs or what its factories' memory
// holds: whether deterministic algorithms fill uninitialized memory
// (torch.utils.deterministic.fill_uninitialized_memory), whether oneDNN is
// enabled and deterministic (torch.backends.mkldnn.enabled, .deterministic),
// whether NNPACK is enabled, and whether CPU float16 reductions may
// accumulate in reduced precision; oneDNN's float32 precision for matmuls,
// convolutions and RNNs (`ieee`, `tf32`, `bf16`, as torch resolves each
// op's setting), and which scaled_dot_product_attention kernels may run.
//
// `same SRC : OTHER` holds when both sources evaluate to one object (Python's
// `is`), `distinct SRC : OTHER` when they evaluate to two: what capture saw
// of two sources that reached one object (`self.a is self.b`, a tensor
// passed twice) or two objects one of which the program changes.
//
// `has_key SRC : KEY` holds when the dict (or OrderedDict) at SRC has the
// object at KEY as a key (Python's `KEY in SRC`, for keys that are ints,
// strs, bools, floats, None or tuples of those), `lacks_key SRC : KEY` when
// it has not: which of a module's hooks take keywords, the key being a
// hook's handle id read by its position (`list(L['self']._forward_hooks)[0]`).
// A dict holding a key of another type (whose __eq__ could answer) fails
// both.
//
// `class G['Config'] : model:Config` holds when the value is a class (a type
// object, any metaclass) whose __module__ and __qualname__ are the ones
// given, read as `type` reads an object's class: a global naming a class
// that the program constructs, checks with isinstance or catches, rebound to
// another class, misses. What capture reads from the class (its __init__,
// a method, a constant) is guarded through the same source, so a class of
// the same name with other contents misses those guards.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Argument.h"
#include "ir/Source.h"
#include "ir/Type.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace dync::ir {

enum class GuardKind : uint8_t {
  /// The value is a tensor of exactly `tensorType`.
  Tensor,
  /// type(value) has `typeModule`.`typeQualname`.
  Type,
  /// The value equals `constant` (a bool, int, float or str Argument), or
  /// is exactly torch's dtype, device, layout or memory format object it
  /// names.
  Equals,
  /// The value is None.
  None,
  /// torch.is_grad_enabled() equals `flag`.
  GradMode,
  /// torch.get_default_dtype() equals `dtype`.
  DefaultDType,
  /// The `versionOf` component ("torch", "python") was `version` at
  /// capture. Checked when the artifact loads, not per call.
  Version,
  /// The value is an exact list, tuple, dict or OrderedDict of `length`
  /// items.
  Length,
  /// The value is a dict whose keys are, in order, `keys` (each of the
  /// same exact type and equal): what iterating it yields, and which entry
  /// each position names.
  Keys,
  /// The value is an exact dict or OrderedDict with no entries.
  Empty,
  /// The source is `base.name` and base's instance dict has no key `name`,
  /// or `type(base).name` and no class of type(base)'s MRO has `name`, or
  /// `base['key']` and base, a dict, has no entry for the str `key`.
  Absent,
  /// A Python function with `typeModule`, code qualname `typeQualname` and
  /// first line `firstLine`.
  Function,
  /// A built-in function with __module__ `typeModule` and __name__
  /// `typeQualname`.
  Builtin,
  /// The value is exactly an int (not a bool) whose value is `constant`'s
  /// symbolic integer: a bare symbol not bound yet binds to it, as a
  /// tensor guard's symbolic size does; anything else must equal it.
  SymInt,
  /// The process/thread-wide item `state` has the value `stateValue`.
  GlobalState,
  /// The value is the very object at `other` (`is`): two sources reached
  /// one object when capture ran.
  Same,
  /// The value is not the object at `other`: two sources reached two
  /// objects, and the program's result depends on which it changed.
  Distinct,
  /// The value is a dict that has the object at `other` as a key.
  HasKey,
  /// The value is a dict that has not the object at `other` as a key.
  LacksKey,
  /// The value is a class (a type object) with __module__ `typeModule` and
  /// __qualname__ `typeQualname`.
  Class,
  /// The value is a tensor with no autograd history (no grad_fn) and no
  /// hook registered on it: a backward the graph takes stops there, and
  /// runs nothing of the caller's.
  AutogradLeaf,
};

/// The items a `global_state` guard can name. Their numbers are the
/// runtime's (DYNC_GLOBAL_* in dync_shim.h), so keep them in step.
enum class GlobalState : uint8_t {
  /// 0 off, 1 on, 2 on with warn_only.
  DeterministicAlgorithms = 0,
  /// 0 or 1: denormals flush to zero.
  FlushDenormal = 1,
  /// The depth of the torch function mode stack.
  TorchFunctionModes = 2,
  /// The depth of the torch dispatch mode stack.
  TorchDispatchModes = 3,
  /// The switches below are 0 or 1. Deterministic algorithms fill the
  /// memory factories leave uninitialized.
  DeterministicFill = 4,
  /// oneDNN (mkldnn) CPU kernels may be used.
  Mkldnn = 5,
  /// oneDNN kernels must be deterministic.
  MkldnnDeterministic = 6,
  /// NNPACK convolutions may be used.
  Nnpack = 7,
  /// CPU float16 reductions may accumulate in reduced precision.
  CpuFp16Reduction = 8,
  /// oneDNN's float32 precision for matmuls, convolutions and RNNs as torch
  /// resolves it: 1 ieee, 2 tf32, 3 bf16.
  Fp32PrecisionMatmul = 9,
  Fp32PrecisionConv = 10,
  Fp32PrecisionRnn = 11,
  /// 0 or 1: scaled_dot_product_attention may use its flash (fused CPU)
  /// kernel, its math kernel; the math kernel may reduce float16 and
  /// bfloat16 in reduced precision.
  FlashSdp = 12,
  MathSdp = 13,
  MathSdpReduction = 14,
};

/// `deterministic_algorithms`, `flush_denormal`, `torch_function_modes`,
/// `torch_dispatch_modes`, `deterministic_fill`, `mkldnn`,
/// `mkldnn_deterministic`, `nnpack`, `cpu_fp16_reduction`,
/// `fp32_precision_matmul`, `fp32_precision_conv`, `fp32_precision_rnn`,
/// `flash_sdp`, `math_sdp`, `math_sdp_reduction`.
llvm::StringRef spelling(GlobalState state);
std::optional<GlobalState> parseGlobalState(llvm::StringRef name);
/// The value as the text form writes it (`true`, `warn_only`, `3`), and
/// back; nullopt for a word the item does not take.
std::string spellGlobalStateValue(GlobalState state, int64_t value);
std::optional<int64_t> parseGlobalStateValue(GlobalState state, llvm::StringRef word);

/// Whether an `equals` guard may compare with a constant of \p kind beyond
/// the scalars: torch's dtype, device, layout and memory format objects.
bool isTorchConstant(Argument::Kind kind);

/// `tensor`, `type`, `equals`, `none`, `grad_mode`, `default_dtype`,
/// `version`, `length`, `keys`, `empty`, `absent`, `function`, `builtin`,
/// `int`, `global_state`, `same`, `distinct`, `has_key`, `lacks_key`,
/// `class`.
llvm::StringRef spelling(GuardKind kind);

struct Guard {
  static Guard tensor(SourcePtr source, Type type);
  static Guard type(SourcePtr source, std::string module, std::string qualname);
  /// \p constant is a bool, an int (a constant SymExpr), a float or a str.
  static Guard equals(SourcePtr source, Argument constant);
  static Guard none(SourcePtr source);
  static Guard gradMode(bool enabled);
  static Guard defaultDType(DType dtype);
  static Guard versionIs(std::string of, std::string version);
  static Guard lengthIs(SourcePtr source, int64_t length);
  static Guard keysAre(SourcePtr source, const std::vector<std::string>& keys);
  static Guard keysAre(SourcePtr source, std::vector<DictKey> keys);
  static Guard empty(SourcePtr source);
  static Guard autogradLeaf(SourcePtr source);
  /// \p source is an Attr or a ClassAttr source, or an Item source with a
  /// str key.
  static Guard absent(SourcePtr source);
  static Guard function(SourcePtr source, std::string module, std::string qualname,
                        int64_t firstLine);
  static Guard builtin(SourcePtr source, std::string module, std::string name);
  /// The value is the class \p module.\p qualname.
  static Guard classIs(SourcePtr source, std::string module, std::string qualname);
  /// \p value is the int's symbolic integer (usually a bare symbol).
  static Guard symInt(SourcePtr source, SymExpr value);
  static Guard globalState(GlobalState state, int64_t value);
  static Guard same(SourcePtr source, SourcePtr other);
  static Guard distinct(SourcePtr source, SourcePtr other);
  /// The dict at \p source has (\p has) or has not the object at \p key
  /// as a key.
  static Guard keyMembership(SourcePtr source, SourcePtr key, bool has);

  GuardKind kind = GuardKind::None;
  /// Null for GradMode, DefaultDType, Version and GlobalState.
  SourcePtr source;
  std::optional<Type> tensorType;
  /// Type, Function, Builtin and Class: the module and qualified name.
  std::string typeModule, typeQualname;
  /// Function: the code's first line.
  int64_t firstLine = 0;
  /// Equals: the constant.
  std::optional<Argument> constant;
  /// Keys: the dict's keys in order.
  std::vector<DictKey> keys;
  bool flag = false;
  DType dtype{};
  std::string versionOf, version;
  int64_t length = 0;
  /// Same and Distinct: the source the value is compared with; HasKey and
  /// LacksKey: the key's.
  SourcePtr other;
  /// GlobalState: the item and its value.
  GlobalState state{};
  int64_t stateValue = 0;
  /// Where the guard was written, when parsed from text.
  llvm::SMLoc loc;

  /// One line of the text form, without indentation or newline.
  void print(llvm::raw_ostream& os) const;
};

/// A graph's guards, in the order first recorded; each (kind, source) at
/// most once.
class GuardSet {
public:
  /// The frame's local names in localsplus order (co_varnames, then cell
  /// and free variables).
  std::vector<std::string>& localNames() { return localNames_; }
  const std::vector<std::string>& localNames() const { return localNames_; }

  /// Records \p guard unless one of its kind on the same source (or, for
  /// sourceless guards, the same kind and subject) exists.
  void add(Guard guard);
  const std::vector<Guard>& guards() const { return guards_; }
  bool empty() const { return guards_.empty(); }

  /// Where the block was written, when parsed from text.
  llvm::SMLoc loc() const { return loc_; }
  void setLoc(llvm::SMLoc loc) { loc_ = loc; }

  /// The block of the text form, `guards @NAME(locals) { ... }`.
  void print(llvm::raw_ostream& os, llvm::StringRef graphName) const;

private:
  std::vector<std::string> localNames_;
  std::vector<Guard> guards_;
  /// guards_' positions by a key equal for any two guards add() takes for
  /// the same, so a model's thousands of guards are not each compared with
  /// every earlier one.
  llvm::StringMap<llvm::SmallVector<size_t, 1>> byKey_;
  llvm::SMLoc loc_;
};

} // namespace dync::ir
