//===- KernelOps.cpp - The overloads kernels compute, as a table ---------===//
//
// Each row names an ATen overload, the element operation it computes and
// the form of its arguments; describeElement() reads a node through its row.
// The element semantics are the overloads' documented meaning; shapes,
// dtypes and strides are never derived here, only checked against what
// kernel codegen lowers.
//
//===----------------------------------------------------------------------===//
#include "ir/kernel/KernelOps.h"
#include "ir/kernel/ElementOps.h"

#include "ir/Graph.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace dync::ir {
namespace {

/// How an overload's arguments map to element operands.
enum class Form : uint8_t {
  Unary,       // (self)
  Binary,      // (self, other)
  BinaryAlpha, // (self, other, alpha=1)
  DivMode,     // (self, other, *, rounding_mode)
  Gelu,        // (self, *, approximate)
  PowScalar,   // (self, exponent): a few exponents with exact meanings
  Clamp,       // (self, min?, max?)
  ClampMin,    // (self, min)
  ClampMax,    // (self, max)
  Hardtanh,    // (self, min_val=-1, max_val=1): clamp, for float tensors
  BitwiseBool, // (self, other): bitwise ops of bool tensors, which are logical
  Where,       // (condition, self, other)
  ToCopy,      // (self, *, dtype, ...): a dtype conversion only
  Clone,       // (self, *, memory_format): the same values, in the result's layout
  Reduce,      // (self, dim, keepdim, *, dtype)
};

struct Row {
  llvm::StringLiteral overload;
  ElementOp op;
  Form form;
};

// The lowering table. Comparisons and logical ops share their forms with
// arithmetic: Tensor and Scalar overloads differ only in whether `other` may
// be a tensor, which the operand reader accepts either way.
constexpr Row kRows[] = {
    {"aten::add.Tensor", ElementOp::Add, Form::BinaryAlpha},
    {"aten::add.Scalar", ElementOp::Add, Form::BinaryAlpha},
    {"aten::sub.Tensor", ElementOp::Sub, Form::BinaryAlpha},
    {"aten::sub.Scalar", ElementOp::Sub, Form::BinaryAlpha},
    {"aten::mul.Tensor", ElementOp::Mul, Form::Binary},
    {"aten::mul.Scalar", ElementOp::Mul, Form::Binary},
    {"aten::div.Tensor", ElementOp::Div, Form::Binary},
    {"aten::div.Scalar", ElementOp::Div, Form::Binary},
    {"aten::div.Tensor_mode", ElementOp::Div, Form::DivMode},
    {"aten::div.Scalar_mode", ElementOp::Div, Form::DivMode},
    {"aten::neg.default", ElementOp::Neg, Form::Unary},
    {"aten::abs.default", ElementOp::Abs, Form::Unary},
    {"aten::reciprocal.default", ElementOp::Reciprocal, Form::Unary},
    {"aten::square.default", ElementOp::Square, Form::Unary},
    {"aten::sqrt.default", ElementOp::Sqrt, Form::Unary},
    {"aten::rsqrt.default", ElementOp::Rsqrt, Form::Unary},
    {"aten::exp.default", ElementOp::Exp, Form::Unary},
    {"aten::log.default", ElementOp::Log, Form::Unary},
    {"aten::sigmoid.default", ElementOp::Sigmoid, Form::Unary},
    {"aten::tanh.default", ElementOp::Tanh, Form::Unary},
    {"aten::erf.default", ElementOp::Erf, Form::Unary},
    {"aten::relu.default", ElementOp::Relu, Form::Unary},
    {"aten::gelu.default", ElementOp::Gelu, Form::Gelu},
    {"aten::pow.Tensor_Scalar", ElementOp::Square, Form::PowScalar},
    {"aten::maximum.default", ElementOp::Maximum, Form::Binary},
    {"aten::minimum.default", ElementOp::Minimum, Form::Binary},
    {"aten::clamp.default", ElementOp::Clamp, Form::Clamp},
    {"aten::clamp_min.default", ElementOp::Clamp, Form::ClampMin},
    {"aten::clamp_max.default", ElementOp::Clamp, Form::ClampMax},
    {"aten::hardtanh.default", ElementOp::Clamp, Form::Hardtanh},
    {"aten::where.self", ElementOp::Where, Form::Where},
    {"aten::eq.Tensor", ElementOp::Eq, Form::Binary},
    {"aten::eq.Scalar", ElementOp::Eq, Form::Binary},
    {"aten::ne.Tensor", ElementOp::Ne, Form::Binary},
    {"aten::ne.Scalar", ElementOp::Ne, Form::Binary},
    {"aten::lt.Tensor", ElementOp::Lt, Form::Binary},
    {"aten::lt.Scalar", ElementOp::Lt, Form::Binary},
    {"aten::le.Tensor", ElementOp::Le, Form::Binary},
    {"aten::le.Scalar", ElementOp::Le, Form::Binary},
    {"aten::gt.Tensor", ElementOp::Gt, Form::Binary},
    {"aten::gt.Scalar", ElementOp::Gt, Form::Binary},
    {"aten::ge.Tensor", ElementOp::Ge, Form::Binary},
    {"aten::ge.Scalar", ElementOp::Ge, Form::Binary},
    {"aten::logical_and.default", ElementOp::LogicalAnd, Form::Binary},
    {"aten::logical_or.default", ElementOp::LogicalOr, Form::Binary},
    {"aten::logical_xor.default", ElementOp::LogicalXor, Form::Binary},
    {"aten::logical_not.default", ElementOp::LogicalNot, Form::Unary},
    {"aten::bitwise_and.Tensor", ElementOp::LogicalAnd, Form::BitwiseBool},
    {"aten::bitwise_or.Tensor", ElementOp::LogicalOr, Form::BitwiseBool},
    {"aten::bitwise_xor.Tensor", ElementOp::LogicalXor, Form::BitwiseBool},
    {"aten::_to_copy.default", ElementOp::Convert, Form::ToCopy},
    {"aten::clone.default", ElementOp::Convert, Form::Clone},
    {"aten::sum.dim_IntList", ElementOp::Sum, Form::Reduce},
    {"aten::mean.dim", ElementOp::Mean, Form::Reduce},
    {"aten::amax.default", ElementOp::Amax, Form::Reduce},
    {"aten::amin.default", ElementOp::Amin, Form::Reduce},
};

const Row* findRow(llvm::StringRef overload) {
  static const llvm::StringMap<const Row*> rows = [] {
    llvm::StringMap<const Row*> map;
    for (const Row& row : kRows)
      map[row.overload] = &row;
    return map;
  }();
  auto it = rows.find(overload);
  return it == rows.end() ? nullptr : it->second;
}

llvm::Error unsupported(const Node& node, const llvm::Twine& why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "%" + node.name() + " = " + node.op() + ": " + why);
}

