//===- IrSymExprTest.cpp - Symbolic integers: canonical form, evaluation --===//
#include "ir/Parser.h"
#include "ir/SymExpr.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <random>

using namespace dync::ir;

namespace {

/// Parses or fails the test.
SymExpr parse(Context& ctx, llvm::StringRef text) {
  llvm::Expected<SymExpr> e = parseSymExpr(text, ctx);
  if (!e) {
    ADD_FAILURE() << "cannot parse '" << text.str() << "': " << llvm::toString(e.takeError());
    return ctx.constant(0);
  }
  return *e;
}

/// The canonical spelling of \p text.
std::string canon(Context& ctx, llvm::StringRef text) { return parse(ctx, text).str(); }

TEST(IrSymExprTest, ConstantsAndSymbolsAreUniqued) {
  Context ctx;
  EXPECT_EQ(ctx.constant(3), ctx.constant(3));
  EXPECT_NE(ctx.constant(3), ctx.constant(4));
  EXPECT_EQ(ctx.symbol("s0"), ctx.symbol("s0"));
  EXPECT_NE(ctx.symbol("s0"), ctx.symbol("s1"));
  EXPECT_EQ(ctx.symbol("s0").symbolName(), "s0");
  EXPECT_EQ(ctx.constant(-7).constantValue(), -7);
  SymExpr s0 = ctx.symbol("s0"), s1 = ctx.symbol("s1");
  EXPECT_EQ(s0.depth(), 1u);
  EXPECT_EQ((2 * s0).depth(), 2u);
  EXPECT_EQ((s0.floorDiv(s1) + 1).depth(), 3u);
}

TEST(IrSymExprTest, IdentitiesFold) {
  Context ctx;
  SymExpr s0 = ctx.symbol("s0");
  EXPECT_EQ(s0 + 0, s0);
  EXPECT_EQ(s0 * 1, s0);
  EXPECT_EQ(s0 * 0, ctx.constant(0));
  EXPECT_EQ(s0 - s0, ctx.constant(0));
  EXPECT_EQ(-(-s0), s0);
  EXPECT_EQ(s0.floorDiv(1), s0);
  EXPECT_EQ(s0.mod(1), ctx.constant(0));
  EXPECT_EQ(SymExpr::max(s0, s0), s0);
  EXPECT_EQ(ctx.constant(6) * ctx.constant(7), ctx.constant(42));
}

TEST(IrSymExprTest, EqualArithmeticIsTheSameNode) {
  Context ctx;
  SymExpr a = ctx.symbol("s0"), b = ctx.symbol("s1"), c = ctx.symbol("s2");
  EXPECT_EQ(a * 2, 2 * a);
  EXPECT_EQ(a + b, b + a);
  EXPECT_EQ((a + b) + c, a + (b + c));
  EXPECT_EQ((a * b) * c, a * (b * c));
  EXPECT_EQ(a * (b + c), a * b + a * c);
  EXPECT_EQ((a + 1) * (a - 1), a * a - 1);
  EXPECT_EQ(a + a + a, 3 * a);
  EXPECT_EQ(SymExpr::min(a, SymExpr::min(b, c)), SymExpr::min({c, b, a}));
}

TEST(IrSymExprTest, CanonicalSpelling) {
  Context ctx;
  EXPECT_EQ(canon(ctx, "s0*2"), "2*s0");
  EXPECT_EQ(canon(ctx, "s1 + s0"), "s0 + s1");
  EXPECT_EQ(canon(ctx, "1 + s0"), "s0 + 1");
  EXPECT_EQ(canon(ctx, "s0 - 1"), "s0 - 1");
  EXPECT_EQ(canon(ctx, "1 - s0"), "-s0 + 1");
  EXPECT_EQ(canon(ctx, "s0 - 2*s1"), "s0 - 2*s1");
  EXPECT_EQ(canon(ctx, "(s0 + 1)*2"), "2*s0 + 2");
  EXPECT_EQ(canon(ctx, "s1*s0*s1"), "s0*s1*s1");
  EXPECT_EQ(canon(ctx, "s10 + s2"), "s2 + s10");
  EXPECT_EQ(canon(ctx, "2*s0 + 3*s0"), "5*s0");
  EXPECT_EQ(canon(ctx, "-(s0 floordiv 2)"), "-(s0 floordiv 2)");
  EXPECT_EQ(canon(ctx, "s1 - (s0 floordiv 2)"), "s1 - s0 floordiv 2");
  EXPECT_EQ(canon(ctx, "(s0 floordiv 2)*s1"), "s1*(s0 floordiv 2)");
  EXPECT_EQ(canon(ctx, "(s0 - 1) floordiv 2 + 1"), "(s0 - 1) floordiv 2 + 1");
  EXPECT_EQ(canon(ctx, "min(s0, min(s1, 3), 5)"), "min(s0, s1, 3)");
  EXPECT_EQ(canon(ctx, "max(4, s0, 2)"), "max(s0, 4)");
  EXPECT_EQ(canon(ctx, "-9223372036854775808"), "-9223372036854775808");
}

TEST(IrSymExprTest, DivisionTakesOutWhatDivides) {
  Context ctx;
  EXPECT_EQ(canon(ctx, "(2*s0) floordiv 2"), "s0");
  EXPECT_EQ(canon(ctx, "(4*s0 + 6) floordiv 4"), "s0 + 1");
  EXPECT_EQ(canon(ctx, "(4*s0 + s1) floordiv 4"), "s0 + s1 floordiv 4");
  EXPECT_EQ(canon(ctx, "(2*s0 + 2*s1 + 2) floordiv 4"), "(s0 + s1 + 1) floordiv 2");
  EXPECT_EQ(canon(ctx, "(s0 floordiv 2) floordiv 3"), "s0 floordiv 6");
  // Merging divisors can expose a common factor with the dividend.
  EXPECT_EQ(canon(ctx, "(9*s0 floordiv 8) floordiv 3"), "3*s0 floordiv 8");
  EXPECT_EQ(canon(ctx, "s0 floordiv -2"), "-s0 floordiv 2");
  EXPECT_EQ(canon(ctx, "s0 floordiv s1"), "s0 floordiv s1");
  EXPECT_EQ(canon(ctx, "(8*s0 + 3) mod 4"), "3");
  EXPECT_EQ(canon(ctx, "(5*s0 + 7) mod 4"), "(s0 + 3) mod 4");
  EXPECT_EQ(canon(ctx, "s0 mod 8 mod 4"), "s0 mod 4");
  EXPECT_EQ(canon(ctx, "s0 mod 4 mod 8"), "s0 mod 4 mod 8");
  EXPECT_EQ(canon(ctx, "s0 mod -3"), "s0 mod -3");
  EXPECT_EQ(canon(ctx, "(-4*s0 - 1) mod -3"), "(2*s0 + 2) mod -3");
  // Nothing is known about s1, so nothing cancels.
  EXPECT_EQ(canon(ctx, "(s0*s1) floordiv s1"), "s0*s1 floordiv s1");
  // Division by a constant zero stays, for evaluation to report.
  EXPECT_EQ(canon(ctx, "s0 floordiv 0"), "s0 floordiv 0");
}

TEST(IrSymExprTest, ParsePrintParseIsIdentity) {
  Context ctx;
  for (const char* text : {"2*s0", "-s0 floordiv 2", "s0 floordiv (-2 + s1)", "-(s0 mod 3)",
                           "min(s0 + 1, 2*s1) - max(s2, 0)", "(s0 + 1)*(s1 - 1)", "s0 mod -3",
                           "-2*(s0 floordiv 3)*s1 + 7", "-9223372036854775808*s0",
                           "s0 + 9223372036854775807 + 1", "9223372036854775807*s0*2"}) {
    SymExpr e = parse(ctx, text);
    EXPECT_EQ(parse(ctx, e.str()), e) << text << " printed as " << e.str();
  }
}

TEST(IrSymExprTest, OverflowingFoldsAreKept) {
  Context ctx;
  SymExpr e = parse(ctx, "s0 + 9223372036854775807 + 1");
  EXPECT_EQ(e.kind(), SymKind::Add);
  SymbolValues values{{"s0", 0}};
  llvm::Expected<int64_t> value = e.evaluate(values);
  ASSERT_FALSE(static_cast<bool>(value));
  EXPECT_NE(llvm::toString(value.takeError()).find("overflow"), std::string::npos);
}

TEST(IrSymExprTest, PythonDivisionOfNegatives) {
  Context ctx;
  SymExpr a = ctx.symbol("a"), b = ctx.symbol("b");
  struct Case {
    int64_t a, b, quotient, remainder;
  };
  // As Python computes a // b and a % b.
  for (Case c : {Case{7, 2, 3, 1}, Case{-7, 2, -4, 1}, Case{7, -2, -4, -1}, Case{-7, -2, 3, -1},
                 Case{-8, 2, -4, 0}, Case{0, -3, 0, 0}, Case{-1, 5, -1, 4}}) {
    SymbolValues values{{"a", c.a}, {"b", c.b}};
    EXPECT_EQ(llvm::cantFail(a.floorDiv(b).evaluate(values)), c.quotient) << c.a << " // " << c.b;
    EXPECT_EQ(llvm::cantFail(a.mod(b).evaluate(values)), c.remainder) << c.a << " % " << c.b;
    // Folded constants agree with evaluation.
    EXPECT_EQ(ctx.constant(c.a).floorDiv(c.b), ctx.constant(c.quotient));
    EXPECT_EQ(ctx.constant(c.a).mod(c.b), ctx.constant(c.remainder));
  }
}

TEST(IrSymExprTest, EvaluationErrors) {
  Context ctx;
  SymExpr s0 = ctx.symbol("s0");
  SymbolValues none;
  EXPECT_EQ(llvm::toString(s0.evaluate(none).takeError()), "no value for symbol 's0'");
  SymbolValues zero{{"s0", 0}, {"s1", 5}};
  EXPECT_EQ(llvm::toString(ctx.symbol("s1").floorDiv(s0).evaluate(zero).takeError()),
            "division by zero evaluating 's1 floordiv s0'");
  EXPECT_FALSE(static_cast<bool>(ctx.symbol("s1").mod(s0).evaluate({{"s0", 0}, {"s1", 1}})));
}

TEST(IrSymExprTest, ParseErrorsAreLocated) {
  Context ctx;
  llvm::Expected<SymExpr> e = parseSymExpr("s0 + f32", ctx);
  ASSERT_FALSE(static_cast<bool>(e));
  std::string message = llvm::toString(e.takeError());
  EXPECT_NE(message.find("<expr>:1:6: error: expected a symbolic integer, found reserved word "
                         "'f32'"),
            std::string::npos)
      << message;
  e = parseSymExpr("99999999999999999999", ctx);
  ASSERT_FALSE(static_cast<bool>(e));
  EXPECT_NE(llvm::toString(e.takeError()).find("does not fit in 64 bits"), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Random expressions: the canonical form must have the value of the
// arithmetic it was built from, evaluated directly.
//===----------------------------------------------------------------------===//

/// Python's a // b and a % b, written out independently of the library.
int64_t referenceFloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (q * b != a && (a < 0) != (b < 0)) ? q - 1 : q;
}
int64_t referenceMod(int64_t a, int64_t b) { return a - b * referenceFloorDiv(a, b); }

/// A random expression, kept both as a SymExpr and as the direct computation
/// of its value; the value is nullopt where Python would raise (or, never at
/// these magnitudes, int64 would overflow).
struct Sample {
  SymExpr expr;
  std::function<std::optional<int64_t>(const std::vector<int64_t>&)> value;
  /// The arithmetic as generated, before simplification, for failure messages.
  std::string text;
};

class RandomExpressions {
public:
  RandomExpressions(Context& ctx, unsigned seed) : ctx_(ctx), rng_(seed) {}

  static constexpr int numSymbols = 4;

  Sample generate(int depth) {
    if (depth == 0 || pick(0, 3) == 0) {
      if (pick(0, 1) == 0)
        return constant(pick(-9, 9));
      int i = pick(0, numSymbols - 1);
      return {ctx_.symbol("s" + std::to_string(i)),
              [i](const std::vector<int64_t>& v) { return std::optional(v[i]); },
              "s" + std::to_string(i)};
    }
    Sample a = generate(depth - 1), b = generate(depth - 1);
    int op = pick(0, 7);
    // Mostly constant divisors: those are what the simplifier works on.
    if ((op == 4 || op == 5) && pick(0, 2) != 0)
      b = constant(pick(-6, 6));
    auto both = [a, b](auto op) {
      return [a, b, op](const std::vector<int64_t>& v) -> std::optional<int64_t> {
        std::optional<int64_t> x = a.value(v), y = b.value(v);
        if (!x || !y)
          return std::nullopt;
        return op(*x, *y);
      };
    };
    auto text = [&](const char* op) { return "(" + a.text + " " + op + " " + b.text + ")"; };
    switch (op) {
    case 0:
      return {a.expr + b.expr, both([](int64_t x, int64_t y) { return llvm::checkedAdd(x, y); }),
              text("+")};
    case 1:
      return {a.expr - b.expr, both([](int64_t x, int64_t y) { return llvm::checkedSub(x, y); }),
              text("-")};
    case 2:
    case 3:
      return {a.expr * b.expr, both([](int64_t x, int64_t y) { return llvm::checkedMul(x, y); }),
              text("*")};
    case 4:
      return {a.expr.floorDiv(b.expr), both([](int64_t x, int64_t y) {
                return y == 0 ? std::nullopt : std::optional(referenceFloorDiv(x, y));
              }),
              text("//")};
    case 5:
      return {a.expr.mod(b.expr), both([](int64_t x, int64_t y) {
                return y == 0 ? std::nullopt : std::optional(referenceMod(x, y));
              }),
              text("%")};
    case 6:
      return {SymExpr::min(a.expr, b.expr),
              both([](int64_t x, int64_t y) { return std::optional(std::min(x, y)); }),
              "min(" + a.text + ", " + b.text + ")"};
    default:
      return {SymExpr::max(a.expr, b.expr),
              both([](int64_t x, int64_t y) { return std::optional(std::max(x, y)); }),
              "max(" + a.text + ", " + b.text + ")"};
    }
  }

  std::vector<int64_t> binding() {
    std::vector<int64_t> values;
    for (int i = 0; i < numSymbols; ++i)
      values.push_back(pick(-7, 7));
    return values;
  }

private:
  Sample constant(int64_t c) {
    return {ctx_.constant(c), [c](const std::vector<int64_t>&) { return std::optional(c); },
            std::to_string(c)};
  }

  int64_t pick(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  Context& ctx_;
  std::mt19937_64 rng_;
};

TEST(IrSymExprTest, RandomExpressionsEvaluateLikeTheirArithmetic) {
  Context ctx;
  RandomExpressions random(ctx, /*seed=*/20240601);
  int compared = 0;
  for (int i = 0; i < 3000; ++i) {
    Sample sample = random.generate(/*depth=*/4);
    for (int j = 0; j < 8; ++j) {
      std::vector<int64_t> values = random.binding();
      std::optional<int64_t> expected = sample.value(values);
      if (!expected)
        continue; // Python raises; simplification may legitimately drop the division
      SymbolValues binding;
      for (int k = 0; k < RandomExpressions::numSymbols; ++k)
        binding["s" + std::to_string(k)] = values[k];
      llvm::Expected<int64_t> actual = sample.expr.evaluate(binding);
      ASSERT_TRUE(static_cast<bool>(actual))
          << sample.expr.str() << ": " << llvm::toString(actual.takeError());
      ASSERT_EQ(*actual, *expected)
          << sample.text << " simplified to " << sample.expr.str() << " with s0..s3 = " << values[0]
          << ", " << values[1] << ", " << values[2] << ", " << values[3];
      ++compared;
    }
  }
  EXPECT_GT(compared, 10000);
}

TEST(IrSymExprTest, RandomExpressionsPrintCanonically) {
  Context ctx;
  RandomExpressions random(ctx, /*seed=*/7);
  for (int i = 0; i < 3000; ++i) {
    SymExpr e = random.generate(/*depth=*/4).expr;
    std::string text = e.str();
    SymExpr reparsed = parse(ctx, text);
    ASSERT_EQ(reparsed, e) << text << " reads back as " << reparsed.str();
    ASSERT_EQ(reparsed.str(), text);
  }
}

TEST(IrSymExprTest, OrderIsTotalAndNatural) {
  Context ctx;
  EXPECT_LT(SymExpr::compare(ctx.symbol("s2"), ctx.symbol("s10")), 0);
  EXPECT_LT(SymExpr::compare(ctx.symbol("s9"), ctx.symbol("u0")), 0);
  EXPECT_LT(SymExpr::compare(ctx.constant(100), ctx.symbol("s0")), 0);
  EXPECT_NE(SymExpr::compare(ctx.symbol("s01"), ctx.symbol("s1")), 0);
  EXPECT_EQ(SymExpr::compare(ctx.symbol("s1"), ctx.symbol("s1")), 0);
}

} // namespace
