"""An Evoformer block in the style of OpenFold (AlphaFold 2): Linear with
named inits, `permute_final_dims`/`flatten_final_dims` helpers, MSA row
attention with a pair bias, MSA column attention by transposes, an outer
product mean over sequences, triangle multiplicative updates (outgoing and
incoming) with gates and masks, triangle attention around the starting and
ending node, and `chunk_layer`, which flattens the batch dimensions and runs
a function over slices, writing each slice into a preallocated output."""
import math
from functools import partial
from typing import List, Optional

import torch
import torch.nn as nn


def permute_final_dims(tensor, inds: List[int]):
    zero_index = -1 * len(inds)
    first_inds = list(range(len(tensor.shape[:zero_index])))
    return tensor.permute(first_inds + [zero_index + i for i in inds])


def flatten_final_dims(t, no_dims: int):
    return t.reshape(t.shape[:-no_dims] + (-1,))


def dict_map(fn, dic, leaf_type):
    new_dict = {}
    for k, v in dic.items():
        if type(v) is dict:
            new_dict[k] = dict_map(fn, v, leaf_type)
        else:
            new_dict[k] = tree_map(fn, v, leaf_type)
    return new_dict


def tree_map(fn, tree, leaf_type):
    if isinstance(tree, dict):
        return dict_map(fn, tree, leaf_type)
    elif isinstance(tree, list):
        return [tree_map(fn, x, leaf_type) for x in tree]
    elif isinstance(tree, tuple):
        return tuple([tree_map(fn, x, leaf_type) for x in tree])
    elif isinstance(tree, leaf_type):
        return fn(tree)
    else:
        raise ValueError("Not supported")


tensor_tree_map = partial(tree_map, leaf_type=torch.Tensor)


def _fetch_dims(tree):
    shapes = []
    tree_type = type(tree)
    if tree_type is dict:
        for v in tree.values():
            shapes.extend(_fetch_dims(v))
    elif tree_type is list or tree_type is tuple:
        for t in tree:
            shapes.extend(_fetch_dims(t))
    elif tree_type is torch.Tensor:
        shapes.append(tree.shape)
    else:
        raise ValueError("Not supported")
    return shapes


def chunk_layer(layer, inputs, chunk_size: int, no_batch_dims: int):
    """Runs `layer` over slices of the flattened batch dimensions of `inputs`."""
    if not (len(inputs) > 0):
        raise ValueError("Must provide at least one input")
    initial_dims = [shape[:no_batch_dims] for shape in _fetch_dims(inputs)]
    orig_batch_dims = tuple([max(s) for s in zip(*initial_dims)])

    def _prep_inputs(t):
        t = t.expand(orig_batch_dims + t.shape[no_batch_dims:])
        t = t.reshape(-1, *t.shape[no_batch_dims:])
        return t

    prepped_inputs = tensor_tree_map(_prep_inputs, inputs)
    flat_batch_dim = 1
    for d in orig_batch_dims:
        flat_batch_dim *= d
    no_chunks = flat_batch_dim // chunk_size + (flat_batch_dim % chunk_size != 0)

    i = 0
    out = None
    for _ in range(no_chunks):
        select_chunk = lambda t: t[i: i + chunk_size] if t.shape[0] != 1 else t
        chunks = tensor_tree_map(select_chunk, prepped_inputs)
        output_chunk = layer(**chunks)
        if out is None:
            allocate = lambda t: t.new_zeros((flat_batch_dim,) + t.shape[1:])
            out = tensor_tree_map(allocate, output_chunk)
        if isinstance(output_chunk, torch.Tensor):
            out[i: i + chunk_size] = output_chunk
        else:
            raise ValueError("Not supported")
        i += chunk_size

    reshape = lambda t: t.view(orig_batch_dims + t.shape[1:])
    return tensor_tree_map(reshape, out)


class Linear(nn.Linear):
    def __init__(self, in_dim, out_dim, bias=True, init="default"):
        super().__init__(in_dim, out_dim, bias=bias)
        if bias:
            with torch.no_grad():
                self.bias.fill_(0)
        with torch.no_grad():
            if init == "gating":
                self.weight.normal_(0, 0.02)
                if bias:
                    self.bias.fill_(1.0)
            elif init == "final":
                self.weight.normal_(0, 0.02)
            elif init == "relu":
                nn.init.kaiming_normal_(self.weight, nonlinearity="relu")
            else:
                nn.init.xavier_uniform_(self.weight)


