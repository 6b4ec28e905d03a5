"""Guards on torch's kernel switches and on torch dtype/device objects, end
to end: an artifact loaded in a fresh process hits while nothing changed;
turning off deterministic fill of uninitialized memory, switching oneDNN,
its determinism or NNPACK, reassigning a
module-level dtype or device, or torch.float32 itself, each misses with a
reason naming that state, and the call returns what eager returns after the
same change. (CPU float16 reductions cannot be switched on a CPU without
float16 arithmetic, so that guard's text is pinned by the lit tests only.)
A program asking torch.compiler.is_compiling() is served its
eager path, the one eager runs when the call is made."""
import os
import textwrap

import pytest

from conftest import REPO, check_state_changes

torch = pytest.importorskip("torch")
MODULE = os.path.join(REPO, "test", "e2e", "Inputs", "guarded_switches.py")

# Every change returns what undoes it, so the next one starts from the
# exported state. The same program runs without the artifact for eager's
# results.
PROGRAM = textwrap.dedent("""
    import sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {inputs!r})
    import torch
    import torch.utils.deterministic
    import guarded_switches as m
    from state_changes import report, set_attr, switch

    C = torch._C
    x = m.example_inputs()[0]
    CASES = [
        # (what, entry, change)
        ("convolved", "convolved", None),
        ("deterministic fill", "convolved",
         lambda: set_attr(torch.utils.deterministic, "fill_uninitialized_memory", False)),
        ("mkldnn", "convolved",
         lambda: switch(C._get_mkldnn_enabled, C._set_mkldnn_enabled, False)),
        ("mkldnn deterministic", "convolved",
         lambda: switch(C._get_mkldnn_deterministic, C._set_mkldnn_deterministic, True)),
        ("nnpack", "convolved",
         lambda: switch(C._get_nnpack_enabled, C._set_nnpack_enabled, False)),
        ("cast", "cast", None),
        ("module dtype", "cast", lambda: set_attr(m, "DTYPE", torch.float16)),
        ("module device", "cast", lambda: set_attr(m, "DEVICE", torch.device("cpu", 0))),
        ("torch.float32", "cast", lambda: set_attr(torch, "float32", torch.float64)),
        ("asks", "asks", None),
        ("attends", "attends", None),
        ("matmul precision", "attends",
         lambda: switch(torch.get_float32_matmul_precision, torch.set_float32_matmul_precision,
                        "medium")),
        # Back at "highest", oneDNN's matmul precision reads ieee, not
        # unset: the same precision, so the call hits.
        ("matmul precision highest", "attends",
         lambda: switch(torch.get_float32_matmul_precision, torch.set_float32_matmul_precision,
                        "highest")),
        ("conv precision", "attends",
         lambda: switch(lambda: torch.backends.mkldnn.conv.fp32_precision,
                        lambda v: setattr(torch.backends.mkldnn.conv, "fp32_precision", v),
                        "tf32")),
        ("flash sdp", "attends",
         lambda: switch(C._get_flash_sdp_enabled, C._set_sdp_use_flash, False)),
        ("math sdp reduction", "attends",
         lambda: switch(C._get_math_sdp_allow_fp16_bf16_reduction,
                        C._set_math_sdp_allow_fp16_bf16_reduction, True)),
    ]
    report({artifact!r}, [(what, entry, lambda entry=entry: getattr(m, entry)(x), change)
                          for what, entry, change in CASES])
""")

MISSES = {
    "deterministic fill": "global_state deterministic_fill true",
    "mkldnn": "global_state mkldnn true",
    "mkldnn deterministic": "global_state mkldnn_deterministic false",
    "nnpack": "global_state nnpack true",
    "module dtype": "equals G['DTYPE'] : f32",
    "module device": "equals G['DEVICE'] : cpu",
    "torch.float32": "equals G['torch'].float32 : f32",
    "matmul precision": "global_state fp32_precision_matmul ieee",
    "conv precision": "global_state fp32_precision_conv ieee",
    "flash sdp": "global_state flash_sdp true",
    "math sdp reduction": "global_state math_sdp_reduction false",
}


def test_changed_switches_and_dtypes_miss_and_match_eager(run_dync, tmp_path):
    artifact = tmp_path / "switches.so"
    done = run_dync("export", f"{MODULE}:convolved", f"{MODULE}:cast", f"{MODULE}:asks",
                    f"{MODULE}:attends", "-o",
                    artifact)
    assert done.returncode == 0, done.stderr
    expected = check_state_changes(PROGRAM, artifact, MISSES)
    outs = {r["what"]: r["out"] for r in expected}
    # Under a float16 DTYPE eager rounds: a graph served anyway would differ.
    assert outs["module dtype"] != outs["cast"]
