"""Graphs captured with --decompose=fusion compute what eager mode computes.

A small model using softmax, log_softmax, layer norm, group norm, gelu and
batch norm in eval mode is exported with `-o` and `--decompose=fusion`; the
printed graph must hold none of the composite operators whole (so the
artifact runs their decompositions; gelu, which torch tags pointwise, stays
whole), and a fresh interpreter loading the artifact with
`dync.load` must get eager's values (`torch.testing.assert_close`, default
tolerances) from the compiled path, for float32 and for bfloat16, where the
decompositions compute in float32 and round the result.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD

torch = pytest.importorskip("torch")
PACKAGE_DIR = os.path.join(BUILD, "python")

MODEL = textwrap.dedent("""
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Head(nn.Module):
        def __init__(self, dtype=torch.float32):
            super().__init__()
            self.fc = nn.Linear(16, 16)
            self.ln = nn.LayerNorm(16)
            self.gn = nn.GroupNorm(4, 16)
            self.bn = nn.BatchNorm1d(16)
            with torch.no_grad():
                # Statistics other than the initial zeros and ones, so that
                # eval-mode batch norm has something to compute.
                self.bn.running_mean.uniform_(-1.0, 1.0)
                self.bn.running_var.uniform_(0.5, 2.0)
                self.bn.weight.uniform_(0.5, 1.5)
                self.bn.bias.uniform_(-0.5, 0.5)
            self.bn.eval()
            self.to(dtype)

        def forward(self, x):
            h = F.gelu(self.ln(self.fc(x)))
            h = self.bn(h) + F.gelu(self.gn(h), approximate="tanh")
            return torch.softmax(h, -1), torch.log_softmax(h, dim=1)


    def example_inputs():
        return (torch.randn(8, 16),)


    def bf16_inputs():
        return (torch.randn(8, 16, dtype=torch.bfloat16),)
""")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import fusion_model
    import dync

    torch.manual_seed(0)
    instance = {instance}
    results = {{}}
    for name, args in {calls}:
        expected = instance(*args)
        with dync.load({artifact!r}) as art:
            actual = instance(*args)
            stats = art.stats()["Head.forward"]
        torch.testing.assert_close(actual, expected)
        results[name] = [stats["hits"], stats["misses"], stats["last_miss_reason"]]
    print(json.dumps(results))
""")

# The composite operators core ATen keeps whole that the model calls.
WHOLE = ("aten::_softmax", "aten::_log_softmax", "aten::native_layer_norm",
         "aten::native_group_norm", "aten::_native_batch_norm_legit")


def export(run_dync, folder, extra):
    out = folder / "head.so"
    done = run_dync("export", f"{folder / 'fusion_model.py'}:Head.forward", "-o", out,
                    "--emit=graph", "--decompose=fusion", *extra)
    assert done.returncode == 0, done.stderr
    assert out.exists()
    return str(out), done.stdout


def run(folder, instance, artifact, calls):
    source = RUNNER.format(package=PACKAGE_DIR, folder=str(folder), instance=instance,
                           artifact=artifact, calls=calls)
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "fusion_model.py").write_text(MODEL)
    return tmp_path


CASES = [
    # (id, extra export arguments, instance, calls made after loading)
    ("f32", [], "fusion_model.Head()",
     "[('example', fusion_model.example_inputs())]"),
    ("f32-dynamic", ["--dynamic", "x:0=batch[2,64]"], "fusion_model.Head()",
     "[('example', fusion_model.example_inputs()), ('resized', (torch.randn(13, 16),))]"),
    ("bf16", ["--init", "Head(torch.bfloat16)", "--example", "bf16_inputs"],
     "fusion_model.Head(torch.bfloat16)", "[('example', fusion_model.bf16_inputs())]"),
]


@pytest.mark.parametrize("extra,instance,calls", [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_decomposed_graph_matches_eager(run_dync, folder, extra, instance, calls):
    artifact, graph = export(run_dync, folder, extra)
    for op in WHOLE:
        assert op not in graph, f"{op} was not decomposed:\n{graph}"
    for piece in ("aten::amax.default", "aten::exp.default", "aten::sum.dim_IntList",
                  "aten::rsqrt.default", "aten::var_mean.correction", "aten::gelu.default",
                  "aten::addmm.default"):
        assert piece in graph, f"{piece} missing:\n{graph}"
    if "bf16" in instance:
        # torch's decompositions compute low-precision inputs in float32.
        assert "aten::_to_copy.default" in graph and "tensor<f32," in graph
    results = run(folder, instance, artifact, calls)
    for name, (hits, misses, reason) in results.items():
        assert (hits, misses) == (1, 0), (name, reason)
