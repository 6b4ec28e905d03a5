"""Returned values keep their Python type through an artifact.

The functions of Inputs/return_types.py are exported with `dync export -o`
into one artifact (and again with a dynamic size into another); for each
function a fresh interpreter computes the eager result, loads the artifact,
calls again on the compiled path and checks that `type(result) is
type(eager)`, the fields read the same, and the values are equal,
recursively.
"""
import dis
import io
import json
import marshal
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD, REPO
from test_rewritten_code import max_stack_depth

torch = pytest.importorskip("torch")
PACKAGE_DIR = os.path.join(BUILD, "python")
INPUTS = os.path.join(REPO, "test", "e2e", "Inputs")

ENTRIES = ["max_dim", "sort", "shape", "shape_tail", "pair", "stats", "nested", "pair_prefix",
           "attributes"]

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {inputs!r})
    import torch
    import return_types
    import dync

    def same(actual, expected, where):
        assert type(actual) is type(expected), (where, type(actual), type(expected))
        if isinstance(expected, torch.Tensor):
            torch.testing.assert_close(actual, expected, rtol=0, atol=0)
        elif isinstance(expected, (tuple, list)):
            assert len(actual) == len(expected), where
            for i, (a, e) in enumerate(zip(actual, expected)):
                same(a, e, where + "[%d]" % i)
            for field in getattr(type(expected), "_fields", ()):
                same(getattr(actual, field), getattr(expected, field), where + "." + field)
            if hasattr(type(expected), "n_sequence_fields"):
                for field in dir(type(expected)):
                    if field in ("values", "indices", "a", "tau", "eigenvalues"):
                        same(getattr(actual, field), getattr(expected, field),
                             where + "." + field)
        else:
            assert actual == expected, (where, actual, expected)

    results = {{}}
    for entry in {entries!r}:
        function = getattr(return_types, entry)
        hits = 0
        try:
            for shape in {shapes!r}:
                x = torch.randn(*shape)
                expected = function(x)
                with dync.load({artifact!r}, strict=True) as art:
                    actual = function(x)
                    hits += art.stats()[entry]["hits"]
                same(actual, expected, entry)
            error = None
        except Exception as e:
            error = "%s: %s" % (type(e).__name__, e)
        results[entry] = {{"hits": hits, "error": error}}
    print(json.dumps(results))
""")


def run_python(source):
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


SHAPES = {False: [(4, 5)], True: [(4, 5), (7, 5)]}


@pytest.fixture(scope="module", params=[False, True], ids=["static", "dynamic"])
def round_trips(request, run_dync, tmp_path_factory):
    """Every entry exported into one artifact (with a dynamic size or not)
    and called through it in one fresh interpreter: (whether dynamic,
    {entry: {hits, error}})."""
    dynamic = request.param
    artifact = tmp_path_factory.mktemp("return-types") / "model.so"
    source = os.path.join(INPUTS, "return_types.py")
    args = ["export", *[f"{source}:{entry}" for entry in ENTRIES], "-o", artifact]
    if dynamic:
        args += ["--dynamic", "x:0=n[2,64]"]
    done = run_dync(*args)
    assert done.returncode == 0, done.stderr
    return dynamic, run_python(RUNNER.format(package=PACKAGE_DIR, inputs=INPUTS,
                                             entries=ENTRIES, shapes=SHAPES[dynamic],
                                             artifact=str(artifact)))


@pytest.mark.parametrize("entry", ENTRIES)
def test_return_type_round_trip(round_trips, entry):
    dynamic, results = round_trips
    assert results[entry]["error"] is None, results[entry]["error"]
    assert results[entry]["hits"] == len(SHAPES[dynamic])


def test_unimportable_type_is_an_error(run_dync, tmp_path):
    """A named tuple class whose name is not where its module has it cannot
    be imported by the rewritten code: export says so and writes nothing."""
    source = tmp_path / "local_type.py"
    source.write_text(textwrap.dedent("""
        import collections
        import torch

        def example_inputs():
            return [torch.randn(3)]

        Hidden = collections.namedtuple("Renamed", ["a"])

        def local(x):
            return Hidden(x.relu())
    """))
    done = run_dync("export", f"{source}:local", "-o", tmp_path / "out.so")
    assert done.returncode != 0
    assert "cannot import by its module and qualified name" in done.stderr, done.stderr
    assert not (tmp_path / "out.so").exists()


@pytest.mark.parametrize("entry", ENTRIES)
def test_listing_is_dis(dync_binary, entry):
    """`--emit=bytecode` prints what dis.dis prints for the `--emit=code`
    object, and co_stacksize is the depth dis.stack_effect finds."""
    source = os.path.join(INPUTS, "return_types.py")
    outputs = []
    for kind in ("code", "bytecode"):
        done = subprocess.run([dync_binary, "export", f"{source}:{entry}", "--dynamic",
                               "x:0=n[2,64]", f"--emit={kind}"], capture_output=True)
        assert done.returncode == 0, done.stderr.decode()
        outputs.append(done.stdout)
    code = marshal.loads(outputs[0])
    printed = io.StringIO()
    dis.dis(code, file=printed)
    assert outputs[1].decode() == printed.getvalue()
    assert code.co_stacksize == max_stack_depth(code)
