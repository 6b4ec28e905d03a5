"""Classes another module's function reads from its own globals, and
methods found through base classes, end to end.

The entry calls `helpers.make(x)`, which constructs `Block` and `Norm`,
checks `isinstance(x, Cfg)` and catches `Problem`, all globals of helpers.py;
a module of the entry's calls a method it inherits and one through
`super()`. A fresh interpreter loads the artifact: calls are served and
equal eager's (values and gradients); then a helper global is rebound to
another class, a base's method replaced, or a class's `__bases__`
reassigned, and each call must miss the guards and return what eager
returns with the program as changed, never the old graph's.
"""
import textwrap

from conftest import PACKAGE_DIR, export_entries, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

HELPERS = textwrap.dedent("""
    import torch


    class Cfg:
        pass


    class Norm:
        def __init__(self, scale):
            self.scale = scale

        def apply(self, x):
            return x * self.scale


    class OtherNorm(Norm):
        def apply(self, x):
            return x - self.scale


    class Block(torch.nn.Module):
        def forward(self, x):
            return x * 2


    class OtherBlock(torch.nn.Module):
        def forward(self, x):
            return x.exp()


    class Problem(Exception):
        pass


    def make(x):
        y = Norm(0.5).apply(Block()(x))
        if isinstance(x, Cfg):
            return y
        try:
            raise Problem()
        except Problem:
            return y + 1
""")

MODEL = textwrap.dedent("""
    import torch

    import helpers


    def helper_classes(x):
        return helpers.make(x)


    class Base(torch.nn.Module):
        def act(self, x):
            return x * 2

        def forward(self, x):
            return self.act(x) + 1


    class OtherBase(torch.nn.Module):
        def act(self, x):
            return x * 3

        def forward(self, x):
            return self.act(x) - 1


    class Sub(Base):
        pass


    class Extended(Base):
        def forward(self, x):
            return super().forward(x) * 2


    def made_sub(x):
        return Sub()(x)


    def example_inputs():
        return (torch.randn(4, requires_grad=True),)
""")

CHILD = """
import contextlib, json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch, dync
import helpers, model


@contextlib.contextmanager
def patched(owner, name, value):
    old = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, old)


def call(fn, seed):
    x = torch.randn(4, generator=torch.Generator().manual_seed(seed)).requires_grad_()
    out = fn(x)
    out.sum().backward()
    return out.detach(), x.grad


extended = model.Extended()
CHANGES = {{
    "Block rebound": (helpers, "Block", helpers.OtherBlock),
    "Norm rebound": (helpers, "Norm", helpers.OtherNorm),
    "Cfg rebound": (helpers, "Cfg", torch.Tensor),
    "Problem rebound": (helpers, "Problem", ValueError),
    "Sub's bases": (model.Sub, "__bases__", (model.OtherBase,)),
    "Base.forward replaced": (model.Base, "forward", lambda self, x: x - 5),
    "Extended's bases": (model.Extended, "__bases__", (model.OtherBase,)),
}}
# (what, entry, function, served, change)
CALLS = [
    ("helper classes", "helper_classes", model.helper_classes, True, None),
    *[(what, "helper_classes", model.helper_classes, False, what)
      for what in ("Block rebound", "Norm rebound", "Cfg rebound", "Problem rebound")],
    ("helper classes again", "helper_classes", model.helper_classes, True, None),
    ("made sub", "made_sub", model.made_sub, True, None),
    ("Sub's bases", "made_sub", model.made_sub, False, "Sub's bases"),
    ("Base.forward replaced", "made_sub", model.made_sub, False, "Base.forward replaced"),
    ("made sub again", "made_sub", model.made_sub, True, None),
    ("super", "Extended.forward", extended, True, None),
    ("super after Base.forward replaced", "Extended.forward", extended, False,
     "Base.forward replaced"),
    ("Extended's bases", "Extended.forward", extended, False, "Extended's bases"),
    ("super again", "Extended.forward", extended, True, None),
]


def run(fn, seed, change):
    with patched(*CHANGES[change]) if change else contextlib.nullcontext():
        return call(fn, seed)


expected = [run(fn, seed, change) for seed, (_, _, fn, _, change) in enumerate(CALLS)]
report = []
with dync.load({artifact!r}) as art:
    for seed, ((what, name, fn, served, change), eager) in enumerate(zip(CALLS, expected)):
        hits = art.stats()[name]["hits"]
        actual = run(fn, seed, change)
        hit = art.stats()[name]["hits"] > hits
        same = all(torch.equal(a, e) for a, e in zip(actual, eager))
        report.append({{"what": what, "hit": hit, "served": served, "same": same,
                       "why": art.stats()[name]["last_miss_reason"]}})
print(json.dumps(report))
"""


def test_helper_classes_and_bases(run_dync, tmp_path):
    (tmp_path / "helpers.py").write_text(HELPERS)
    (tmp_path / "model.py").write_text(MODEL)
    artifact = export_entries(run_dync, tmp_path / "model.py",
                              ("helper_classes", "made_sub", "Extended.forward"),
                              tmp_path / "model.dync.so")
    report = run_reporting_script(CHILD.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                               artifact=str(artifact)))
    assert len(report) == 14
    wrong = [r for r in report if r["hit"] != r["served"] or not r["same"]]
    assert not wrong, "\n".join(map(str, wrong))
