"""Tensor-train and Tucker factorized layers as tensorly-torch / t3nsor-style
code writes them: layer shapes factorized at construction (`np.prod`
checks, `functools.reduce(operator.mul, ...)`), TT cores kept in an
`nn.ParameterList`, and the contraction's `torch.einsum` equation built
at run time from `string.ascii_letters` by slicing, `''.join` and
f-strings, one equation per core in a loop over cores, plus one
equation for the whole contraction at once (`torch.einsum(eq, x,
*cores)` with a starred list); a Tucker-factorized 2-D convolution whose
core is contracted with its factors by an equation built the same way
before `F.conv2d`, and a CP (rank-R) embedding reading rows of its
factors by `index // np.cumprod` digits, combined by `torch.einsum` over
a list comprehension of operands."""
import functools
import operator
import string

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

LETTERS = string.ascii_letters


def prod(xs):
    return functools.reduce(operator.mul, xs, 1)


class TTLinear(nn.Module):
    def __init__(self, in_shape, out_shape, ranks, bias=True):
        super().__init__()
        assert len(in_shape) == len(out_shape) == len(ranks) + 1
        self.in_shape, self.out_shape = tuple(in_shape), tuple(out_shape)
        self.in_features, self.out_features = int(np.prod(in_shape)), int(np.prod(out_shape))
        full_ranks = [1] + list(ranks) + [1]
        self.cores = nn.ParameterList()
        for k, (i, o) in enumerate(zip(in_shape, out_shape)):
            core = torch.randn(full_ranks[k], i, o, full_ranks[k + 1])
            core /= (full_ranks[k] * i) ** 0.5
            self.cores.append(nn.Parameter(core))
        self.bias = nn.Parameter(torch.zeros(self.out_features)) if bias else None

    def _stepwise(self, x):
        d = len(self.in_shape)
        batch = x.shape[0]
        h = x.reshape(batch, *self.in_shape).unsqueeze(-1)
        in_letters = LETTERS[1:1 + d]
        out_letters = LETTERS[1 + d:1 + 2 * d]
        r_in, r_out = "y", "z"
        cur = "a" + in_letters + r_in
        for k, core in enumerate(self.cores):
            nxt = cur.replace(in_letters[k], out_letters[k]).replace(r_in, r_out)
            eq = f"{cur},{r_in}{in_letters[k]}{out_letters[k]}{r_out}->{nxt}"
            h = torch.einsum(eq, h, core)
            cur = nxt.replace(r_out, r_in)
        return h.reshape(batch, self.out_features)

    def _all_at_once(self, x):
        d = len(self.in_shape)
        batch = x.shape[0]
        h = x.reshape(batch, *self.in_shape)
        ins = LETTERS[1:1 + d]
        outs = LETTERS[1 + d:1 + 2 * d]
        ranks = LETTERS[26:27 + d]
        operands = ["a" + ins]
        for k in range(d):
            operands.append(ranks[k] + ins[k] + outs[k] + ranks[k + 1])
        eq = ",".join(operands) + "->" + "a" + ranks[0] + outs + ranks[d]
        y = torch.einsum(eq, h, *self.cores)
        return y.reshape(batch, -1)

    def forward(self, x, all_at_once=False):
        y = self._all_at_once(x) if all_at_once else self._stepwise(x)
        return y if self.bias is None else y + self.bias


class TuckerConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, rank, padding=0):
        super().__init__()
        full = (out_channels, in_channels, kernel_size, kernel_size)
        self.full_shape = full
        self.padding = padding
        self.core = nn.Parameter(torch.randn(*rank) * 0.3)
        self.factors = nn.ParameterList([nn.Parameter(torch.randn(s, r) / r ** 0.5) for s, r in zip(full, rank)])

    def weight(self):
        order = len(self.full_shape)
        core_idx = "".join(LETTERS[i] for i in range(order))
        full_idx = "".join(LETTERS[order + i] for i in range(order))
        factor_terms = [f"{full_idx[i]}{core_idx[i]}" for i in range(order)]
        eq = f"{core_idx},{','.join(factor_terms)}->{full_idx}"
        return torch.einsum(eq, self.core, *self.factors)

    def forward(self, x):
        return F.conv2d(x, self.weight(), padding=self.padding)


class CPEmbedding(nn.Module):
    def __init__(self, shape, dim_shape, rank):
        super().__init__()
        self.shape, self.dim_shape = tuple(shape), tuple(dim_shape)
        self.num_embeddings, self.embedding_dim = prod(shape), prod(dim_shape)
        self.register_buffer("radix", torch.tensor(np.cumprod((1,) + self.shape[:0:-1])[::-1].copy()))
        self.factors = nn.ParameterList([nn.Parameter(torch.randn(n, d, rank) / rank ** 0.25)
                                         for n, d in zip(shape, dim_shape)])
        self.weights = nn.Parameter(torch.ones(rank))

    def forward(self, idx):
        flat = idx.reshape(-1)
        digits = (flat[:, None] // self.radix) % torch.tensor(self.shape, device=idx.device)
        rows = [f[digits[:, k]] for k, f in enumerate(self.factors)]
        d = len(self.shape)
        eq = ",".join("a" + LETTERS[1 + k] + "z" for k in range(d)) + ",z->a" + LETTERS[1:1 + d]
        out = torch.einsum(eq, *rows, self.weights)
        return out.reshape(*idx.shape, self.embedding_dim)


class TensorizedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = TuckerConv2d(3, 8, 3, rank=(4, 2, 3, 3), padding=1)
        self.conv2 = TuckerConv2d(8, 8, 3, rank=(4, 4, 2, 2), padding=1)
        self.fc1 = TTLinear((4, 4, 8), (4, 4, 4), ranks=(3, 3))
        self.fc2 = TTLinear((4, 4, 4), (2, 2, 4), ranks=(2, 2))
        self.emb = CPEmbedding((4, 5, 6), (2, 2, 4), rank=4)

    def forward(self, image, tokens):
        h = F.relu(self.conv1(image))
        h = F.max_pool2d(F.relu(self.conv2(h)), 2)
        h = h.flatten(1)
        a = F.gelu(self.fc1(h))
        b = F.gelu(self.fc1(h, all_at_once=True))
        y = self.fc2(a + b)
        e = self.emb(tokens).mean(1)
        return y + e


torch.manual_seed(0)
model = TensorizedNet()
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(2, 3, 8, 8, generator=g), torch.randint(0, 120, (2, 7), generator=g)
