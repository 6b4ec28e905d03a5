"""PatchTST as the reference repository (yuqinie98/PatchTST) writes it:
RevIN normalization with statistics kept on the module between `norm`
and `denorm` calls (`torch.mean(..., keepdim=True).detach()`, `torch.sqrt(
torch.var(..., unbiased=False) + eps)`, affine weights), channel
independence by folding the variables into the batch, patching by
`nn.ReplicationPad1d((0, stride))` and `Tensor.unfold(dimension=-1,
size=patch_len, step=stride)`, a learnable positional encoding, an
encoder with residual attention (the previous layer's scores added to the
next's) and BatchNorm through a `Transpose` module in an `nn.Sequential`,
and a flatten head per channel."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


class RevIN(nn.Module):
    def __init__(self, num_features: int, eps=1e-5, affine=True, subtract_last=False):
        super().__init__()
        self.num_features, self.eps, self.affine, self.subtract_last = num_features, eps, affine, subtract_last
        if self.affine:
            self.affine_weight = nn.Parameter(torch.ones(self.num_features))
            self.affine_bias = nn.Parameter(torch.zeros(self.num_features))

    def forward(self, x, mode: str):
        if mode == "norm":
            self._get_statistics(x)
            x = self._normalize(x)
        elif mode == "denorm":
            x = self._denormalize(x)
        else:
            raise NotImplementedError
        return x

    def _get_statistics(self, x):
        dim2reduce = tuple(range(1, x.ndim - 1))
        if self.subtract_last:
            self.last = x[:, -1, :].unsqueeze(1)
        else:
            self.mean = torch.mean(x, dim=dim2reduce, keepdim=True).detach()
        self.stdev = torch.sqrt(torch.var(x, dim=dim2reduce, keepdim=True, unbiased=False) + self.eps).detach()

    def _normalize(self, x):
        x = x - (self.last if self.subtract_last else self.mean)
        x = x / self.stdev
        if self.affine:
            x = x * self.affine_weight + self.affine_bias
        return x

    def _denormalize(self, x):
        if self.affine:
            x = x - self.affine_bias
            x = x / (self.affine_weight + self.eps * self.eps)
        x = x * self.stdev
        return x + (self.last if self.subtract_last else self.mean)


class Transpose(nn.Module):
    def __init__(self, *dims, contiguous=False):
        super().__init__()
        self.dims, self.contiguous = dims, contiguous

    def forward(self, x):
        if self.contiguous:
            return x.transpose(*self.dims).contiguous()
        return x.transpose(*self.dims)


class _ScaledDotProductAttention(nn.Module):
    def __init__(self, d_model, n_heads, res_attention=False):
        super().__init__()
        head_dim = d_model // n_heads
        self.scale = nn.Parameter(torch.tensor(head_dim ** -0.5), requires_grad=False)
        self.res_attention = res_attention

    def forward(self, q: Tensor, k: Tensor, v: Tensor, prev=None):
        attn_scores = torch.matmul(q, k) * self.scale
        if prev is not None:
            attn_scores = attn_scores + prev
        attn_weights = F.softmax(attn_scores, dim=-1)
        output = torch.matmul(attn_weights, v)
        if self.res_attention:
            return output, attn_weights, attn_scores
        return output, attn_weights


class _MultiheadAttention(nn.Module):
    def __init__(self, d_model, n_heads, res_attention=False):
        super().__init__()
        d_k = d_v = d_model // n_heads
        self.n_heads, self.d_k, self.d_v = n_heads, d_k, d_v
        self.W_Q = nn.Linear(d_model, d_k * n_heads)
        self.W_K = nn.Linear(d_model, d_k * n_heads)
        self.W_V = nn.Linear(d_model, d_v * n_heads)
        self.res_attention = res_attention
        self.sdp_attn = _ScaledDotProductAttention(d_model, n_heads, res_attention=res_attention)
        self.to_out = nn.Sequential(nn.Linear(n_heads * d_v, d_model), nn.Dropout(0.0))

    def forward(self, Q: Tensor, prev=None):
        bs = Q.size(0)
        K = V = Q
        q_s = self.W_Q(Q).view(bs, -1, self.n_heads, self.d_k).transpose(1, 2)
        k_s = self.W_K(K).view(bs, -1, self.n_heads, self.d_k).permute(0, 2, 3, 1)
        v_s = self.W_V(V).view(bs, -1, self.n_heads, self.d_v).transpose(1, 2)
        if self.res_attention:
            output, attn_weights, attn_scores = self.sdp_attn(q_s, k_s, v_s, prev=prev)
        else:
            output, attn_weights = self.sdp_attn(q_s, k_s, v_s)
        output = output.transpose(1, 2).contiguous().view(bs, -1, self.n_heads * self.d_v)
        output = self.to_out(output)
        if self.res_attention:
            return output, attn_weights, attn_scores
        return output, attn_weights


class TSTEncoderLayer(nn.Module):
    def __init__(self, d_model, n_heads, d_ff=64, res_attention=True):
        super().__init__()
        self.res_attention = res_attention
        self.self_attn = _MultiheadAttention(d_model, n_heads, res_attention=res_attention)
        self.norm_attn = nn.Sequential(Transpose(1, 2), nn.BatchNorm1d(d_model), Transpose(1, 2))
        self.ff = nn.Sequential(nn.Linear(d_model, d_ff), nn.GELU(), nn.Dropout(0.0), nn.Linear(d_ff, d_model))
        self.norm_ffn = nn.Sequential(Transpose(1, 2), nn.BatchNorm1d(d_model), Transpose(1, 2))

    def forward(self, src: Tensor, prev=None):
        if self.res_attention:
            src2, attn, scores = self.self_attn(src, prev)
        else:
            src2, attn = self.self_attn(src)
        src = self.norm_attn(src + src2)
        src = self.norm_ffn(src + self.ff(src))
        if self.res_attention:
            return src, scores
        return src


class PatchTST(nn.Module):
    def __init__(self, c_in=3, context_window=32, target_window=8, patch_len=8, stride=4, d_model=32,
                 n_heads=4, n_layers=2, revin=True, padding_patch="end"):
        super().__init__()
        self.revin = revin
        if self.revin:
            self.revin_layer = RevIN(c_in, affine=True, subtract_last=False)
        self.patch_len, self.stride, self.padding_patch = patch_len, stride, padding_patch
        patch_num = int((context_window - patch_len) / stride + 1)
        if padding_patch == "end":
            self.padding_patch_layer = nn.ReplicationPad1d((0, stride))
            patch_num += 1
        self.W_P = nn.Linear(patch_len, d_model)
        self.W_pos = nn.Parameter(torch.empty((patch_num, d_model)).uniform_(-0.02, 0.02))
        self.layers = nn.ModuleList([TSTEncoderLayer(d_model, n_heads) for _ in range(n_layers)])
        self.head_nf = d_model * patch_num
        self.head = nn.Sequential(nn.Flatten(start_dim=-2), nn.Linear(self.head_nf, target_window))

    def forward(self, x):  # x: [Batch, Input length, Channel]
        if self.revin:
            x = self.revin_layer(x, "norm")
        z = x.permute(0, 2, 1)  # [bs x nvars x seq_len]
        if self.padding_patch == "end":
            z = self.padding_patch_layer(z)
        z = z.unfold(dimension=-1, size=self.patch_len, step=self.stride)  # [bs x nvars x patch_num x patch_len]
        n_vars = z.shape[1]
        u = self.W_P(z)
        u = torch.reshape(u, (u.shape[0] * u.shape[1], u.shape[2], u.shape[3]))
        u = u + self.W_pos
        scores = None
        for mod in self.layers:
            u, scores = mod(u, prev=scores)
        z = torch.reshape(u, (-1, n_vars, u.shape[-2], u.shape[-1])).permute(0, 1, 3, 2)
        z = self.head(z)  # [bs x nvars x target_window]
        z = z.permute(0, 2, 1)
        if self.revin:
            z = self.revin_layer(z, "denorm")
        return z


torch.manual_seed(0)
model = PatchTST().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    t = torch.arange(32, dtype=torch.float32)
    series = torch.stack([torch.sin(t / 3), torch.cos(t / 5) * 2 + 1, t / 10], dim=-1)
    return series[None].repeat(2, 1, 1) + 0.1 * torch.randn(2, 32, 3, generator=g)
