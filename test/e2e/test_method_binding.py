"""Calling what Python binds by hand: an object of a list subclass that
defines __call__ (Hugging Face's LogitsProcessorList running each
processor in turn), a function bound by `func.__get__(obj)` and by
`types.MethodType` (docs/capture.md, "Objects of list subclasses" and
"Binding a function by hand"). Exported, loaded in a fresh interpreter and
compared with eager; every call must run the compiled path."""
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import types

    import torch
    from torch import nn


    class TopK:
        def __init__(self, k):
            self.k = k

        def __call__(self, ids, scores):
            kth = torch.topk(scores, self.k)[0][..., -1, None]
            return scores.masked_fill(scores < kth, -float("inf"))


    class Penalty:
        def __call__(self, ids, scores):
            picked = torch.gather(scores, 1, ids)
            picked = torch.where(picked < 0, picked * 1.5, picked / 1.5)
            return scores.scatter(1, ids, picked)


    class Processors(list):
        def __call__(self, ids, scores):
            for processor in self:
                scores = processor(ids, scores)
            return scores


    class Greedy(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.embed = nn.Embedding(20, 8)
            self.head = nn.Linear(8, 20)
            self.held = Processors([Penalty()])

        def forward(self, ids):
            processors = Processors()
            processors.append(TopK(4))
            for _ in range(3):
                scores = self.head(self.embed(ids).mean(1))
                scores = processors(ids, self.held(ids, scores))
                ids = torch.cat([ids, scores.argmax(-1, keepdim=True)], 1)
            return ids, scores


    def gated(self, x):
        return self.proj(x) * torch.sigmoid(self.gate)


    class Patched(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(1)
            self.proj = nn.Linear(4, 4)
            self.gate = nn.Parameter(torch.randn(4))

        def forward(self, x):
            first = gated.__get__(self)
            second = types.MethodType(gated, self)
            return first(x) + second(x * 2)


    def example_inputs():
        return (torch.randint(0, 20, (2, 5), generator=torch.Generator().manual_seed(2)),)


    def float_inputs():
        return (torch.randn(3, 4, generator=torch.Generator().manual_seed(3)),)
""")

SETUP = """
    import method_binding

    (ids,) = method_binding.example_inputs()
    (x,) = method_binding.float_inputs()
    greedy, patched = method_binding.Greedy(), method_binding.Patched()
    calls = {
        "Greedy.forward": lambda: greedy(ids),
        "Patched.forward": lambda: patched(x),
    }
"""


def test_bound_by_hand_match_eager(run_dync, tmp_path):
    (tmp_path / "method_binding.py").write_text(MODEL)
    artifact = tmp_path / "method-binding.so"
    done = run_dync("export", f"{tmp_path / 'method_binding.py'}:Greedy.forward",
                    f"{tmp_path / 'method_binding.py'}:Patched.forward",
                    "--example", "Patched.forward=float_inputs", "-o", artifact)
    assert done.returncode == 0, done.stderr
    results = compare_with_eager(tmp_path, artifact, SETUP)
    assert sorted(results) == ["Greedy.forward", "Patched.forward"], results
    for name, (error, hits, misses, reason) in results.items():
        assert error is None, f"{name}: {error}"
        assert (hits, misses) == (1, 0), f"{name}: {reason}"
