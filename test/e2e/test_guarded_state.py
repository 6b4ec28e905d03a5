"""Guards on the state a graph depends on besides its arguments, end to end:
an artifact loaded in a fresh process hits while nothing changed; hooks
registered after loading (on a submodule, globally), an instance attribute
shadowing a class attribute, a reassigned class attribute, a closure cell's
new contents, a reassigned module-level helper, a forward replaced on the
instance or on nn.Linear, a tensor subclass and a tensor with the negative
or conjugate bit each miss, with a reason naming that state, and the call
returns what eager returns after the same change."""
import json
import os
import sys
import textwrap

import pytest

from conftest import REPO, check_state_changes

torch = pytest.importorskip("torch")
INPUTS = os.path.join(REPO, "test", "e2e", "Inputs")
MODULE = os.path.join(INPUTS, "guarded_state.py")

# Every change returns what undoes it, so the next one starts from the
# exported state. The same program runs without the artifact for eager's
# results.
PROGRAM = textwrap.dedent("""
    import sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {inputs!r})
    import torch
    from torch import nn
    import torch.nn.modules.module as module_hooks
    import guarded_state as m
    from state_changes import report, set_attr

    def hook(model, table):
        return getattr(model.fc, table)(
            (lambda mod, args, out: out * 3) if table == "register_forward_hook"
            else (lambda mod, args: (args[0] + 1,))).remove

    def global_hook(model):
        return module_hooks.register_module_forward_hook(lambda mod, args, out: out + 1).remove

    def cell(function, value):
        old = function.__closure__[0].cell_contents
        function.__closure__[0].cell_contents = value
        def undo():
            function.__closure__[0].cell_contents = old
        return undo

    class Logged(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            with torch._C.DisableTorchFunctionSubclass():
                result = func(*args, **(kwargs or {{}}))
                return result + 100 if func.__name__ == "mul" else result

    x = m.example_inputs()[0]
    z = m.complex_inputs()[0]
    plain = lambda: x
    CASES = [
        # (what, entry, model, input, change)
        ("hooked", "Hooked.forward", m.Hooked, plain, None),
        ("forward hook", "Hooked.forward", m.Hooked, plain,
         lambda model: hook(model, "register_forward_hook")),
        ("forward pre-hook", "Hooked.forward", m.Hooked, plain,
         lambda model: hook(model, "register_forward_pre_hook")),
        ("global hook", "Hooked.forward", m.Hooked, plain, global_hook),
        ("instance forward", "Hooked.forward", m.Hooked, plain,
         lambda model: set_attr(model.fc, "forward", lambda v: v * 0 - 1)),
        ("class forward", "Hooked.forward", m.Hooked, plain,
         lambda model: set_attr(nn.Linear, "forward", lambda self, v: v * 5)),
        ("scaled", "Scaled.forward", m.Scaled, plain, None),
        ("instance shadows class", "Scaled.forward", m.Scaled, plain,
         lambda model: set_attr(model, "scale", -1.0)),
        ("class attribute", "Scaled.forward", m.Scaled, plain,
         lambda model: set_attr(m.Scaled, "scale", 2.0)),
        ("helpers", "Helpers.forward", m.Helpers, plain, None),
        ("closure cell", "Helpers.forward", m.Helpers, plain, lambda model: cell(m.scaled, 3.0)),
        ("global helper", "Helpers.forward", m.Helpers, plain,
         lambda model: set_attr(m, "act", torch.tanh)),
        ("affine", "affine", None, plain, None),
        ("tensor subclass", "affine", None, lambda: x.as_subclass(Logged), None),
        ("negative bit", "affine", None, lambda: torch._neg_view(x), None),
        ("rotate", "rotate", None, lambda: z, None),
        ("conjugate bit", "rotate", None, lambda: z.conj(), None),
    ]
    def case(what, entry, make, arg, change):
        model = make() if make else None
        function = model if model is not None else getattr(m, entry)
        return (what, entry, lambda: function(arg()),
                (lambda: change(model)) if change else None)

    report({artifact!r}, [case(*each) for each in CASES])
""")

MISSES = {
    "forward hook": "empty L['self']._modules['fc']._forward_hooks",
    "forward pre-hook": "empty L['self']._modules['fc']._forward_pre_hooks",
    "global hook": "empty M['torch.nn.modules.module']._global_forward_hooks",
    "instance forward": "absent L['self']._modules['fc'].forward",
    "class forward": "function type(L['self']._modules['fc']).forward : "
                     "torch.nn.modules.linear:Linear.forward line ",
    "instance shadows class": "absent L['self'].scale",
    "class attribute": "equals type(L['self']).scale : 0.5",
    "closure cell": "equals G['scaled'].__closure__[0].cell_contents : 2.0",
    "global helper": "function G['act'] : guarded_state:act line ",
    "tensor subclass": "tensor L['x'] : tensor<f32, [2, 4]>: not exactly a torch.Tensor",
    "negative bit": "tensor L['x'] : tensor<f32, [2, 4]>: the negative bit is set",
    "conjugate bit": "tensor L['z'] : tensor<c64, [4]>: the conjugate bit is set",
}


def test_changed_state_misses_and_matches_eager(run_dync, tmp_path):
    artifact = tmp_path / "state.so"
    entries = [f"{MODULE}:{entry}" for entry in
               ("Hooked.forward", "Scaled.forward", "Helpers.forward", "affine", "rotate")]
    done = run_dync("export", *entries, "--example", "rotate=complex_inputs", "-o", artifact)
    assert done.returncode == 0, done.stderr
    expected = check_state_changes(PROGRAM, artifact, MISSES)
    # The changes made eager compute something else, so a graph that ran
    # anyway would have been caught above.
    outs = {r["what"]: r["out"] for r in expected}
    for what in MISSES:
        baseline = {"forward hook": "hooked", "forward pre-hook": "hooked",
                    "global hook": "hooked", "instance forward": "hooked",
                    "class forward": "hooked", "instance shadows class": "scaled",
                    "class attribute": "scaled", "closure cell": "helpers",
                    "global helper": "helpers", "tensor subclass": "affine",
                    "negative bit": "affine", "conjugate bit": "rotate"}[what]
        assert outs[what] != outs[baseline], what