class LayerNorm(nn.Module):
    def __init__(self, c_in, eps=1e-5):
        super().__init__()
        self.c_in = (c_in,)
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(c_in))
        self.bias = nn.Parameter(torch.zeros(c_in))

    def forward(self, x):
        return nn.functional.layer_norm(x, self.c_in, self.weight, self.bias, self.eps)


def softmax_no_cast(t, dim=-1):
    return torch.nn.functional.softmax(t, dim=dim)


def _attention(query, key, value, biases: List[torch.Tensor]):
    key = permute_final_dims(key, (1, 0))
    a = torch.matmul(query, key)
    for b in biases:
        a += b
    a = softmax_no_cast(a, -1)
    return torch.matmul(a, value)


class Attention(nn.Module):
    def __init__(self, c_q, c_k, c_v, c_hidden, no_heads, gating=True):
        super().__init__()
        self.c_hidden = c_hidden
        self.no_heads = no_heads
        self.gating = gating
        self.linear_q = Linear(c_q, c_hidden * no_heads, bias=False, init="glorot")
        self.linear_k = Linear(c_k, c_hidden * no_heads, bias=False, init="glorot")
        self.linear_v = Linear(c_v, c_hidden * no_heads, bias=False, init="glorot")
        self.linear_o = Linear(c_hidden * no_heads, c_q, init="final")
        self.linear_g = None
        if self.gating:
            self.linear_g = Linear(c_q, c_hidden * no_heads, init="gating")
        self.sigmoid = nn.Sigmoid()

    def _prep_qkv(self, q_x, kv_x):
        q = self.linear_q(q_x)
        k = self.linear_k(kv_x)
        v = self.linear_v(kv_x)
        q = q.view(q.shape[:-1] + (self.no_heads, -1))
        k = k.view(k.shape[:-1] + (self.no_heads, -1))
        v = v.view(v.shape[:-1] + (self.no_heads, -1))
        q = q.transpose(-2, -3)
        k = k.transpose(-2, -3)
        v = v.transpose(-2, -3)
        q /= math.sqrt(self.c_hidden)
        return q, k, v

    def _wrap_up(self, o, q_x):
        if self.linear_g is not None:
            g = self.sigmoid(self.linear_g(q_x))
            g = g.view(g.shape[:-1] + (self.no_heads, -1))
            o = o * g
        o = flatten_final_dims(o, 2)
        return self.linear_o(o)

    def forward(self, q_x, kv_x, biases: Optional[List[torch.Tensor]] = None):
        if biases is None:
            biases = []
        q, k, v = self._prep_qkv(q_x, kv_x)
        o = _attention(q, k, v, biases)
        o = o.transpose(-2, -3)
        return self._wrap_up(o, q_x)


class MSARowAttentionWithPairBias(nn.Module):
    def __init__(self, c_m, c_z, c_hidden, no_heads, inf=1e9):
        super().__init__()
        self.inf = inf
        self.layer_norm_m = LayerNorm(c_m)
        self.layer_norm_z = LayerNorm(c_z)
        self.linear_z = Linear(c_z, no_heads, bias=False, init="normal")
        self.mha = Attention(c_m, c_m, c_m, c_hidden, no_heads)

    def forward(self, m, z, mask, chunk_size=None):
        m = self.layer_norm_m(m)
        mask_bias = (self.inf * (mask - 1))[..., :, None, None, :]
        z = self.layer_norm_z(z)
        z = self.linear_z(z)
        z = permute_final_dims(z, (2, 0, 1)).unsqueeze(-4)
        biases = [mask_bias, z]
        if chunk_size is not None:
            return chunk_layer(
                lambda m, mask_bias, z: self.mha(q_x=m, kv_x=m, biases=[mask_bias, z]),
                {"m": m, "mask_bias": mask_bias, "z": z}, chunk_size=chunk_size,
                no_batch_dims=len(m.shape[:-2]))
        return self.mha(q_x=m, kv_x=m, biases=biases)


class MSAColumnAttention(nn.Module):
    def __init__(self, c_m, c_hidden, no_heads, inf=1e9):
        super().__init__()
        self.inf = inf
        self.layer_norm_m = LayerNorm(c_m)
        self.mha = Attention(c_m, c_m, c_m, c_hidden, no_heads)

    def forward(self, m, mask, chunk_size=None):
        m = m.transpose(-2, -3)
        mask = mask.transpose(-1, -2)
        m = self.layer_norm_m(m)
        mask_bias = (self.inf * (mask - 1))[..., :, None, None, :]
        m = self.mha(q_x=m, kv_x=m, biases=[mask_bias])
        return m.transpose(-2, -3)


