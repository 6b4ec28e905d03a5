"""Guards on torch's global state and on module constants, end to end: an
artifact loaded in a fresh process hits while nothing changed; turning on
deterministic algorithms, flush-denormal, a torch function mode (a user's,
or the one torch.set_default_device pushes), another default dtype, or
reassigning torch.pi, math.pi or a helper module's constant each misses
with a reason naming that state, and the call returns what eager returns
after the same change."""
import os
import textwrap

import pytest

from conftest import REPO, check_state_changes

torch = pytest.importorskip("torch")
INPUTS = os.path.join(REPO, "test", "e2e", "Inputs")
MODULE = os.path.join(INPUTS, "guarded_globals.py")

# Every change returns what undoes it, so the next one starts from the
# exported state. The same program runs without the artifact for eager's
# results.
PROGRAM = textwrap.dedent("""
    import math, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {inputs!r})
    import torch
    from torch.overrides import TorchFunctionMode
    import guarded_globals as m
    import guarded_globals_lib as lib
    from state_changes import report, set_attr

    def deterministic():
        torch.use_deterministic_algorithms(True)
        return lambda: torch.use_deterministic_algorithms(False)

    def flush_denormal():
        assert torch.set_flush_denormal(True)
        return lambda: torch.set_flush_denormal(False)

    def default_device():
        torch.set_default_device("cpu")
        return lambda: torch.set_default_device(None)

    class Shifted(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {{}}))
            return result + 100 if func is torch.Tensor.add else result

    def function_mode():
        mode = Shifted()
        mode.__enter__()
        return lambda: mode.__exit__(None, None, None)

    def default_dtype():
        torch.set_default_dtype(torch.float64)
        return lambda: torch.set_default_dtype(torch.float32)

    def tensor_default(function):
        old = function.__defaults__[1].clone()
        function.__defaults__[1].mul_(5)
        return lambda: function.__defaults__[1].copy_(old)

    x = m.example_inputs()[0]
    CASES = [
        # (what, entry, change)
        ("deterministic", "deterministic", None),
        ("deterministic on", "deterministic", deterministic),
        ("tiny", "tiny", None),
        ("flush denormal", "tiny", flush_denormal),
        ("factory", "factory", None),
        ("default device", "factory", default_device),
        ("function mode", "factory", function_mode),
        ("default dtype", "factory", default_dtype),
        ("constants", "constants", None),
        ("torch.pi", "constants", lambda: set_attr(torch, "pi", 3.0)),
        ("torch.e", "constants", lambda: set_attr(torch, "e", 2.0)),
        ("math.pi", "constants", lambda: set_attr(math, "pi", 3.0)),
        ("library constant", "constants", lambda: set_attr(lib, "OFFSET", -4.0)),
        ("configs", "configs", None),
        ("cell config", "configs",
         lambda: set_attr(m.closed.__closure__[0].cell_contents, "scale", -1.0)),
        ("class config", "configs", lambda: set_attr(m.Holder.config, "scale", -1.0)),
        ("default config", "configs",
         lambda: set_attr(m.through_default.__defaults__[0], "scale", -1.0)),
        ("tensor default", "configs", lambda: tensor_default(m.through_default)),
        ("reads", "reads", None),
        ("class tensor", "reads", lambda: set_attr(m.Masked, "table", torch.full((4,), 9.0))),
        ("library tensor", "reads", lambda: set_attr(lib, "WEIGHT", torch.full((4,), 3.0))),
    ]
    report({artifact!r}, [(what, entry, lambda entry=entry: getattr(m, entry)(x), change)
                          for what, entry, change in CASES])
""")

MISSES = {
    "deterministic on": "global_state deterministic_algorithms false",
    "flush denormal": "global_state flush_denormal false",
    "default device": "global_state torch_function_modes 0",
    "function mode": "global_state torch_function_modes 0",
    "default dtype": "default_dtype f32",
    "torch.pi": "equals G['torch'].pi : 3.14159",
    "torch.e": "equals G['torch'].e : 2.71828",
    "math.pi": "equals G['math'].pi : 3.14159",
    "library constant": "equals M['guarded_globals_lib'].OFFSET : 0.25",
    "cell config": "equals G['closed'].__closure__[0].cell_contents.scale : 2.0",
    "class config": "equals G['Holder'].config.scale : 3.0",
    "default config": "equals G['through_default'].__defaults__[0].scale : 4.0",
}

# Changes under which eager computes something else, so a graph that ran
# anyway would have been caught by the comparison too.
CHANGES_RESULT = {"deterministic on": "deterministic", "flush denormal": "tiny",
                  "function mode": "factory", "torch.pi": "constants",
                  "torch.e": "constants", "math.pi": "constants",
                  "library constant": "constants", "cell config": "configs",
                  "class config": "configs", "default config": "configs",
                  "tensor default": "configs", "class tensor": "reads",
                  "library tensor": "reads"}


def test_changed_global_state_misses_and_matches_eager(run_dync, tmp_path):
    artifact = tmp_path / "globals.so"
    entries = [f"{MODULE}:{entry}" for entry in
               ("deterministic", "tiny", "factory", "constants", "configs", "reads")]
    done = run_dync("export", *entries, "-o", artifact)
    assert done.returncode == 0, done.stderr
    expected = check_state_changes(PROGRAM, artifact, MISSES)
    outs = {r["what"]: r["out"] for r in expected}
    for what, baseline in CHANGES_RESULT.items():
        assert outs[what] != outs[baseline], what
