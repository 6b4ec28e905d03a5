"""A fixed slice of utils/fuzz: twelve random programs of seed 0, exported
in one `dync export` run and compared with eager in every grad mode
(docs/testing.md, "Random programs"). And the fuzzer's own comparison,
which must see each kind of difference it claims to see."""
import importlib.machinery
import importlib.util
import os
import re
import subprocess
import sys

import pytest

from conftest import BUILD, REPO

torch = pytest.importorskip("torch")
FUZZ = os.path.join(REPO, "utils", "fuzz")


def load_fuzz():
    loader = importlib.machinery.SourceFileLoader("dync_fuzz", FUZZ)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def test_seed_0_slice_matches_eager(dync_binary, tmp_path):
    ran = subprocess.run([sys.executable, FUZZ, "--seed", "0", "--cases", "12", "--dync",
                          dync_binary, "--keep", str(tmp_path)],
                         capture_output=True, text=True, timeout=600)
    last = ran.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"fuzz: \d+ passed, 0 failed \(export refused \d+\)", last), ran.stdout
    assert ran.returncode == 0, ran.stdout + ran.stderr
    passed = int(last.split()[1])
    # Most of the slice is compiled: a fuzzer whose programs are all refused
    # or all missed would pass without testing anything.
    assert passed >= 8, ran.stdout
    hits = int(re.search(r"compiled calls: (\d+)", ran.stdout).group(1))
    assert hits >= 4 * passed, ran.stdout


def test_generation_is_deterministic():
    fuzz = load_fuzz()
    first = [fuzz.generate(7, i, i % 2 == 1) for i in range(4)]
    again = [fuzz.generate(7, i, i % 2 == 1) for i in range(4)]
    assert [p and p.source() for p in first] == [p and p.source() for p in again]
    assert len({p.source() for p in first if p}) == len([p for p in first if p])


def test_comparison_sees_each_difference():
    fuzz = load_fuzz()

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.linspace(-1, 1, 4))

        def forward(self, x):
            return x * self.w

    def inputs(*_):
        return (torch.arange(8.0).reshape(2, 4),)

    net = Net()
    params = dict(net.named_parameters())
    expected = fuzz.observe(net, params, inputs, "grad", None)
    assert fuzz.difference(fuzz.observe(net, params, inputs, "grad", None), expected) is None

    def changed(function):
        return fuzz.difference(fuzz.observe(function, params, inputs, "grad", None), expected)

    assert "values" in changed(lambda x: net(x) + 1e-3)
    assert "dtype" in changed(lambda x: net(x).double())
    assert "shape" in changed(lambda x: net(x).unsqueeze(0))
    assert "stride" in changed(lambda x: net(x).t().contiguous().t())
    assert "requires_grad" in changed(lambda x: net(x).detach())
    # Same values, another gradient.
    assert "grad of w" in changed(lambda x: net(x) + (net.w - net.w.detach()))
    no_grad = fuzz.observe(net, params, inputs, "no_grad", None)
    assert "requires_grad" in fuzz.difference(no_grad, expected)
    inference = fuzz.observe(net, params, inputs, "inference_mode", None)
    assert "is_inference" in fuzz.difference(inference, no_grad)