class OuterProductMean(nn.Module):
    def __init__(self, c_m, c_z, c_hidden, eps=1e-3):
        super().__init__()
        self.eps = eps
        self.c_hidden = c_hidden
        self.layer_norm = LayerNorm(c_m)
        self.linear_1 = Linear(c_m, c_hidden)
        self.linear_2 = Linear(c_m, c_hidden)
        self.linear_out = Linear(c_hidden ** 2, c_z, init="final")

    def _opm(self, a, b):
        outer = torch.einsum("...bac,...dae->...bdce", a, b)
        outer = outer.reshape(outer.shape[:-2] + (-1,))
        return self.linear_out(outer)

    def forward(self, m, mask):
        ln = self.layer_norm(m)
        mask = mask.unsqueeze(-1)
        a = self.linear_1(ln) * mask
        b = self.linear_2(ln) * mask
        a = a.transpose(-2, -3)
        b = b.transpose(-2, -3)
        outer = self._opm(a, b)
        norm = torch.einsum("...abc,...adc->...bdc", mask, mask)
        norm = norm + self.eps
        return outer / norm


class TriangleMultiplicativeUpdate(nn.Module):
    def __init__(self, c_z, c_hidden, _outgoing=True):
        super().__init__()
        self._outgoing = _outgoing
        self.linear_a_p = Linear(c_z, c_hidden)
        self.linear_a_g = Linear(c_z, c_hidden, init="gating")
        self.linear_b_p = Linear(c_z, c_hidden)
        self.linear_b_g = Linear(c_z, c_hidden, init="gating")
        self.linear_g = Linear(c_z, c_z, init="gating")
        self.linear_z = Linear(c_hidden, c_z, init="final")
        self.layer_norm_in = LayerNorm(c_z)
        self.layer_norm_out = LayerNorm(c_hidden)
        self.sigmoid = nn.Sigmoid()

    def _combine_projections(self, a, b):
        if self._outgoing:
            a = permute_final_dims(a, (2, 0, 1))
            b = permute_final_dims(b, (2, 1, 0))
        else:
            a = permute_final_dims(a, (2, 1, 0))
            b = permute_final_dims(b, (2, 0, 1))
        p = torch.matmul(a, b)
        return permute_final_dims(p, (1, 2, 0))

    def forward(self, z, mask=None):
        if mask is None:
            mask = z.new_ones(z.shape[:-1])
        mask = mask.unsqueeze(-1)
        z = self.layer_norm_in(z)
        a = mask
        a = a * self.sigmoid(self.linear_a_g(z))
        a = a * self.linear_a_p(z)
        b = mask
        b = b * self.sigmoid(self.linear_b_g(z))
        b = b * self.linear_b_p(z)
        x = self._combine_projections(a, b)
        del a, b
        x = self.layer_norm_out(x)
        x = self.linear_z(x)
        g = self.sigmoid(self.linear_g(z))
        return x * g


class TriangleAttention(nn.Module):
    def __init__(self, c_in, c_hidden, no_heads, starting=True, inf=1e9):
        super().__init__()
        self.starting = starting
        self.no_heads = no_heads
        self.inf = inf
        self.layer_norm = LayerNorm(c_in)
        self.linear = Linear(c_in, no_heads, bias=False, init="normal")
        self.mha = Attention(c_in, c_in, c_in, c_hidden, no_heads)

    def _chunk(self, x, biases, chunk_size):
        mha_inputs = {"q_x": x, "kv_x": x, "biases": biases}
        return chunk_layer(partial(self.mha), mha_inputs, chunk_size=chunk_size,
                           no_batch_dims=len(x.shape[:-2]))

    def forward(self, x, mask=None, chunk_size=None):
        if mask is None:
            mask = x.new_ones(x.shape[:-1])
        if not self.starting:
            x = x.transpose(-2, -3)
            mask = mask.transpose(-1, -2)
        x = self.layer_norm(x)
        mask_bias = (self.inf * (mask - 1))[..., :, None, None, :]
        triangle_bias = permute_final_dims(self.linear(x), (2, 0, 1))
        triangle_bias = triangle_bias.unsqueeze(-4)
        biases = [mask_bias, triangle_bias]
        if chunk_size is not None:
            x = self._chunk(x, biases, chunk_size)
        else:
            x = self.mha(q_x=x, kv_x=x, biases=biases)
        if not self.starting:
            x = x.transpose(-2, -3)
        return x


