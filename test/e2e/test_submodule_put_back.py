"""A router that files its classifier back under its own name on every call
(`self.classifier = self.classifier.to(self.dtype)`, as Switch
Transformers' does): the artifact hits with grad mode on and under
no_grad, matches eager (values and gradients), and leaves the module
holding the same classifier object eager leaves it."""
import textwrap

import pytest

from conftest import compare_with_eager, export_source

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
        # With grad mode on (its gradients compared too), then under no_grad.
        model.zero_grad()
        chosen, best = model(x)
        best.sum().backward()
        grads = [p.grad.clone() for p in model.parameters()]
        with torch.no_grad():
            without_grad = model(x)
        assert model.classifier is classifier and list(model._modules) == ["classifier"]
        return (chosen, best.detach()), grads, without_grad


    calls = {"Router.forward": call}
"""


def test_submodule_put_back_hits_and_matches(run_dync, tmp_path):
    artifact = export_source(run_dync, tmp_path, MODEL, ["Router.forward"], module="router")
    results = compare_with_eager(tmp_path, artifact, SETUP)
    error, hits, misses, reason = results["Router.forward"]
    assert error is None, error
    assert (hits, misses) == (2, 0), reason
