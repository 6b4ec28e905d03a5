"""Programs that change their own state on their first call and keep it
after: a bias table cached by device (LeViT's attention), grids built when a
size changes and kept in a list (YOLO's Detect), forward hooks installed on
the first call under a threading lock (transformers' output recording), and
a lock block on every call. Exported with `--warmup 1` (docs/capture.md,
"State filled on the first call"), loaded in a fresh interpreter whose
objects are new: their first, eager, call fills the state, and the
artifact's call then hits and matches. (Without --warmup the graph is the
cold call's, guarded on the empty cache: test/capture/warmup.py.)"""
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import threading

    import torch
    from torch import nn

    _HOOK_LOCK = threading.Lock()
    _WORK_LOCK = threading.RLock()


    class BiasCache(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.biases = nn.Parameter(torch.randn(2, 5))
            self.register_buffer("idxs", torch.randint(0, 5, (4, 4)), persistent=False)
            self.cache = {}

        def get_biases(self, device):
            if self.training:
                return self.biases[:, self.idxs]
            key = str(device)
            if key not in self.cache:
                self.cache[key] = self.biases[:, self.idxs]
            return self.cache[key]

        def forward(self, x):
            return x.softmax(-1) + self.get_biases(x.device)


    class Grids(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.m = nn.ModuleList(nn.Conv2d(2, 6, 1) for _ in range(2))
            self.grid = [torch.empty(0) for _ in range(2)]

        def _make_grid(self, nx, ny):
            y, x = torch.arange(ny, dtype=torch.float32), torch.arange(nx, dtype=torch.float32)
            yv, xv = torch.meshgrid(y, x, indexing="ij")
            return torch.stack((xv, yv), 2).expand((1, 3, ny, nx, 2)) - 0.5

        def forward(self, xs):
            z = []
            for i in range(2):
                x = self.m[i](xs[i])
                bs, _, ny, nx = x.shape
                x = x.view(bs, 3, 2, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
                if self.grid[i].shape[2:4] != x.shape[2:4]:
                    self.grid[i] = self._make_grid(nx, ny)
                z.append(((x.sigmoid() * 2 + self.grid[i])).view(bs, -1, 2))
            return torch.cat(z, 1)


    class HookedOnce(nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.layers = nn.ModuleList(nn.Linear(4, 4) for _ in range(2))

        def _install_hooks(self):
            if getattr(self, "_hooks_installed", False):
                return
            with _HOOK_LOCK:
                if getattr(self, "_hooks_installed", False):
                    return
                for layer in self.layers:
                    layer.register_forward_hook(lambda module, args, output: output * 2)
                self._hooks_installed = True

        def forward(self, x):
            self._install_hooks()
            for layer in self.layers:
                x = layer(x).relu()
            return x


    class Locked(nn.Module):
        def forward(self, x):
            with _WORK_LOCK:
                y = x.cos()
            return y + 1


    cache_model, grids_model = BiasCache().eval(), Grids().eval()


    def example_inputs():
        g = torch.Generator().manual_seed(1)
        return (torch.randn(3, 2, 4, 4, generator=g),)


    def grid_inputs():
        g = torch.Generator().manual_seed(2)
        return ([torch.randn(2, 2, 4, 4, generator=g), torch.randn(2, 2, 2, 2, generator=g)],)


    def vector_inputs():
        return (torch.randn(3, 4, generator=torch.Generator().manual_seed(3)),)
""")

SETUP = """
    import torch

    import state

    (x,) = state.example_inputs()
    (xs,) = state.grid_inputs()
    (v,) = state.vector_inputs()
    cache, grids, hooked, locked = (state.BiasCache().eval(), state.Grids().eval(),
                                    state.HookedOnce(), state.Locked())
    # Served as a model is: without autograd, as the warm-up call ran
    # (what the cache holds then does not require grad).
    def served(model, *args):
        with torch.no_grad():
            return model(*args)

    calls = {
        "BiasCache.forward": lambda: served(cache, x),
        "Grids.forward": lambda: served(grids, xs),
        "HookedOnce.forward": lambda: served(hooked, v),
        "Locked.forward": lambda: served(locked, x),
    }
"""

ENTRIES = ["BiasCache.forward", "Grids.forward", "HookedOnce.forward", "Locked.forward"]
EXAMPLES = ["--example", "Grids.forward=grid_inputs", "--example", "HookedOnce.forward=vector_inputs"]


def test_warmed_state_hits_after_the_first_call(run_dync, tmp_path):
    (tmp_path / "state.py").write_text(MODEL)
    artifact = tmp_path / "state-artifact.so"
    done = run_dync("export", *(f"{tmp_path / 'state.py'}:{entry}" for entry in ENTRIES),
                    *EXAMPLES, "--warmup", "1", "-O0", "-o", artifact)
    assert done.returncode == 0, done.stderr
    results = compare_with_eager(tmp_path, artifact, SETUP)
    assert sorted(results) == sorted(ENTRIES), results
    for name, (error, hits, misses, reason) in results.items():
        assert error is None, f"{name}: {error}"
        assert (hits, misses) == (1, 0), f"{name}: {reason}"

