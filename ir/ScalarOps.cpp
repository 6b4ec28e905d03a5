//===- ScalarOps.cpp - Python arithmetic on floats and bools --------------===//
#include "ir/ScalarOps.h"

#include "llvm/ADT/StringSwitch.h"

namespace dync::ir {

namespace {

std::optional<ScalarOp> parseScalarOp(llvm::StringRef op) {
  if (!op.consume_front("sym::") || !op.consume_back(".default"))
    return std::nullopt;
  return llvm::StringSwitch<std::optional<ScalarOp>>(op)
      .Case("add", ScalarOp::Add)
      .Case("sub", ScalarOp::Sub)
      .Case("mul", ScalarOp::Mul)
      .Case("truediv", ScalarOp::TrueDiv)
      .Case("neg", ScalarOp::Neg)
      .Case("pos", ScalarOp::Pos)
      .Case("abs", ScalarOp::Abs)
      .Case("lt", ScalarOp::Lt)
      .Case("le", ScalarOp::Le)
      .Case("gt", ScalarOp::Gt)
      .Case("ge", ScalarOp::Ge)
      .Case("eq", ScalarOp::Eq)
      .Case("ne", ScalarOp::Ne)
      .Case("and", ScalarOp::And)
      .Case("or", ScalarOp::Or)
      .Case("xor", ScalarOp::Xor)
      .Case("float", ScalarOp::Float)
      .Default(std::nullopt);
}

} // namespace

std::optional<ScalarOp> scalarOpOf(const Node& node) {
  if (!node.isCall())
    return std::nullopt;
  return parseScalarOp(node.op());
}

bool isScalarOpName(llvm::StringRef op) { return parseScalarOp(op).has_value(); }

unsigned scalarOpArity(ScalarOp op) {
  switch (op) {
  case ScalarOp::Neg:
  case ScalarOp::Pos:
  case ScalarOp::Abs:
  case ScalarOp::Float:
    return 1;
  default:
    return 2;
  }
}

bool scalarOpGivesBool(ScalarOp op) {
  switch (op) {
  case ScalarOp::Lt:
  case ScalarOp::Le:
  case ScalarOp::Gt:
  case ScalarOp::Ge:
  case ScalarOp::Eq:
  case ScalarOp::Ne:
  case ScalarOp::And:
  case ScalarOp::Or:
  case ScalarOp::Xor:
    return true;
  default:
    return false;
  }
}

std::string checkScalarOp(const Node& node) {
  if (!node.isCall() || !node.op().starts_with("sym::"))
    return "";
  std::optional<ScalarOp> op = scalarOpOf(node);
  if (!op)
    return "'" + node.op() + "' is not one of Python's operations on numbers a graph computes";
  if (node.args().size() != scalarOpArity(*op) || !node.kwargs().empty())
    return node.op() + " takes " + std::to_string(scalarOpArity(*op)) +
           " positional operands and no keywords";
  for (const Argument& arg : node.args()) {
    const Type* type = arg.isValue() && arg.valueRef().node
                           ? arg.valueRef().node->resultType(arg.valueRef().index)
                           : nullptr;
    bool number = arg.kind() == Argument::Kind::Float || arg.kind() == Argument::Kind::Bool ||
                  arg.kind() == Argument::Kind::Sym ||
                  (type && (type->kind() == Type::Kind::Float || type->kind() == Type::Kind::Bool ||
                            type->kind() == Type::Kind::Int));
    if (!number)
      return node.op() + " takes numbers: floats, bools and ints";
  }
  Type::Kind gives = scalarOpGivesBool(*op) ? Type::Kind::Bool : Type::Kind::Float;
  if (node.type().kind() != gives)
    return node.op() + " gives a " + (gives == Type::Kind::Bool ? "bool" : "float") + ", not " +
           node.type().str();
  return "";
}

bool scalarOpIsPure(const Node& node) {
  std::optional<ScalarOp> op = scalarOpOf(node);
  if (!op)
    return false;
  if (*op != ScalarOp::TrueDiv)
    return true;
  // Division by a nonzero literal cannot raise.
  const Argument& divisor = node.args().size() == 2 ? node.args()[1] : node.args().front();
  if (divisor.kind() == Argument::Kind::Float)
    return divisor.floatValue() != 0.0;
  if (divisor.kind() == Argument::Kind::Sym && divisor.symValue().isConstant())
    return divisor.symValue().constantValue() != 0;
  return false;
}

} // namespace dync::ir
