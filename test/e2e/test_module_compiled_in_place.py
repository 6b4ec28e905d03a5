"""module.compile() end to end: a submodule compiled in place before export
or after loading (nn.Module.compile stores torch.compile of its own
`_call_impl`, which computes what `_call_impl` computes) is served like one
never compiled, hooks included, and gives eager's outputs and gradients,
eager running the code dynamo compiled. Anything else stored as the
instance's `_compiled_call_impl` (a user's function, another module's
compiled call) misses, naming the guard, and runs the original code."""
import json
import os
import textwrap

import pytest

from conftest import INPUTS, PACKAGE_DIR, run_reporting_script

torch = pytest.importorskip("torch")
MODULE = os.path.join(INPUTS, "compiled_in_place.py")

PROGRAM = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {inputs!r})
    import contextlib
    import torch
    import compiled_in_place as m

    def run(make, change=None, train=False):
        torch.manual_seed(0)
        model = make()
        if change:
            change(model)
        x = torch.randn(5, 4)
        if not train:
            with torch.no_grad():
                return model(x).flatten()
        y = model(x)
        (y * torch.linspace(-1, 1, y.numel()).reshape(y.shape)).sum().backward()
        return torch.cat([y.detach().flatten()] + [p.grad.flatten() for p in model.parameters()])

    def other_modules_call(model):
        other = m.Block()
        other.compile(backend="eager")
        model.block._compiled_call_impl = other._compiled_call_impl

    CASES = [
        ("plain", "Net.forward", lambda: run(m.Net)),
        ("compiled after loading", "Net.forward",
         lambda: run(m.Net, lambda model: model.block.compile(backend="eager"))),
        ("compiled after loading, train", "Net.forward",
         lambda: run(m.Net, lambda model: model.block.compile(backend="eager"), train=True)),
        ("compiled before export", "CompiledBefore.forward", lambda: run(m.CompiledBefore)),
        ("compiled before export, train", "CompiledBefore.forward",
         lambda: run(m.CompiledBefore, train=True)),
        ("a function of its own", "Net.forward",
         lambda: run(m.Net, lambda model: setattr(model.block, "_compiled_call_impl",
                                                   lambda x: model.block.forward(x) + 1))),
        ("another module's compiled call", "Net.forward", lambda: run(m.Net, other_modules_call)),
    ]
    loaded = contextlib.nullcontext()
    if {artifact!r}:
        import dync
        loaded = dync.load({artifact!r})
    results = []
    with loaded:
        for what, entry, call in CASES:
            if {artifact!r}:
                dync.reset_stats()
            out = call()
            hit, reason = None, None
            if {artifact!r}:
                stats = dync.stats()[{artifact!r}][entry]
                hit, reason = stats["hits"] == 1, stats["last_miss_reason"]
            results.append(dict(what=what, hit=hit, reason=reason, out=out.tolist()))
    print(json.dumps(results))
""")

MISSES = {
    "a function of its own": "absent L['self']._modules['block']._compiled_call_impl",
    "another module's compiled call": "absent L['self']._modules['block']._compiled_call_impl",
}


def test_modules_compiled_in_place_are_served_and_match_eager(run_dync, tmp_path):
    artifact = tmp_path / "compiled.dync.so"
    done = run_dync("export", f"{MODULE}:Net.forward", f"{MODULE}:CompiledBefore.forward",
                    "-o", artifact)
    assert done.returncode == 0, done.stderr

    def run(path):
        return run_reporting_script(PROGRAM.format(package=PACKAGE_DIR, inputs=INPUTS,
                                                   artifact=path))
    results, expected = run(str(artifact)), run("")
    assert [r["what"] for r in results] == [r["what"] for r in expected]
    outs = {}
    for result, want in zip(results, expected):
        what = result["what"]
        if what in MISSES:
            assert not result["hit"], what
            assert MISSES[what] in (result["reason"] or ""), (what, result["reason"])
        else:
            assert result["hit"], (what, result["reason"])
        torch.testing.assert_close(torch.tensor(result["out"]), torch.tensor(want["out"]),
                                   msg=what)
        outs[what] = want["out"]
    # The replacement changes eager's result: a graph served anyway would differ.
    assert outs["a function of its own"] != outs["plain"]
