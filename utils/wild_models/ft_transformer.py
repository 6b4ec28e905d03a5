"""An FT-Transformer as the rtdl package writes it: numerical features each
get their own linear embedding (weight * x + bias, by broadcasting), the
categorical ones share one nn.Embedding through a category-offsets buffer
(cumsum of the cardinalities), the [CLS] token first as a numerical feature
equal to one (torch.ones concatenated in forward), pre-norm blocks as an
nn.ModuleDict with `key in layer` tests, the last layer computing the [CLS]
row only (x[:, :1] as the query), ReGLU feed-forward by chunk, and a head
on the [CLS] token."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Tokenizer(nn.Module):
    def __init__(self, d_numerical, categories, d_token):
        super().__init__()
        category_offsets = torch.tensor([0] + categories[:-1]).cumsum(0)
        self.register_buffer("category_offsets", category_offsets)
        self.category_embeddings = nn.Embedding(sum(categories), d_token)
        nn.init.kaiming_uniform_(self.category_embeddings.weight, a=math.sqrt(5))
        # +1 for the [CLS] token, handled as a numerical feature equal to one
        self.weight = nn.Parameter(torch.empty(d_numerical + 1, d_token))
        self.bias = nn.Parameter(torch.empty(d_numerical + len(categories), d_token))
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        nn.init.kaiming_uniform_(self.bias, a=math.sqrt(5))

    @property
    def n_tokens(self):
        return len(self.weight) + len(self.category_offsets)

    def forward(self, x_num, x_cat):
        x_num = torch.cat([torch.ones(len(x_num), 1, device=x_num.device), x_num], dim=1)
        x = self.weight[None] * x_num[:, :, None]
        x = torch.cat([x, self.category_embeddings(x_cat + self.category_offsets[None])], dim=1)
        bias = torch.cat([torch.zeros(1, self.bias.shape[1], device=x.device), self.bias])
        return x + bias[None]


class MultiheadAttention(nn.Module):
    def __init__(self, d, n_heads):
        super().__init__()
        self.W_q = nn.Linear(d, d)
        self.W_k = nn.Linear(d, d)
        self.W_v = nn.Linear(d, d)
        self.W_out = nn.Linear(d, d)
        self.n_heads = n_heads

    def _reshape(self, x):
        batch_size, n_tokens, d = x.shape
        d_head = d // self.n_heads
        return (x.reshape(batch_size, n_tokens, self.n_heads, d_head)
                .transpose(1, 2).reshape(batch_size * self.n_heads, n_tokens, d_head))

    def forward(self, x_q, x_kv):
        q, k, v = self.W_q(x_q), self.W_k(x_kv), self.W_v(x_kv)
        batch_size = len(q)
        d_head_key = k.shape[-1] // self.n_heads
        d_head_value = v.shape[-1] // self.n_heads
        n_q_tokens = q.shape[1]
        q, k, v = self._reshape(q), self._reshape(k), self._reshape(v)
        attention = F.softmax(q @ k.transpose(1, 2) / math.sqrt(d_head_key), dim=-1)
        x = attention @ v
        x = (x.reshape(batch_size, self.n_heads, n_q_tokens, d_head_value)
             .transpose(1, 2).reshape(batch_size, n_q_tokens, self.n_heads * d_head_value))
        return self.W_out(x)


def reglu(x):
    a, b = x.chunk(2, dim=-1)
    return a * F.relu(b)


class FTTransformer(nn.Module):
    def __init__(self, d_numerical=6, categories=(3, 5, 4), d_token=16, n_layers=2,
                 n_heads=4, d_ffn_factor=4 / 3, d_out=1):
        super().__init__()
        categories = list(categories)
        self.tokenizer = Tokenizer(d_numerical, categories, d_token)
        d_hidden = int(d_token * d_ffn_factor)
        self.layers = nn.ModuleList([])
        for layer_idx in range(n_layers):
            layer = nn.ModuleDict({
                "attention": MultiheadAttention(d_token, n_heads),
                "linear0": nn.Linear(d_token, d_hidden * 2),
                "linear1": nn.Linear(d_hidden, d_token),
                "norm1": nn.LayerNorm(d_token),
            })
            if layer_idx:
                layer["norm0"] = nn.LayerNorm(d_token)
            self.layers.append(layer)
        self.last_normalization = nn.LayerNorm(d_token)
        self.head = nn.Linear(d_token, d_out)

    def _start_residual(self, x, layer, norm_idx):
        key = f"norm{norm_idx}"
        return layer[key](x) if key in layer else x

    def forward(self, x_num, x_cat):
        x = self.tokenizer(x_num, x_cat)
        for layer_idx, layer in enumerate(self.layers):
            is_last_layer = layer_idx + 1 == len(self.layers)
            x_residual = self._start_residual(x, layer, 0)
            x_residual = layer["attention"](
                x_residual[:, :1] if is_last_layer else x_residual, x_residual)
            if is_last_layer:
                x = x[:, : x_residual.shape[1]]
            x = x + x_residual
            x_residual = self._start_residual(x, layer, 1)
            x_residual = layer["linear1"](reglu(layer["linear0"](x_residual)))
            x = x + x_residual
        assert x.shape[1] == 1
        x = x[:, 0]
        x = self.head(F.relu(self.last_normalization(x)))
        return x.squeeze(-1)


torch.manual_seed(0)
model = FTTransformer().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    x_num = torch.randn(5, 6, generator=g)
    x_cat = torch.stack([torch.randint(0, n, (5,), generator=g) for n in (3, 5, 4)], dim=1)
    return x_num, x_cat
