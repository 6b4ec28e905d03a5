"""Functions torch rebinds on import are pinned by what they run, not by
which binding the process holds.

Importing torch._dynamo rebinds `torch.manual_seed` to a wrapper made by
`torch._disable_dynamo` (a = torch.manual_seed; import torch._dynamo;
a is torch.manual_seed is False), and torch.compile's first run wraps
torch.jit's tracers and the optimizers' steps in torch._dynamo.disable.
Such wrappers only keep torch.compile from tracing into the function, and
eager runs the wrapped one. An entry that calls torch.manual_seed is
exported by a process without torch._dynamo and by one with it; each
artifact is called in fresh interpreters with and without torch._dynamo
imported: every call is served and equals eager. A replacement of the
user's own (functools.wraps of the original included) misses and returns
eager's result.
"""
import textwrap

from conftest import PACKAGE_DIR, export_entries, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    {dynamo}


    def seeded(x):
        torch.manual_seed(7)
        return x + torch.rand(4)


    def example_inputs():
        return (torch.randn(4),)
""")

CHILD = """
import functools, json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch, dync
if {dynamo!r}:
    import torch._dynamo
import {module} as model


original = torch.manual_seed


def eager(x, seed):
    original(seed)
    return x + torch.rand(4)


@functools.wraps(original)
def shifted(seed):
    return original(seed + 1)


report = []
with dync.load({artifact!r}) as art:
    for what, replacement, served, seed in (("as imported", None, True, 7),
                                            ("user's wrapper", shifted, False, 8),
                                            ("user's lambda", lambda s: original(3), False, 3),
                                            ("put back", None, True, 7)):
        torch.manual_seed = replacement or original
        try:
            x = torch.randn(4)
            hits = art.stats()["seeded"]["hits"]
            got = model.seeded(x)
            hit = art.stats()["seeded"]["hits"] > hits
            want = eager(x, seed)
        finally:
            torch.manual_seed = original
        report.append({{"what": what, "dynamo": "torch._dynamo" in sys.modules, "hit": hit,
                        "served": served, "same": torch.equal(got, want),
                        "why": art.stats()["seeded"]["last_miss_reason"]}})
print(json.dumps(report))
"""


@pytest.mark.parametrize("exported_with_dynamo", [False, True])
def test_rebound_torch_functions(run_dync, tmp_path, exported_with_dynamo):
    module = "with_dynamo" if exported_with_dynamo else "without_dynamo"
    path = tmp_path / f"{module}.py"
    path.write_text(MODEL.format(dynamo="import torch._dynamo" if exported_with_dynamo else ""))
    artifact = export_entries(run_dync, path, ("seeded",), tmp_path / f"{module}.dync.so")
    report = []
    for dynamo in (False, True):
        report += run_reporting_script(CHILD.format(package=PACKAGE_DIR, folder=str(tmp_path),
                                                    dynamo=dynamo, module=module,
                                                    artifact=str(artifact)))
    assert len(report) == 8
    # The module imports torch._dynamo itself when it was exported with it.
    assert [r["dynamo"] for r in report] == [exported_with_dynamo] * 4 + [True] * 4
    wrong = [r for r in report if r["hit"] != r["served"] or not r["same"]]
    assert not wrong, "\n".join(map(str, wrong))
