"""An xLSTM mLSTM block as NX-AI's xlstm package writes its pure-torch
backend: the stabilized parallel form (log-sigmoid forget gates summed by
`cumsum` after a leading zero, the gate matrix by `repeat` and its
transpose, `torch.where` over a lower-triangular boolean buffer with
`-inf`, a row-wise max stabilizer, the normalizer
`maximum(|sum|, exp(-max))`), a causal depthwise conv by padding and
trimming, head-wise block-diagonal q/k/v projections by `einsum`, input
and forget gates from the concatenated q, k, v, a multi-head LayerNorm by
`group_norm`, a learnable skip, the `z` branch gated by SiLU, and the
up/down projections of the pre-up-projection block."""
import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


def parallel_stabilized_simple(queries, keys, values, igate_preact, fgate_preact, lower_triangular_matrix=None,
                               stabilize_rowwise=True, eps=1e-6):
    B, NH, S, DH = queries.shape
    _dtype, _device = queries.dtype, queries.device

    log_fgates = F.logsigmoid(fgate_preact)
    if lower_triangular_matrix is None or S < lower_triangular_matrix.size(-1):
        ltr = torch.tril(torch.ones((S, S), dtype=torch.bool, device=_device))
    else:
        ltr = lower_triangular_matrix
    assert ltr.dtype == torch.bool, f"lower_triangular_matrix must be of dtype bool, got {ltr.dtype}"

    log_fgates_cumsum = torch.cat(
        [torch.zeros((B, NH, 1, 1), dtype=_dtype, device=_device), torch.cumsum(log_fgates, dim=-2)], dim=-2)
    rep_log_fgates_cumsum = log_fgates_cumsum.repeat(1, 1, 1, S + 1)
    _log_fg_matrix = rep_log_fgates_cumsum - rep_log_fgates_cumsum.transpose(-2, -1)
    log_fg_matrix = torch.where(ltr, _log_fg_matrix[:, :, 1:, 1:], -float("inf"))

    log_D_matrix = log_fg_matrix + igate_preact.transpose(-2, -1)
    if stabilize_rowwise:
        max_log_D, _ = torch.max(log_D_matrix, dim=-1, keepdim=True)
    else:
        max_log_D = torch.max(log_D_matrix.view(B, NH, -1), dim=-1, keepdim=True)[0].unsqueeze(-1)
    D_matrix = torch.exp(log_D_matrix - max_log_D)

    keys_scaled = keys / math.sqrt(DH)
    qk_matrix = queries @ keys_scaled.transpose(-2, -1)
    C_matrix = qk_matrix * D_matrix
    normalizer = torch.maximum(C_matrix.sum(dim=-1, keepdim=True).abs(), torch.exp(-max_log_D))
    C_matrix_normalized = C_matrix / (normalizer + eps)
    return C_matrix_normalized @ values


class CausalConv1d(nn.Module):
    def __init__(self, feature_dim, kernel_size=4, bias=True):
        super().__init__()
        self.pad = kernel_size - 1
        self.conv = nn.Conv1d(feature_dim, feature_dim, kernel_size, padding=self.pad, groups=feature_dim,
                              bias=bias)

    def forward(self, x):
        y = self.conv(x.transpose(2, 1))
        if self.pad > 0:
            y = y[:, :, : -self.pad]
        return y.transpose(2, 1)


class LinearHeadwiseExpand(nn.Module):
    def __init__(self, in_features, num_heads, bias=False):
        super().__init__()
        assert in_features % num_heads == 0
        self.num_heads = num_heads
        dim_per_head = in_features // num_heads
        self.weight = nn.Parameter(torch.empty(num_heads, dim_per_head, dim_per_head))
        nn.init.normal_(self.weight, mean=0.0, std=math.sqrt(2 / 5 / dim_per_head))
        self.bias = nn.Parameter(torch.zeros(in_features)) if bias else None

    def forward(self, x):
        shape = x.shape
        x = x.view(*shape[:-1], self.num_heads, -1)
        x = torch.einsum("...hd,hod->...ho", x, self.weight)
        x = x.reshape(*shape[:-1], -1)
        if self.bias is not None:
            x = x + self.bias
        return x


class MultiHeadLayerNorm(nn.LayerNorm):
    def forward(self, input):
        assert input.dim() == 4, "Input must be 4D tensor (B, NH, S, DH)"
        B, NH, S, DH = input.shape
        gn_in_1 = input.transpose(1, 2)
        gn_in_2 = gn_in_1.reshape(B * S, NH * DH)
        out = F.group_norm(gn_in_2, num_groups=NH, weight=self.weight, bias=self.bias, eps=self.eps)
        return out.view(B, S, NH, DH).transpose(1, 2)


