"""Idioms of model code written outside transformers (utils/wild's corpus,
docs/testing.md "Model code in the wild: utils/wild"), each exported, loaded
in a fresh interpreter and compared with eager; every call must run the
compiled path. One export holds every case."""
import importlib.util
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

EINOPS = importlib.util.find_spec("einops") is not None

MODEL = textwrap.dedent("""
    import collections
    import itertools
    import typing

    import torch
    from torch import nn


    class LambdaOverSubmodule(nn.Module):
        # minGPT's MLP: a lambda closing over a ModuleDict, stored on self.
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.mlp = nn.ModuleDict(dict(fc=nn.Linear(4, 8), proj=nn.Linear(8, 4), act=nn.GELU()))
            m = self.mlp
            self.mlpf = lambda x: m.proj(m.act(m.fc(x)))

        def forward(self, x):
            return x + self.mlpf(x)


    class SharedClassModule(nn.Module):
        # A module held by the class, shared by every instance.
        norm = nn.LayerNorm(4)

        def forward(self, x):
            return self.norm(x) * 2


    Pair_ = collections.namedtuple("Pair_", ["data", "sizes"])


    class Pair(Pair_):
        # torch's PackedSequence: a named tuple's subclass whose __new__
        # calls super().__new__(cls, ...), super() given a class.
        def __new__(cls, data, sizes=None):
            return super().__new__(cls, data * 2, sizes)


    class Scaled:
        factor = 2.0

        @classmethod
        def build(cls, x):
            return x * cls.factor


    class MoreScaled(Scaled):
        factor = 3.0

        @classmethod
        def build(cls, x):
            return super().build(x) + 1


    class ClassSuper(nn.Module):
        def forward(self, x):
            pair = Pair(x, 4)
            return pair.data * pair.sizes + MoreScaled.build(x)


    class LegacyConstructors(nn.Module):
        # NeRF's torch.Tensor([1e10]), older code's torch.LongTensor(list)
        # and torch.Tensor(x): torch's legacy tensor constructors.
        def forward(self, x):
            far = torch.Tensor([1e10]).expand(x[..., :1].shape)
            index = torch.LongTensor([2, 0])
            return torch.cat([x, far], -1)[:, index], torch.Tensor(x) * 2


    class TensorSizedChunks(nn.Module):
        # Longformer's chunk count: torch.div of sizes gives a tensor, which
        # then sizes a new tensor.
        def forward(self, x):
            chunks = torch.div(x.size(1), 2, rounding_mode="trunc") - 1
            scores = x.new_zeros((x.size(0), chunks + 1, 2))
            scores[:, :-1] = x[:, ::2].unsqueeze(1)
            return scores


    class cached:
        # A lazy property as torch.distributions' lazy_property writes it: a
        # non-data descriptor whose __get__ stores the value on the object.
        def __init__(self, wrapped):
            self.wrapped = wrapped

        def __get__(self, instance, owner=None):
            if instance is None:
                return self
            value = self.wrapped(instance)
            setattr(instance, self.wrapped.__name__, value)
            return value


    class Stats:
        def __init__(self, x):
            self.x = x

        @cached
        def centered(self):
            return self.x - self.x.mean()


    class LazyProperties(nn.Module):
        # Categorical's probs is such a lazy property, entropy reads it.
        def forward(self, x):
            stats = Stats(x)
            dist = torch.distributions.Categorical(logits=x)
            return stats.centered * 2 + stats.centered, dist.probs, dist.entropy()


    class Scores(typing.NamedTuple):
        logits: torch.Tensor
        value: torch.Tensor
        loss: typing.Optional[torch.Tensor] = None


    class NamedTupleReplace(nn.Module):
        # A NamedTuple result completed by _replace (cls._make called through
        # an instance), and rebuilt from a list by _make on the instance.
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.head = nn.Linear(4, 3)

        def forward(self, x):
            out = Scores(logits=self.head(x), value=x.sum(-1))
            out = out._replace(loss=out.logits.logsumexp(-1).mean())
            swapped = out._make([out.value, out.logits, out.loss])
            return out, swapped.logits * 2


    class ArityDispatch(nn.Module):
        # flex_attention's _get_mod_type: a callback made in forward is told
        # a score_mod (5 positional parameters) from a mask_mod by its
        # __code__.co_argcount less its __defaults__.
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.bias = nn.Parameter(torch.randn(4))

        def forward(self, x):
            bias = self.bias

            def score_mod(score, b, h, q_idx, kv_idx):
                return score + bias

            def mask_mod(b, h, q_idx, kv_idx=0.5):
                return b * kv_idx

            out = x
            for fn in (score_mod, mask_mod):
                code = fn.__code__
                positional = code.co_argcount - len(fn.__defaults__ or ())
                if positional == 5:
                    out = fn(out, 1, 2, 3, 4)
                elif positional == 3:
                    out = fn(out, 1, 2)
                else:
                    out = fn(out, 1, 2, 3)
            return out


    class SlidingWindows(nn.Module):
        # MONAI's sliding-window inference: windows over every axis by
        # itertools.product of start offsets, summed into a zero canvas by
        # slices; pairs of rows by itertools.combinations and pairwise.
        def forward(self, x):
            out = torch.zeros_like(x)
            count = torch.zeros_like(x)
            for r, c in itertools.product(range(0, 2), range(0, 3, 2)):
                window = (slice(r, r + 2), slice(c, c + 2))
                out[window] += x[window].tanh()
                count[window] += 1
            rows = list(x.unbind(0))
            crossed = sum(a * b for a, b in itertools.combinations(rows, 2))
            rises = torch.stack([b - a for a, b in itertools.pairwise(rows)])
            return out / count.clamp(min=1), crossed, rises


    class Inner(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.fc = nn.Linear(4, 4)
            self.scale = 3.0

        def encode(self, x):
            return self.fc(x) * self.scale


    class ForwardingWrapper(nn.Module):
        # DDP/EMA-style wrapper: names it does not have are read from the
        # module it wraps, by its own __getattr__.
        def __init__(self, module):
            super().__init__()
            self.module = module

        def __getattr__(self, name):
            try:
                return super().__getattr__(name)
            except AttributeError:
                return getattr(self.module, name)


    class WrappedReads(nn.Module):
        def __init__(self):
            super().__init__()
            self.wrapped = ForwardingWrapper(Inner())

        def forward(self, x):
            w = self.wrapped
            return w.encode(x) + w.scale + w.fc.bias + w.module.fc.weight.sum()


    def example_inputs():
        return (torch.randn(3, 4, generator=torch.Generator().manual_seed(1)),)
""")

