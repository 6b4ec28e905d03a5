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

from conftest import BUILD, entry_with_kernels

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
                  "aten::rsqrt.default", "aten::mean.dim", "aten::gelu.default",
                  "aten::addmm.default"):
        assert piece in graph, f"{piece} missing:\n{graph}"
    # Layer norm's and group norm's statistics reduce trailing dimensions:
    # var_mean is decomposed into reductions a kernel computes.
    assert "aten::var_mean" not in graph, graph
    if "bf16" in instance:
        # torch's decompositions compute low-precision inputs in float32.
        assert "aten::_to_copy.default" in graph and "tensor<f32," in graph
    results = run(folder, instance, artifact, calls)
    for name, (hits, misses, reason) in results.items():
        assert (hits, misses) == (1, 0), (name, reason)


# --- Variance and the normalizations built on it -----------------------------
#
# var_mean is decomposed by dync itself (fusion_decompositions.py, `OWN`) into
# mean -> sub -> mul -> sum -> div, the two-pass definition; each entry is
# exported with -O1 (fusion into kernels) and compared with eager on inputs
# whose mean is far from zero, where a one-pass E[x^2] - E[x]^2 would lose
# the variance to cancellation.

NORMS = textwrap.dedent("""
    import torch
    from torch import nn


    def var_mean_c0_keep(x):
        return torch.var_mean(x, dim=-1, correction=0, keepdim=True)


    def var_mean_c1(x):
        return torch.var_mean(x, dim=-1, correction=1)


    def var_mean_two_dims(x):
        return torch.var_mean(x, dim=(-2, -1), correction=1, keepdim=True)


    def var_mean_all(x):
        return torch.var_mean(x, correction=0)


    def var_c1(x):
        return torch.var(x, dim=-1)


    def std_c0(x):
        return torch.std(x, dim=-1, correction=0)


    def var_mean_leading(x):
        return torch.var_mean(x, dim=0)


    class LN(nn.Module):
        def __init__(self, dtype=torch.float32):
            super().__init__()
            self.norm = nn.LayerNorm(48, dtype=dtype)
            with torch.no_grad():
                self.norm.weight.uniform_(0.5, 1.5)
                self.norm.bias.uniform_(-0.5, 0.5)

        def forward(self, x):
            return self.norm(x)


    class GN(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = nn.GroupNorm(3, 12)
            with torch.no_grad():
                self.norm.weight.uniform_(0.5, 1.5)
                self.norm.bias.uniform_(-0.5, 0.5)

        def forward(self, x):
            return self.norm(x)


    class Smoothing(nn.Module):
        def __init__(self):
            super().__init__()
            self.loss = nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=2)

        def forward(self, x, t):
            return self.loss(x, t)


    def logits():
        torch.manual_seed(4)
        return (torch.randn(8, 5), torch.tensor([0, 2, 4, 1, 2, 3, 0, 4]))


    def square_logits():
        torch.manual_seed(5)
        return (torch.randn(6, 6), torch.tensor([5, 2, 0, 1, 2, 3]))


    def rows():
        torch.manual_seed(1)
        return (torch.randn(6, 5, 48) * 3 + 100,)


    def images():
        torch.manual_seed(2)
        return (torch.randn(2, 12, 5, 7) * 2 + 50,)


    def half_rows():
        torch.manual_seed(3)
        return (torch.randn(6, 5, 48).to(torch.bfloat16),)
""")

NORM_RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import norms
    import dync

    torch.manual_seed(0)
    fn = {target}
    calls = {calls}
    expected = [fn(*args) for args in calls]
    with dync.load({artifact!r}) as art:
        actual = [fn(*args) for args in calls]
        stats = art.stats()[{entry!r}]
    for a, e in zip(actual, expected):
        torch.testing.assert_close(a, e)
    print(json.dumps([stats["hits"], stats["misses"], stats["last_miss_reason"]]))
