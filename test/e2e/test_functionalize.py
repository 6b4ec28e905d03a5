"""RMS norm's composite kernel finishes its statistics in place
(`mean(x^2).add_(eps)`); export turns that write into the out-of-place `add`
(passes/Functionalize.cpp), so the whole norm is one kernel, and
the artifact must give eager's values."""
import json
import subprocess
import sys
import textwrap

import pytest

from test_fusion_decompositions import PACKAGE_DIR

MODEL = textwrap.dedent("""
    import torch
    from torch import nn


    class Norm(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.norm = nn.RMSNorm(96)
            with torch.no_grad():
                self.norm.weight.uniform_(0.5, 1.5)

        def forward(self, x):
            return self.norm(x) * 2


    def example_inputs():
        return (torch.randn(5, 7, 96),)
""")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import rms_model
    import dync

    model = rms_model.Norm()
    stats = []
    for x in [torch.randn(5, 7, 96), torch.randn(3, 11, 96) * 40]:
        expected = model(x)
        with dync.load({artifact!r}) as art:
            actual = model(x)
            stats.append(art.stats()["Norm.forward"]["hits"])
        torch.testing.assert_close(actual, expected)
    print(json.dumps(stats))
""")


@pytest.mark.parametrize("dynamic", [[], ["--dynamic", "x:0=b[1,64]", "--dynamic", "x:1=t[1,64]"]],
                         ids=["static", "dynamic"])
def test_rms_norm_is_one_kernel_and_matches_eager(run_dync, tmp_path, dynamic):
    (tmp_path / "rms_model.py").write_text(MODEL)
    artifact = tmp_path / "rms.so"
    done = run_dync("export", f"{tmp_path / 'rms_model.py'}:Norm.forward", "-o", artifact,
                    "--emit=optimized-graph", *dynamic)
    assert done.returncode == 0, done.stderr
    graph = done.stdout[done.stdout.index("graph @Norm.forward"):]
    calls = [line for line in graph.splitlines() if line.startswith("  %")]
    assert len(calls) == 1 and "@k0(" in calls[0], graph
    assert "add_" not in done.stdout
    ran = subprocess.run([sys.executable, "-c", RUNNER.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(artifact))],
        capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    hits = json.loads(ran.stdout.strip().splitlines()[-1])
    # The static export is guarded to the example's sizes: the second call
    # runs eagerly.
    assert hits == ([1, 1] if dynamic else [1, 0]), hits
