"""A guard as the graph IR states it: clauses of comparisons.

torch records a guard as any boolean combination of comparisons between
sizes: `Eq(Mod(s0, 4), 0) | Eq(s0, 6)` when a program asks `bool()` of a
SymBool made with `|`, or reshape's check that an inferred dimension
divides evenly (`numel == newsize or numel % newsize == 0`). The graph IR's
relations are comparisons, or disjunctions of comparisons, and all of them
hold: conjunctive normal form. `clauses` brings a guard to that form,
pushing negations into the comparisons (`Not(a < b)` is `a >= b`; sizes
are integers) and distributing `Or` over `And`; a comparison the symbols'
ranges decide is dropped from its clause (false) or drops the clause
(true).
"""

import itertools

import sympy
from torch.utils._sympy.value_ranges import bound_sympy

from dync_oracle_symbols import _RELATION_TEXT

_NEGATED = {
    sympy.Eq: sympy.Ne,
    sympy.Ne: sympy.Eq,
    sympy.StrictLessThan: sympy.GreaterThan,
    sympy.LessThan: sympy.StrictGreaterThan,
    sympy.StrictGreaterThan: sympy.LessThan,
    sympy.GreaterThan: sympy.StrictLessThan,
}

# A guard whose normal form would need more clauses than this is refused
# rather than checked by a long sequence of comparisons.
_MOST_CLAUSES = 64


class NotComparisons(Exception):
    """The part of a guard that is not a boolean combination of comparisons."""

    def __init__(self, expr):
        super().__init__(str(expr))
        self.expr = expr


def clauses(expr, ranges):
    """`expr` as [[comparison, ...], ...]: every clause holds, a clause when
    one of its comparisons does. Each comparison is a sympy relational of
    _RELATION_TEXT's types. `ranges` maps symbols to their ValueRanges."""
    result = []
    for clause in _cnf(expr, False):
        kept = _decided(clause, ranges)
        if kept is not None:
            result.append(kept)
    return result


def _cnf(expr, negated):
    """The clauses of `expr` (of `Not(expr)` when `negated`), each a list of
    comparisons."""
    if expr is sympy.true or expr is sympy.false:
        holds = (expr is sympy.true) != negated
        return [] if holds else [[]]
    if isinstance(expr, sympy.Not):
        return _cnf(expr.args[0], not negated)
    conjunction = sympy.Or if negated else sympy.And
    disjunction = sympy.And if negated else sympy.Or
    if isinstance(expr, conjunction):
        return [c for a in expr.args for c in _cnf(a, negated)]
    if isinstance(expr, disjunction):
        result = [[]]
        for a in expr.args:
            result = [left + right for left, right in itertools.product(result, _cnf(a, negated))]
            if len(result) > _MOST_CLAUSES:
                raise NotComparisons(expr)
        return result
    kind = type(expr)
    if kind not in _RELATION_TEXT:
        raise NotComparisons(expr)
    if negated:
        expr = _NEGATED[kind](*expr.args, evaluate=False)
    return [[expr]]


def _decided(clause, ranges):
    """`clause` without the comparisons the ranges prove false, or None when
    the ranges prove one true (the clause says nothing they do not)."""
    kept = []
    for comparison in clause:
        try:
            implied = bound_sympy(comparison, ranges)
        except Exception:
            implied = None
        if implied is not None and implied.is_singleton():
            if bool(implied.lower):
                return None
            continue
        if comparison not in kept:
            kept.append(comparison)
    # Every comparison false under the ranges: keep the clause as torch
    # stated it, so the graph's guard fails rather than drops it.
    return kept if kept else clause
