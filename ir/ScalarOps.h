//===- ScalarOps.h - Python arithmetic on floats and bools -----*- C++ -*-===//
//
// A float or bool computed from tensor data (`x.max().item()`, a `float`
// or `bool` value of the graph) takes part in the program's own Python
// arithmetic, which torch.export records one operation per node. So does a
// graph: `sym::NAME.default` applies Python's operator NAME to numbers
// (float, bool and int values, symbolic ints, literals) and has type
// `float` or `bool`:
//
//   %2 = aten::_local_scalar_dense.default(%1) : float
//   %3 = sym::mul.default(2.0, %2) : float
//   %4 = sym::add.default(%3, 1) : float
//   %5 = sym::gt.default(%4, 0.5) : bool
//
// Its value is Python's on the same numbers: IEEE doubles for floats, an
// int or bool operand converted as Python converts it, `/` by zero raising
// ZeroDivisionError. An operation whose Python result is an int (`int(s)`,
// `round(s)`, `math.floor(s)`, `True + 1`) has type `int<u1>`, a fresh
// unbacked symbol the node computes, as item() of an integer tensor gives
// one:
//
//   %6 = sym::floor.default(%4) : int<u1>
//   %7 = sym::pow.default(%1, 0.5) : float
//
// divmod()'s parts are `sym::floordiv.divmod` and `sym::mod.divmod`: the
// values of `//` and `%`, with divmod's text for a zero divisor ("float
// divmod()"). `sym::round.default(k, n)` of an int k is int.__round__, an
// int of a symbol of its own.
//
// Where Python raises (`math.sqrt(-1.0)`, `0.0 ** -1.0`, `int(nan)`), the
// graph raises the same exception; where Python's result is a number the
// graph cannot hold (a complex power, an int beyond int64), the call runs
// the original code when nothing the caller sees is done yet, and raises
// RuntimeError otherwise.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/Graph.h"

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace dync::ir {

enum class ScalarOp : uint8_t {
  Add,
  Sub,
  Mul,
  TrueDiv,
  Neg,
  Pos,
  Abs,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  And,
  Or,
  Xor,
  /// float(x), torch.sym_float.
  Float,
  /// `**`, `//` and `%`, and builtins.pow of two operands.
  Pow,
  FloorDiv,
  Mod,
  /// int(x) and math.trunc(x): toward zero, an int.
  Int,
  /// round(x) (half to even), math.floor(x), math.ceil(x): ints; round(x,
  /// ndigits), two operands, a float.
  Round,
  Floor,
  Ceil,
  /// math.sqrt, math.exp and math.log of one operand: floats.
  Sqrt,
  Exp,
  Log,
};

/// The operation of a `sym::NAME.default` call, if \p node is one.
std::optional<ScalarOp> scalarOpOf(const Node& node);
/// Whether \p op is the name of one (`sym::add.default`).
bool isScalarOpName(llvm::StringRef op);
/// How many operands it takes.
unsigned scalarOpArity(ScalarOp op);
/// Whether it computes a bool (comparisons, and, or, xor), not a number;
/// and, or and xor of a bool and an int give an int, as Python's do.
bool scalarOpGivesBool(ScalarOp op);
/// Whether it computes an int whatever its operands (int(), round(),
/// math.floor, math.ceil).
bool scalarOpGivesInt(ScalarOp op);
/// Whether it computes a float whatever its operands (`/`, float(),
/// math.sqrt, math.exp, math.log).
bool scalarOpGivesFloat(ScalarOp op);
/// For a call whose operator is in the `sym::` namespace, what is wrong with
/// it as one of these (an unknown name, the operand count, an operand that
/// is no number, a type other than the operation gives);
/// empty when nothing is, or for any other call.
std::string checkScalarOp(const Node& node);
/// Whether it has no effect but its value (a division may raise), so an
/// unused one may be removed and two equal ones merged.
bool scalarOpIsPure(const Node& node);

} // namespace dync::ir
