"""An RWKV-style language model in the style of the single-file RWKV
inference code: token shift by nn.ZeroPad2d, time mixing with learned
mix coefficients, the WKV recurrence written as a Python loop over time in
its numerically stable form (running max), and channel mixing with a
squared ReLU."""
import torch
import torch.nn as nn


class TimeMix(nn.Module):
    def __init__(self, n_embd, layer_id, n_layer):
        super().__init__()
        ratio = 1.0 - layer_id / n_layer
        ddd = torch.arange(n_embd, dtype=torch.float32).view(1, 1, n_embd) / n_embd
        self.time_decay = nn.Parameter(-5 + 8 * (torch.arange(n_embd) / (n_embd - 1)) ** 0.7)
        self.time_first = nn.Parameter(torch.ones(n_embd) * 0.5)
        self.time_mix_k = nn.Parameter(torch.pow(ddd, ratio))
        self.time_mix_v = nn.Parameter(torch.pow(ddd, ratio) + 0.3)
        self.time_mix_r = nn.Parameter(torch.pow(ddd, 0.5 * ratio))
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.key = nn.Linear(n_embd, n_embd, bias=False)
        self.value = nn.Linear(n_embd, n_embd, bias=False)
        self.receptance = nn.Linear(n_embd, n_embd, bias=False)
        self.output = nn.Linear(n_embd, n_embd, bias=False)

    def wkv(self, w, u, k, v):
        B, T, C = k.size()
        aa = torch.zeros(B, C)
        bb = torch.zeros(B, C)
        pp = torch.full((B, C), -1e38)
        out = []
        for t in range(T):
            kk, vv = k[:, t], v[:, t]
            ww = u + kk
            p = torch.maximum(pp, ww)
            e1 = torch.exp(pp - p)
            e2 = torch.exp(ww - p)
            out.append((e1 * aa + e2 * vv) / (e1 * bb + e2))
            ww = pp - torch.exp(w)
            p = torch.maximum(ww, kk)
            e1 = torch.exp(ww - p)
            e2 = torch.exp(kk - p)
            aa = e1 * aa + e2 * vv
            bb = e1 * bb + e2
            pp = p
        return torch.stack(out, dim=1)

    def forward(self, x):
        xx = self.time_shift(x)
        xk = x * self.time_mix_k + xx * (1 - self.time_mix_k)
        xv = x * self.time_mix_v + xx * (1 - self.time_mix_v)
        xr = x * self.time_mix_r + xx * (1 - self.time_mix_r)
        k = self.key(xk)
        v = self.value(xv)
        sr = torch.sigmoid(self.receptance(xr))
        rwkv = sr * self.wkv(self.time_decay, self.time_first, k, v)
        return self.output(rwkv)


class ChannelMix(nn.Module):
    def __init__(self, n_embd, layer_id, n_layer):
        super().__init__()
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        ratio = 1.0 - layer_id / n_layer
        x = torch.arange(n_embd, dtype=torch.float32).view(1, 1, n_embd) / n_embd
        self.time_mix_k = nn.Parameter(torch.pow(x, ratio))
        self.time_mix_r = nn.Parameter(torch.pow(x, ratio))
        self.key = nn.Linear(n_embd, 4 * n_embd, bias=False)
        self.receptance = nn.Linear(n_embd, n_embd, bias=False)
        self.value = nn.Linear(4 * n_embd, n_embd, bias=False)

    def forward(self, x):
        xx = self.time_shift(x)
        xk = x * self.time_mix_k + xx * (1 - self.time_mix_k)
        xr = x * self.time_mix_r + xx * (1 - self.time_mix_r)
        k = torch.square(torch.relu(self.key(xk)))
        kv = self.value(k)
        return torch.sigmoid(self.receptance(xr)) * kv


class Block(nn.Module):
    def __init__(self, n_embd, layer_id, n_layer):
        super().__init__()
        self.layer_id = layer_id
        self.ln1 = nn.LayerNorm(n_embd)
        self.ln2 = nn.LayerNorm(n_embd)
        if self.layer_id == 0:
            self.ln0 = nn.LayerNorm(n_embd)
        self.att = TimeMix(n_embd, layer_id, n_layer)
        self.ffn = ChannelMix(n_embd, layer_id, n_layer)

    def forward(self, x):
        if self.layer_id == 0:
            x = self.ln0(x)
        x = x + self.att(self.ln1(x))
        x = x + self.ffn(self.ln2(x))
        return x


class RWKV(nn.Module):
    def __init__(self, vocab_size=64, n_embd=32, n_layer=2):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, n_embd)
        self.blocks = nn.Sequential(*[Block(n_embd, i, n_layer) for i in range(n_layer)])
        self.ln_out = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx):
        x = self.emb(idx)
        x = self.blocks(x)
        return self.head(self.ln_out(x))


torch.manual_seed(0)
model = RWKV().eval()


def example_inputs():
    return torch.randint(0, 64, (2, 8), generator=torch.Generator().manual_seed(1))
