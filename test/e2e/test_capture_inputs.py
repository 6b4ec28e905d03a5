"""Inputs capture guards: containers, ints and sizes, end to end.

Each entry of Inputs/capture_inputs.py is exported, then a fresh interpreter
loads the artifact and calls the entry with the example inputs (the compiled
path must run and equal eager) and with inputs the guards must refuse: a
longer list, a dict with another key or its keys in another order, another int. Those calls fall back to
the original code, so they equal eager too, and the runtime's statistics
record the miss and the guard that failed.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD, REPO

torch = pytest.importorskip("torch")
PACKAGE_DIR = os.path.join(BUILD, "python")
INPUTS = os.path.join(REPO, "test", "e2e", "Inputs")
MODULE = os.path.join(INPUTS, "capture_inputs.py")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {inputs!r})
    import torch
    import capture_inputs as m
    import dync

    torch.manual_seed(0)
    function = {function}
    results = []
    with dync.load({artifact!r}) as art:
        for args in {calls}:
            before = art.stats()[{qualname!r}]["hits"]
            actual = function(*args)
            stats = art.stats()[{qualname!r}]
            results.append({{"hit": stats["hits"] > before,
                             "reason": stats["last_miss_reason"],
                             "actual": actual.tolist()}})
    # Eager results, with the artifact unloaded.
    torch.manual_seed(0)
    for result, args in zip(results, {calls}):
        result["expected"] = function(*args).tolist()
    print(json.dumps(results))
""")


def run(artifact, function, qualname, calls):
    source = RUNNER.format(package=PACKAGE_DIR, inputs=INPUTS, artifact=artifact,
                           function=function, qualname=qualname, calls=calls)
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def export(run_dync, tmp_path):
    def do(entry, *options):
        out = tmp_path / "model.so"
        done = run_dync("export", f"{MODULE}:{entry}", "-o", out, *options)
        assert done.returncode == 0, done.stderr
        return str(out)
    return do


# (entry, --example, the callable, calls: example first, then misses, and a
# fragment of each miss's reason)
CASES = [
    ("ListSum.forward", "list_inputs", "m.ListSum()",
     "[m.list_inputs(), ([torch.ones(3)] * 3,), ([torch.ones(3)],), (tuple(m.list_inputs()[0]),)]",
     # A shorter list misses on the item it lacks.
     ["length L['xs'] : 2", "L['xs'][1]", "type L['xs'] : builtins:list"]),
    ("TupleScale.forward", "tuple_inputs", "m.TupleScale()",
     "[m.tuple_inputs(), ((torch.ones(3),) * 3,)]",
     ["length L['xs'] : 2"]),
    # More keys, or the same keys in another order (which iterating the
    # dict would visit differently), miss on the keys guard; a missing key
    # already on reading its entry.
    ("DictMix.forward", "dict_inputs", "m.DictMix()",
     "[m.dict_inputs(), ({'a': torch.ones(3), 'bb': torch.ones(3), 'ccc': torch.ones(3)},),"
     " ({'a': torch.ones(3), 'cc': torch.ones(3)},),"
     " ({'bb': torch.ones(3), 'a': torch.ones(3)},)]",
     ['keys L[\'d\'] : ["a", "bb"]', "L['d']['bb']", 'keys L[\'d\'] : ["a", "bb"]']),
    ("IntArg.forward", "int_inputs", "m.IntArg()",
     "[m.int_inputs(), (torch.ones(3), 5), (torch.ones(3), 4.0)]",
     ["equals L['n'] : 4", "equals L['n'] : 4"]),
]


@pytest.mark.parametrize("entry,example,function,calls,reasons", CASES,
                         ids=[c[0].split(".")[0] for c in CASES])
def test_other_inputs_miss_and_match_eager(export, entry, example, function, calls, reasons):
    artifact = export(entry, "--example", example)
    results = run(artifact, function, entry, calls)
    assert len(results) == len(reasons) + 1
    first, misses = results[0], results[1:]
    assert first["hit"], first["reason"]
    for result, reason in zip(misses, reasons):
        assert not result["hit"]
        assert reason in result["reason"]
    for result in results:
        torch.testing.assert_close(torch.tensor(result["actual"]),
                                   torch.tensor(result["expected"]))


def test_broadcast_shapes_with_dynamic_sizes(export):
    artifact = export("broadcast", "--example", "broadcast_inputs", "--dynamic", "x:0=n",
                      "--dynamic", "y:0=n")
    calls = "[m.broadcast_inputs(), (torch.randn(7, 1), torch.randn(7, 3))]"
    results = run(artifact, "m.broadcast", "broadcast", calls)
    assert all(result["hit"] for result in results), [r["reason"] for r in results]
    for result in results:
        torch.testing.assert_close(torch.tensor(result["actual"]),
                                   torch.tensor(result["expected"]))
