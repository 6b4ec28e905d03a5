"""Export to a shared library, then load and run it in a fresh Python process.

Each example is exported with `dync export -o`, and a new interpreter imports
the example, computes the eager result, loads the artifact with `dync.load`,
calls the model again and compares (`torch.testing.assert_close`, default
tolerances). The runtime's statistics say whether the compiled path ran, so
every comparison also checks which path produced the value.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD, REPO

torch = pytest.importorskip("torch")
PACKAGE_DIR = os.path.join(BUILD, "python")
EXAMPLES = os.path.join(REPO, "examples")

# (example folder, entry, how the runner gets the instance, --dynamic specs)
CASES = [
    ("mlp", "MLP.forward", "model.MLP()", []),
    ("mlp", "MLP.forward", "model.MLP()", ["x:0=batch[2,1024]"]),
    ("cnn", "CNN.forward", "model.model", []),
    ("cnn", "CNN.forward", "model.model", ["images:0=batch[2,8]"]),
    ("transformer", "EncoderBlock.forward", "model.EncoderBlock()", []),
    ("transformer", "EncoderBlock.forward", "model.EncoderBlock()", ["x:1=seq[2,512]"]),
]

RUNNER = textwrap.dedent("""
    import json, sys, warnings
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import model
    import dync

    torch.manual_seed(0)
    instance = {instance}
    results = {{}}

    def call(args):
        with torch.no_grad() if {no_grad} else torch.enable_grad():
            return instance(*args)

    def check(name, args):
        expected = call(args)
        with dync.load({artifact!r}, strict={strict}) as art:
            actual = call(args)
            stats = art.stats()[{qualname!r}]
        torch.testing.assert_close(actual, expected)
        results[name] = {{"hits": stats["hits"], "misses": stats["misses"],
                         "reason": stats["last_miss_reason"]}}

    {body}
    print(json.dumps(results))
