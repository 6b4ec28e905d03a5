"""The tensor oracle's Python half.

Runs torch builtins on torch's own fake tensors, over a ShapeEnv that holds
the symbolic sizes, and records every ATen operator overload they dispatch to
after torch's core-ATen decompositions. The C++ half (TensorOracle.cpp) turns
the records into graph nodes, so what crosses over is kept plain: Python
scalars, strings, lists and tuples, plus the small tag types of
dync_oracle_wire, which the C++ side recognizes by exact type.

Symbolic integers cross over as text in the graph IR's own language (`+ - *`,
`floordiv`, `mod`, `min`, `max` over the user's symbol names), so nothing of
sympy leaves the oracle.

This module holds the Session, the entry the C++ half calls, made of the
parts of one concern each: dync_oracle_inputs (its inputs), dync_oracle_calls
(running a call; eager_layout), dync_oracle_records (what a call records)
and dync_oracle_assumptions (what the graph assumes, when capture finishes).
It imports the rest from modules of one concern each too
(docs/tensor-oracle.md, "The Python half"): dync_oracle_imports (how torch is imported; first, as it prepares
torch's imports), dync_oracle_wire (what crosses over),
dync_oracle_decompositions, dync_oracle_recorder (the dispatch mode),
dync_oracle_layout (layout choices and eager twins),
dync_oracle_kernel_layout and dync_oracle_kernel_check (what torch's CPU
kernels say), dync_oracle_symbols (user symbols in messages and relations)
and dync_oracle_leaves.
"""

import weakref

import torch

# Before the rest of torch: it puts torch._dynamo's package body off and
# loads the modules imported below with the collector frozen.
from dync_oracle_imports import _while_busy

from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.symbolic_shapes import ShapeEnv

from dync_oracle_assumptions import _Assumptions
from dync_oracle_calls import _Calls, eager_layout
from dync_oracle_data_dependent import DataDependent
from dync_oracle_decompositions import _DECOMPOSITION_SETTINGS, _fusion_module
from dync_oracle_example_values import ExampleValues
from dync_oracle_inputs import _Inputs
from dync_oracle_kernel_check import _BoolMixCheck, _KernelCheck
from dync_oracle_layout import _take_carried_pins, take_layout_retry
from dync_oracle_records import _Records
from dync_oracle_recorder import _fusion_table, _Recorder
from dync_oracle_wire import (
    Device,
    DType,
    Layout,
    MemoryFormat,
    OracleError,
    Ref,
    ScalarMeta,
    Sym,
    TensorMeta,
)

# What the C++ half reads from this module besides Session: the tags,
# OracleError, TensorMeta and eager_layout above, and
# take_layout_retry, which the capture loop calls after a failed attempt.
__all__ = [
    "DType",
    "Device",
    "Layout",
    "MemoryFormat",
    "OracleError",
    "Ref",
    "ScalarMeta",
    "Session",
    "Sym",
    "TensorMeta",
    "eager_layout",
    "take_layout_retry",
]


class Session(_Inputs, _Calls, _Records, _Assumptions):
    """One capture: a ShapeEnv, a fake mode over it, and the calls recorded.

    `decompositions` is "core" (torch's core-ATen decompositions) or
    "fusion" (those, then fusion_decompositions.py's)."""

    @_while_busy
    def __init__(self, decompositions="core"):
        # duck_shape off: sizes that happen to be equal in the example are
        # not the same symbol unless the user gave them the same name.
        # Data-dependent outputs (item(), nonzero()) are fresh unbacked
        # symbols, which graphs compute when they run
        # (dync_oracle_data_dependent).
        self.env = ShapeEnv(
            duck_shape=False,
            allow_scalar_outputs=True,
            allow_dynamic_output_shape_ops=True,
        )
        self.data = DataDependent(self)
        # The graph's values at the example inputs, for decisions on data
        # specialized to the example's side.
        self.example = ExampleValues(self)
        self.fake = FakeTensorMode(shape_env=self.env, allow_non_fake_inputs=False)
        if decompositions not in _DECOMPOSITION_SETTINGS:
            raise OracleError(
                f"unknown decompositions setting {decompositions!r}; expected one of "
                + ", ".join(_DECOMPOSITION_SETTINGS)
            )
        self.decompositions = decompositions
        self.recorder = _Recorder(self, _fusion_table() if decompositions == "fusion" else None)
        self.kernel_check = _KernelCheck()
        self.bool_mix_check = _BoolMixCheck()
        self.dims = {}  # user symbol name -> _Dim
        self.sparse_inputs = 0  # sparse COO inputs so far: names their nnz symbols
        # The graph IR's reserved words, which no symbol may be named (the
        # C++ half sets them).
        self.reserved_names = frozenset()
        # Whether this capture serves part of a declared range (inputs with
        # size hints): then a symbol torch pins to a constant is that
        # constant in the graph rather than an error.
        self.specializing = False
        self.names = {}  # sympy symbol -> user symbol name
        self.texts = {}  # sympy expression -> IR text
        self.op_names = {}  # OpOverload -> "aten::name.overload"
        self.records = []
        self.rebound = []  # (tensor, previous id) for in-place results
        self.where = ""
        # What each guard and replacement came from, for finalize's messages.
        self.guard_origins = []
        self.replacement_origins = {}
        self.calling = None
        self.calling_with_grad = False
        # False: every input is captured as not requiring grad, whatever
        # the real tensor says (the variant for frozen parameters; its
        # guards then require exactly that).
        self.inputs_require_grad = True
        # True: the graph runs as ATen calls that autograd records in the
        # grad mode capture started in, so no call on tensors that require
        # grad may run in another (see call()).
        self.records_autograd = False
        self.grad_mode = torch.is_grad_enabled()
        # Layout choices of the fusion decompositions (see "Layout
        # choices"): those this attempt converts back, carried from the
        # attempt that observed them, and the storages of returned tensors.
        pins = _take_carried_pins()
        self.layout = None
        if decompositions == "fusion":
            self.layout = _fusion_module().LayoutChoices(pins)
        self.returned = {}
        # Each fake tensor by its id, while it lives (fake_of).
        self.fakes_by_id = weakref.WeakValueDictionary()

    @_while_busy
    def example_truth(self, value):
        """(bool, None): the truth the example inputs give `value`, a
        one-element fake tensor of this session; (None, why) when capture
        cannot tell it (dync_oracle_example_values)."""
        return self.example.truth(value)

    @_while_busy
    def example_ints(self, value):
        """The unbacked ints `value` (a SymInt; None: what the last call
        needed) is computed from, at the example's values
        (DataDependent.example_ints)."""
        return self.data.example_ints(value)

    @_while_busy
    def specialize_int(self, name, example):
        """Unbacked int `name` is `example` from here on
        (DataDependent.specialize_int)."""
        self.data.specialize_int(name, example)

    @_while_busy
    def specialize_float(self, name, example):
        """The float from data whose symbol is `name` is `example` from
        here on (DataDependent.specialize_float)."""
        self.data.specialize_float(name, example)

    @_while_busy
    def decided_truth(self, value):
        """The side an earlier decision on SymBool `value` took, or None."""
        return self.data.decided.get(value.node.expr) if isinstance(value, torch.SymBool) else None

    @_while_busy
    def note_decided(self, value, side):
        """SymBool `value` is `side` from here on (DataDependent.note_decided)."""
        self.data.note_decided(value, side)
