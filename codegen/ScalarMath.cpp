//===- ScalarMath.cpp - Python's `** // %`, int() and math on numbers -----===//
//
// The `sym::` operations whose Python semantics are more than one IEEE
// instruction (ir/ScalarOps.h): floor division and modulo take the sign of
// the divisor, `**` and math.sqrt, exp and log raise where CPython's float
// object and math module raise, int(), round(), math.floor and math.ceil
// give ints, and int arithmetic does not wrap. Each follows CPython's own
// steps on the same doubles (libm's pow, exp, log and fmod, as CPython
// calls them), so the values are bitwise Python's. A result Python has and
// a graph cannot hold (a complex power, an int beyond int64) runs the
// original code instead, when nothing the caller sees is done yet.
//
//===----------------------------------------------------------------------===//

#include "codegen/GraphEmitter.h"
#include "ir/RunTimeCheck.h"
#include "ir/ScalarOps.h"

#include "llvm/IR/Intrinsics.h"

#include <limits>

using namespace dync;
using namespace dync::codegen;
using namespace dync::codegen::detail;

namespace {

/// The Python spelling of an operation giving an int, for messages.
const char* pythonName(ir::ScalarOp op) {
  switch (op) {
  case ir::ScalarOp::Int:
    return "int()";
  case ir::ScalarOp::Round:
    return "round()";
  case ir::ScalarOp::Floor:
    return "math.floor()";
  case ir::ScalarOp::Ceil:
    return "math.ceil()";
  case ir::ScalarOp::FloorDiv:
    return "//";
  case ir::ScalarOp::Abs:
    return "abs()";
  case ir::ScalarOp::Neg:
    return "unary -";
  default:
    return "the operation";
  }
}

std::string beyondInt64(const ir::Node& node, ir::ScalarOp op) {
  return (ir::FallBackCheckPrefix + "the int " + pythonName(op) + " gives" +
          node.location().suffix() + " is beyond int64, which the graph cannot hold")
      .str();
}

} // namespace

Value* GraphEmitter::floatPow(const ir::Node& node, Value* base, Value* exponent) {
  llvm::Type* f64 = b_.getDoubleTy();
  Value* zero = llvm::ConstantFP::get(f64, 0.0);
  Value* inf = llvm::ConstantFP::getInfinity(f64);
  auto finite = [&](Value* x) {
    return b_.CreateFCmpONE(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), inf);
  };
  // float_pow's order: 0.0 to a negative power raises; a finite negative
  // base to a finite non-integer power is complex, which a float cannot be.
  raiseIf(node, b_.CreateAnd(b_.CreateFCmpOEQ(base, zero), b_.CreateFCmpOLT(exponent, zero)),
          "ZeroDivisionError: 0.0 cannot be raised to a negative power", "pow.base." + node.name());
  Value* fractional =
      b_.CreateFCmpONE(b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, exponent), exponent);
  Value* complex = b_.CreateAnd(b_.CreateAnd(b_.CreateFCmpOLT(base, zero), finite(base)),
                                b_.CreateAnd(finite(exponent), fractional));
  raiseIf(node, complex,
          (ir::FallBackCheckPrefix + "a negative float to a fractional power" +
           node.location().suffix() + " is a complex number in Python, which the graph cannot " +
           "hold")
              .str(),
          "pow.real." + node.name());
  Value* result =
      b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, base, exponent, nullptr, node.name());
  // libm's ERANGE on overflow, which float_pow raises (underflow it keeps).
  Value* overflow =
      b_.CreateAnd(b_.CreateAnd(finite(base), finite(exponent)), b_.CreateNot(finite(result)));
  Value* notNan = b_.CreateFCmpORD(result, result);
  raiseIf(node, b_.CreateAnd(overflow, notNan),
          "OverflowError: (34, 'Numerical result out of range')", "pow.range." + node.name());
  return result;
}