""")


def run_python(source):
    """Runs \\p source in a fresh interpreter; returns its last stdout line as JSON."""
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def runner(folder, instance, artifact, qualname, body, strict=False, no_grad=False):
    return RUNNER.format(package=PACKAGE_DIR, folder=folder, instance=instance,
                         artifact=artifact, qualname=qualname, strict=strict,
                         no_grad=no_grad, body=textwrap.indent(textwrap.dedent(body), "").strip())


@pytest.fixture(scope="module")
def export(run_dync, tmp_path_factory):
    """Exports an example's entry, with --dynamic specs, and returns the
    artifact's path. The tests only read artifacts, so each (example, entry,
    specs) is exported once for the module."""
    folder = tmp_path_factory.mktemp("roundtrip")
    made = {}

    def do(example, entry, dynamic=()):
        key = (example, entry, tuple(dynamic))
        if key not in made:
            out = folder / f"model-{len(made)}.dync.so"
            args = ["export", os.path.join(EXAMPLES, example, "model.py") + ":" + entry, "-o",
                    out]
            for spec in dynamic:
                args += ["--dynamic", spec]
            done = run_dync(*args)
            assert done.returncode == 0, done.stderr
            assert out.exists()
            made[key] = str(out)
        return made[key]
    return do


@pytest.mark.parametrize("example,entry,instance,dynamic", CASES,
                         ids=[f"{c[0]}-{'dynamic' if c[3] else 'static'}" for c in CASES])
def test_example_matches_eager(export, example, entry, instance, dynamic):
    artifact = export(example, entry, dynamic)
    body = "check('example', model.example_inputs())\n"
    if dynamic:
        # Another size inside the declared range takes the compiled path too.
        arg, rest = dynamic[0].split(":", 1)
        dim = int(rest.split("=", 1)[0])
        body += textwrap.dedent(f"""
            args = list(model.example_inputs())
            shape = list(args[0].shape)
            shape[{dim}] = shape[{dim}] - 1 if shape[{dim}] > 2 else shape[{dim}] + 1
            args[0] = torch.randn(shape)
            check('resized', args)
        """)
    results = run_python(runner(os.path.join(EXAMPLES, example), instance, artifact, entry,
                                body))
    for name, stats in results.items():
        assert (stats["hits"], stats["misses"]) == (1, 0), (name, stats["reason"])


MISSES = [
    # (what changes, how the call is made, a fragment of the recorded reason)
    ("dtype", "instance.double(); check('x', [model.example_inputs()[0].double()])",
     "tensor L['"),
    ("size", "check('x', [torch.randn(7, 784)])", "L['x']"),
    ("rank", "check('x', [torch.randn(32, 28, 28)])", "L['x']"),
    ("training", "instance.eval(); check('x', model.example_inputs())", "training"),
]


@pytest.mark.parametrize("what,body,reason", MISSES, ids=[m[0] for m in MISSES])
def test_guard_miss_falls_back_to_eager(export, what, body, reason):
    artifact = export("mlp", "MLP.forward")
    results = run_python(runner(os.path.join(EXAMPLES, "mlp"), "model.MLP()", artifact,
                                "MLP.forward", body))
    stats = results["x"]
    assert (stats["hits"], stats["misses"]) == (0, 1)
    assert reason in stats["reason"]


def test_guard_miss_in_strict_mode_raises(export):
    artifact = export("mlp", "MLP.forward")
    body = """
        try:
            check('x', [torch.randn(7, 784)])
        except dync.GuardError as error:
            results['error'] = {'entry': error.entry, 'reason': error.reason}
    """
    results = run_python(runner(os.path.join(EXAMPLES, "mlp"), "model.MLP()", artifact,
                                "MLP.forward", body, strict=True))
    assert results["error"]["entry"] == "MLP.forward"
    assert "L['x']" in results["error"]["reason"]


def test_no_grad_runs_compiled(export):
    # The artifact holds a variant captured under no_grad: a call under
    # no_grad takes it (test_autograd_and_grad_mode.py covers every mode).
    artifact = export("mlp", "MLP.forward")
    results = run_python(runner(os.path.join(EXAMPLES, "mlp"), "model.MLP()", artifact,
                                "MLP.forward", "check('x', model.example_inputs())",
                                no_grad=True))
    assert (results["x"]["hits"], results["x"]["misses"]) == (1, 0), results["x"]["reason"]


def test_comment_added_to_source_is_not_reported(export, tmp_path):
    # The artifact checks the code capture ran, not the file's bytes
    # (test_code_identity.py has the cases where the code changes).
    folder = tmp_path / "src"
    shutil.copytree(os.path.join(EXAMPLES, "mlp"), folder)
    out = tmp_path / "copy.so"
    done = subprocess.run([os.path.join(BUILD, "bin", "dync"), "export",
                           f"{folder}/model.py:MLP.forward", "-o", str(out)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with open(folder / "model.py", "a") as f:
        f.write("\n# edited after export\n")
    source = textwrap.dedent(f"""
        import json, sys, warnings
        sys.path.insert(0, {PACKAGE_DIR!r}); sys.path.insert(0, {str(folder)!r})
        import torch, model, dync
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            art = dync.load({str(out)!r})
        art.unload()
        print(json.dumps([str(w.message) for w in caught
                          if issubclass(w.category, dync.ArtifactWarning)]))
    """)
    messages = run_python(source)
    assert messages == [], messages


def test_truncated_artifact_is_refused(export, tmp_path):
    artifact = export("mlp", "MLP.forward")
    truncated = tmp_path / "truncated.so"
    data = open(artifact, "rb").read()
    truncated.write_bytes(data[: len(data) // 2])
    source = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {PACKAGE_DIR!r}); sys.path.insert(0, {os.path.join(EXAMPLES, 'mlp')!r})
        import torch, model, dync
        try:
            dync.load({str(truncated)!r})
            print(json.dumps(None))
        except dync.ArtifactError as error:
            print(json.dumps(error.kind))
    """)
    assert run_python(source) == "truncated"