class mLSTMCell(nn.Module):
    def __init__(self, embedding_dim, num_heads, context_length):
        super().__init__()
        self.num_heads = num_heads
        self.igate = nn.Linear(3 * embedding_dim, num_heads)
        self.fgate = nn.Linear(3 * embedding_dim, num_heads)
        self.outnorm = MultiHeadLayerNorm(embedding_dim, bias=False)
        self.register_buffer("causal_mask", torch.tril(torch.ones(context_length, context_length, dtype=torch.bool)),
                             persistent=False)
        nn.init.zeros_(self.fgate.weight)
        with torch.no_grad():
            self.fgate.bias.copy_(torch.linspace(3.0, 6.0, num_heads))
        nn.init.zeros_(self.igate.weight)
        nn.init.normal_(self.igate.bias, mean=0.0, std=0.1)

    def forward(self, q, k, v):
        B, S, _ = q.shape
        if_gate_input = torch.cat([q, k, v], dim=-1)
        q = q.view(B, S, self.num_heads, -1).transpose(1, 2)
        k = k.view(B, S, self.num_heads, -1).transpose(1, 2)
        v = v.view(B, S, self.num_heads, -1).transpose(1, 2)
        igate_preact = self.igate(if_gate_input).transpose(-1, -2).unsqueeze(-1)
        fgate_preact = self.fgate(if_gate_input).transpose(-1, -2).unsqueeze(-1)
        h_state = parallel_stabilized_simple(q, k, v, igate_preact, fgate_preact,
                                             lower_triangular_matrix=self.causal_mask)
        h_state_norm = self.outnorm(h_state)
        return h_state_norm.transpose(1, 2).reshape(B, S, -1)


@dataclass
class mLSTMLayerConfig:
    embedding_dim: int = 32
    proj_factor: float = 2.0
    num_heads: int = 4
    qkv_proj_blocksize: int = 4
    conv1d_kernel_size: int = 4
    context_length: int = 16

    @property
    def inner_dim(self):
        return int(self.proj_factor * self.embedding_dim)


class mLSTMLayer(nn.Module):
    def __init__(self, config: mLSTMLayerConfig):
        super().__init__()
        self.config = config
        inner = config.inner_dim
        num_proj_heads = round(inner // config.qkv_proj_blocksize)
        self.proj_up = nn.Linear(config.embedding_dim, 2 * inner, bias=False)
        self.q_proj = LinearHeadwiseExpand(inner, num_proj_heads)
        self.k_proj = LinearHeadwiseExpand(inner, num_proj_heads)
        self.v_proj = LinearHeadwiseExpand(inner, num_proj_heads)
        self.conv1d = CausalConv1d(inner, config.conv1d_kernel_size)
        self.conv_act_fn = nn.SiLU()
        self.mlstm_cell = mLSTMCell(inner, config.num_heads, config.context_length)
        self.ogate_act_fn = nn.SiLU()
        self.learnable_skip = nn.Parameter(torch.ones(inner, requires_grad=True))
        self.proj_down = nn.Linear(inner, config.embedding_dim, bias=False)

    def forward(self, x):
        B, S, _ = x.shape
        x_inner = self.proj_up(x)
        x_mlstm, z = torch.split(x_inner, split_size_or_sections=self.config.inner_dim, dim=-1)
        x_mlstm_conv = self.conv1d(x_mlstm)
        x_mlstm_conv_act = self.conv_act_fn(x_mlstm_conv)
        q = self.q_proj(x_mlstm_conv_act)
        k = self.k_proj(x_mlstm_conv_act)
        v = self.v_proj(x_mlstm)
        h_tilde_state = self.mlstm_cell(q=q, k=k, v=v)
        h_tilde_state_skip = h_tilde_state + (self.learnable_skip * x_mlstm_conv_act)
        h_state = h_tilde_state_skip * self.ogate_act_fn(z)
        return self.proj_down(h_state)


class mLSTMBlock(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.xlstm_norm = nn.LayerNorm(config.embedding_dim, bias=False)
        self.xlstm = mLSTMLayer(config)

    def forward(self, x):
        return x + self.xlstm(self.xlstm_norm(x))


class xLSTMLMModel(nn.Module):
    def __init__(self, vocab_size=80, num_blocks=2, config=None):
        super().__init__()
        config = config or mLSTMLayerConfig()
        self.token_embedding = nn.Embedding(vocab_size, config.embedding_dim)
        self.blocks = nn.ModuleList([mLSTMBlock(config) for _ in range(num_blocks)])
        self.post_blocks_norm = nn.LayerNorm(config.embedding_dim, bias=False)
        self.lm_head = nn.Linear(config.embedding_dim, vocab_size, bias=False)
        self.lm_head.weight = self.token_embedding.weight

    def forward(self, idx, targets):
        x = self.token_embedding(idx)
        for block in self.blocks:
            x = block(x)
        logits = self.lm_head(self.post_blocks_norm(x))
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


torch.manual_seed(0)
model = xLSTMLMModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    idx = torch.randint(0, 80, (2, 16), generator=g)
    return idx, torch.roll(idx, -1, dims=1)
