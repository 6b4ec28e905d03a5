"""One real list or dict reached through several sources (two attributes, a
dict entry, a plain object's attribute and a global, one list passed as two
arguments), read whole through each before any change and then changed
through each, end to end: all sources share one value, so the graph reads
every change made through any of them and the replay after it leaves the
one object as eager does. The first call hits; the second finds the
containers longer than export saw them and misses. Results and the
containers' contents equal eager's after each call."""
import json
import os
import textwrap

import pytest

from conftest import INPUTS, PACKAGE_DIR, run_reporting_script

torch = pytest.importorskip("torch")
MODULE = os.path.join(INPUTS, "one_container_two_sources.py")

PROGRAM = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {inputs!r})
    import contextlib
    import torch
    import one_container_two_sources as m

    x = torch.linspace(-1.0, 1.0, 3)
    both = [1.0, 2.0]
    models = dict(lists=m.Lists(), nested=m.Nested(), dicts=m.Dicts(), edits=m.Edits())

    def state():
        return dict(lists=models["lists"].a, lists_joined=models["lists"].a is models["lists"].b,
                    shared=m.SHARED, table=models["nested"].table["k"],
                    nested_joined=models["nested"].holder.items is m.SHARED,
                    dicts=models["dicts"].a, dicts_joined=models["dicts"].a is models["dicts"].b,
                    edits=models["edits"].a, edits_joined=models["edits"].a is models["edits"].b,
                    both=both)

    CASES = [
        ("Lists.forward", lambda: models["lists"](x)),
        ("Nested.forward", lambda: models["nested"](x)),
        ("Dicts.forward", lambda: models["dicts"](x)),
        ("Edits.forward", lambda: models["edits"](x)),
        ("lists_given_twice", lambda: m.lists_given_twice(x, both, both)),
    ]
    loaded = contextlib.nullcontext()
    if {artifact!r}:
        import dync
        loaded = dync.load({artifact!r})
    results = []
    with loaded:
        for round in (1, 2):
            for entry, call in CASES:
                if {artifact!r}:
                    dync.reset_stats()
                out = call()
                hit = None
                if {artifact!r}:
                    hit = dync.stats()[{artifact!r}][entry]["hits"] == 1
                results.append(dict(what=f"{{entry}} call {{round}}", hit=hit, out=out.tolist(),
                                    state=json.loads(json.dumps(state()))))
    print(json.dumps(results))
""")


def test_one_container_through_several_sources_matches_eager(run_dync, tmp_path):
    artifact = tmp_path / "containers.dync.so"
    done = run_dync("export", *(f"{MODULE}:{entry}.forward" for entry in
                                ("Lists", "Nested", "Dicts", "Edits")),
                    f"{MODULE}:lists_given_twice", "--example",
                    "lists_given_twice=example_lists_given_twice", "-o", artifact)
    assert done.returncode == 0, done.stderr

    def run(path):
        return run_reporting_script(PROGRAM.format(package=PACKAGE_DIR, inputs=INPUTS,
                                                   artifact=path))
    results, expected = run(str(artifact)), run("")
    assert [r["what"] for r in results] == [r["what"] for r in expected]
    for result, want in zip(results, expected):
        what = result["what"]
        # The first call is served; the second finds longer containers.
        assert result["hit"] == what.endswith("call 1"), what
        torch.testing.assert_close(torch.tensor(result["out"]), torch.tensor(want["out"]),
                                   msg=what)
        assert result["state"] == want["state"], what
    # Each source saw the others' changes: eager's first results.
    first = {r["what"]: r for r in expected if r["what"].endswith("call 1")}
    # n = 2 + 2 lengths, then len(self.a) = 4 and self.b[-1] = 4.0: x * 16 + 4.
    assert first["Lists.forward call 1"]["out"] == [-12.0, 4.0, 20.0]
    assert first["Lists.forward call 1"]["state"]["lists"] == [1.0, 2.0, 3.0, 4.0]