/// Argument \p index, or keyword \p name; null when absent (the default).
const Argument* findArg(const Node& node, size_t index, llvm::StringRef name) {
  if (index < node.args().size())
    return &node.args()[index];
  for (const KeywordArgument& kwarg : node.kwargs())
    if (kwarg.name == name)
      return &kwarg.value;
  return nullptr;
}

/// Whether \p node has nothing beyond its first \p positional arguments and
/// the keywords \p known.
bool onlyKnownArgs(const Node& node, size_t positional,
                   std::initializer_list<llvm::StringRef> known) {
  if (node.args().size() > positional)
    return false;
  return llvm::all_of(node.kwargs(), [&](const KeywordArgument& kwarg) {
    return llvm::is_contained(known, kwarg.name);
  });
}

const Type* typeOf(const ValueRef& ref) {
  return ref.node ? ref.node->resultType(ref.index) : nullptr;
}

bool isKernelTensor(const Type* type) {
  // A sparse tensor's values are not its elements in order: ATen computes
  // on it.
  return type && type->isTensor() && !type->isSparse() && isKernelDType(type->dtype()) &&
         type->device().kind == DeviceKind::CPU;
}

bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::BF16 || dtype == DType::F16;
}

/// A tensor or number operand; null on anything else.
std::optional<ElementOperand> readOperand(const Argument& arg) {
  switch (arg.kind()) {
  case Argument::Kind::Value:
    if (!isKernelTensor(typeOf(arg.valueRef())))
      return std::nullopt;
    return ElementOperand::tensor(arg.valueRef());
  case Argument::Kind::Float:
    return ElementOperand::floating(arg.floatValue());
  case Argument::Kind::Sym:
    return ElementOperand::integer(arg.symValue());
  case Argument::Kind::Bool:
    return ElementOperand::boolean(arg.boolValue());
  default:
    return std::nullopt;
  }
}

