"""Module hooks registered inside forward and removed before it returns.

KvCache fills a cache keyed by modules from forward hooks on its key and
value projections over a few decoding steps, as OpenAI Whisper's decoding
loop does, and removes the hooks in a `finally`. Ordered registers two
hooks on one module, the second with `prepend=True`, and a pre-hook taking
keywords used through the handle as a context manager. Reused registers a
hook, calls the module, removes it and calls the module again.
"""
import torch
from torch import nn


class Attention(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(width, width, bias=False)
        self.value = nn.Linear(width, width)

    def forward(self, x, cache):
        q = self.query(x)
        k = self.key(x)
        v = self.value(x)
        if cache:
            k, v = cache[self.key], cache[self.value]
        weights = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
        return weights @ v


class KvCache(nn.Module):
    def __init__(self, width=8, steps=3):
        super().__init__()
        self.attn = Attention(width)
        self.steps = steps

    def install(self, cache):
        hooks = []

        def save(module, _, output):
            if module not in cache:
                cache[module] = output
            else:
                cache[module] = torch.cat([cache[module], output], dim=1)
            return cache[module]

        for layer in (self.attn.key, self.attn.value):
            hooks.append(layer.register_forward_hook(save))
        return hooks

    def forward(self, x):
        cache = {}
        hooks = self.install(cache)
        try:
            outputs = []
            step = x
            for _ in range(self.steps):
                out = self.attn(step, cache)
                outputs.append(out[:, -1:])
                step = out[:, -1:]
        finally:
            for hook in hooks:
                hook.remove()
        return torch.cat(outputs, dim=1), cache[self.attn.key].shape[1]


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, scale=1.0):
        return self.fc(x) * scale


class Ordered(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        first = self.inner.register_forward_hook(lambda m, args, out: out + 1.0)
        second = self.inner.register_forward_hook(lambda m, args, out: out * 3.0, prepend=True)

        def rescale(module, args, kwargs):
            return args, {"scale": kwargs.get("scale", 1.0) * 2.0}

        with self.inner.register_forward_pre_hook(rescale, with_kwargs=True):
            y = self.inner(x, scale=0.5)
        first.remove()
        second.remove()
        return y + self.inner(x)


class Reused(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        handle = self.fc.register_forward_pre_hook(lambda m, args: (args[0].flip(0),))
        hooked = self.fc(x)
        handle.remove()
        handle.remove()
        return hooked - self.fc(x)


def example_inputs():
    return (torch.randn(2, 4),)


def example_inputs_kv():
    return (torch.randn(2, 1, 8),)