EINOPS_MODEL = textwrap.dedent("""
    from einops import rearrange, reduce, repeat
    from einops.layers.torch import Rearrange

    import collections

    class Heads(nn.Module):
        # einops' functions and layers: torch prepares einops before
        # tracing it (its backend cache), and capture does the same.
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.patches = Rearrange("b c (h p) (w q) -> b (h w) (p q c)", p=2, q=2)
            self.proj = nn.Linear(12, 8)
            self.latents = nn.Parameter(torch.randn(3, 8))

        def forward(self, image):
            x = self.proj(self.patches(image))
            q = repeat(self.latents, "n d -> b n d", b=x.shape[0])
            q, k = (rearrange(t, "b n (h d) -> b h n d", h=2) for t in (q, x))
            attn = torch.einsum("bhid,bhjd->bhij", q, k).softmax(-1)
            out = rearrange(torch.einsum("bhij,bhjd->bhid", attn, k), "b h n d -> b n (h d)")
            return reduce(out, "b n d -> b d", "mean")


    def image_inputs():
        return (torch.randn(2, 3, 4, 6, generator=torch.Generator().manual_seed(1)),)
""")

SETUP = """
    import idioms

    (x,) = idioms.example_inputs()
    lambda_model, shared = idioms.LambdaOverSubmodule(), idioms.SharedClassModule()
    class_super = idioms.ClassSuper()
    legacy = idioms.LegacyConstructors()
    chunks = idioms.TensorSizedChunks()
    lazy = idioms.LazyProperties()
    replace = idioms.NamedTupleReplace()
    arity = idioms.ArityDispatch()
    windows, wrapped = idioms.SlidingWindows(), idioms.WrappedReads()
    calls = {
        "SlidingWindows.forward": lambda: windows(x),
        "WrappedReads.forward": lambda: wrapped(x),
        "ArityDispatch.forward": lambda: arity(x),
        "LazyProperties.forward": lambda: lazy(x),
        "NamedTupleReplace.forward": lambda: replace(x),
        "TensorSizedChunks.forward": lambda: chunks(x),
        "LegacyConstructors.forward": lambda: legacy(x),
        "ClassSuper.forward": lambda: class_super(x),
        "LambdaOverSubmodule.forward": lambda: lambda_model(x),
        "SharedClassModule.forward": lambda: shared(x),
    }
"""

ENTRIES = ["LambdaOverSubmodule.forward", "SharedClassModule.forward", "ClassSuper.forward",
           "LegacyConstructors.forward", "TensorSizedChunks.forward", "LazyProperties.forward",
           "NamedTupleReplace.forward", "ArityDispatch.forward", "SlidingWindows.forward",
           "WrappedReads.forward"]
EINOPS_SETUP = """
    heads = idioms.Heads()
    (image,) = idioms.image_inputs()
    calls["Heads.forward"] = lambda: heads(image)
"""


def test_idioms_match_eager(run_dync, tmp_path):
    """Every case in one export; einops' (installed by utils/bootstrap)
    only where einops is installed."""
    entries, options, setup = list(ENTRIES), [], SETUP
    (tmp_path / "idioms.py").write_text(MODEL + (EINOPS_MODEL if EINOPS else ""))
    if EINOPS:
        entries.append("Heads.forward")
        options = ["--example", "Heads.forward=image_inputs"]
        setup = SETUP + EINOPS_SETUP
    artifact = tmp_path / "idioms-artifact.so"
    done = run_dync("export", *(f"{tmp_path / 'idioms.py'}:{entry}" for entry in entries),
                    *options, "-o", artifact)
    assert done.returncode == 0, done.stderr
    results = compare_with_eager(tmp_path, artifact, setup)
    assert sorted(results) == sorted(entries), results
    for name, (error, hits, misses, reason) in results.items():
        assert error is None, f"{name}: {error}"
        assert (hits, misses) == (1, 0), f"{name}: {reason}"

