"""Programs that ask whether they are being compiled, that call through
functools' memo decorators and an install probe marked as giving a constant
result: the constructs real libraries use around their
graphs, in a few lines each."""
import collections
import functools

import numpy as np
import torch
from torch.utils._pytree import is_namedtuple


def is_tracing():
    # How libraries ask: through a helper of their own.
    return torch.compiler.is_compiling()


def can_skip_mask(mask):
    # Reading the mask's values is a data-dependent branch a graph cannot
    # hold; compiled, the program builds the mask instead.
    if is_tracing():
        return False
    return bool(mask.all())


class Masked(torch.nn.Module):
    def forward(self, x, mask):
        if can_skip_mask(mask):
            return x.softmax(-1)
        return x.masked_fill(mask == 0, float("-inf")).softmax(-1)


model = Masked()


def example_inputs():
    torch.manual_seed(0)
    mask = torch.ones(2, 5, dtype=torch.long)
    mask[1, 3:] = 0
    return torch.randn(2, 5), mask


@functools.lru_cache(maxsize=None)
def inverse(n):
    return 1.0 / n


@functools.cache
def offsets():
    return (1.0, 2.0, 3.0)


class Scaler:
    @functools.lru_cache(maxsize=8)
    def factor(self, n):
        return float(n) ** 0.5


scaler = Scaler()


def constant_result(function):
    # torch._dynamo.assume_constant_result's mark, set as libraries set it
    # without importing torch._dynamo: the result is fixed for the process.
    function._dynamo_marked_constant = True
    return function


@functools.lru_cache
@constant_result
def major_version(package):
    # An install probe: importlib's package search and metadata read the
    # installed files (and `re`, through importlib.metadata).
    import importlib.metadata
    import importlib.util

    if importlib.util.find_spec(package) is None:
        return None
    return int(importlib.metadata.version(package).split(".")[0])


def cached(x):
    y = x * inverse(x.shape[-1]) + sum(offsets()) * scaler.factor(x.shape[0])
    if major_version("torch") is not None and major_version("torch") >= 2:
        y = y + major_version("torch")
    return y


def cached_inputs():
    torch.manual_seed(1)
    return (torch.randn(4, 3),)


class CollectorState:
    """A library's per-call state on an object of its own: set around the
    call, read by the layers, cleared after."""

    def __init__(self):
        self.active = None
        self.collecting = False

    def set(self, value):
        self.active = value
        self.collecting = True

    def reset(self):
        self.active = None
        self.collecting = False


state = CollectorState()


def layer(x):
    y = x.relu() + 1
    if state.collecting:
        state.active["hidden"].append(y)
    return y


def collecting(x):
    collected = {"hidden": []}
    state.set(collected)
    h = layer(layer(x))
    state.reset()
    return h, collected["hidden"]


def collecting_inputs():
    torch.manual_seed(2)
    return (torch.randn(2, 3),)


def small_constants(x):
    # Falcon's split of fused heads indexes with lists; an offset table made
    # in forward.
    picked = x[..., [-2], :] + x[..., [0, 2], :].sum(-2, keepdim=True)
    return picked * torch.tensor([[0.5, 1.0, 2.0, 4.0]]) + torch.tensor([3])


def small_constants_inputs():
    torch.manual_seed(3)
    return (torch.randn(2, 3, 4),)


def numpy_plans(x):
    # BigBird's block-sparse attention plans its gathers with NumPy arrays of
    # constants (zeros in eval mode, sliced per head, stacked) and makes the
    # index tensor from them; sizes come from an array too.
    blocks = np.array([8, 12]) // 4
    rows = [np.zeros((int(blocks[1]) + 1, 2), dtype=np.int32) for _ in range(2)]
    for head in range(2):
        rows[head] = rows[head][1:-1, :] + head
    index = torch.tensor(np.stack(rows, axis=0), device=x.device, dtype=torch.long)
    return x[index] * int(np.sum(blocks)) + blocks[0]


def numpy_plans_inputs():
    torch.manual_seed(4)
    return (torch.randn(3, 5),)


Pair = collections.namedtuple("Pair", "first second")


def class_checks(x):
    # torch.utils._pytree's is_namedtuple (which state-space models reach)
    # asks issubclass of the class of each value: a builtin class (int,
    # tuple, list), a tensor's, torch.Size's, a structseq's, a namedtuple's,
    # against a builtin class or a tuple of them.
    values = (x, 3, [x], (x, 1), {"a": x}, x.shape, torch.max(x, 0), Pair(x, 2))
    flags = [is_namedtuple(v) for v in values]
    flags.append(issubclass(type(x), (int, (list, torch.Tensor))))
    flags.append(issubclass(bool, int))
    flags.append(issubclass(type(x.shape), tuple))
    return x + torch.tensor([float(f) for f in flags]).sum(), flags


def class_checks_inputs():
    torch.manual_seed(4)
    return (torch.randn(2, 3),)
