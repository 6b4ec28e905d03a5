"""An RWKV-6 ("Finch") block in the style of the RWKV-LM v6 training
code's pure-torch path: data-dependent token shift by `nn.ZeroPad2d`
and the five-way LoRA mix (`time_maa_w1` through tanh, `torch.bmm` with
`time_maa_w2`, `unbind`), a data-dependent decay `exp(-exp(w))` from its
own LoRA, the WKV-6 recurrence over a per-head state matrix written as a
Python loop over time, `GroupNorm` over heads as `ln_x`, a SiLU gate, and
channel mixing with squared ReLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RWKV_Tmix_x060(nn.Module):
    def __init__(self, n_embd, n_layer, layer_id, head_size=8):
        super().__init__()
        self.layer_id = layer_id
        self.head_size = head_size
        self.n_head = n_embd // head_size
        with torch.no_grad():
            ratio_0_to_1 = layer_id / (n_layer - 1)
            ratio_1_to_almost0 = 1.0 - (layer_id / n_layer)
            ddd = torch.ones(1, 1, n_embd)
            for i in range(n_embd):
                ddd[0, 0, i] = i / n_embd
            self.time_maa_x = nn.Parameter(1.0 - torch.pow(ddd, ratio_1_to_almost0))
            self.time_maa_w = nn.Parameter(1.0 - torch.pow(ddd, ratio_1_to_almost0))
            self.time_maa_k = nn.Parameter(1.0 - torch.pow(ddd, ratio_1_to_almost0))
            self.time_maa_v = nn.Parameter(1.0 - (torch.pow(ddd, ratio_1_to_almost0) + 0.3 * ratio_0_to_1))
            self.time_maa_r = nn.Parameter(1.0 - torch.pow(ddd, 0.5 * ratio_1_to_almost0))
            self.time_maa_g = nn.Parameter(1.0 - torch.pow(ddd, 0.5 * ratio_1_to_almost0))
            D_MIX_LORA = 8
            self.time_maa_w1 = nn.Parameter(torch.zeros(n_embd, D_MIX_LORA * 5).uniform_(-1e-2, 1e-2))
            self.time_maa_w2 = nn.Parameter(torch.zeros(5, D_MIX_LORA, n_embd).uniform_(-1e-2, 1e-2))
            decay_speed = torch.ones(n_embd)
            for n in range(n_embd):
                decay_speed[n] = -6 + 5 * (n / (n_embd - 1)) ** (0.7 + 1.3 * ratio_0_to_1)
            self.time_decay = nn.Parameter(decay_speed.reshape(1, 1, n_embd))
            D_DECAY_LORA = 8
            self.time_decay_w1 = nn.Parameter(torch.zeros(n_embd, D_DECAY_LORA).uniform_(-1e-2, 1e-2))
            self.time_decay_w2 = nn.Parameter(torch.zeros(D_DECAY_LORA, n_embd).uniform_(-1e-2, 1e-2))
            tmp = torch.zeros(n_embd)
            for n in range(n_embd):
                zigzag = ((n + 1) % 3 - 1) * 0.1
                tmp[n] = ratio_0_to_1 * (1 - (n / (n_embd - 1))) + zigzag
            self.time_faaaa = nn.Parameter(tmp.reshape(self.n_head, self.head_size))
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        self.receptance = nn.Linear(n_embd, n_embd, bias=False)
        self.key = nn.Linear(n_embd, n_embd, bias=False)
        self.value = nn.Linear(n_embd, n_embd, bias=False)
        self.output = nn.Linear(n_embd, n_embd, bias=False)
        self.gate = nn.Linear(n_embd, n_embd, bias=False)
        self.ln_x = nn.GroupNorm(self.n_head, n_embd, eps=(1e-5) * (8 ** 2))

    def jit_func(self, x):
        B, T, C = x.size()
        xx = self.time_shift(x) - x
        xxx = x + xx * self.time_maa_x
        xxx = torch.tanh(xxx @ self.time_maa_w1).view(B * T, 5, -1).transpose(0, 1)
        xxx = torch.bmm(xxx, self.time_maa_w2).view(5, B, T, -1)
        mw, mk, mv, mr, mg = xxx.unbind(dim=0)
        xw = x + xx * (self.time_maa_w + mw)
        xk = x + xx * (self.time_maa_k + mk)
        xv = x + xx * (self.time_maa_v + mv)
        xr = x + xx * (self.time_maa_r + mr)
        xg = x + xx * (self.time_maa_g + mg)
        r = self.receptance(xr)
        k = self.key(xk)
        v = self.value(xv)
        g = F.silu(self.gate(xg))
        ww = torch.tanh(xw @ self.time_decay_w1) @ self.time_decay_w2
        w = self.time_decay + ww
        return r, k, v, g, w

    def wkv6(self, r, k, v, w, u):
        B, T, C = r.size()
        H, N = self.n_head, self.head_size
        r = r.view(B, T, H, N)
        k = k.view(B, T, H, N)
        v = v.view(B, T, H, N)
        w = torch.exp(-torch.exp(w.float())).view(B, T, H, N)
        state = torch.zeros(B, H, N, N, dtype=torch.float32, device=r.device)
        out = []
        for t in range(T):
            kt = k[:, t].unsqueeze(-1)
            vt = v[:, t].unsqueeze(-2)
            kv = kt @ vt
            rt = r[:, t].unsqueeze(-2)
            out.append((rt @ (u.unsqueeze(-1) * kv + state)).squeeze(-2))
            state = w[:, t].unsqueeze(-1) * state + kv
        return torch.stack(out, dim=1).reshape(B, T, C), state

    def forward(self, x):
        B, T, C = x.size()
        r, k, v, g, w = self.jit_func(x)
        x, _ = self.wkv6(r, k, v, w, u=self.time_faaaa)
        x = self.ln_x(x.view(B * T, C)).view(B, T, C)
        return self.output(x * g)


class RWKV_CMix_x060(nn.Module):
    def __init__(self, n_embd, n_layer, layer_id):
        super().__init__()
        self.time_shift = nn.ZeroPad2d((0, 0, 1, -1))
        with torch.no_grad():
            ratio_1_to_almost0 = 1.0 - (layer_id / n_layer)
            ddd = torch.arange(n_embd, dtype=torch.float32).view(1, 1, n_embd) / n_embd
            self.time_maa_k = nn.Parameter(1.0 - torch.pow(ddd, ratio_1_to_almost0))
            self.time_maa_r = nn.Parameter(1.0 - torch.pow(ddd, ratio_1_to_almost0))
        self.key = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.receptance = nn.Linear(n_embd, n_embd, bias=False)
        self.value = nn.Linear(3 * n_embd, n_embd, bias=False)

    def forward(self, x):
        xx = self.time_shift(x) - x
        xk = x + xx * self.time_maa_k
        xr = x + xx * self.time_maa_r
        k = torch.relu(self.key(xk)) ** 2
        return torch.sigmoid(self.receptance(xr)) * self.value(k)


class Block(nn.Module):
    def __init__(self, n_embd, n_layer, layer_id):
        super().__init__()
        self.layer_id = layer_id
        self.ln1 = nn.LayerNorm(n_embd)
        self.ln2 = nn.LayerNorm(n_embd)
        if self.layer_id == 0:
            self.ln0 = nn.LayerNorm(n_embd)
        self.att = RWKV_Tmix_x060(n_embd, n_layer, layer_id)
        self.ffn = RWKV_CMix_x060(n_embd, n_layer, layer_id)

    def forward(self, x):
        if self.layer_id == 0:
            x = self.ln0(x)
        x = x + self.att(self.ln1(x))
        return x + self.ffn(self.ln2(x))


class RWKV(nn.Module):
    def __init__(self, vocab_size=64, n_embd=32, n_layer=2):
        super().__init__()
        self.emb = nn.Embedding(vocab_size, n_embd)
        self.blocks = nn.ModuleList([Block(n_embd, n_layer, i) for i in range(n_layer)])
        self.ln_out = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)

    def forward(self, idx):
        x = self.emb(idx)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_out(x))


torch.manual_seed(0)
model = RWKV().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 64, (2, 6), generator=g)
