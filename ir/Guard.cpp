//===- Guard.cpp - What a graph assumed about the frame it was captured in ===//
#include "ir/Guard.h"

#include "ir/BigIntGuard.h"
#include "ir/Syntax.h"

#include "llvm/ADT/STLExtras.h"

namespace dync::ir {

llvm::StringRef spelling(GuardKind kind) {
  switch (kind) {
  case GuardKind::Tensor:
    return "tensor";
  case GuardKind::Type:
    return "type";
  case GuardKind::Equals:
    return "equals";
  case GuardKind::None:
    return "none";
  case GuardKind::GradMode:
    return "grad_mode";
  case GuardKind::DefaultDType:
    return "default_dtype";
  case GuardKind::Version:
    return "version";
  case GuardKind::Length:
    return "length";
  case GuardKind::Keys:
    return "keys";
  case GuardKind::Empty:
    return "empty";
  case GuardKind::Absent:
    return "absent";
  case GuardKind::Function:
    return "function";
  case GuardKind::Builtin:
    return "builtin";
  case GuardKind::SymInt:
    return "int";
  case GuardKind::GlobalState:
    return "global_state";
  case GuardKind::Same:
    return "same";
  case GuardKind::Distinct:
    return "distinct";
  case GuardKind::HasKey:
    return "has_key";
  case GuardKind::LacksKey:
    return "lacks_key";
  case GuardKind::Class:
    return "class";
  case GuardKind::AutogradLeaf:
    return "autograd_leaf";
  }
  return "?";
}

bool isTorchConstant(Argument::Kind kind) {
  return kind == Argument::Kind::DType || kind == Argument::Kind::Device ||
         kind == Argument::Kind::Layout || kind == Argument::Kind::MemoryFormat;
}

/// The word a float32 precision's number is spelled with (torch's own).
static std::optional<llvm::StringRef> fp32PrecisionWord(int64_t value) {
  switch (value) {
  case 1:
    return llvm::StringRef("ieee");
  case 2:
    return llvm::StringRef("tf32");
  case 3:
    return llvm::StringRef("bf16");
  default:
    return std::nullopt;
  }
}

llvm::StringRef spelling(GlobalState state) {
  switch (state) {
  case GlobalState::DeterministicAlgorithms:
    return "deterministic_algorithms";
  case GlobalState::FlushDenormal:
    return "flush_denormal";
  case GlobalState::TorchFunctionModes:
    return "torch_function_modes";
  case GlobalState::TorchDispatchModes:
    return "torch_dispatch_modes";
  case GlobalState::DeterministicFill:
    return "deterministic_fill";
  case GlobalState::Mkldnn:
    return "mkldnn";
  case GlobalState::MkldnnDeterministic:
    return "mkldnn_deterministic";
  case GlobalState::Nnpack:
    return "nnpack";
  case GlobalState::CpuFp16Reduction:
    return "cpu_fp16_reduction";
  case GlobalState::Fp32PrecisionMatmul:
    return "fp32_precision_matmul";
  case GlobalState::Fp32PrecisionConv:
    return "fp32_precision_conv";
  case GlobalState::Fp32PrecisionRnn:
    return "fp32_precision_rnn";
  case GlobalState::FlashSdp:
    return "flash_sdp";
  case GlobalState::MathSdp:
    return "math_sdp";
  case GlobalState::MathSdpReduction:
    return "math_sdp_reduction";
  }
  return "?";
}

std::optional<GlobalState> parseGlobalState(llvm::StringRef name) {
  for (GlobalState state :
       {GlobalState::DeterministicAlgorithms, GlobalState::FlushDenormal,
        GlobalState::TorchFunctionModes, GlobalState::TorchDispatchModes,
        GlobalState::DeterministicFill, GlobalState::Mkldnn, GlobalState::MkldnnDeterministic,
        GlobalState::Nnpack, GlobalState::CpuFp16Reduction, GlobalState::Fp32PrecisionMatmul,
        GlobalState::Fp32PrecisionConv, GlobalState::Fp32PrecisionRnn, GlobalState::FlashSdp,
        GlobalState::MathSdp, GlobalState::MathSdpReduction})
    if (spelling(state) == name)
      return state;
  return std::nullopt;
}

std::string spellGlobalStateValue(GlobalState state, int64_t value) {
  switch (state) {
  case GlobalState::DeterministicAlgorithms:
    return value == 2 ? "warn_only" : value ? "true" : "false";
  case GlobalState::FlushDenormal:
  case GlobalState::DeterministicFill:
  case GlobalState::Mkldnn:
  case GlobalState::MkldnnDeterministic:
  case GlobalState::Nnpack:
  case GlobalState::CpuFp16Reduction:
  case GlobalState::FlashSdp:
  case GlobalState::MathSdp:
  case GlobalState::MathSdpReduction:
    return value ? "true" : "false";
  case GlobalState::Fp32PrecisionMatmul:
  case GlobalState::Fp32PrecisionConv:
  case GlobalState::Fp32PrecisionRnn:
    if (std::optional<llvm::StringRef> word = fp32PrecisionWord(value))
      return word->str();
    break;
  case GlobalState::TorchFunctionModes:
  case GlobalState::TorchDispatchModes:
    break;
  }
  return std::to_string(value);
}

std::optional<int64_t> parseGlobalStateValue(GlobalState state, llvm::StringRef word) {
  switch (state) {
  case GlobalState::DeterministicAlgorithms:
    if (word == "warn_only")
      return 2;
    [[fallthrough]];
  case GlobalState::FlushDenormal:
  case GlobalState::DeterministicFill:
  case GlobalState::Mkldnn:
  case GlobalState::MkldnnDeterministic:
  case GlobalState::Nnpack:
  case GlobalState::CpuFp16Reduction:
  case GlobalState::FlashSdp:
  case GlobalState::MathSdp:
  case GlobalState::MathSdpReduction:
    if (word == "true" || word == "false")
      return word == "true" ? 1 : 0;
    return std::nullopt;
  case GlobalState::Fp32PrecisionMatmul:
  case GlobalState::Fp32PrecisionConv:
  case GlobalState::Fp32PrecisionRnn:
    for (int64_t value = 1; value <= 3; ++value)
      if (fp32PrecisionWord(value) == word)
        return value;
    return std::nullopt;
  case GlobalState::TorchFunctionModes:
  case GlobalState::TorchDispatchModes: {
    int64_t depth = 0;
    if (word.getAsInteger(10, depth) || depth < 0)
      return std::nullopt;
    return depth;
  }
  }
  return std::nullopt;
}

Guard Guard::tensor(SourcePtr source, Type type) {
  Guard guard;
  guard.kind = GuardKind::Tensor;
  guard.source = std::move(source);
  guard.tensorType = std::move(type);
  return guard;
}

Guard Guard::type(SourcePtr source, std::string module, std::string qualname) {
  Guard guard;
  guard.kind = GuardKind::Type;
  guard.source = std::move(source);
  guard.typeModule = std::move(module);
  guard.typeQualname = std::move(qualname);
  return guard;
}

Guard Guard::equals(SourcePtr source, Argument constant) {
  Guard guard;
  guard.kind = GuardKind::Equals;
  guard.source = std::move(source);
  guard.constant = std::move(constant);
  return guard;
}

Guard Guard::none(SourcePtr source) {
  Guard guard;
  guard.kind = GuardKind::None;
  guard.source = std::move(source);
  return guard;
}

Guard Guard::gradMode(bool enabled) {
  Guard guard;
  guard.kind = GuardKind::GradMode;
  guard.flag = enabled;
  return guard;
}

Guard Guard::defaultDType(DType dtype) {
  Guard guard;
  guard.kind = GuardKind::DefaultDType;
  guard.dtype = dtype;
  return guard;
}

Guard Guard::versionIs(std::string of, std::string version) {
  Guard guard;
  guard.kind = GuardKind::Version;
  guard.versionOf = std::move(of);
  guard.version = std::move(version);
  return guard;
}

Guard Guard::lengthIs(SourcePtr source, int64_t length) {
  Guard guard;
  guard.kind = GuardKind::Length;
  guard.source = std::move(source);
  guard.length = length;
  return guard;
}

Guard Guard::keysAre(SourcePtr source, const std::vector<std::string>& keys) {
  std::vector<DictKey> names;
  for (const std::string& key : keys)
    names.push_back(DictKey::str(key));
  return keysAre(std::move(source), std::move(names));
}

Guard Guard::keysAre(SourcePtr source, std::vector<DictKey> keys) {
  Guard guard;
  guard.kind = GuardKind::Keys;
  guard.source = std::move(source);
  guard.keys = std::move(keys);
  return guard;
}

Guard Guard::autogradLeaf(SourcePtr source) {
  Guard guard;
  guard.kind = GuardKind::AutogradLeaf;
  guard.source = std::move(source);
  return guard;
}

Guard Guard::empty(SourcePtr source) {
  Guard guard;
  guard.kind = GuardKind::Empty;
  guard.source = std::move(source);
  return guard;
}

Guard Guard::absent(SourcePtr source) {
  Guard guard;
  guard.kind = GuardKind::Absent;
  guard.source = std::move(source);
  return guard;
}

Guard Guard::function(SourcePtr source, std::string module, std::string qualname,
                      int64_t firstLine) {
  Guard guard = type(std::move(source), std::move(module), std::move(qualname));
  guard.kind = GuardKind::Function;
  guard.firstLine = firstLine;
  return guard;
}

Guard Guard::builtin(SourcePtr source, std::string module, std::string name) {
  Guard guard = type(std::move(source), std::move(module), std::move(name));
  guard.kind = GuardKind::Builtin;
  return guard;
}

Guard Guard::classIs(SourcePtr source, std::string module, std::string qualname) {
  Guard guard = type(std::move(source), std::move(module), std::move(qualname));
  guard.kind = GuardKind::Class;
  return guard;
}

Guard Guard::same(SourcePtr source, SourcePtr other) {
  Guard guard;
  guard.kind = GuardKind::Same;
  guard.source = std::move(source);
  guard.other = std::move(other);
  return guard;
}

Guard Guard::distinct(SourcePtr source, SourcePtr other) {
  Guard guard = same(std::move(source), std::move(other));
  guard.kind = GuardKind::Distinct;
  return guard;
}

Guard Guard::keyMembership(SourcePtr source, SourcePtr key, bool has) {
  Guard guard = same(std::move(source), std::move(key));
  guard.kind = has ? GuardKind::HasKey : GuardKind::LacksKey;
  return guard;
}

Guard Guard::globalState(GlobalState state, int64_t value) {
  Guard guard;
  guard.kind = GuardKind::GlobalState;
  guard.state = state;
  guard.stateValue = value;
  return guard;
}

/// One part of a `module:qualname` type name: bare when it is made of the
/// characters Python's dotted names (and `<locals>`) use, else quoted.
static void printTypeNamePart(llvm::raw_ostream& os, llvm::StringRef part) {
  if (isBareGraphName(part))
    os << part;
  else
    printQuoted(os, part);
}

Guard Guard::symInt(SourcePtr source, SymExpr value) {
  Guard guard;
  guard.kind = GuardKind::SymInt;
  guard.source = std::move(source);
  guard.constant = Argument::sym(value);
  return guard;
}

void Guard::print(llvm::raw_ostream& os) const {
  os << spelling(kind);
  if (source) {
    os << ' ';
    source->print(os);
  }
  switch (kind) {
  case GuardKind::Tensor:
    os << " : ";
    if (tensorType)
      tensorType->print(os);
    return;
  case GuardKind::Type:
  case GuardKind::Function:
  case GuardKind::Builtin:
  case GuardKind::Class:
    os << " : ";
    printTypeNamePart(os, typeModule);
    os << ':';
    printTypeNamePart(os, typeQualname);
    if (kind == GuardKind::Function)
      os << " line " << firstLine;
    return;
  case GuardKind::Equals:
    os << " : ";
    // An int beyond 64 bits is written as any int is (BigIntGuard.h).
    if (std::optional<llvm::StringRef> digits = bigIntOf(*this))
      os << *digits;
    else
      (constant ? *constant : Argument::none()).print(os);
    return;
  case GuardKind::None:
  case GuardKind::Empty:
  case GuardKind::Absent:
  case GuardKind::AutogradLeaf:
    return;
  case GuardKind::GradMode:
    os << (flag ? " true" : " false");
    return;
  case GuardKind::DefaultDType:
    os << ' ' << spelling(dtype);
    return;
  case GuardKind::Version:
    os << ' ' << versionOf << ' ';
    printQuoted(os, version);
    return;
  case GuardKind::Length:
    os << " : " << length;
    return;
  case GuardKind::Keys:
    os << " : [";
    llvm::interleaveComma(keys, os, [&](const DictKey& key) { key.print(os, /*python=*/false); });
    os << ']';
    return;
  case GuardKind::SymInt:
    os << " : ";
    (constant ? *constant : Argument::none()).print(os);
    return;
  case GuardKind::GlobalState:
    os << ' ' << spelling(state) << ' ' << spellGlobalStateValue(state, stateValue);
    return;
  case GuardKind::Same:
  case GuardKind::Distinct:
  case GuardKind::HasKey:
  case GuardKind::LacksKey:
    os << " : ";
    if (other)
      other->print(os);
    return;
  }
}

namespace {

/// Whether the earlier guard \p g makes \p guard redundant: the same kind
/// on the same source (or pair of sources, or dict and key), or, for
/// sourceless guards, on the same subject.
bool sameSubject(const Guard& g, const Guard& guard) {
  if (g.kind != guard.kind)
    return false;
  // A relation between two sources: one guard per pair.
  if (guard.kind == GuardKind::Same || guard.kind == GuardKind::Distinct)
    return g.source && guard.source && g.other && guard.other &&
           ((*g.source == *guard.source && *g.other == *guard.other) ||
            (*g.source == *guard.other && *g.other == *guard.source));
  // A key in a dict: one guard per dict and key.
  if (guard.kind == GuardKind::HasKey || guard.kind == GuardKind::LacksKey)
    return g.source && guard.source && g.other && guard.other && *g.source == *guard.source &&
           *g.other == *guard.other;
  if (g.source || guard.source)
    return g.source && guard.source && *g.source == *guard.source;
  // Process-wide state: one guard per subject.
  if (guard.kind == GuardKind::GlobalState)
    return g.state == guard.state;
  return guard.kind != GuardKind::Version || g.versionOf == guard.versionOf;
}

/// A key equal for any two guards sameSubject() relates (equal sources
/// print alike); sameSubject() still decides among guards of one key.
std::string subjectKey(const Guard& guard) {
  std::string key = std::to_string(static_cast<int>(guard.kind)) + ':';
  std::string source = guard.source ? guard.source->str() : "";
  std::string other = guard.other ? guard.other->str() : "";
  switch (guard.kind) {
  case GuardKind::Same:
  case GuardKind::Distinct:
    if (other < source)
      std::swap(source, other);
    return key + source + '\n' + other;
  case GuardKind::HasKey:
  case GuardKind::LacksKey:
    return key + source + '\n' + other;
  default:
    break;
  }
  if (guard.source)
    return key + source;
  if (guard.kind == GuardKind::GlobalState)
    return key + std::to_string(static_cast<int>(guard.state));
  if (guard.kind == GuardKind::Version)
    return key + guard.versionOf;
  return key;
}

} // namespace

void GuardSet::add(Guard guard) {
  llvm::SmallVector<size_t, 1>& positions = byKey_[subjectKey(guard)];
  if (llvm::any_of(positions, [&](size_t i) { return sameSubject(guards_[i], guard); }))
    return;
  positions.push_back(guards_.size());
  guards_.push_back(std::move(guard));
}

void GuardSet::print(llvm::raw_ostream& os, llvm::StringRef graphName) const {
  os << "guards @";
  if (isBareGraphName(graphName))
    os << graphName;
  else
    printQuoted(os, graphName);
  os << '(';
  llvm::interleaveComma(localNames_, os, [&](const std::string& name) {
    if (isIdentifier(name))
      os << name;
    else
      printQuoted(os, name);
  });
  os << ") {\n";
  for (const Guard& guard : guards_) {
    os << "  ";
    guard.print(os);
    os << '\n';
  }
  os << "}\n";
}

} // namespace dync::ir