def test_inspect_prints_the_manifest(export, run_dync):
    import importlib.util
    artifact = export("mlp", "MLP.forward", ["x:0=batch[2,1024]"])
    done = run_dync("inspect", artifact)
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert f"python_magic {importlib.util.MAGIC_NUMBER.hex()}\n" in text
    assert f"torch {torch.__version__}\n" in text
    assert f"source {os.path.join(EXAMPLES, 'mlp', 'model.py')}\n" in text
    assert "entry MLP.forward line " in text
    assert "graph @MLP.forward(" in text
    assert "guards @MLP.forward(" in text
    assert "batch: [2, 1024]" in text


def test_inspect_refuses_what_is_not_an_artifact(run_dync, tmp_path):
    bogus = tmp_path / "bogus.so"
    bogus.write_text("not a library")
    done = run_dync("inspect", bogus)
    assert done.returncode != 0
    assert f"{bogus}: not a dync artifact" in done.stderr


def test_failed_export_writes_nothing(run_dync, tmp_path):
    source = tmp_path / "branchy.py"
    source.write_text(textwrap.dedent("""
        import torch
        def f(x):
            if x.sum() > 0:
                return x
            return -x
        def example_inputs():
            return (torch.randn(3),)
    """))
    out = tmp_path / "branchy.dync.so"
    done = run_dync("export", f"{source}:f", "-o", out, "--data-branches=refuse")
    assert done.returncode != 0
    assert "branchy.py:4" in done.stderr
    assert not out.exists()
    assert os.listdir(tmp_path) == ["branchy.py"] or sorted(os.listdir(tmp_path)) == sorted(
        ["branchy.py", "__pycache__"])


FUNCTIONS = textwrap.dedent("""
    import torch

    def scale(x):
        return x * 0.5 + 3

    def promote(x):
        return x * 2.5, x + 3, x // 2

    def shapes(x, n: int):
        y = x.relu()
        return (y, [x + n, None], x.shape[0] * 2, "done")

    def example_scale():
        return (torch.randn(5, 3),)

    def example_promote():
        return (torch.arange(6),)

    def example_shapes():
        return (torch.randn(4, 3), 2)
""")


def test_several_entries_results_and_number_promotion(run_dync, tmp_path):
    source = tmp_path / "functions.py"
    source.write_text(FUNCTIONS)
    out = tmp_path / "compiled.so"
    done = run_dync("export", f"{source}:scale", f"{source}:promote", f"{source}:shapes",
                    "--example", "scale=example_scale", "--example", "promote=example_promote",
                    "--example", "shapes=example_shapes", "--dynamic", "x:0=rows[2,64]",
                    # (the same --dynamic applies to every entry's x)
                    "-o", out)
    assert done.returncode == 0, done.stderr
    program = textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {PACKAGE_DIR!r}); sys.path.insert(0, {str(tmp_path)!r})
        import torch, functions, dync

        cases = [("scale", functions.example_scale()),
                 ("promote", functions.example_promote()),
                 ("shapes", functions.example_shapes()),
                 ("shapes", (torch.randn(9, 3), 2))]
        expected = [getattr(functions, name)(*args) for name, args in cases]
        with dync.load({str(out)!r}) as art:
            actual = [getattr(functions, name)(*args) for name, args in cases]
            stats = art.stats()
        def same(a, e):
            # Same structure and Python types, same tensors, dtypes included.
            assert type(a) is type(e), (a, e)
            if isinstance(e, (tuple, list)):
                assert len(a) == len(e), (a, e)
                for x, y in zip(a, e):
                    same(x, y)
            elif isinstance(e, torch.Tensor):
                torch.testing.assert_close(a, e)
            else:
                assert a == e, (a, e)
        for e, a in zip(expected, actual):
            same(a, e)
        print(json.dumps({{name: [s["hits"], s["misses"], s["last_miss_reason"]]
                          for name, s in stats.items()}}))
    """)
    stats = run_python(program)
    assert stats["scale"][:2] == [1, 0], stats
    assert stats["promote"][:2] == [1, 0], stats
    assert stats["shapes"][:2] == [2, 0], stats
