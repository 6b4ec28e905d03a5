"""What a Session's graph assumes: symbolic integers as the graph IR's text,
the symbols left with their ranges and the guards, each with where torch
decided it, read from the ShapeEnv when capture finishes.
"""

import sympy
from torch.fx.experimental.symbolic_shapes import GuardOnDataDependentSymNode
from torch.utils._sympy import functions as sympy_fns
from torch.utils._sympy.numbers import int_oo
from torch.utils._sympy.value_ranges import ValueRanges, bound_sympy

from dync_oracle_clauses import NotComparisons, clauses
from dync_oracle_data_dependent import is_unbacked
from dync_oracle_imports import _while_busy
from dync_oracle_layout import raise_result_observations
from dync_oracle_symbols import _RELATION_TEXT, _bound, _describe, _Unexpressible, exact_arithmetic
from dync_oracle_wire import OracleError


def _listed(alternatives):
    """A relation's alternatives as the wire gives them: one list, if any."""
    return tuple(list(a) for a in alternatives)


class _Assumptions:
    """The part of Session that states the graph's assumptions."""

    # Symbolic integers as IR text ------------------------------------------

    def text(self, expr):
        text = self.texts.get(expr)
        if text is None:
            text = self._text(expr)
            self.texts[expr] = text
        return text

    def _text(self, e):
        if isinstance(e, sympy.Integer):
            return str(int(e))
        if isinstance(e, sympy.Symbol):
            name = self.names.get(e)
            if name is None and is_unbacked(e):
                name = self.data.name(e)
            if name is None:
                raise OracleError(
                    f"size symbol {e} is not one of the declared dynamic dimensions"
                    + (" (it stands for a data-dependent value)" if str(e).startswith("u") else "")
                )
            return name
        if isinstance(e, sympy.Add):
            return "(" + " + ".join(self.text(a) for a in e.args) + ")"
        if isinstance(e, sympy.Mul):
            factors = []
            for a in e.args:
                if isinstance(a, sympy.Rational) and not isinstance(a, sympy.Integer):
                    raise _Unexpressible(e)
                factors.append(self.text(a))
            return "(" + " * ".join(factors) + ")"
        if isinstance(e, (sympy_fns.FloorDiv, sympy_fns.CleanDiv)):
            return f"({self.text(e.args[0])} floordiv {self.text(e.args[1])})"
        if isinstance(e, (sympy_fns.Mod, sympy_fns.PythonMod, sympy.Mod)):
            return f"({self.text(e.args[0])} mod {self.text(e.args[1])})"
        if isinstance(e, sympy_fns.ModularIndexing):
            x, div, mod = (self.text(a) for a in e.args)
            return f"(({x} floordiv {div}) mod {mod})"
        if isinstance(e, (sympy_fns.Min, sympy.Min)):
            return "min(" + ", ".join(self.text(a) for a in e.args) + ")"
        if isinstance(e, (sympy_fns.Max, sympy.Max)):
            return "max(" + ", ".join(self.text(a) for a in e.args) + ")"
        if isinstance(e, (sympy.Pow, sympy_fns.PowByNatural)):
            base, exponent = e.args
            if isinstance(exponent, sympy.Integer) and 0 < int(exponent) <= 64:
                return "(" + " * ".join([self.text(base)] * int(exponent)) + ")"
        if isinstance(e, sympy_fns.Identity):
            return self.text(e.args[0])
        if isinstance(e, (sympy_fns.FloorToInt, sympy_fns.CeilToInt, sympy_fns.TruncToInt)):
            return self._rounded_text(e)
        raise _Unexpressible(e)

    def _rounded_text(self, e):
        """An int rounded from float arithmetic on sizes (`TruncToInt(2.0 *
        ToFloat(s))`, interpolate's output size) as integer arithmetic,
        where the float arithmetic is exact (oracle_symbols.exact_arithmetic)."""
        exact = exact_arithmetic(e.args[0])
        if exact is None:
            raise _Unexpressible(e)
        num, den = sympy.fraction(sympy.together(exact))
        if den == 1:
            return self.text(sympy.expand(num))
        if not (isinstance(den, sympy.Integer) and den > 0):
            raise _Unexpressible(e)
        if isinstance(e, sympy_fns.TruncToInt):
            # Truncation is floor for a value never negative.
            if not (bound_sympy(num, self.env.var_to_range).lower >= 0):
                raise _Unexpressible(e)
        elif isinstance(e, sympy_fns.CeilToInt):
            num = num + den - 1
        return f"({self.text(sympy.expand(num))} floordiv {self.text(den)})"

    # Finishing -------------------------------------------------------------

    @_while_busy
    def finalize(self):
        """The graph's assumptions, as ([(name, lo, hi)], [(name, text)],
        [(lhs, relation, rhs)]): the symbols left with their ranges, the
        symbols capture rewrote in terms of others, and the guards. Capture
        calls it once every result is read: an attempt whose results
        observed a layout choice stops here (raise_result_observations)."""
        raise_result_observations()
        symbols, substitutions = [], []
        for name, dim in self.dims.items():
            if dim.symbol is None:
                continue  # pinned by its size hint: a constant from the start
            replaced = self.env.replace(dim.symbol)
            if replaced != dim.symbol:
                if replaced.is_number and self.specializing:
                    substitutions.append((name, str(int(replaced))))
                    continue
                if replaced.is_number:
                    raise OracleError(
                        self._specialized(name, dim, int(replaced), self.replacement_origins.get(dim.symbol),
                                          self.env.replacements_slocs.get(dim.symbol))
                    )
                substitutions.append((name, self._expressible(replaced, f"what {name} became")))
                continue
            vr = self.env.var_to_range.get(dim.symbol, ValueRanges(-int_oo, int_oo))
            lo, hi = _bound(vr.lower), _bound(vr.upper)
            if lo is not None and lo == hi and self.specializing:
                substitutions.append((name, str(lo)))
                continue
            if lo is not None and lo == hi:
                raise OracleError(self._specialized(name, dim, lo, None, None))
            symbols.append((name, lo, hi, self._range_origin(dim, lo, hi), False))
        relations, seen = [], set()
        for index, guard in enumerate(self.env.guards):
            expr = self.env.simplify(guard.expr)
            for relation in self._relations(expr, index, guard):
                if relation not in seen:
                    seen.add(relation)
                    # The wire's order: (lhs, op, rhs, origin[, [alternatives]]).
                    origin = self._origin(index, guard)
                    relations.append(relation[:3] + (origin,) + _listed(relation[3:]))
        symbols += self.data.finalize(relations, seen)
        return symbols, substitutions, relations

    @_while_busy
    def explain_undecidable(self, error):
        """The message for a branch capture cannot decide because it
        depends on a data-dependent value, or None when `error` is another
        exception."""
        if isinstance(error, GuardOnDataDependentSymNode):
            return self.data.undecidable_branch(error)
        return None

    def _range_origin(self, dim, lo, hi):
        """What narrowed `dim`'s range below its declared one: the guards on
        that symbol alone, each with where it was decided (`batch < 16 by
        torch.nn.functional.conv2d at model.py:20`); empty when none did."""
        declared_lo = max(2, 0 if dim.lo is None else dim.lo)
        if (lo is None or lo <= declared_lo) and (hi is None or dim.hi is None or hi >= dim.hi):
            return ""
        name = self.names.get(dim.symbol, str(dim.symbol))
        found = []
        for index, guard in enumerate(self.env.guards):
            if guard.expr.free_symbols != {dim.symbol}:
                continue
            try:
                text = self.text(guard.expr.lhs) + " " + _RELATION_TEXT[type(guard.expr)] + " "
                text += self.text(guard.expr.rhs)
            except (AttributeError, KeyError, _Unexpressible, OracleError):
                text = str(guard.expr).replace(str(dim.symbol), name)
            text += self._origin(index, guard)
            if text not in found:
                found.append(text)
        return "; ".join(found)

    def _relations(self, expr, index, guard):
        """The guard as relations, each (lhs, op, rhs) or, for a disjunction,
        (lhs, op, rhs, [(lhs, op, rhs), ...])."""
        what = f"guard {guard.expr}{self._origin(index, guard)}"
        try:
            found = clauses(expr, self.env.var_to_range)
        except NotComparisons as e:
            part = "" if e.expr == expr else f" ({e.expr} is not)"
            raise OracleError(
                f"{what} is not a comparison the graph IR can state, nor a combination of "
                f"comparisons with and, or and not{part}"
            ) from None
        return [self._relation(clause, what) for clause in found]

    def _relation(self, clause, what):
        """One clause of comparisons as a relation, in IR text."""
        if not clause:
            raise OracleError(f"{what} does not hold")
        texts = [
            (self._expressible(c.lhs, what), _RELATION_TEXT[type(c)],
             self._expressible(c.rhs, what))
            for c in clause
        ]
        # The alternatives as a tuple, hashable for `seen`.
        return texts[0] if len(texts) == 1 else texts[0] + (tuple(texts[1:]),)

    def _expressible(self, expr, what):
        try:
            return self.text(expr)
        except _Unexpressible as e:
            raise OracleError(
                f"{what} uses {type(e.expr).__name__} ({e.expr}), which the graph IR's symbolic "
                f"integers cannot express"
            ) from None

    def _origin(self, index, guard):
        fn, where = self.guard_origins[index] if index < len(self.guard_origins) else (None, "")
        return _describe(fn, where, guard.sloc)

    def _specialized(self, name, dim, value, origin, sloc):
        places = ", ".join(source if d is None else f"dimension {d} of {source}" for source, d in dim.places)
        fn, where = origin if origin is not None else (None, "")
        return f"{places} ({name}) was specialized to {value}{_describe(fn, where, sloc)}"
