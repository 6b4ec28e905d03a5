//===- ScalarOps.cpp - Python arithmetic on floats and bools --------------===//
#include "ir/ScalarOps.h"

#include "llvm/ADT/StringSwitch.h"

namespace dync::ir {

namespace {

std::optional<ScalarOp> parseScalarOp(llvm::StringRef op) {
  if (!op.consume_front("sym::"))
    return std::nullopt;
  // divmod()'s parts: floor division and modulo raising divmod's text.
  if (op == "floordiv.divmod")
    return ScalarOp::FloorDiv;
  if (op == "mod.divmod")
    return ScalarOp::Mod;
  if (!op.consume_back(".default"))
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
      .Case("pow", ScalarOp::Pow)
      .Case("floordiv", ScalarOp::FloorDiv)
      .Case("mod", ScalarOp::Mod)
      .Case("int", ScalarOp::Int)
      .Case("round", ScalarOp::Round)
      .Case("floor", ScalarOp::Floor)
      .Case("ceil", ScalarOp::Ceil)
      .Case("sqrt", ScalarOp::Sqrt)
      .Case("exp", ScalarOp::Exp)
      .Case("log", ScalarOp::Log)
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
  case ScalarOp::Int:
  case ScalarOp::Round:
  case ScalarOp::Floor:
  case ScalarOp::Ceil:
  case ScalarOp::Sqrt:
  case ScalarOp::Exp:
  case ScalarOp::Log:
    return 1;
  default:
    return 2;
  }
}

bool scalarOpGivesInt(ScalarOp op) {
  return op == ScalarOp::Int || op == ScalarOp::Round || op == ScalarOp::Floor ||
         op == ScalarOp::Ceil;
}

bool scalarOpGivesFloat(ScalarOp op) {
  return op == ScalarOp::TrueDiv || op == ScalarOp::Float || op == ScalarOp::Sqrt ||
         op == ScalarOp::Exp || op == ScalarOp::Log;
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
  // round(x, ndigits) of a float is a float.
  bool roundDigits = *op == ScalarOp::Round && node.args().size() == 2;
  if ((node.args().size() != scalarOpArity(*op) && !roundDigits) || !node.kwargs().empty())
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
  Type::Kind kind = node.type().kind();
  // An int result is a symbol the node computes, as item()'s is.
  bool isInt =
      kind == Type::Kind::Int && node.type().intValue() && node.type().intValue().isSymbol();
  // & | ^ of a bool and an int give an int, as in Python.
  bool bitwise = *op == ScalarOp::And || *op == ScalarOp::Or || *op == ScalarOp::Xor;
  if (bitwise && isInt)
    return "";
  if (roundDigits) {
    // round(k, n) of an int is an int (int.__round__), of a float a float.
    const Argument& number = node.args().front();
    const Type* type = number.isValue() && number.valueRef().node
                           ? number.valueRef().node->resultType(number.valueRef().index)
                           : nullptr;
    bool ofInt = number.kind() == Argument::Kind::Sym || (type && type->kind() == Type::Kind::Int);
    if (ofInt)
      return isInt ? "" : node.op() + " of an int gives an int of a symbol of its own";
    return kind == Type::Kind::Float ? "" : node.op() + " of a float gives a float";
  }
  if (scalarOpGivesBool(*op)    ? kind != Type::Kind::Bool
      : scalarOpGivesInt(*op)   ? !isInt
      : scalarOpGivesFloat(*op) ? kind != Type::Kind::Float
                                : kind != Type::Kind::Float && !isInt)
    return node.op() + " gives " +
           (bitwise                   ? "a bool, or an int of a symbol of its own"
            : scalarOpGivesBool(*op)  ? "a bool"
            : scalarOpGivesInt(*op)   ? "an int of a symbol of its own"
            : scalarOpGivesFloat(*op) ? "a float"
                                      : "a float or an int of a symbol of its own") +
           ", not " + node.type().str();
  return "";
}

bool scalarOpIsPure(const Node& node) {
  std::optional<ScalarOp> op = scalarOpOf(node);
  if (!op)
    return false;
  // An int result may overflow int64, and these may raise or leave
  // Python's numbers (a domain error, an infinity, a complex power).
  if (node.type().kind() == Type::Kind::Int || scalarOpGivesInt(*op) || *op == ScalarOp::Pow ||
      *op == ScalarOp::Sqrt || *op == ScalarOp::Exp || *op == ScalarOp::Log)
    return false;
  if (*op != ScalarOp::TrueDiv && *op != ScalarOp::FloorDiv && *op != ScalarOp::Mod)
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
