"""A Decision Transformer as the reference implementation (on minGPT/
GPT-2) writes it: returns-to-go, states and actions embedded separately
plus a timestep embedding, the three streams interleaved into one
sequence by `torch.stack(..., dim=1).permute(0, 2, 1, 3).reshape(B, 3 *
T, H)`, the attention mask repeated the same way, a causal GPT over the
interleaved tokens with an additive mask `(1.0 - mask) * -10000.0`, the
streams taken back apart by `reshape(B, T, 3, H).permute(0, 2, 1, 3)`,
actions predicted from the state tokens with tanh, and a masked MSE
action loss selected by `reshape(-1, act_dim)[attention_mask.reshape(-1) >
0]`."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, n_positions):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.register_buffer("bias", torch.tril(torch.ones(n_positions, n_positions))
                             .view(1, 1, n_positions, n_positions))
        self.register_buffer("masked_bias", torch.tensor(-1e4))

    def forward(self, x, attention_mask):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        w = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(v.size(-1))
        causal_mask = self.bias[:, :, :T, :T].bool()
        w = torch.where(causal_mask, w, self.masked_bias.to(w.dtype))
        w = w + attention_mask
        w = F.softmax(w, dim=-1)
        y = torch.matmul(w, v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, n_positions):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, n_positions)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(approximate="tanh"),
                                 nn.Linear(4 * n_embd, n_embd))

    def forward(self, x, attention_mask):
        x = x + self.attn(self.ln_1(x), attention_mask)
        return x + self.mlp(self.ln_2(x))


class DecisionTransformer(nn.Module):
    def __init__(self, state_dim=6, act_dim=3, hidden_size=32, max_length=8, max_ep_len=100, n_layer=2,
                 n_head=4, action_tanh=True):
        super().__init__()
        self.state_dim, self.act_dim, self.hidden_size = state_dim, act_dim, hidden_size
        self.max_length = max_length
        self.embed_timestep = nn.Embedding(max_ep_len, hidden_size)
        self.embed_return = nn.Linear(1, hidden_size)
        self.embed_state = nn.Linear(state_dim, hidden_size)
        self.embed_action = nn.Linear(act_dim, hidden_size)
        self.embed_ln = nn.LayerNorm(hidden_size)
        self.blocks = nn.ModuleList([Block(hidden_size, n_head, 3 * max_length) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(hidden_size)
        self.predict_state = nn.Linear(hidden_size, state_dim)
        self.predict_action = nn.Sequential(*([nn.Linear(hidden_size, act_dim)] + ([nn.Tanh()] if action_tanh else [])))
        self.predict_return = nn.Linear(hidden_size, 1)

    def forward(self, states, actions, rewards, returns_to_go, timesteps, attention_mask=None):
        batch_size, seq_length = states.shape[0], states.shape[1]
        if attention_mask is None:
            # attention mask for GPT: 1 if can be attended to, 0 if not
            attention_mask = torch.ones((batch_size, seq_length), dtype=torch.long)
        state_embeddings = self.embed_state(states)
        action_embeddings = self.embed_action(actions)
        returns_embeddings = self.embed_return(returns_to_go)
        time_embeddings = self.embed_timestep(timesteps)
        state_embeddings = state_embeddings + time_embeddings
        action_embeddings = action_embeddings + time_embeddings
        returns_embeddings = returns_embeddings + time_embeddings

        # this makes the sequence look like (R_1, s_1, a_1, R_2, s_2, a_2, ...)
        stacked_inputs = torch.stack((returns_embeddings, state_embeddings, action_embeddings), dim=1) \
            .permute(0, 2, 1, 3).reshape(batch_size, 3 * seq_length, self.hidden_size)
        stacked_inputs = self.embed_ln(stacked_inputs)
        stacked_attention_mask = torch.stack((attention_mask, attention_mask, attention_mask), dim=1) \
            .permute(0, 2, 1).reshape(batch_size, 3 * seq_length)
        extended = stacked_attention_mask[:, None, None, :].to(dtype=stacked_inputs.dtype)
        extended = (1.0 - extended) * -10000.0

        x = stacked_inputs
        for block in self.blocks:
            x = block(x, extended)
        x = self.ln_f(x)
        # reshape x so that the second dimension corresponds to the original
        # returns (0), states (1), or actions (2); i.e. x[:,1,t] is the token for s_t
        x = x.reshape(batch_size, seq_length, 3, self.hidden_size).permute(0, 2, 1, 3)
        return_preds = self.predict_return(x[:, 2])
        state_preds = self.predict_state(x[:, 2])
        action_preds = self.predict_action(x[:, 1])

        act_dim = action_preds.shape[2]
        action_preds_m = action_preds.reshape(-1, act_dim)[attention_mask.reshape(-1) > 0]
        action_target = actions.reshape(-1, act_dim)[attention_mask.reshape(-1) > 0]
        loss = torch.mean((action_preds_m - action_target) ** 2)
        return state_preds, action_preds, return_preds, loss


torch.manual_seed(0)
model = DecisionTransformer().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    B, T = 2, 5
    attention_mask = torch.ones(B, T, dtype=torch.long)
    attention_mask[1, :2] = 0  # left padding, as the evaluation loop pads
    return (torch.randn(B, T, 6, generator=g), torch.rand(B, T, 3, generator=g) * 2 - 1,
            torch.randn(B, T, 1, generator=g), torch.randn(B, T, 1, generator=g),
            torch.arange(T)[None].repeat(B, 1) + torch.tensor([[0], [7]]), attention_mask)
