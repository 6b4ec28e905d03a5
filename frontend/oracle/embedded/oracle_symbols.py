"""The user's size symbols, and how messages and relations name them.

Where a size comes from, a user symbol, a relation's IR spelling, the ends
of a range, and where torch took a decision (`_describe`). The translation
of sympy expressions into IR text is Session.text, which knows the names.
"""

import dataclasses

import sympy
import torch
from torch._guards import GuardSource, Source
from torch.utils._sympy.numbers import IntInfinity, NegativeIntInfinity, int_oo

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
        module = getattr(fn, "__module__", None)
        qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
        parts.append(f"by {module}.{qualname}" if module and module != "builtins" else f"by {qualname}")
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