/// A constant number operand's value as a double, if it is one.
std::optional<double> constantNumber(const ElementOperand& operand) {
  switch (operand.kind) {
  case ElementOperand::Kind::Float:
    return operand.floatValue;
  case ElementOperand::Kind::Int:
    if (operand.intValue.isConstant())
      return static_cast<double>(operand.intValue.constantValue());
    return std::nullopt;
  case ElementOperand::Kind::Bool:
    return operand.boolValue ? 1.0 : 0.0;
  default:
    return std::nullopt;
  }
}

/// Comparisons compute in their operands' common dtype, which the node's
/// bool result does not give. Lowered only where it is evident: two tensors
/// of one dtype, or a tensor and a number of no higher category (a float
/// number against an int tensor would promote to the default dtype).
bool comparisonOperandsLowered(const ElementOperand& a, const ElementOperand& b) {
  if (!a.isTensor())
    return false;
  DType dtype = typeOf(a.value)->dtype();
  switch (b.kind) {
  case ElementOperand::Kind::Tensor:
    return typeOf(b.value)->dtype() == dtype;
  case ElementOperand::Kind::Float:
    return isFloat(dtype);
  case ElementOperand::Kind::Int:
    return dtype != DType::Bool;
  case ElementOperand::Kind::Bool:
    return true;
  case ElementOperand::Kind::Absent:
    return false;
  }
  return false;
}

llvm::Error readReduction(const Node& node, const Type& input, ElementDescription& desc) {
  unsigned rank = input.sizes().size();
  const Argument* dims = findArg(node, 1, "dim");
  const Argument* keepDim = findArg(node, 2, "keepdim");
  if (keepDim && keepDim->kind() != Argument::Kind::Bool)
    return unsupported(node, "keepdim is not a literal bool");
  desc.keepDim = keepDim && keepDim->boolValue();
  bool all = !dims || dims->kind() == Argument::Kind::None ||
             (dims->kind() == Argument::Kind::List && dims->elements().empty());
  if (all) {
    for (unsigned d = 0; d < rank; ++d)
      desc.reducedDims.push_back(d);
    return llvm::Error::success();
  }
  if (dims->kind() != Argument::Kind::List)
    return unsupported(node, "dim is not a list");
  for (const Argument& dim : dims->elements()) {
    if (dim.kind() != Argument::Kind::Sym || !dim.symValue().isConstant())
      return unsupported(node, "a reduced dimension is not a constant");
    int64_t d = dim.symValue().constantValue();
    int64_t bound = std::max<int64_t>(rank, 1);
    if (d < -bound || d >= bound)
      return unsupported(node, "a reduced dimension is out of range");
    if (rank == 0)
      continue;
    desc.reducedDims.push_back(static_cast<unsigned>(d < 0 ? d + rank : d));
  }
  llvm::sort(desc.reducedDims);
  if (std::adjacent_find(desc.reducedDims.begin(), desc.reducedDims.end()) !=
      desc.reducedDims.end())
    return unsupported(node, "a dimension is reduced twice");
  return llvm::Error::success();
}

