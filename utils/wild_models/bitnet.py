"""A BitNet b1.58 decoder as the BitNet training ports write it: BitLinear
layers that RMS-normalize their input, quantize activations per token to
8 bits by absmax (`127.0 / x.abs().max(dim=-1, keepdim=True).values
.clamp_(min=1e-5)`, `round().clamp_(-128, 127)`) and weights to ternary
by their mean absolute value, both through the straight-through estimator
`x + (quant(x) - x).detach()`, then `F.linear`; a LLaMA-like block with
SwiGLU and causal SDPA, and a cross-entropy loss in forward."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def activation_quant(x):
    scale = 127.0 / x.abs().max(dim=-1, keepdim=True).values.clamp_(min=1e-5)
    y = (x * scale).round().clamp_(-128, 127) / scale
    return y


def weight_quant(w):
    scale = 1.0 / w.abs().mean().clamp_(min=1e-5)
    u = (w * scale).round().clamp_(-1, 1) / scale
    return u


class SimpleRMSNorm(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = dim ** -0.5

    def forward(self, x):
        return F.normalize(x, dim=-1) * self.scale ** -1


class BitLinear(nn.Linear):
    def forward(self, x):
        w = self.weight
        x_norm = SimpleRMSNorm(self.in_features)(x)
        x_quant = x_norm + (activation_quant(x_norm) - x_norm).detach()
        w_quant = w + (weight_quant(w) - w).detach()
        return F.linear(x_quant, w_quant, self.bias)


class BitAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q_proj = BitLinear(dim, dim, bias=False)
        self.k_proj = BitLinear(dim, dim, bias=False)
        self.v_proj = BitLinear(dim, dim, bias=False)
        self.o_proj = BitLinear(dim, dim, bias=False)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = (p(x).view(b, n, self.heads, -1).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(y.transpose(1, 2).reshape(b, n, d))


class BitFeedForward(nn.Module):
    def __init__(self, dim, mult=2):
        super().__init__()
        self.gate = BitLinear(dim, dim * mult, bias=False)
        self.up = BitLinear(dim, dim * mult, bias=False)
        self.down = BitLinear(dim * mult, dim, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class BitNetTransformer(nn.Module):
    def __init__(self, num_tokens=64, dim=32, depth=2, heads=4):
        super().__init__()
        self.emb = nn.Embedding(num_tokens, dim)
        self.layers = nn.ModuleList([nn.ModuleList([nn.RMSNorm(dim), BitAttention(dim, heads),
                                                    nn.RMSNorm(dim), BitFeedForward(dim)])
                                     for _ in range(depth)])
        self.norm = nn.RMSNorm(dim)
        self.to_logits = nn.Linear(dim, num_tokens)

    def forward(self, x, labels=None):
        x = self.emb(x)
        for n1, attn, n2, ff in self.layers:
            x = x + attn(n1(x))
            x = x + ff(n2(x))
        logits = self.to_logits(self.norm(x))
        if labels is None:
            return logits
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))
        return logits, loss


torch.manual_seed(0)
model = BitNetTransformer().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 64, (2, 8), generator=g), torch.randint(0, 64, (2, 8), generator=g)