""")

NORM_CASES = [
    # (id, entry, export arguments, callable in the runner, calls)
    ("var_mean-c0-keepdim", "var_mean_c0_keep", ["--example", "rows"],
     "norms.var_mean_c0_keep", "[norms.rows()]"),
    ("var_mean-c1", "var_mean_c1", ["--example", "rows"], "norms.var_mean_c1",
     "[norms.rows()]"),
    ("var_mean-two-dims", "var_mean_two_dims", ["--example", "rows"],
     "norms.var_mean_two_dims", "[norms.rows()]"),
    ("var_mean-all", "var_mean_all", ["--example", "rows"], "norms.var_mean_all",
     "[norms.rows()]"),
    ("var", "var_c1", ["--example", "rows"], "norms.var_c1", "[norms.rows()]"),
    ("std", "std_c0", ["--example", "rows"], "norms.std_c0", "[norms.rows()]"),
    ("var_mean-symbolic", "var_mean_c1",
     ["--example", "rows", "--dynamic", "x:0=b[1,64]", "--dynamic", "x:2=n[2,256]"],
     "norms.var_mean_c1",
     "[norms.rows(), (torch.randn(3, 5, 7) * 3 + 100,), (torch.randn(9, 5, 2) - 20,)]"),
    ("var_mean-leading", "var_mean_leading", ["--example", "rows"],
     "norms.var_mean_leading", "[norms.rows()]"),
    ("layer_norm", "LN.forward", ["--init", "LN()", "--example", "rows"], "norms.LN()",
     "[norms.rows()]"),
    ("layer_norm-symbolic", "LN.forward",
     ["--init", "LN()", "--example", "rows", "--dynamic", "x:0=b[1,64]",
      "--dynamic", "x:1=t[1,64]"], "norms.LN()",
     "[norms.rows(), (torch.randn(2, 11, 48) * 3 - 7,)]"),
    ("layer_norm-bf16", "LN.forward",
     ["--init", "LN(torch.bfloat16)", "--example", "half_rows"],
     "norms.LN(torch.bfloat16)", "[norms.half_rows()]"),
    ("group_norm", "GN.forward", ["--init", "GN()", "--example", "images"], "norms.GN()",
     "[norms.images()]"),
    # Fusion once made a kernel of these that codegen could not lower (the
    # ignore_index mask, made from the targets alone, beside the row loss).
    ("cross_entropy-smoothing", "Smoothing.forward",
     ["--init", "Smoothing()", "--example", "logits"], "norms.Smoothing()",
     "[norms.logits()]"),
    ("cross_entropy-smoothing-square", "Smoothing.forward",
     ["--init", "Smoothing()", "--example", "square_logits"], "norms.Smoothing()",
     "[norms.square_logits()]"),
    ("group_norm-symbolic", "GN.forward",
     ["--init", "GN()", "--example", "images", "--dynamic", "x:3=w[2,64]"], "norms.GN()",
     "[norms.images(), (torch.randn(2, 12, 5, 3) + 4,)]"),
]


GROUP_RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import {module}
    import dync

    results = {{}}
    for entry, target, calls in {cases!r}:
        torch.manual_seed(0)
        fn = eval(target)
        calls = eval(calls)
        expected = [fn(*args) for args in calls]
        with dync.load({artifact!r}) as art:
            actual = [fn(*args) for args in calls]
            stats = art.stats()[entry]
        try:
            for a, e in zip(actual, expected):
                torch.testing.assert_close(a, e)
            error = None
        except AssertionError as e:
            error = str(e)
        results[entry] = [error, stats["hits"], stats["misses"], stats["last_miss_reason"]]
    print(json.dumps(results))
""")


def export_group(run_dync, folder, module, source, cases, *options):
    """Writes `source` to `folder`/MODULE.py and exports the entries of
    `cases` [(entry, example function, callable, calls)] together at -O1,
    then calls each through the artifact in one fresh interpreter (as
    NORM_RUNNER, without stopping at the first difference). Returns ({entry:
    its optimized graph after its kernels}, {entry: [error, hits, misses,
    reason]})."""
    (folder / f"{module}.py").write_text(source)
    # Not MODULE.so: next to MODULE.py that name would shadow the module.
    out = folder / f"{module}-artifact.so"
    examples = [a for entry, example, _, _ in cases for a in ("--example", f"{entry}={example}")]
    done = run_dync("-v", "export", *[f"{folder / module}.py:{c[0]}" for c in cases], *examples,
                    "-o", out, "--emit=optimized-graph", *options)
    assert done.returncode == 0, done.stderr
    # Every kernel fusion formed lowers: none is put back as ATen calls.
    assert "runs as ATen calls" not in done.stderr, done.stderr
    source = GROUP_RUNNER.format(package=PACKAGE_DIR, folder=str(folder), module=module,
                                 artifact=str(out),
                                 cases=[(entry, target, calls) for entry, _, target, calls in cases])
    ran = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    return ({c[0]: entry_with_kernels(done.stdout, c[0]) for c in cases},
            json.loads(ran.stdout.strip().splitlines()[-1]))


# The cases of plain functions on the same example, exported together.
SHARED_EXAMPLE = ["--example", "rows"]


@pytest.fixture(scope="module")
def shared_example_norms(run_dync, tmp_path_factory):
    cases = [(entry, "rows", target, calls) for _, entry, extra, target, calls in NORM_CASES
             if extra == SHARED_EXAMPLE]
    return export_group(run_dync, tmp_path_factory.mktemp("norms"), "norms", NORMS, cases)


