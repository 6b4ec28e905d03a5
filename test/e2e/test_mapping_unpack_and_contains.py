"""`**m` of a mapping made while capturing, and `item in tensor`, exported
and run against eager.

transformers' heads pass a ModelOutput on as `Output(**outputs, ...)`: an
OrderedDict subclass is read through its keys() and __getitem__, a dict
subclass keeping dict's iteration gives its stored items, as CPython's
dict merge reads them. `0 in ids` is `(0 == ids).any()` read as a bool, a
decision on data: the example's side runs compiled (a hit), the other
runs the original code (a miss), both equal to eager, gradients included
(docs/capture.md, "Decisions on data, specialized to the example").
"""
import textwrap

import pytest

from test_data_branches import assert_sides, entry, export, run_checks

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import collections

    import torch


    class Output(collections.OrderedDict):
        def __getitem__(self, key):
            return super().__getitem__(key) * 2


    class Stored(dict):
        def __getitem__(self, key):
            return super().__getitem__(key) * 2


    def build(**kwargs):
        return kwargs


    def passed_on(x):
        hidden = Output(hidden=x.sin(), extra=x * 3)
        stored = Stored(kept=x.cos())
        out = build(**hidden, logits=x.exp())
        return out["hidden"] + out["extra"] * out["logits"] + {**stored}["kept"]


    def has_pad(x, ids):
        if 0 in ids[:, [-1, 0]]:
            return x * 2
        return x.sin()


    def float_in(x):
        if 0.5 in x:
            return x + 1
        return x.exp()


    def passed_on_inputs():
        return (torch.randn(4, 3).requires_grad_(),)


    def pad_inputs():
        return torch.randn(3), torch.tensor([[1, 2, 0], [3, 4, 5]])


    def float_inputs():
        return (torch.tensor([0.5, 1.0, 2.0], requires_grad=True),)
""")


@pytest.fixture
def model_dir(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def test_mapping_unpack_and_tensor_contains_equal_eager(run_dync, model_dir):
    artifact, stderr = export(
        run_dync, model_dir,
        *(entry(model_dir, name) for name in ("passed_on", "has_pad", "float_in")),
        "--example", "passed_on=passed_on_inputs", "--example", "has_pad=pad_inputs",
        "--example", "float_in=float_inputs")
    assert "(if 0 in ids[:, [-1, 0]]:) is specialized to the example's side (True)" in stderr
    assert "(if 0.5 in x:) is specialized to the example's side (True)" in stderr
    results = run_checks(model_dir, artifact, """
        (x,) = model.passed_on_inputs()
        check("passed on", "passed_on", (x,), grad=True)
        x, ids = model.pad_inputs()
        check("pad", "has_pad", (x, torch.tensor([[0, 7, 7], [1, 1, 1]])))
        check("pad other side", "has_pad", (x, torch.tensor([[1, 2, 3], [3, 4, 5]])))
        check("float", "float_in", (torch.tensor([3.0, 0.5, 1.5]),), grad=True)
        check("float other side", "float_in", (torch.tensor([0.25, 1.0, 2.0]),), grad=True)
    """)
    assert_sides(results)