class Transition(nn.Module):
    def __init__(self, c, n):
        super().__init__()
        self.layer_norm = LayerNorm(c)
        self.linear_1 = Linear(c, n * c, init="relu")
        self.relu = nn.ReLU()
        self.linear_2 = Linear(n * c, c, init="final")

    def forward(self, x, mask):
        mask = mask.unsqueeze(-1)
        x = self.layer_norm(x)
        x = self.linear_2(self.relu(self.linear_1(x))) * mask
        return x


class EvoformerBlock(nn.Module):
    def __init__(self, c_m=16, c_z=8, c_hidden_msa_att=4, c_hidden_opm=4, c_hidden_mul=8,
                 c_hidden_pair_att=4, no_heads_msa=2, no_heads_pair=2, transition_n=2):
        super().__init__()
        self.msa_att_row = MSARowAttentionWithPairBias(c_m, c_z, c_hidden_msa_att, no_heads_msa)
        self.msa_att_col = MSAColumnAttention(c_m, c_hidden_msa_att, no_heads_msa)
        self.msa_transition = Transition(c_m, transition_n)
        self.outer_product_mean = OuterProductMean(c_m, c_z, c_hidden_opm)
        self.tri_mul_out = TriangleMultiplicativeUpdate(c_z, c_hidden_mul, _outgoing=True)
        self.tri_mul_in = TriangleMultiplicativeUpdate(c_z, c_hidden_mul, _outgoing=False)
        self.tri_att_start = TriangleAttention(c_z, c_hidden_pair_att, no_heads_pair, starting=True)
        self.tri_att_end = TriangleAttention(c_z, c_hidden_pair_att, no_heads_pair, starting=False)
        self.pair_transition = Transition(c_z, transition_n)

    def forward(self, m, z, msa_mask, pair_mask, chunk_size: Optional[int] = None):
        m = m + self.msa_att_row(m, z=z, mask=msa_mask, chunk_size=chunk_size)
        m = m + self.msa_att_col(m, mask=msa_mask, chunk_size=chunk_size)
        m = m + self.msa_transition(m, mask=msa_mask)
        z = z + self.outer_product_mean(m, mask=msa_mask)
        z = z + self.tri_mul_out(z, mask=pair_mask)
        z = z + self.tri_mul_in(z, mask=pair_mask)
        z = z + self.tri_att_start(z, mask=pair_mask, chunk_size=chunk_size)
        z = z + self.tri_att_end(z, mask=pair_mask, chunk_size=chunk_size)
        z = z + self.pair_transition(z, mask=pair_mask)
        return m, z


class EvoformerStack(nn.Module):
    def __init__(self, no_blocks=2, c_m=16, c_z=8, c_s=12):
        super().__init__()
        self.blocks = nn.ModuleList([EvoformerBlock(c_m=c_m, c_z=c_z) for _ in range(no_blocks)])
        self.linear = Linear(c_m, c_s)

    def forward(self, m, z, msa_mask, pair_mask, chunk_size: Optional[int] = None):
        for b in self.blocks:
            m, z = b(m, z, msa_mask, pair_mask, chunk_size=chunk_size)
        s = self.linear(m[..., 0, :, :])
        return m, z, s


torch.manual_seed(0)
model = EvoformerStack().eval()
# A trained model's final projections are not zero-like; give them weight so
# every parameter's gradient is exercised.
with torch.no_grad():
    for mod in model.modules():
        if isinstance(mod, Linear):
            mod.weight.normal_(0, 0.2)
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    n_seq, n_res = 3, 6
    m = torch.randn(1, n_seq, n_res, 16, generator=g)
    z = torch.randn(1, n_res, n_res, 8, generator=g)
    msa_mask = torch.ones(1, n_seq, n_res)
    msa_mask[:, 2, 4:] = 0
    pair_mask = torch.ones(1, n_res, n_res)
    pair_mask[:, 5, :] = 0
    pair_mask[:, :, 5] = 0
    return m, z, msa_mask, pair_mask


def example_kwargs():
    return {"chunk_size": 4}