Value* GraphEmitter::floatFloorDivMod(const ir::Node& node, ir::ScalarOp op, Value* a, Value* b) {
  llvm::Type* f64 = b_.getDoubleTy();
  Value* zero = llvm::ConstantFP::get(f64, 0.0);
  bool floorDiv = op == ir::ScalarOp::FloorDiv;
  raiseIf(node, b_.CreateFCmpOEQ(b, zero),
          node.op().ends_with(".divmod") ? "ZeroDivisionError: float divmod()"
          : floorDiv                     ? "ZeroDivisionError: float floor division by zero"
                                         : "ZeroDivisionError: float modulo",
          "divisor.ok." + node.name());
  // CPython's _float_div_mod: fmod, then moved to the divisor's sign.
  Value* mod = b_.CreateFRem(a, b, "fmod." + node.name());
  Value* div = b_.CreateFDiv(b_.CreateFSub(a, mod), b);
  Value* nonzero = b_.CreateFCmpUNE(mod, zero);
  Value* shift =
      b_.CreateAnd(nonzero, b_.CreateXor(b_.CreateFCmpOLT(b, zero), b_.CreateFCmpOLT(mod, zero)));
  Value* signedZero = b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, zero, b);
  mod = b_.CreateSelect(nonzero, b_.CreateSelect(shift, b_.CreateFAdd(mod, b), mod), signedZero);
  if (!floorDiv)
    return mod;
  div = b_.CreateSelect(shift, b_.CreateFSub(div, llvm::ConstantFP::get(f64, 1.0)), div);
  Value* floored = b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, div);
  Value* up = b_.CreateFCmpOGT(b_.CreateFSub(div, floored), llvm::ConstantFP::get(f64, 0.5));
  floored = b_.CreateSelect(up, b_.CreateFAdd(floored, llvm::ConstantFP::get(f64, 1.0)), floored);
  Value* zeroQuotient =
      b_.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, zero, b_.CreateFDiv(a, b));
  return b_.CreateSelect(b_.CreateFCmpUNE(div, zero), floored, zeroQuotient, node.name());
}

Value* GraphEmitter::floatMath(const ir::Node& node, ir::ScalarOp op, Value* x) {
  llvm::Type* f64 = b_.getDoubleTy();
  Value* zero = llvm::ConstantFP::get(f64, 0.0);
  Value* inf = llvm::ConstantFP::getInfinity(f64);
  switch (op) {
  case ir::ScalarOp::Sqrt:
    raiseIf(node, b_.CreateFCmpOLT(x, zero), "ValueError: math domain error",
            "domain." + node.name());
    return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x, nullptr, node.name());
  case ir::ScalarOp::Log:
    // Zero and negative numbers, -inf among them; NaN gives NaN.
    raiseIf(node, b_.CreateFCmpOLE(x, zero), "ValueError: math domain error",
            "domain." + node.name());
    return b_.CreateUnaryIntrinsic(llvm::Intrinsic::log, x, nullptr, node.name());
  default: {
    Value* result = b_.CreateUnaryIntrinsic(llvm::Intrinsic::exp, x, nullptr, node.name());
    Value* finiteX = b_.CreateFCmpONE(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x), inf);
    raiseIf(node, b_.CreateAnd(finiteX, b_.CreateFCmpOEQ(result, inf)),
            "OverflowError: math range error", "range." + node.name());
    return result;
  }
  }
}

llvm::Expected<Value*> GraphEmitter::scalarToInt(const ir::Node& node, ir::ScalarOp op,
                                                 ScalarNumber operand) {
  if (operand.kind != SlotKind::Double)
    return scalarAsInt(b_, operand.kind, operand.value);
  Value* x = operand.value;
  llvm::Type* f64 = b_.getDoubleTy();
  raiseIf(node, b_.CreateFCmpUNO(x, x), "ValueError: cannot convert float NaN to integer",
          "nan." + node.name());
  raiseIf(node,
          b_.CreateFCmpOEQ(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x),
                           llvm::ConstantFP::getInfinity(f64)),
          "OverflowError: cannot convert float infinity to integer", "inf." + node.name());
  // round() of one operand rounds half to even, as float.__round__ does.
  llvm::Intrinsic::ID rounding = op == ir::ScalarOp::Round   ? llvm::Intrinsic::roundeven
                                 : op == ir::ScalarOp::Floor ? llvm::Intrinsic::floor
                                 : op == ir::ScalarOp::Ceil  ? llvm::Intrinsic::ceil
                                                             : llvm::Intrinsic::trunc;
  Value* whole = b_.CreateUnaryIntrinsic(rounding, x);
  // [-2**63, 2**63): exactly the doubles fptosi takes.
  Value* inside =
      b_.CreateAnd(b_.CreateFCmpOGE(whole, llvm::ConstantFP::get(f64, -9223372036854775808.0)),
                   b_.CreateFCmpOLT(whole, llvm::ConstantFP::get(f64, 9223372036854775808.0)));
  raiseIf(node, b_.CreateNot(inside), beyondInt64(node, op), "int64." + node.name());
  return b_.CreateFPToSI(whole, b_.getInt64Ty(), node.name());
}

