"""An sLSTM layer as the xLSTM reference code (NX-AI/xlstm's vanilla
PyTorch backend) writes it: exponential input and forget gates with a
stabilizer state m (m_new = max(logfsig + m, i)), the log-sigmoid forget
gate, normalizer n and cell c updated in a Python loop over time, block-
diagonal recurrent weights per head applied by einsum, states kept as a
stacked (4, batch, hidden) tensor unbound each step, the hidden output
o * c / n, and a group norm per head with a gated up/down projection
after the recurrence."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def slstm_forward_pointwise(Wx, Ry, b, states):
    raw = Wx + Ry + b
    y, c, n, m = torch.unbind(states.view(4, states.shape[1], -1), dim=0)
    iraw, fraw, zraw, oraw = torch.unbind(raw.view(raw.shape[0], 4, -1), dim=1)
    logfplusm = m + F.logsigmoid(fraw)
    if torch.all(n == 0.0):
        mnew = iraw
    else:
        mnew = torch.max(iraw, logfplusm)
    ogate = torch.sigmoid(oraw)
    igate = torch.exp(iraw - mnew)
    fgate = torch.exp(logfplusm - mnew)
    cnew = fgate * c + igate * torch.tanh(zraw)
    nnew = fgate * n + igate
    ynew = ogate * cnew / nnew
    return torch.stack((ynew, cnew, nnew, mnew), dim=0)


class sLSTMCell(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.hidden_size, self.num_heads = hidden_size, num_heads
        self.head_dim = hidden_size // num_heads
        self._recurrent_kernel_ = nn.Parameter(
            torch.randn(num_heads, self.head_dim, 4, self.head_dim) / math.sqrt(self.head_dim))
        self._bias_ = nn.Parameter(torch.zeros(num_heads, 4, self.head_dim))
        with torch.no_grad():
            self._bias_[:, 1] = torch.linspace(3.0, 6.0, self.head_dim)  # forget gate bias init

    def forward(self, x, state):
        """x: (T, B, 4 * H) pre-activations in gate-major order per head."""
        T, B, _ = x.shape
        states_all = []
        states = state
        R = self._recurrent_kernel_
        b = self._bias_.permute(1, 0, 2).reshape(-1)
        for i in range(T):
            y = states[0].view(B, self.num_heads, self.head_dim)
            Ry = torch.einsum("bhd,hdge->bghe", y, R).reshape(B, -1)
            states = slstm_forward_pointwise(x[i], Ry, b, states)
            states_all.append(states)
        return torch.stack(states_all, dim=1), states


class sLSTMLayer(nn.Module):
    def __init__(self, embedding_dim, num_heads=4, conv1d_kernel_size=4):
        super().__init__()
        self.num_heads = num_heads
        self.conv1d = nn.Conv1d(embedding_dim, embedding_dim, conv1d_kernel_size,
                                padding=conv1d_kernel_size - 1, groups=embedding_dim)
        self.fgate = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.igate = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.zgate = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.ogate = nn.Linear(embedding_dim, embedding_dim, bias=False)
        self.slstm_cell = sLSTMCell(embedding_dim, num_heads)
        self.group_norm = nn.GroupNorm(num_heads, embedding_dim)

    def forward(self, x, state=None):
        B, S, D = x.shape
        x_conv = self.conv1d(x.transpose(1, 2))[..., :S].transpose(1, 2)
        x_conv = F.silu(x_conv)
        i, f = self.igate(x_conv), self.fgate(x_conv)
        z, o = self.zgate(x), self.ogate(x)
        gates = torch.cat([t.view(B, S, self.num_heads, -1) for t in (i, f, z, o)], dim=-1)
        gates = gates.view(B, S, self.num_heads, 4, -1).transpose(2, 3).reshape(B, S, -1)
        if state is None:
            state = torch.zeros(4, B, D, device=x.device, dtype=x.dtype)
        all_states, last_state = self.slstm_cell(gates.transpose(0, 1), state)
        y = all_states[0].transpose(0, 1)
        y = self.group_norm(y.reshape(B * S, D)).view(B, S, D)
        return y, last_state


class sLSTMBlock(nn.Module):
    def __init__(self, embedding_dim, proj_factor=4 / 3):
        super().__init__()
        self.xlstm_norm = nn.LayerNorm(embedding_dim)
        self.xlstm = sLSTMLayer(embedding_dim)
        self.ffn_norm = nn.LayerNorm(embedding_dim)
        up = int(proj_factor * embedding_dim)
        self.proj_up = nn.Linear(embedding_dim, 2 * up)
        self.proj_down = nn.Linear(up, embedding_dim)

    def forward(self, x, state=None):
        h, state = self.xlstm(self.xlstm_norm(x), state)
        x = x + h
        gate_preact, up_proj = self.proj_up(self.ffn_norm(x)).chunk(2, dim=-1)
        return x + self.proj_down(F.gelu(gate_preact) * up_proj), state


class xLSTMStack(nn.Module):
    def __init__(self, vocab=30, embedding_dim=16, num_blocks=2):
        super().__init__()
        self.emb = nn.Embedding(vocab, embedding_dim)
        self.blocks = nn.ModuleList([sLSTMBlock(embedding_dim) for _ in range(num_blocks)])
        self.post_blocks_norm = nn.LayerNorm(embedding_dim)
        self.lm_head = nn.Linear(embedding_dim, vocab, bias=False)

    def forward(self, idx):
        x = self.emb(idx)
        states = []
        for block in self.blocks:
            x, state = block(x)
            states.append(state)
        return self.lm_head(self.post_blocks_norm(x)), torch.stack(states)


torch.manual_seed(0)
model = xLSTMStack().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 30, (2, 6), generator=g)
