"""Guards on module containers, end to end: the compiled path runs while a
model's ModuleList, Sequential and ModuleDict hold what capture saw, and a
change to their entries (one more layer, the same layers in another order)
misses the guards and runs the original code, equal to eager."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD, REPO

torch = pytest.importorskip("torch")
INPUTS = os.path.join(REPO, "test", "e2e", "Inputs")
MODULE = os.path.join(INPUTS, "module_tables.py")

# Each change is made to a fresh model (the constructor seeds torch's
# generator, so every model, and every appended layer, has the same weights in
# both children). The artifact's guards read whatever module is `self`.
CHANGES = textwrap.dedent("""
    import contextlib, json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {inputs!r})
    import torch
    from torch import nn
    import module_tables as m

    def reversed_table(container):
        container._modules = dict(reversed(list(container._modules.items())))

    CHANGES = [
        ("as exported", lambda model: None),
        ("grown", lambda model: model.layers.append(nn.Linear(4, 4))),
        ("reordered", lambda model: reversed_table(model.seq)),
        ("heads reordered", lambda model: reversed_table(model.heads)),
    ]
    x = m.example_inputs()[0]
    results = []
    if {artifact!r}:
        import dync
        loaded = dync.load({artifact!r})
    else:
        loaded = contextlib.nullcontext()
    with loaded as art:
        for what, change in CHANGES:
            model = m.Tables().eval()
            change(model)
            before = art.stats()["Tables.forward"]["hits"] if art else 0
            actual = model(x)
            stats = art.stats()["Tables.forward"] if art else {{}}
            results.append({{"what": what, "hit": stats.get("hits", 0) > before,
                             "reason": stats.get("last_miss_reason"),
                             "actual": actual.tolist()}})
    print(json.dumps(results))
""")


def child(source):
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_changed_containers_miss_and_match_eager(run_dync, tmp_path):
    artifact = tmp_path / "tables.so"
    done = run_dync("export", f"{MODULE}:Tables.forward", "-o", artifact)
    assert done.returncode == 0, done.stderr
    package = os.path.join(BUILD, "python")
    results = child(CHANGES.format(package=package, inputs=INPUTS, artifact=str(artifact)))
    expected = child(CHANGES.format(package=package, inputs=INPUTS, artifact=""))
    assert [r["what"] for r in results] == ["as exported", "grown", "reordered",
                                            "heads reordered"]
    assert results[0]["hit"], results[0]["reason"]
    misses = {
        "grown": "keys L['self']._modules['layers']._modules",
        "reordered": "keys L['self']._modules['seq']._modules",
        "heads reordered": "keys L['self']._modules['heads']._modules",
    }
    for result in results[1:]:
        assert not result["hit"], result["what"]
        assert misses[result["what"]] in result["reason"], result["reason"]
    for result, want in zip(results, expected):
        torch.testing.assert_close(torch.tensor(result["actual"]), torch.tensor(want["actual"]))
