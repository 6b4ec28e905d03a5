"""Inputs/exact_values.py, the exact comparison runner scripts use: each
kind of difference it claims to see is seen, and equal results pass."""
import sys

import pytest

from conftest import INPUTS

torch = pytest.importorskip("torch")
sys.path.insert(0, INPUTS)
import exact_values  # noqa: E402


def test_equal_results_pass():
    nan = torch.tensor([float("nan"), 1.0])
    result = (nan, [1, 2.5, float("nan")], {"k": torch.arange(3)}, -0.0, True)
    copy = (nan.clone(), [1, 2.5, float("nan")], {"k": torch.arange(3)}, -0.0, True)
    assert exact_values.same(copy, result) is None


def test_each_difference_is_seen():
    x = torch.rand(2, 3)
    cases = {
        "types": (1, 1.0),
        "float64": (x.double(), x),
        "(3, 2)": (x.reshape(3, 2), x),
        "(1, 2)": (x.t().contiguous().t(), x),
        "True": (x.clone().requires_grad_(), x),
        "values": (x + 1e-7, x),
        "lengths": ([1, 2], [1, 2, 3]),
        "keys": ({"a": 1, "b": 2}, {"b": 2, "a": 1}),
        "-0.0": (-0.0, 0.0),
        "nan": (float("nan"), 1.0),
    }
    for expect, (actual, expected) in cases.items():
        why = exact_values.same(actual, expected)
        assert why is not None and expect in why, (expect, why)


def test_outcome_reports_the_exception():
    assert exact_values.outcome(lambda v: 1 // v, (0,)) == \
        ("raised", "ZeroDivisionError: integer division or modulo by zero")
    assert exact_values.outcome(lambda v: v + 1, (1,)) == ("value", 2)
