//===- SymSimplify.cpp - Canonicalizing arithmetic on SymExprs ------------===//
//
// Every SymExpr is built here, so every SymExpr is canonical (see SymExpr.h).
// `+ - *` are computed on polynomials, a constant plus coefficient·monomial
// terms, and turned back into nodes with terms and factors sorted by the
// structural order; that makes equal polynomials the same node. `floordiv`,
// `mod`, `min` and `max` are opaque to the polynomial view: they fold
// constants and take out what provably divides, nothing that would need a
// symbol's range.
//
//===----------------------------------------------------------------------===//
#include "ir/PythonInt.h"
#include "ir/SymExpr.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CheckedArithmetic.h"

#include <limits>
#include <numeric>

namespace dync::ir {

namespace {

/// `constant + Σ coefficient·monomial`. A monomial is a product of factors
/// that are neither constants, sums nor products: the factor itself when there
/// is one, a Mul without coefficient when there are several.
struct Polynomial {
  int64_t constant = 0;
  llvm::SmallVector<std::pair<SymExpr, int64_t>, 4> terms;
};

llvm::SmallVector<SymExpr, 4> factorsOf(SymExpr monomial) {
  if (monomial.kind() == SymKind::Mul)
    return llvm::SmallVector<SymExpr, 4>(monomial.operands());
  return {monomial};
}

/// Monomials compare by their factor lists, so `s0` < `s0*s1` < `s1`.
bool monomialLess(SymExpr a, SymExpr b) {
  llvm::SmallVector<SymExpr, 4> x = factorsOf(a), y = factorsOf(b);
  return std::lexicographical_compare(
      x.begin(), x.end(), y.begin(), y.end(),
      [](SymExpr p, SymExpr q) { return SymExpr::compare(p, q) < 0; });
}

int64_t absoluteGcd(int64_t a, int64_t b) {
  // Magnitudes as unsigned so INT64_MIN is fine; the gcd of values that fit
  // in int64 fits unless both are INT64_MIN or 0, which callers do not pass.
  auto magnitude = [](int64_t v) { return v < 0 ? 0 - static_cast<uint64_t>(v) : uint64_t(v); };
  uint64_t g = std::gcd(magnitude(a), magnitude(b));
  return g > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? 1 : int64_t(g);
}

} // namespace

/// The one place that creates composite nodes; a friend of Context.
struct SymExprCanonicalizer {
  static SymExpr add(SymExpr a, SymExpr b);
  static SymExpr mul(SymExpr a, SymExpr b);
  static SymExpr floorDiv(SymExpr a, SymExpr b);
  static SymExpr mod(SymExpr a, SymExpr b);
  static SymExpr minMax(SymKind kind, llvm::ArrayRef<SymExpr> operands);

private:
  static SymExpr monomial(Context& ctx, llvm::ArrayRef<SymExpr> factors) {
    return factors.size() == 1 ? factors.front() : ctx.node(SymKind::Mul, factors);
  }

  static SymExpr multiplyMonomials(Context& ctx, SymExpr a, SymExpr b) {
    llvm::SmallVector<SymExpr, 4> factors = factorsOf(a);
    llvm::append_range(factors, factorsOf(b));
    llvm::stable_sort(factors, [](SymExpr p, SymExpr q) { return SymExpr::compare(p, q) < 0; });
    return monomial(ctx, factors);
  }

  /// The polynomial view of \p e; nullopt if constants overflow.
  static std::optional<Polynomial> decompose(SymExpr e) {
    Polynomial p;
    bool ok = true;
    auto addTerm = [&](SymExpr term) {
      if (term.isConstant()) {
        std::optional<int64_t> sum = llvm::checkedAdd(p.constant, term.constantValue());
        ok &= sum.has_value();
        p.constant = sum.value_or(0);
      } else if (term.kind() == SymKind::Mul && term.operands().front().isConstant()) {
        p.terms.push_back({monomial(e.context(), term.operands().drop_front()),
                           term.operands().front().constantValue()});
      } else {
        p.terms.push_back({term, 1});
      }
    };
    if (e.kind() == SymKind::Add)
      llvm::for_each(e.operands(), addTerm);
    else
      addTerm(e);
    if (!ok)
      return std::nullopt;
    return p;
  }

