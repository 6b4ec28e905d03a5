"""A router that files its classifier back under its own name on every call
(`self.classifier = self.classifier.to(self.dtype)`, as Switch
Transformers' does): the artifact hits, matches eager, and leaves the
module holding the same classifier object eager leaves it."""
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    from torch import nn


    class Router(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.classifier = nn.Linear(4, 3)
            self.dtype = torch.float32

        def forward(self, x):
            self.classifier = self.classifier.to(self.dtype)
            probs = self.classifier(x.to(self.dtype)).softmax(-1)
            return probs.argmax(-1), probs.max(-1).values


    def example_inputs():
        return (torch.randn(5, 4, generator=torch.Generator().manual_seed(1)),)
""")

SETUP = """
    import torch

    import router

    model = router.Router()
    classifier = model.classifier
    (x,) = router.example_inputs()


    def call():
        result = model(x)
        assert model.classifier is classifier and list(model._modules) == ["classifier"]
        return result


    calls = {"Router.forward": call}
"""


def test_submodule_put_back_hits_and_matches(run_dync, tmp_path):
    (tmp_path / "router.py").write_text(MODEL)
    artifact = tmp_path / "router-artifact.so"
    done = run_dync("export", f"{tmp_path / 'router.py'}:Router.forward", "-o", artifact)
    assert done.returncode == 0, done.stderr
    results = compare_with_eager(tmp_path, artifact, SETUP)
    error, hits, misses, reason = results["Router.forward"]
    assert error is None, error
    assert (hits, misses) == (1, 0), reason
