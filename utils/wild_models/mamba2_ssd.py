"""A Mamba-2 block with the state-space-duality scan in pure torch, as the
"ssd_minimal" reference and the minimal Mamba-2 ports write it: one input
projection split by `torch.split` into z, xBC and dt, a causal depthwise
Conv1d trimmed to the sequence, `F.softplus` of dt plus a bias, the
sequence cut into chunks with einops.rearrange, `segsum` built from
`cumsum` and a `torch.tril` mask filled with `-inf`, the four einsum
steps (diagonal blocks, chunk states, inter-chunk recurrence over a padded
decay, state-to-output), a D skip, and a gated RMSNorm."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from einops import rearrange, repeat


def segsum(x):
    T = x.size(-1)
    x = repeat(x, "... d -> ... d e", e=T)
    mask = torch.tril(torch.ones(T, T, device=x.device, dtype=torch.bool), diagonal=-1)
    x = x.masked_fill(~mask, 0)
    x_segsum = torch.cumsum(x, dim=-2)
    mask = torch.tril(torch.ones(T, T, device=x.device, dtype=torch.bool), diagonal=0)
    x_segsum = x_segsum.masked_fill(~mask, -torch.inf)
    return x_segsum


def ssd(x, A, B, C, chunk_size, initial_states=None):
    assert x.shape[1] % chunk_size == 0
    x, A, B, C = [rearrange(m, "b (c l) ... -> b c l ...", l=chunk_size) for m in (x, A, B, C)]
    A = rearrange(A, "b c l h -> b h c l")
    A_cumsum = torch.cumsum(A, dim=-1)
    L = torch.exp(segsum(A))
    Y_diag = torch.einsum("bclhn, bcshn, bhcls, bcshp -> bclhp", C, B, L, x)
    decay_states = torch.exp(A_cumsum[:, :, :, -1:] - A_cumsum)
    states = torch.einsum("bclhn, bhcl, bclhp -> bchpn", B, decay_states, x)
    if initial_states is None:
        initial_states = torch.zeros_like(states[:, :1])
    states = torch.cat([initial_states, states], dim=1)
    decay_chunk = torch.exp(segsum(F.pad(A_cumsum[:, :, :, -1], (1, 0))))
    new_states = torch.einsum("bhzc, bchpn -> bzhpn", decay_chunk, states)
    states, final_state = new_states[:, :-1], new_states[:, -1]
    state_decay_out = torch.exp(A_cumsum)
    Y_off = torch.einsum("bclhn, bchpn, bhcl -> bclhp", C, states, state_decay_out)
    Y = rearrange(Y_diag + Y_off, "b c l h p -> b (c l) h p")
    return Y, final_state


class RMSNormGated(nn.Module):
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x, z=None):
        if z is not None:
            x = x * F.silu(z)
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Mamba2(nn.Module):
    def __init__(self, d_model=32, d_state=8, d_conv=4, expand=2, headdim=8, chunk_size=4):
        super().__init__()
        self.d_model, self.d_state, self.d_conv = d_model, d_state, d_conv
        self.d_inner = expand * d_model
        self.headdim, self.chunk_size = headdim, chunk_size
        self.nheads = self.d_inner // headdim
        d_in_proj = 2 * self.d_inner + 2 * d_state + self.nheads
        self.in_proj = nn.Linear(d_model, d_in_proj, bias=False)
        conv_dim = self.d_inner + 2 * d_state
        self.conv1d = nn.Conv1d(conv_dim, conv_dim, kernel_size=d_conv, groups=conv_dim, padding=d_conv - 1)
        self.dt_bias = nn.Parameter(torch.rand(self.nheads) * 0.1)
        self.A_log = nn.Parameter(torch.log(torch.arange(1, self.nheads + 1, dtype=torch.float32)))
        self.D = nn.Parameter(torch.ones(self.nheads))
        self.norm = RMSNormGated(self.d_inner)
        self.out_proj = nn.Linear(self.d_inner, d_model, bias=False)

    def forward(self, u):
        batch, seqlen, _ = u.shape
        A = -torch.exp(self.A_log)
        zxbcdt = self.in_proj(u)
        z, xBC, dt = torch.split(zxbcdt, [self.d_inner, self.d_inner + 2 * self.d_state, self.nheads], dim=-1)
        dt = F.softplus(dt + self.dt_bias)
        xBC = F.silu(self.conv1d(xBC.transpose(1, 2)).transpose(1, 2)[:, :seqlen, :])
        x, B, C = torch.split(xBC, [self.d_inner, self.d_state, self.d_state], dim=-1)
        x = rearrange(x, "b l (h p) -> b l h p", p=self.headdim)
        B = repeat(B, "b l n -> b l h n", h=self.nheads)
        C = repeat(C, "b l n -> b l h n", h=self.nheads)
        y, ssm_state = ssd(x * dt.unsqueeze(-1), A * dt, B, C, self.chunk_size)
        y = y + x * self.D.unsqueeze(-1)
        y = rearrange(y, "b l h p -> b l (h p)")
        y = self.norm(y, z)
        return self.out_proj(y), ssm_state


class Mamba2LM(nn.Module):
    def __init__(self, vocab=64, d_model=32, n_layer=2):
        super().__init__()
        self.embedding = nn.Embedding(vocab, d_model)
        self.layers = nn.ModuleList([nn.ModuleDict(dict(mixer=Mamba2(d_model), norm=RMSNormGated(d_model)))
                                     for _ in range(n_layer)])
        self.norm_f = RMSNormGated(d_model)
        self.lm_head = nn.Linear(d_model, vocab, bias=False)
        self.lm_head.weight = self.embedding.weight

    def forward(self, input_ids):
        x = self.embedding(input_ids)
        states = []
        for layer in self.layers:
            y, s = layer.mixer(layer.norm(x))
            x = x + y
            states.append(s)
        return self.lm_head(self.norm_f(x)), states


torch.manual_seed(0)
model = Mamba2LM().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 64, (2, 12), generator=g)