  /// The canonical node for \p p; nullopt if collecting like terms overflows.
  static std::optional<SymExpr> build(Context& ctx, Polynomial p) {
    llvm::stable_sort(p.terms,
                      [](const auto& x, const auto& y) { return monomialLess(x.first, y.first); });
    llvm::SmallVector<SymExpr, 4> operands;
    for (size_t i = 0; i < p.terms.size();) {
      auto [mono, coefficient] = p.terms[i];
      for (++i; i < p.terms.size() && p.terms[i].first == mono; ++i) {
        std::optional<int64_t> sum = llvm::checkedAdd(coefficient, p.terms[i].second);
        if (!sum)
          return std::nullopt;
        coefficient = *sum;
      }
      if (coefficient == 0)
        continue;
      if (coefficient == 1) {
        operands.push_back(mono);
        continue;
      }
      llvm::SmallVector<SymExpr, 4> term{ctx.constant(coefficient)};
      llvm::append_range(term, factorsOf(mono));
      operands.push_back(ctx.node(SymKind::Mul, term));
    }
    if (p.constant != 0 || operands.empty())
      operands.push_back(ctx.constant(p.constant));
    return operands.size() == 1 ? operands.front() : ctx.node(SymKind::Add, operands);
  }
};

SymExpr SymExprCanonicalizer::add(SymExpr a, SymExpr b) {
  assert(&a.context() == &b.context() && "operands from different contexts");
  Context& ctx = a.context();
  std::optional<Polynomial> x = decompose(a), y = decompose(b);
  if (x && y) {
    if (std::optional<int64_t> constant = llvm::checkedAdd(x->constant, y->constant)) {
      x->constant = *constant;
      llvm::append_range(x->terms, y->terms);
      if (std::optional<SymExpr> sum = build(ctx, std::move(*x)))
        return *sum;
    }
  }
  return ctx.node(SymKind::Add, {a, b});
}

SymExpr SymExprCanonicalizer::mul(SymExpr a, SymExpr b) {
  assert(&a.context() == &b.context() && "operands from different contexts");
  Context& ctx = a.context();
  std::optional<Polynomial> x = decompose(a), y = decompose(b);
  auto product = [&]() -> std::optional<SymExpr> {
    if (!x || !y)
      return std::nullopt;
    Polynomial result;
    std::optional<int64_t> constant = llvm::checkedMul(x->constant, y->constant);
    if (!constant)
      return std::nullopt;
    result.constant = *constant;
    // Distribute: (c + Σ tᵢ)(d + Σ uⱼ) = cd + Σ d·tᵢ + Σ c·uⱼ + Σ tᵢ·uⱼ.
    auto scale = [&](const Polynomial& terms, int64_t factor) {
      for (auto [mono, coefficient] : terms.terms) {
        std::optional<int64_t> c = llvm::checkedMul(coefficient, factor);
        if (!c)
          return false;
        result.terms.push_back({mono, *c});
      }
      return true;
    };
    if (!scale(*x, y->constant) || !scale(*y, x->constant))
      return std::nullopt;
    for (auto [p, c] : x->terms) {
      for (auto [q, d] : y->terms) {
        std::optional<int64_t> coefficient = llvm::checkedMul(c, d);
        if (!coefficient)
          return std::nullopt;
        result.terms.push_back({multiplyMonomials(ctx, p, q), *coefficient});
      }
    }
    return build(ctx, std::move(result));
  };
  if (std::optional<SymExpr> result = product())
    return *result;
  return ctx.node(SymKind::Mul, {a, b});
}

SymExpr SymExprCanonicalizer::floorDiv(SymExpr a, SymExpr b) {
  assert(&a.context() == &b.context() && "operands from different contexts");
  Context& ctx = a.context();
  auto unchanged = [&] { return ctx.node(SymKind::FloorDiv, {a, b}); };
  if (!b.isConstant() || b.constantValue() == 0)
    return unchanged();
  int64_t divisor = b.constantValue();
  if (a.isConstant()) {
    std::optional<int64_t> quotient = pythonFloorDiv(a.constantValue(), divisor);
    return quotient ? ctx.constant(*quotient) : unchanged();
  }
  if (divisor == 1)
    return a;
  if (divisor < 0) {
    // a // -k == (-a) // k: keeps divisors positive, so there is one spelling.
    if (divisor == std::numeric_limits<int64_t>::min())
      return unchanged();
    return floorDiv(mul(a, ctx.constant(-1)), ctx.constant(-divisor));
  }
  std::optional<Polynomial> p = decompose(a);
  if (!p)
    return unchanged();

  // (g·A) // (g·k) == A // k for g > 0: divide out what all share.
  int64_t g = divisor;
  for (auto [mono, coefficient] : p->terms)
    g = absoluteGcd(g, coefficient);
  g = absoluteGcd(g, p->constant);
  if (g > 1) {
    for (auto& term : p->terms)
      term.second /= g;
    p->constant /= g;
    divisor /= g;
  }

  // (k·Q + R) // k == Q + R // k: take out the terms k divides.
  Polynomial quotient, rest;
  for (auto [mono, coefficient] : p->terms) {
    if (coefficient % divisor == 0)
      quotient.terms.push_back({mono, coefficient / divisor});
    else
      rest.terms.push_back({mono, coefficient});
  }
  if (p->constant % divisor == 0)
    quotient.constant = p->constant / divisor;
  else
    rest.constant = p->constant;
  std::optional<SymExpr> q = build(ctx, std::move(quotient));
  std::optional<SymExpr> r = build(ctx, std::move(rest));
  if (!q || !r)
    return unchanged();

  SymExpr divided;
  if (r->isConstant()) {
    divided = ctx.constant(*pythonFloorDiv(r->constantValue(), divisor));
  } else if (divisor == 1) {
    divided = *r;
  } else if (r->kind() == SymKind::FloorDiv && r->operands()[1].isConstant() &&
             r->operands()[1].constantValue() > 0) {
    // (x // d) // k == x // (d·k) for positive d and k; x may share a factor
    // with k that it did not share with d, so simplify again.
    std::optional<int64_t> combined = llvm::checkedMul(r->operands()[1].constantValue(), divisor);
    divided = combined ? floorDiv(r->operands()[0], ctx.constant(*combined))
                       : ctx.node(SymKind::FloorDiv, {*r, ctx.constant(divisor)});
  } else {
    divided = ctx.node(SymKind::FloorDiv, {*r, ctx.constant(divisor)});
  }
  return add(*q, divided);
}

SymExpr SymExprCanonicalizer::mod(SymExpr a, SymExpr b) {
  assert(&a.context() == &b.context() && "operands from different contexts");
  Context& ctx = a.context();
  auto unchanged = [&] { return ctx.node(SymKind::Mod, {a, b}); };
  if (!b.isConstant() || b.constantValue() == 0)
    return unchanged();
  int64_t divisor = b.constantValue();
  if (a.isConstant())
    return ctx.constant(pythonMod(a.constantValue(), divisor));
  if (divisor == 1 || divisor == -1)
    return ctx.constant(0);
  std::optional<Polynomial> p = decompose(a);
  if (!p)
    return unchanged();
  // (c·m) % k == ((c mod |k|)·m) % k: reduce every coefficient and the
  // constant into [0, |k|), the same residues whatever the divisor's sign.
  if (divisor == std::numeric_limits<int64_t>::min())
    return unchanged();
  int64_t magnitude = divisor < 0 ? -divisor : divisor;
  for (auto& term : p->terms)
    term.second = pythonMod(term.second, magnitude);
  p->constant = pythonMod(p->constant, magnitude);
  std::optional<SymExpr> reduced = build(ctx, std::move(*p));
  if (!reduced)
    return unchanged();
  if (reduced->isConstant())
    return ctx.constant(pythonMod(reduced->constantValue(), divisor));
  // (x % m) % k == x % k when k divides m.
  if (reduced->kind() == SymKind::Mod && reduced->operands()[1].isConstant() &&
      reduced->operands()[1].constantValue() % divisor == 0)
    return mod(reduced->operands()[0], b);
  return ctx.node(SymKind::Mod, {*reduced, b});
}

SymExpr SymExprCanonicalizer::minMax(SymKind kind, llvm::ArrayRef<SymExpr> operands) {
  assert(!operands.empty() && "min/max of nothing");
  Context& ctx = operands.front().context();
  llvm::SmallVector<SymExpr, 4> flat;
  std::optional<int64_t> constant;
  auto take = [&](SymExpr e) {
    assert(&e.context() == &ctx && "operands from different contexts");
    if (!e.isConstant()) {
      flat.push_back(e);
      return;
    }
    int64_t v = e.constantValue();
    constant = !constant              ? v
               : kind == SymKind::Min ? std::min(*constant, v)
                                      : std::max(*constant, v);
  };
  for (SymExpr e : operands) {
    if (e.kind() == kind)
      llvm::for_each(e.operands(), take);
    else
      take(e);
  }
  llvm::sort(flat, [](SymExpr p, SymExpr q) { return SymExpr::compare(p, q) < 0; });
  flat.erase(std::unique(flat.begin(), flat.end()), flat.end());
  if (constant)
    flat.push_back(ctx.constant(*constant));
  return flat.size() == 1 ? flat.front() : ctx.node(kind, flat);
}

//===----------------------------------------------------------------------===//
// Public operators
//===----------------------------------------------------------------------===//

SymExpr operator+(SymExpr a, SymExpr b) { return SymExprCanonicalizer::add(a, b); }
SymExpr operator*(SymExpr a, SymExpr b) { return SymExprCanonicalizer::mul(a, b); }
SymExpr operator-(SymExpr a) { return SymExprCanonicalizer::mul(a, a.context().constant(-1)); }
SymExpr operator-(SymExpr a, SymExpr b) { return a + (-b); }
SymExpr operator+(SymExpr a, int64_t b) { return a + a.context().constant(b); }
SymExpr operator-(SymExpr a, int64_t b) { return a - a.context().constant(b); }
SymExpr operator*(SymExpr a, int64_t b) { return a * a.context().constant(b); }

SymExpr SymExpr::floorDiv(SymExpr divisor) const {
  return SymExprCanonicalizer::floorDiv(*this, divisor);
}
SymExpr SymExpr::floorDiv(int64_t divisor) const { return floorDiv(context().constant(divisor)); }
SymExpr SymExpr::mod(SymExpr divisor) const { return SymExprCanonicalizer::mod(*this, divisor); }
SymExpr SymExpr::mod(int64_t divisor) const { return mod(context().constant(divisor)); }
SymExpr SymExpr::min(llvm::ArrayRef<SymExpr> operands) {
  return SymExprCanonicalizer::minMax(SymKind::Min, operands);
}
SymExpr SymExpr::max(llvm::ArrayRef<SymExpr> operands) {
  return SymExprCanonicalizer::minMax(SymKind::Max, operands);
}

} // namespace dync::ir
