"""Ints a class holds or a property gives, declared dynamic by their path
on `self` (`--dynamic 'self.cfg.window=w[1,16]'`, `--dynamic
'self.keep=k[1,32]'`): the window is a class attribute of the config's
class (every config shares it; no instance holds it), the kept length a
property over the module's own attribute. The window sizes a new tensor and
a repeat, the kept length a slice and a reshape."""
import torch
from torch import nn


class PoolConfig:
    window = 4  # a class attribute: set on the class, every config reads it


class Pooling(nn.Module):
    def __init__(self):
        super().__init__()
        self.cfg = PoolConfig()
        self.proj = nn.Linear(8, 8)
        self._keep = 12

    @property
    def keep(self):
        return self._keep

    @keep.setter
    def keep(self, value):
        self._keep = value

    def forward(self, x):
        # The first `keep` of 32 positions, projected and summed, then
        # spread over `window` slots weighted by their index; beside it the
        # kept rows laid out as one row per position pair of features.
        head = self.proj(x[:, : self.keep])
        weights = torch.arange(self.cfg.window, dtype=x.dtype).view(1, -1, 1)
        pooled = head.sum(1, keepdim=True).repeat(1, self.cfg.window, 1) * weights
        return pooled, head.reshape(x.shape[0], self.keep * 2, 4)


torch.manual_seed(0)
pooling = Pooling().eval()


def example_inputs():
    return (torch.randn(3, 32, 8),)
