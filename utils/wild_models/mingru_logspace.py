"""minGRU ("Were RNNs All We Needed?") in the manner of lucidrains'
minGRU-pytorch: the gate and candidate from one `nn.Linear` chunked in
two, the recurrence h_t = (1 - z_t) h_{t-1} + z_t h~_t solved in parallel
in log space by the Heinsen scan (`a_star = F.pad(torch.cumsum(log_coeffs,
dim=1), (0, 0, 1, 0))`, `torch.logcumsumexp(log_values - a_star, dim=1)`,
then `.exp()` and the leading step dropped), the `g` activation written
with `torch.where(x >= 0, x + 0.5, x.sigmoid())` and its log as
`torch.where(x >= 0, (F.relu(x) + 0.5).log(), -F.softplus(-x))`, an
optional previous hidden state concatenated in front, and
`return_next_prev_hidden` returning the last step; blocks with RMSNorm
(`F.normalize(x, dim=-1) * scale * gamma`) and a causal depthwise conv."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn import Linear, Module


def exists(v):
    return v is not None


def default(v, d):
    return v if exists(v) else d


def heinsen_associative_scan_log(log_coeffs, log_values):
    a_star = log_coeffs.cumsum(dim=1)
    log_h0_plus_b_star = (log_values - a_star).logcumsumexp(dim=1)
    log_h = a_star + log_h0_plus_b_star
    return log_h.exp()


def g(x):
    return torch.where(x >= 0, x + 0.5, x.sigmoid())


def log_g(x):
    return torch.where(x >= 0, (F.relu(x) + 0.5).log(), -F.softplus(-x))


class minGRU(Module):
    def __init__(self, dim, expansion_factor=1.0, proj_out=None):
        super().__init__()
        dim_inner = int(dim * expansion_factor)
        proj_out = default(proj_out, expansion_factor != 1.0)
        self.to_hidden_and_gate = Linear(dim, dim_inner * 2, bias=False)
        self.to_out = Linear(dim_inner, dim, bias=False) if proj_out else nn.Identity()

    def forward(self, x, prev_hidden=None, return_next_prev_hidden=False):
        seq_len = x.shape[1]
        hidden, gate = self.to_hidden_and_gate(x).chunk(2, dim=-1)
        if seq_len == 1:
            hidden = g(hidden)
            gate = gate.sigmoid()
            out = torch.lerp(prev_hidden, hidden, gate) if exists(prev_hidden) else (hidden * gate)
        else:
            log_coeffs = -F.softplus(gate)
            log_z = -F.softplus(-gate)
            log_tilde_h = log_g(hidden)
            log_values = log_z + log_tilde_h
            if exists(prev_hidden):
                log_values = torch.cat((prev_hidden.log(), log_values), dim=1)
                log_coeffs = F.pad(log_coeffs, (0, 0, 1, 0))
            out = heinsen_associative_scan_log(log_coeffs, log_values)
            out = out[:, -seq_len:]
        next_prev_hidden = out[:, -1:]
        out = self.to_out(out)
        if not return_next_prev_hidden:
            return out
        return out, next_prev_hidden


class RMSNorm(Module):
    def __init__(self, dim):
        super().__init__()
        self.scale = dim ** 0.5
        self.gamma = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        return F.normalize(x, dim=-1) * self.scale * (self.gamma + 1)


class CausalDepthWiseConv1d(Module):
    def __init__(self, dim, kernel_size):
        super().__init__()
        self.kernel_size = kernel_size
        self.net = nn.Sequential(
            nn.Conv1d(dim, dim, kernel_size=kernel_size, groups=dim),
            nn.Conv1d(dim, dim, kernel_size=1),
        )

    def forward(self, x):
        x = x.transpose(1, 2)
        x = F.pad(x, (self.kernel_size - 1, 0), value=0.0)
        x = self.net(x)
        return x.transpose(1, 2)


class minGRULM(Module):
    def __init__(self, num_tokens=64, dim=32, depth=2, ff_mult=4, min_gru_expansion=1.5,
                 conv_kernel_size=3):
        super().__init__()
        self.token_emb = nn.Embedding(num_tokens, dim)
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([
                CausalDepthWiseConv1d(dim, conv_kernel_size),
                RMSNorm(dim),
                minGRU(dim, expansion_factor=min_gru_expansion),
                RMSNorm(dim),
                nn.Sequential(nn.Linear(dim, dim * ff_mult), nn.GELU(), nn.Linear(dim * ff_mult, dim)),
            ]))
        self.norm = RMSNorm(dim)
        self.to_logits = nn.Linear(dim, num_tokens, bias=False)

    def forward(self, x, return_loss=False, prev_hiddens=None):
        if return_loss:
            x, labels = x[:, :-1], x[:, 1:]
        x = self.token_emb(x)
        if exists(prev_hiddens):
            x = x[:, -1:]
        next_prev_hiddens = []
        prev_hiddens = iter(default(prev_hiddens, []))
        for conv, norm, mingru, ff_norm, ff in self.layers:
            x = conv(x) + x
            prev_hidden = next(prev_hiddens, None)
            min_gru_out, next_prev_hidden = mingru(norm(x), prev_hidden, return_next_prev_hidden=True)
            x = min_gru_out + x
            next_prev_hiddens.append(next_prev_hidden)
            x = ff(ff_norm(x)) + x
        embed = self.norm(x)
        logits = self.to_logits(embed)
        if not return_loss:
            return logits, next_prev_hiddens
        loss = F.cross_entropy(logits.transpose(1, 2), labels)
        return loss


torch.manual_seed(0)
model = minGRULM().eval()
check_gradients = True


def example_inputs():
    g_ = torch.Generator().manual_seed(1)
    return (torch.randint(0, 64, (2, 12), generator=g_),)


def example_kwargs():
    return {"return_loss": True}