/// Which result dtypes each operation is lowered for.
llvm::Error checkResultDType(const Node& node, ElementOp op, DType result) {
  switch (op) {
  case ElementOp::Div:
  case ElementOp::DivTrunc:
  case ElementOp::Reciprocal:
  case ElementOp::Sqrt:
  case ElementOp::Rsqrt:
  case ElementOp::Exp:
  case ElementOp::Log:
  case ElementOp::Sigmoid:
  case ElementOp::Tanh:
  case ElementOp::Erf:
  case ElementOp::Gelu:
  case ElementOp::GeluTanh:
  case ElementOp::Mean:
    if (!isFloat(result))
      return unsupported(node, "lowered for float results only");
    return llvm::Error::success();
  case ElementOp::Eq:
  case ElementOp::Ne:
  case ElementOp::Lt:
  case ElementOp::Le:
  case ElementOp::Gt:
  case ElementOp::Ge:
  case ElementOp::LogicalAnd:
  case ElementOp::LogicalOr:
  case ElementOp::LogicalXor:
  case ElementOp::LogicalNot:
    if (result != DType::Bool)
      return unsupported(node, "a comparison or logical op whose result is not bool");
    return llvm::Error::success();
  case ElementOp::Where:
  case ElementOp::Convert:
    return llvm::Error::success();
  default:
    // Arithmetic on bool has its own meanings (add is or, ...): not lowered.
    if (result == DType::Bool)
      return unsupported(node, "arithmetic with a bool result is not lowered");
    return llvm::Error::success();
  }
}

} // namespace

ElementOperand ElementOperand::tensor(ValueRef value) {
  ElementOperand operand;
  operand.kind = Kind::Tensor;
  operand.value = value;
  return operand;
}
ElementOperand ElementOperand::floating(double value) {
  ElementOperand operand;
  operand.kind = Kind::Float;
  operand.floatValue = value;
  return operand;
}
ElementOperand ElementOperand::integer(SymExpr value) {
  ElementOperand operand;
  operand.kind = Kind::Int;
  operand.intValue = value;
  return operand;
}
ElementOperand ElementOperand::boolean(bool value) {
  ElementOperand operand;
  operand.kind = Kind::Bool;
  operand.boolValue = value;
  return operand;
}
ElementOperand ElementOperand::absent() {
  ElementOperand operand;
  operand.kind = Kind::Absent;
  return operand;
}

bool isKernelDType(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::F64:
  case DType::BF16:
  case DType::F16:
  case DType::I64:
  case DType::I32:
  case DType::Bool:
    return true;
  default:
    return false;
  }
}

bool isReduction(ElementOp op) {
  return op == ElementOp::Sum || op == ElementOp::Mean || op == ElementOp::Amax ||
         op == ElementOp::Amin;
}

bool isComparison(ElementOp op) {
  return op == ElementOp::Eq || op == ElementOp::Ne || op == ElementOp::Lt || op == ElementOp::Le ||
         op == ElementOp::Gt || op == ElementOp::Ge;
}

bool isLogical(ElementOp op) {
  return op == ElementOp::LogicalAnd || op == ElementOp::LogicalOr || op == ElementOp::LogicalXor ||
         op == ElementOp::LogicalNot;
}

llvm::StringRef spelling(ElementOp op) {
  static constexpr llvm::StringLiteral names[] = {
      "add",    "sub",     "mul",       "div",     "div_trunc", "neg",     "abs",   "recip",
      "square", "sqrt",    "rsqrt",     "exp",     "log",       "sigmoid", "tanh",  "erf",
      "relu",   "gelu",    "gelu_tanh", "maximum", "minimum",   "clamp",   "where", "eq",
      "ne",     "lt",      "le",        "gt",      "ge",        "and",     "or",    "xor",
      "not",    "convert", "sum",       "mean",    "amax",      "amin"};
  static_assert(std::size(names) == static_cast<size_t>(ElementOp::Amin) + 1);
  return names[static_cast<size_t>(op)];
}

llvm::ArrayRef<llvm::StringRef> kernelOverloads() {
  static const std::vector<llvm::StringRef> overloads = [] {
    std::vector<llvm::StringRef> list;
    for (const Row& row : kRows)
      list.push_back(row.overload);
    return list;
  }();
  return overloads;
}

