"""State a graph depends on beyond its entry's globals, end to end, from one
export: a function of torch replaced on its module (`torch.relu`, `F.silu`
read by the program, `F.gelu` read by nn.GELU's forward inside torch), a
helper module's function or constant read by that module's own code, a
user object's method and property, and autocast each miss with a reason
naming it, and the call returns what eager returns after the same change;
a torch or helper function the program never reads may change without a
miss. Also: a fused layer norm of zeros gives eager's +0.0."""
import json
import os
import sys
import textwrap

import pytest

from conftest import BUILD, REPO, check_state_changes, run_reporting_script

torch = pytest.importorskip("torch")
INPUTS = os.path.join(REPO, "test", "e2e", "Inputs")
MODULE = os.path.join(INPUTS, "library_globals.py")

PROGRAM = textwrap.dedent("""
    import sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {inputs!r})
    import torch
    import torch.nn.functional as F
    import library_globals as m
    import library_globals_helper as helper
    from state_changes import report, set_attr

    CASES = [
        ("as exported", None),
        ("torch.relu", lambda: set_attr(torch, "relu", torch.sigmoid)),
        ("F.silu", lambda: set_attr(F, "silu", lambda x, inplace=False: x * 3)),
        ("F.gelu in nn.GELU", lambda: set_attr(F, "gelu", lambda x, approximate="none": x - 1)),
        ("helper's function", lambda: set_attr(helper, "inner", lambda x: x * -2)),
        ("helper's constant", lambda: set_attr(helper, "OFFSET", 4.0)),
        ("unread torch function", lambda: set_attr(torch, "cosh", torch.sinh)),
        ("unread helper function", lambda: set_attr(helper, "unused", torch.sinh)),
        ("submodule compiled", lambda: set_attr(model.act, "_compiled_call_impl", lambda v: v * 0)),
        ("submodule _call_impl", lambda: set_attr(model.act, "_call_impl", lambda v: v * 0 + 2)),
        ("nn.GELU.__call__", lambda: set_attr(torch.nn.GELU, "__call__", lambda self, v: v * 3)),
    ]
    x = m.example_inputs()[0]
    model = m.Library()
    with torch.no_grad():
        report({artifact!r}, [(what, "Library.forward", lambda: model(x), change)
                              for what, change in CASES])
""")

MISSES = {
    "torch.relu": "builtin G['torch'].relu : torch:relu",
    "F.silu": "function G['F'].silu : torch.nn.functional:silu",
    "F.gelu in nn.GELU": "builtin M['torch.nn.modules.activation'].F.gelu : torch._C._nn:gelu",
    "helper's function": "function M['library_globals_helper'].inner : library_globals_helper:inner",
    "helper's constant": "equals M['library_globals_helper'].OFFSET : 0.5",
    "submodule compiled": "absent L['self']._modules['act']._compiled_call_impl",
    "submodule _call_impl": "absent L['self']._modules['act']._call_impl",
    "nn.GELU.__call__": "function type(L['self']._modules['act']).__call__ : "
                        "torch.nn.modules.module:Module._wrapped_call_impl",
}


@pytest.fixture(scope="module")
def artifact(run_dync, tmp_path_factory):
    path = tmp_path_factory.mktemp("library") / "library.dync.so"
    done = run_dync("export", f"{MODULE}:Library.forward", f"{MODULE}:WithConfig.forward",
                    f"{MODULE}:matmul", "--example", "matmul=matmul_inputs",
                    f"{MODULE}:layer_norms", "--example", "layer_norms=layer_norm_inputs",
                    "-O1", "-o", path)
    assert done.returncode == 0, done.stderr
    return path


def test_functions_read_through_modules_are_guarded(artifact):
    expected = check_state_changes(PROGRAM, artifact, MISSES)
    # Each change made eager compute something else, so a graph that ran
    # anyway would have been caught above.
    outs = {r["what"]: r["out"] for r in expected}
    for what in MISSES:
        assert outs[what] != outs["as exported"], what


OTHER = textwrap.dedent("""
    import contextlib, json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {inputs!r})
    import torch
    import library_globals as m

    loaded = contextlib.nullcontext()
    if {artifact!r}:
        import dync
        loaded = dync.load({artifact!r})
    results = {{}}

    def record(what, entry, call, art):
        before = art.stats()[entry]["hits"] if art else 0
        out = call()
        stats = art.stats()[entry] if art else {{}}
        outs = out if isinstance(out, tuple) else (out,)
        results[what] = {{"hit": stats.get("hits", 0) > before,
                         "reason": stats.get("last_miss_reason"),
                         "out": [o.float().tolist() for o in outs],
                         "dtype": [str(o.dtype) for o in outs],
                         "signbit": [torch.signbit(o).tolist() for o in outs]}}

    x = m.example_inputs()[0]
    with loaded as art, torch.no_grad():
        model = m.WithConfig()
        record("config", "WithConfig.forward", lambda: model(x), art)
        model.cfg._factor = -3.0
        record("config property input", "WithConfig.forward", lambda: model(x), art)
        model.cfg._factor = 2.0
        m.Config.scaled, saved = (lambda self, v: v * 10), m.Config.scaled
        record("config method on class", "WithConfig.forward", lambda: model(x), art)
        m.Config.scaled = saved
        model.cfg.scaled = lambda v: v * 10
        record("config method on instance", "WithConfig.forward", lambda: model(x), art)
        del model.cfg.scaled
        a, w = m.matmul_inputs()
        record("matmul", "matmul", lambda: m.matmul(a, w), art)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            record("matmul under autocast", "matmul", lambda: m.matmul(a, w), art)
        record("layer norms", "layer_norms", lambda: m.layer_norms(*m.layer_norm_inputs()), art)
    print(json.dumps(results))
""")

OTHER_MISSES = {
    "config property input": "equals L['self'].cfg._factor : 2.0",
    "config method on class": "function type(L['self'].cfg).scaled : library_globals:Config.scaled",
    "config method on instance": "absent L['self'].cfg.scaled",
    "matmul under autocast": "autocast is enabled",
}


def test_user_objects_autocast_and_signed_zeros(artifact):
    package = os.path.join(BUILD, "python")
    results = run_reporting_script(OTHER.format(package=package, inputs=INPUTS, artifact=str(artifact)))
    expected = run_reporting_script(OTHER.format(package=package, inputs=INPUTS, artifact=""))
    assert results.keys() == expected.keys()
    for what, result in results.items():
        want = expected[what]
        if what in OTHER_MISSES:
            assert not result["hit"], what
            assert OTHER_MISSES[what] in (result["reason"] or ""), (what, result["reason"])
        else:
            assert result["hit"], (what, result["reason"])
        assert result["dtype"] == want["dtype"], what
        for got, exp in zip(result["out"], want["out"]):
            torch.testing.assert_close(torch.tensor(got), torch.tensor(exp), msg=what)
        # Signs of zero compared exactly: a later atan2 or 1/x shows them.
        assert result["signbit"] == want["signbit"], what
    for what in OTHER_MISSES:
        baseline = "matmul" if what.startswith("matmul") else "config"
        assert expected[what] != expected[baseline], what
    # The layer norms of zero rows are all +0.0 in eager (the check above
    # compares the compiled path's with them).
    assert not any(any(row) for out in expected["layer norms"]["signbit"] for row in out)
