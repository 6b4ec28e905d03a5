"""istft in a model trained through the artifact: in the variant that
records autograd its composite kernel's data check cannot run on fakes, so
that call is traced as torch's decomposition (docs/capture.md, "Eager's
kernels, not torch's Python ones"). Values and parameter gradients must
equal eager's (to float tolerance: the decomposition's pieces are not the
composite's), and the call with grad must run the compiled path."""
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class Head(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.out = nn.Linear(8, 18)
            self.register_buffer("window", torch.hann_window(16))

        def forward(self, x):
            mag, p = self.out(x).transpose(1, 2).chunk(2, dim=1)
            spec = torch.exp(mag).clip(max=1e2) * (torch.cos(p) + 1j * torch.sin(p))
            return torch.istft(spec, 16, 4, 16, self.window, center=True)


    def train_step(model, x):
        model.zero_grad(set_to_none=True)
        out = model(x)
        out.square().sum().backward()
        return out.detach(), [p.grad.clone() for p in model.parameters()]


    def example_inputs():
        return (torch.randn(2, 10, 8),)
""")

SETUP = """
    import torch
    import istft_head

    model = istft_head.Head()
    x = torch.randn(2, 10, 8, generator=torch.Generator().manual_seed(1))
    calls = {"Head.forward": lambda: istft_head.train_step(model, x)}
"""


def test_istft_with_grad_matches_eager(run_dync, tmp_path):
    (tmp_path / "istft_head.py").write_text(MODEL)
    artifact = tmp_path / "istft_head.dync.so"
    done = run_dync("export", f"{tmp_path / 'istft_head.py'}:Head.forward", "-v", "-o", artifact)
    assert done.returncode == 0, done.stderr
    assert "not compiled" not in done.stderr, done.stderr
    results = compare_with_eager(tmp_path, artifact, SETUP)
    error, hits, misses, reason = results["Head.forward"]
    assert error is None, error
    assert (hits, misses) == (1, 0), reason