@pytest.mark.parametrize("entry,extra,target,calls", [c[1:] for c in NORM_CASES],
                         ids=[c[0] for c in NORM_CASES])
def test_variance_matches_eager(run_dync, tmp_path, request, entry, extra, target, calls):
    if extra == SHARED_EXAMPLE:
        graphs, results = request.getfixturevalue("shared_example_norms")
        graph, (error, hits, misses, reason) = graphs[entry], results[entry]
    else:
        (tmp_path / "norms.py").write_text(NORMS)
        # Not norms.so: next to norms.py that name would shadow the module.
        out = tmp_path / "norms-artifact.so"
        done = run_dync("-v", "export", f"{tmp_path / 'norms.py'}:{entry}", "-o", out,
                        "--emit=optimized-graph", *extra)
        assert done.returncode == 0, done.stderr
        graph = done.stdout
        # Every kernel fusion formed lowers: none is put back as ATen calls.
        assert "runs as ATen calls" not in done.stderr, done.stderr
        source = NORM_RUNNER.format(package=PACKAGE_DIR, folder=str(tmp_path), target=target,
                                    calls=calls, artifact=str(out), entry=entry)
        ran = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
        assert ran.returncode == 0, ran.stderr
        error = None
        hits, misses, reason = json.loads(ran.stdout.strip().splitlines()[-1])
    if entry == "Smoothing.forward":
        assert "kernel @k" in graph, graph
    elif entry == "var_mean_leading":
        # Leading dimensions are not reduced in kernels: var_mean stays one
        # ATen pass rather than two.
        assert "aten::var_mean.correction" in graph, graph
    else:
        assert "aten::var_mean" not in graph and "aten::var." not in graph, graph
        assert "aten::mean.dim" in graph and "kernel @k" in graph, graph
    assert error is None, error
    assert misses == 0 and hits >= 1, reason


# --- bf16 and f16 in kernels --------------------------------------------------
#
# Kernels load and store bf16 and f16 and compute each node in float32,
# rounding its result as eager does per operator (docs/kernels.md). Each
# function is exported at -O1; the whole entry must become kernel calls (no
# ATen call left in the graph, the conversions at the ends included), and the
# artifact must give eager's values (assert_close's tolerances for the dtype).

LOW = textwrap.dedent("""
    import torch
    import torch.nn.functional as F


    def softmax(x):
        return torch.softmax(x, -1)


    def chain(x, y):
        return torch.sigmoid(x * 0.5 + y) * x - 1.25


    def gelu(x):
        # A lone operator stays an ATen call: fusion needs a chain.
        h = F.gelu(x) * 1.5
        return F.gelu(h - x, approximate="tanh")


    def rows(dtype):
        torch.manual_seed(6)
        return (torch.randn(6, 40).mul(4).to(dtype),)


    def pair(dtype):
        torch.manual_seed(7)
        return (torch.randn(6, 40).mul(3).to(dtype), torch.randn(40).to(dtype))


    for _name in ("bfloat16", "float16"):
        globals()["rows_" + _name] = lambda d=getattr(torch, _name): rows(d)
        globals()["pair_" + _name] = lambda d=getattr(torch, _name): pair(d)
""")

LOW_CASES = [
    # (entry, example function without its dtype suffix)
    ("softmax", "rows"),
    ("chain", "pair"),
    ("gelu", "rows"),
]


@pytest.fixture(scope="module", params=["bfloat16", "float16"])
def low_precision(request, run_dync, tmp_path_factory):
    """The LOW_CASES on inputs of one dtype, exported together: (dtype,
    graphs, results) as export_group gives them."""
    dtype = request.param
    cases = [(entry, f"{example}_{dtype}", f"low.{entry}", f"[low.{example}_{dtype}()]")
             for entry, example in LOW_CASES]
    return (dtype, *export_group(run_dync, tmp_path_factory.mktemp("low"), "low", LOW, cases))


@pytest.mark.parametrize("entry", [c[0] for c in LOW_CASES])
def test_low_precision_kernels_match_eager(low_precision, entry):
    dtype, graphs, results = low_precision
    graph = graphs[entry]
    short = {"bfloat16": "bf16", "float16": "f16"}[dtype]
    assert "kernel @k" in graph and f"tensor<{short}," in graph, graph
    entry_graph = graph[graph.index("graph @"):]
    assert "aten::" not in entry_graph, graph
    error, hits, misses, reason = results[entry]
    assert error is None, error
    assert misses == 0 and hits >= 1, reason
