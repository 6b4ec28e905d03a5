"""The user's size symbols, and how messages and relations name them.

Where a size comes from, a user symbol, a relation's IR spelling, the ends
of a range, and where torch took a decision (`_describe`). The translation
of sympy expressions into IR text is Session.text, which knows the names.
"""

import dataclasses

import sympy
import torch
from torch._guards import GuardSource, Source
from torch.utils._sympy import functions as sympy_fns
from torch.utils._sympy.numbers import IntInfinity, NegativeIntInfinity, int_oo

from dync_oracle_layout import _qualified_callable_name

# The file name the frames of dync_oracle and of its dync_oracle_* parts
# carry (EmbeddedModules.cpp names an embedded module's file "<dync NAME>").
_ORACLE_FILES = "<dync dync_oracle"


@dataclasses.dataclass(frozen=True)
class _DimSource(Source):
    """Where a size comes from, e.g. `L['x'].size()[0]`, for torch's messages."""

    text: str

    @property
    def _name_template(self):
        return self.text

    @property
    def guard_source(self):
        return GuardSource.LOCAL


@dataclasses.dataclass
class _Dim:
    """A user symbol: its size in the example inputs and where it appears."""

    symbol: sympy.Symbol
    symint: torch.SymInt
    hint: int
    lo: object
    hi: object
    places: list  # (source, dim)


_RELATION_TEXT = {
    sympy.Eq: "==",
    sympy.Ne: "!=",
    sympy.StrictLessThan: "<",
    sympy.LessThan: "<=",
    sympy.StrictGreaterThan: ">",
    sympy.GreaterThan: ">=",
}


class _Unexpressible(Exception):
    def __init__(self, expr):
        super().__init__(str(expr))
        self.expr = expr


def _bound(value):
    if value in (int_oo, -int_oo) or isinstance(value, (IntInfinity, NegativeIntInfinity)):
        return None
    if value in (sympy.oo, -sympy.oo):
        return None
    return int(value)


def _describe(fn, where, sloc):
    """` by torch.nn.functional.linear at model.py:12 (decided in torch's
    _refs/__init__.py:3965 in _reshape_view_helper)`, as far as known."""
    parts = []
    if fn is not None:
        parts.append(f"by {_qualified_callable_name(fn)}")
    if where:
        parts.append(f"at {where}")
    frame = getattr(sloc, "framework_loc", None)
    if frame is not None:
        if isinstance(frame, str):
            parts.append(f"(decided in {frame})")
        elif not frame.filename.startswith(_ORACLE_FILES):
            # A decision taken in the oracle's own frames (bool() of a
            # SymBool called directly) has nothing to add to `by`.
            filename = frame.filename
            root = torch.__path__[0] + "/"
            if filename.startswith(root):
                filename = "torch's " + filename[len(root):]
            parts.append(f"(decided in {filename}:{frame.lineno} in {frame.name})")
    return (" " + " ".join(parts)) if parts else ""


# Float arithmetic on sizes, as exact arithmetic -------------------------------
#
# `F.interpolate(x, scale_factor=2.0)` on a symbolic size gives torch's
# float functions over it: the output size `TruncToInt(2.0*ToFloat(s))`, and
# the decomposition's scale `FloatTrueDiv(ToFloat(s), 2.0*ToFloat(s))`. The
# graph IR has integer sizes only. Where double arithmetic on the values is
# exact, the expression equals its exact rational form (`2*s`, `1/2`), which
# the IR can state. A float literal keeps products with sizes exact when it
# is a dyadic rational with small numerator and denominator (2.0, 0.5, 1.5);
# 0.7 is not (10 * 0.7 rounds up to 7.0, whose exact product is below 7).

_EXACT_LIMIT = 1 << 20


def _exact_product(e):
    """`e`, a division-free sum of products of ToFloat of int expressions
    and of float literals, as an exact sympy expression, or None where double
    arithmetic on it could round."""
    if isinstance(e, sympy.Float):
        value = sympy.Rational(float(e))
        small = abs(value.p) < _EXACT_LIMIT and value.q < _EXACT_LIMIT
        return value if small else None
    if isinstance(e, sympy_fns.ToFloat):
        # Any int expression over sizes (a conv's `(s - 1) // 2 + 1`) is
        # exact as a double.
        return e.args[0] if e.args[0].is_integer else None
    if isinstance(e, sympy.Integer):
        return e
    if isinstance(e, (sympy.Add, sympy.Mul)):
        args = [_exact_product(a) for a in e.args]
        return None if any(a is None for a in args) else e.func(*args)
    return None


def exact_arithmetic(e):
    """`e` as exact arithmetic (see above): a product form, or one division of
    two (a double division of exact operands rounds its exact quotient
    once, which floor and float() then read alike), or None."""
    if isinstance(e, sympy_fns.FloatTrueDiv):
        num, den = (_exact_product(a) for a in e.args)
        if num is None or den is None or den == 0:
            return None
        return sympy.cancel(num / den)
    if isinstance(e, sympy_fns.IntTrueDiv):
        # Python's `/` of two ints (`math.ceil(tokens / experts)`): both
        # are exact as doubles, so this is one division, as above.
        num, den = e.args
        if not (num.is_integer and den.is_integer) or den == 0:
            return None
        return sympy.cancel(num / den)
    return _exact_product(e)


def exact_float_constant(e):
    """The float a SymFloat's expression `e` always equals, whatever its
    symbols' values (`s / (2.0 * s)` is 0.5), or None."""
    exact = exact_arithmetic(e)
    if exact is None or exact.free_symbols or not exact.is_number:
        return None
    return float(exact)


def unexpressible_size(size, part, names):
    """Why the size `size` has no IR form (`part` is what the IR lacks), in
    the user's symbol names."""

    def named(expr):
        text = str(expr)
        for symbol in sorted(expr.free_symbols, key=lambda s: -len(str(s))):
            if symbol in names:
                text = text.replace(str(symbol), names[symbol])
        return text

    message = f"a size computed as {named(size)} has no form in the graph IR's symbolic integers"
    if part.atoms(sympy_fns.ToFloat):
        message += (
            " (float arithmetic on a symbolic size, exact only for scales such as 2.0, 0.5 or "
            "1.5, dyadic with small terms); keep that size static, or compute the size as an int "
            "and pass it (F.interpolate(x, size=...) rather than scale_factor=...)"
        )
    return message