llvm::Expected<Value*> GraphEmitter::intRoundDigits(const ir::Node& node,
                                                    llvm::ArrayRef<ScalarNumber> operands) {
  auto* digits = llvm::dyn_cast<llvm::ConstantInt>(operands[1].value);
  if (operands[0].kind == SlotKind::Double || operands[1].kind == SlotKind::Double || !digits)
    return unsupported(&node, "round() of an int to a number of digits that is no constant int");
  Value* a = scalarAsInt(b_, operands[0].kind, operands[0].value);
  int64_t n = digits->getSExtValue();
  if (n >= 0)
    return a;
  // Every int64 is less than half of 10**20 from zero: larger powers round
  // it to 0.
  if (n < -19)
    return b_.getInt64(0);
  if (n == -19) {
    // |a| beyond 5 * 10**18 rounds to 10**19, beyond int64; half ties to 0.
    Value* half = b_.getInt64(5000000000000000000LL);
    raiseIf(node, b_.CreateOr(b_.CreateICmpSGT(a, half), b_.CreateICmpSLT(a, b_.CreateNeg(half))),
            beyondInt64(node, ir::ScalarOp::Round), "int64." + node.name());
    return b_.getInt64(0);
  }
  int64_t power = 1;
  for (int64_t i = 0; i < -n; ++i)
    power *= 10;
  // int.__round__: q, r = divmod(a, m); up when 2r > m, or 2r == m with q
  // odd (half to even); then q * m, which may leave int64.
  Value* m = b_.getInt64(power);
  Value* q = b_.CreateSDiv(a, m);
  Value* r = b_.CreateSRem(a, m);
  Value* negative = b_.CreateICmpSLT(r, b_.getInt64(0));
  q = b_.CreateSelect(negative, b_.CreateSub(q, b_.getInt64(1)), q);
  r = b_.CreateSelect(negative, b_.CreateAdd(r, m), r);
  Value* twice = b_.CreateShl(r, 1); // r < m <= 10**18: no overflow
  Value* odd = b_.CreateICmpNE(b_.CreateAnd(q, b_.getInt64(1)), b_.getInt64(0));
  Value* up = b_.CreateOr(b_.CreateICmpSGT(twice, m), b_.CreateAnd(b_.CreateICmpEQ(twice, m), odd));
  q = b_.CreateSelect(up, b_.CreateAdd(q, b_.getInt64(1)), q);
  Value* pair = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smul_with_overflow, q, m);
  raiseIf(node, b_.CreateExtractValue(pair, 1), beyondInt64(node, ir::ScalarOp::Round),
          "int64." + node.name());
  return b_.CreateExtractValue(pair, 0, node.name());
}