llvm::Expected<ElementDescription> describeElement(const Node& node) {
  if (!node.isCall())
    return unsupported(node, "not a call");
  const Row* row = findRow(node.op());
  if (!row)
    return unsupported(node, "not an overload kernels compute");
  const Type& result = node.type();
  if (!isKernelTensor(&result))
    return unsupported(node, "the result is not a CPU tensor of a dtype kernels compute");

  ElementDescription desc;
  desc.op = row->op;
  desc.opClass = row->form == Form::Reduce ? KernelOpClass::Reduction : KernelOpClass::Pointwise;

  // Positional operands, each a tensor or a number.
  auto operand = [&](size_t index, llvm::StringRef name,
                     bool tensorOnly) -> llvm::Expected<ElementOperand> {
    const Argument* arg = findArg(node, index, name);
    if (!arg)
      return unsupported(node, "argument '" + name + "' is missing");
    std::optional<ElementOperand> read = readOperand(*arg);
    if (!read || (tensorOnly && !read->isTensor()))
      return unsupported(node,
                         "argument '" + name + "' is not a tensor kernels compute or a number");
    return *read;
  };
  auto push = [&](llvm::Expected<ElementOperand> read) -> llvm::Error {
    if (!read)
      return read.takeError();
    desc.operands.push_back(*read);
    return llvm::Error::success();
  };
  auto pushBound = [&](size_t index, llvm::StringRef name) -> llvm::Error {
    const Argument* arg = findArg(node, index, name);
    if (!arg || arg->kind() == Argument::Kind::None) {
      desc.operands.push_back(ElementOperand::absent());
      return llvm::Error::success();
    }
    std::optional<ElementOperand> read = readOperand(*arg);
    if (!read || read->isTensor())
      return unsupported(node, "clamp bound '" + name + "' is not a number");
    desc.operands.push_back(*read);
    return llvm::Error::success();
  };

  switch (row->form) {
  case Form::Unary:
    if (!onlyKnownArgs(node, 1, {}))
      return unsupported(node, "unexpected arguments");
    if (auto err = push(operand(0, "self", true)))
      return err;
    break;
  case Form::Binary:
    if (!onlyKnownArgs(node, 2, {}))
      return unsupported(node, "unexpected arguments");
    if (auto err = push(operand(0, "self", true)))
      return err;
    if (auto err = push(operand(1, "other", false)))
      return err;
    break;
  case Form::BinaryAlpha: {
    if (!onlyKnownArgs(node, 3, {"alpha"}))
      return unsupported(node, "unexpected arguments");
    if (auto err = push(operand(0, "self", true)))
      return err;
    if (auto err = push(operand(1, "other", false)))
      return err;
    const Argument* alpha = findArg(node, 2, "alpha");
    if (!alpha) {
      // Absent means 1: codegen then emits a plain a + b.
      desc.operands.push_back(ElementOperand::absent());
    } else {
      std::optional<ElementOperand> read = readOperand(*alpha);
      if (!read || read->isTensor())
        return unsupported(node, "alpha is not a number");
      desc.operands.push_back(*read);
    }
    break;
  }
  case Form::DivMode: {
    if (!onlyKnownArgs(node, 2, {"rounding_mode"}))
      return unsupported(node, "unexpected arguments");
    if (auto err = push(operand(0, "self", true)))
      return err;
    if (auto err = push(operand(1, "other", false)))
      return err;
    const Argument* mode = findArg(node, 2, "rounding_mode");
    if (!mode || mode->kind() == Argument::Kind::None)
      break;
    if (mode->kind() != Argument::Kind::String)
      return unsupported(node, "rounding_mode is not a string");
    // Floor rounding needs fmod's exact remainder to match torch at the
    // boundaries; only truncation is lowered.
    if (mode->stringValue() != "trunc")
      return unsupported(node, "rounding_mode '" + mode->stringValue() + "' is not lowered");
    desc.op = ElementOp::DivTrunc;
    break;
  }
  case Form::Gelu: {
    if (!onlyKnownArgs(node, 1, {"approximate"}))
      return unsupported(node, "unexpected arguments");
    if (auto err = push(operand(0, "self", true)))
      return err;
    const Argument* approximate = findArg(node, 1, "approximate");
    if (approximate) {
      if (approximate->kind() != Argument::Kind::String)
        return unsupported(node, "approximate is not a string");
      if (approximate->stringValue() == "tanh")
        desc.op = ElementOp::GeluTanh;
      else if (approximate->stringValue() != "none")
        return unsupported(node, "approximate '" + approximate->stringValue() + "'");
    }
    break;
  }
  case Form::PowScalar: {
    if (!onlyKnownArgs(node, 2, {}))
      return unsupported(node, "unexpected arguments");
    if (auto err = push(operand(0, "self", true)))
      return err;
    const Argument* exponent = findArg(node, 1, "exponent");
    std::optional<ElementOperand> read = exponent ? readOperand(*exponent) : std::nullopt;
    std::optional<double> value = read ? constantNumber(*read) : std::nullopt;
    // The exponents torch itself computes without pow(): x*x, sqrt, 1/sqrt, 1/x.
    if (value && *value == 2.0)
      desc.op = ElementOp::Square;
    else if (value && *value == 0.5)
      desc.op = ElementOp::Sqrt;
    else if (value && *value == -0.5)
      desc.op = ElementOp::Rsqrt;
    else if (value && *value == -1.0)
      desc.op = ElementOp::Reciprocal;
    else
      return unsupported(node, "only the exponents 2, 0.5, -0.5 and -1 are lowered");
    break;
  }
  case Form::Clamp:
    if (!onlyKnownArgs(node, 3, {"min", "max"}))
      return unsupported(node, "unexpected arguments");
    if (auto err = push(operand(0, "self", true)))
      return err;
    if (auto err = pushBound(1, "min"))
      return err;
    if (auto err = pushBound(2, "max"))
      return err;
    break;
  case Form::ClampMin:
  case Form::ClampMax: {
    bool isMin = row->form == Form::ClampMin;
    if (!onlyKnownArgs(node, 2, {}))
      return unsupported(node, "unexpected arguments");
    if (auto err = push(operand(0, "self", true)))
      return err;
    if (!isMin)
      desc.operands.push_back(ElementOperand::absent());
    if (auto err = pushBound(1, isMin ? "min" : "max"))
      return err;
    if (desc.operands.back().kind == ElementOperand::Kind::Absent)
      return unsupported(node, "the bound is missing");
    if (isMin)
      desc.operands.push_back(ElementOperand::absent());
    break;
  }
  case Form::Hardtanh: {
    // ATen's hardtanh is clamp_out with the two bounds (relu6 is
    // hardtanh(x, 0, 6)). For integer tensors it first truncates the
    // bounds to integers; only float results are lowered.
    if (!onlyKnownArgs(node, 3, {"min_val", "max_val"}))
      return unsupported(node, "unexpected arguments");
    if (!isFloat(result.dtype()))
      return unsupported(node, "hardtanh is lowered for float tensors only");
    if (auto err = push(operand(0, "self", true)))
      return err;
    for (auto [index, name, byDefault] :
         {std::tuple<size_t, llvm::StringRef, double>{1, "min_val", -1.0}, {2, "max_val", 1.0}}) {
      const Argument* arg = findArg(node, index, name);
      std::optional<ElementOperand> read =
          arg ? readOperand(*arg) : ElementOperand::floating(byDefault);
      std::optional<double> value = read ? constantNumber(*read) : std::nullopt;
      if (!value)
        return unsupported(node, "hardtanh bound '" + name + "' is not a constant number");
      desc.operands.push_back(ElementOperand::floating(*value));
    }
    break;
  }
  case Form::BitwiseBool:
    // On bools, &, | and ^ are the logical operations (attention masks
    // combine padding and causal masks this way); on integers they are
    // bitwise, which no element op computes.
    if (!onlyKnownArgs(node, 2, {}))
      return unsupported(node, "unexpected arguments");
    if (auto err = push(operand(0, "self", true)))
      return err;
    if (auto err = push(operand(1, "other", true)))
      return err;
    if (result.dtype() != DType::Bool ||
        llvm::any_of(desc.operands, [](const ElementOperand& operand) {
          return typeOf(operand.value)->dtype() != DType::Bool;
        }))
      return unsupported(node, "bitwise operations are lowered for bool tensors only");
    break;
  case Form::Where:
    if (!onlyKnownArgs(node, 3, {}))
      return unsupported(node, "unexpected arguments");
    if (auto err = push(operand(0, "condition", true)))
      return err;
    if (typeOf(desc.operands[0].value)->dtype() != DType::Bool)
      return unsupported(node, "the condition is not a bool tensor");
    if (auto err = push(operand(1, "self", false)))
      return err;
    if (auto err = push(operand(2, "other", false)))
      return err;
    break;
  case Form::Clone:
    // Any memory format: the result's type holds the layout it asks for,
    // and kernels store in the layout of the type.
    if (!onlyKnownArgs(node, 1, {"memory_format"}))
      return unsupported(node, "unexpected arguments");
    if (auto err = push(operand(0, "self", true)))
      return err;
    break;
  case Form::ToCopy: {
    if (!onlyKnownArgs(
            node, 1, {"dtype", "layout", "device", "pin_memory", "non_blocking", "memory_format"}))
      return unsupported(node, "unexpected arguments");
    if (auto err = push(operand(0, "self", true)))
      return err;
    // Only a dtype change (or none) is an element conversion; a device or
    // layout change, pinning or a memory format other than preserve is not.
    for (const KeywordArgument& kwarg : node.kwargs()) {
      const Argument& value = kwarg.value;
      bool harmless =
          value.kind() == Argument::Kind::None || kwarg.name == "dtype" ||
          (kwarg.name == "non_blocking" && value.kind() == Argument::Kind::Bool) ||
          (kwarg.name == "layout" && value.kind() == Argument::Kind::Layout &&
           value.layoutValue() == Layout::Strided) ||
          (kwarg.name == "device" && value.kind() == Argument::Kind::Device &&
           value.deviceValue().kind == DeviceKind::CPU) ||
          (kwarg.name == "pin_memory" && value.kind() == Argument::Kind::Bool &&
           !value.boolValue()) ||
          (kwarg.name == "memory_format" && value.kind() == Argument::Kind::MemoryFormat &&
           value.memoryFormatValue() == MemoryFormat::Preserve);
      if (!harmless)
        return unsupported(node, "_to_copy with '" + kwarg.name + "' is not a dtype conversion");
      if (kwarg.name == "dtype" && value.kind() == Argument::Kind::DType &&
          value.dtypeValue() != result.dtype())
        return unsupported(node, "dtype argument differs from the result type");
    }
    break;
  }
  case Form::Reduce: {
    bool isMax = row->op == ElementOp::Amax || row->op == ElementOp::Amin;
    if (!onlyKnownArgs(node, 3,
                       isMax ? std::initializer_list<llvm::StringRef>{"dim", "keepdim"}
                             : std::initializer_list<llvm::StringRef>{"dim", "keepdim", "dtype"}))
      return unsupported(node, "unexpected arguments");
    if (auto err = push(operand(0, "self", true)))
      return err;
    if (auto err = readReduction(node, *typeOf(desc.operands[0].value), desc))
      return err;
    if (isMax && (typeOf(desc.operands[0].value)->dtype() != result.dtype() ||
                  result.dtype() == DType::Bool))
      return unsupported(node, "amax/amin lowered for one non-bool dtype only");
    break;
  }
  }

  if (auto err = checkResultDType(node, desc.op, result.dtype()))
    return err;
  if (isComparison(desc.op) && !comparisonOperandsLowered(desc.operands[0], desc.operands[1]))
    return unsupported(node, "comparison operands of mixed dtype categories are not lowered");
  return desc;
}

KernelOpClass kernelOpClass(const Node& node) {
  llvm::Expected<ElementDescription> desc = describeElement(node);
  if (!desc) {
    llvm::consumeError(desc.takeError());
    return KernelOpClass::None;
  }
  return desc->opClass;
}

} // namespace dync::ir
