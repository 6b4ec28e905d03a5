"""torch.vmap / torch.func.vmap in captured programs, end to end
(docs/capture.md, "torch.func.vmap"): a lambda over a submodule's rows,
in_dims with None and nested tuples, out_dims per output, chunk_size,
nested vmap, an in-place write through a batched tensor, randomness
'different' and 'same', tensors made inside the function, stacked
parameters. Exported, loaded in a fresh interpreter and compared with eager
(values, dtypes, strides); gradients through vmap against eager's; a
Python number the function reads is guarded; a dynamic batch size serves
other sizes."""
import os

import pytest

from conftest import INPUTS, PACKAGE_DIR, compare_with_eager, run_reporting_script

torch = pytest.importorskip("torch")
SOURCE = os.path.join(INPUTS, "vmap_programs.py")

ENTRIES = {
    "RowMLP.forward": "example_inputs",
    "broadcast": "broadcast_inputs",
    "nested_dims": "nested_dims_inputs",
    "two_outputs": "example_inputs",
    "chunked": "chunked_inputs",
    "nested": "nested_inputs",
    "in_place": "example_inputs",
    "different": "example_inputs",
    "same": "example_inputs",
    "made_inside": "example_inputs",
    "StackedLinear.forward": "example_inputs",
}


@pytest.fixture(scope="module")
def artifact(run_dync, tmp_path_factory):
    path = tmp_path_factory.mktemp("vmap") / "vmap.dync.so"
    examples = [arg for name, inputs in ENTRIES.items() for arg in ("--example", f"{name}={inputs}")]
    exported = run_dync("export", *(f"{SOURCE}:{name}" for name in ENTRIES), *examples,
                        "-o", path)
    assert exported.returncode == 0, exported.stderr
    return path


def test_vmap_programs_match_eager(artifact):
    report = compare_with_eager(INPUTS, artifact, """
        import torch
        import vmap_programs as m
        row_mlp = m.RowMLP()
        stacked = m.StackedLinear()
        x, = m.example_inputs()
        inputs = {name: getattr(m, name + "_inputs")()
                  for name in ("broadcast", "nested_dims", "chunked", "nested")}
        def seeded(entry):
            def call():
                torch.manual_seed(3)
                return entry(x)
            return call
        def inference(module):
            def call():
                with torch.no_grad():
                    return module(x)
            return call
        calls = {
            "RowMLP.forward": inference(row_mlp),
            "broadcast": lambda: m.broadcast(*inputs["broadcast"]),
            "nested_dims": lambda: m.nested_dims(*inputs["nested_dims"]),
            "two_outputs": lambda: m.two_outputs(x),
            "chunked": lambda: m.chunked(*inputs["chunked"]),
            "nested": lambda: m.nested(*inputs["nested"]),
            "in_place": lambda: m.in_place(x),
            "different": seeded(m.different),
            "same": seeded(m.same),
            "made_inside": lambda: m.made_inside(x),
            "StackedLinear.forward": inference(stacked),
        }
        """)
    assert report == {name: [None, 1, 0, None] for name in ENTRIES}, report


def _script(artifact, body):
    return f"""
import json, sys
sys.path.insert(0, {PACKAGE_DIR!r})
sys.path.insert(0, {INPUTS!r})
import torch
import dync
import vmap_programs as m
""" + body.replace("ARTIFACT", repr(str(artifact)))


def test_gradients_through_vmap_match_eager(artifact):
    report = run_reporting_script(_script(artifact, """
def step(module):
    x, = m.example_inputs()
    out = module(x)
    out.square().sum().backward()
    return [out.detach(), *(p.grad for p in module.parameters())]

errors, hits = [], {}
for name, make in (("RowMLP.forward", m.RowMLP), ("StackedLinear.forward", m.StackedLinear)):
    torch.manual_seed(1)
    eager = step(make())
    with dync.load(ARTIFACT) as art:
        torch.manual_seed(1)
        compiled = step(make())
        hits[name] = art.stats()[name]["hits"]
    for got, want in zip(compiled, eager, strict=True):
        try:
            torch.testing.assert_close(got, want)
        except AssertionError as error:
            errors.append(name + ": " + str(error))
print(json.dumps([errors, hits]))
"""))
    assert report == [[], {"RowMLP.forward": 1, "StackedLinear.forward": 1}], report


def test_number_the_function_reads_is_guarded(artifact):
    report = run_reporting_script(_script(artifact, """
model = m.RowMLP()
x, = m.example_inputs()
model.shift = 2.0
with torch.no_grad():
    eager = model(x)
    with dync.load(ARTIFACT) as art:
        got = model(x)
        stats = art.stats()["RowMLP.forward"]
print(json.dumps([torch.equal(got, eager), stats["hits"], stats["misses"]]))
"""))
    assert report == [True, 0, 1], report


def test_dynamic_batch(run_dync, tmp_path):
    path = tmp_path / "dynamic.dync.so"
    exported = run_dync("export", f"{SOURCE}:RowMLP.forward", "--dynamic", "x:0=n[2,64]",
                        "-o", path)
    assert exported.returncode == 0, exported.stderr
    report = run_reporting_script(_script(path, """
model = m.RowMLP()
errors = []
with torch.no_grad():
    for n in (2, 7, 64):
        x = torch.randn(n, 3)
        eager = model(x)
        with dync.load(ARTIFACT) as art:
            got = model(x)
            hits = art.stats()["RowMLP.forward"]["hits"]
        if hits != 1 or not torch.allclose(got, eager, rtol=1.3e-6, atol=1e-5):
            errors.append((n, hits))
print(json.dumps(errors))
"""))
    assert report == [], report


def test_ensemble_with_functional_call(run_dync, tmp_path):
    path = tmp_path / "ensemble.dync.so"
    exported = run_dync("export", f"{SOURCE}:Ensemble.forward", "-o", path)
    assert exported.returncode == 0, exported.stderr
    report = compare_with_eager(INPUTS, path, """
        import torch
        import vmap_programs as m
        model = m.Ensemble()
        x, = m.example_inputs()
        def call():
            with torch.no_grad():
                return model(x)
        calls = {"Ensemble.forward": call}
        """)
    assert report == {"Ensemble.forward": [None, 1, 0, None]}, report