llvm::Expected<Value*> GraphEmitter::intScalarOp(const ir::Node& node, ir::ScalarOp op,
                                                 llvm::ArrayRef<ScalarNumber> operands) {
  if (llvm::any_of(operands, [](const ScalarNumber& n) { return n.kind == SlotKind::Double; }))
    return unsupported(&node, "an int result of a float operand");
  auto i64 = [&](unsigned i) { return scalarAsInt(b_, operands[i].kind, operands[i].value); };
  Value* zero = b_.getInt64(0);
  Value* min = b_.getInt64(std::numeric_limits<int64_t>::min());
  // Python's ints do not wrap: an overflow runs the original code.
  auto checked = [&](llvm::Intrinsic::ID id, Value* a, Value* b) {
    Value* pair = b_.CreateBinaryIntrinsic(id, a, b);
    raiseIf(node, b_.CreateExtractValue(pair, 1), beyondInt64(node, op), "int64." + node.name());
    return b_.CreateExtractValue(pair, 0, node.name());
  };
  switch (op) {
  case ir::ScalarOp::Add:
    return checked(llvm::Intrinsic::sadd_with_overflow, i64(0), i64(1));
  case ir::ScalarOp::Sub:
    return checked(llvm::Intrinsic::ssub_with_overflow, i64(0), i64(1));
  case ir::ScalarOp::Mul:
    return checked(llvm::Intrinsic::smul_with_overflow, i64(0), i64(1));
  case ir::ScalarOp::Neg:
    return checked(llvm::Intrinsic::ssub_with_overflow, zero, i64(0));
  case ir::ScalarOp::Pos:
    return i64(0);
  case ir::ScalarOp::Abs: {
    Value* a = i64(0);
    raiseIf(node, b_.CreateICmpEQ(a, min), beyondInt64(node, op), "int64." + node.name());
    return b_.CreateSelect(b_.CreateICmpSLT(a, zero), b_.CreateNeg(a), a, node.name());
  }
  case ir::ScalarOp::FloorDiv:
  case ir::ScalarOp::Mod: {
    Value* a = i64(0);
    Value* b = i64(1);
    bool floorDiv = op == ir::ScalarOp::FloorDiv;
    raiseIf(node, b_.CreateICmpEQ(b, zero),
            floorDiv ? "ZeroDivisionError: integer division or modulo by zero"
                     : "ZeroDivisionError: integer modulo by zero",
            "divisor.ok." + node.name());
    Value* minusOne = b_.CreateICmpEQ(b, b_.getInt64(-1));
    if (floorDiv)
      raiseIf(node, b_.CreateAnd(minusOne, b_.CreateICmpEQ(a, min)), beyondInt64(node, op),
              "int64." + node.name());
    // x // -1 is -x and x % -1 is 0; sdiv and srem of INT64_MIN by -1 are
    // undefined, so they divide by 1 and negate.
    Value* divisor = b_.CreateSelect(minusOne, b_.getInt64(1), b);
    Value* q = b_.CreateSDiv(a, divisor);
    Value* r = b_.CreateSRem(a, divisor);
    q = b_.CreateSelect(minusOne, b_.CreateNeg(q), q);
    Value* shift = b_.CreateAnd(b_.CreateICmpNE(r, zero),
                                b_.CreateXor(b_.CreateICmpSLT(r, zero), b_.CreateICmpSLT(b, zero)));
    if (floorDiv)
      return b_.CreateSelect(shift, b_.CreateSub(q, b_.getInt64(1)), q, node.name());
    return b_.CreateSelect(shift, b_.CreateAdd(r, b), r, node.name());
  }
  case ir::ScalarOp::And:
    return b_.CreateAnd(i64(0), i64(1), node.name());
  case ir::ScalarOp::Or:
    return b_.CreateOr(i64(0), i64(1), node.name());
  case ir::ScalarOp::Xor:
    return b_.CreateXor(i64(0), i64(1), node.name());
  case ir::ScalarOp::Pow:
    return boolIntPow(node, operands);
  default:
    return unsupported(&node, "this operation giving an int");
  }
}

llvm::Expected<Value*> GraphEmitter::boolIntPow(const ir::Node& node,
                                                llvm::ArrayRef<ScalarNumber> operands) {
  // An int power with a bool on one side (what capture records: ints alone
  // stay symbolic integers): b ** n is 1 for n == 0 and b otherwise, n ** b
  // is n for True and 1 for False. A negative exponent makes a float in
  // Python, which this int cannot be.
  Value* one = b_.getInt64(1);
  Value* base = scalarAsInt(b_, operands[0].kind, operands[0].value);
  Value* exponent = scalarAsInt(b_, operands[1].kind, operands[1].value);
  if (operands[0].kind != SlotKind::Bool && operands[1].kind != SlotKind::Bool)
    return unsupported(&node, "an int power of two ints");
  raiseIf(node, b_.CreateICmpSLT(exponent, b_.getInt64(0)),
          (ir::FallBackCheckPrefix + "an int to a negative power" + node.location().suffix() +
           " is a float in Python, which this int of the graph cannot hold")
              .str(),
          "pow.sign." + node.name());
  return b_.CreateSelect(b_.CreateICmpEQ(exponent, b_.getInt64(0)), one, base, node.name());
}
