"""A GPT-J block as the Mesh-Transformer-JAX port writes it: one LayerNorm
feeding both attention and MLP in parallel (`attn + mlp + residual`),
rotary embedding on the first `rotary_dim` of each head only, the sin/cos
table from `create_sinusoidal_positions` indexed by `position_ids`, the
interleaved `rotate_every_two` (`torch.stack((-x2, x1), dim=-1).flatten(-2)`)
with `repeat_interleave`d sin/cos, `torch.cat` of the rotated and pass-through
parts, attention in float32 with `torch.where(causal_mask, w, mask_value)`
from a bool buffer, `gelu_new` in the MLP, and a tied-free LM head with a loss
shifted by one."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def create_sinusoidal_positions(num_pos, dim):
    inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.int64) / dim))
    sinusoid_inp = torch.einsum("i , j -> i j", torch.arange(num_pos, dtype=torch.int64).float(), inv_freq).float()
    return torch.cat((torch.sin(sinusoid_inp), torch.cos(sinusoid_inp)), dim=1)


def rotate_every_two(x):
    x1 = x[:, :, :, ::2]
    x2 = x[:, :, :, 1::2]
    x = torch.stack((-x2, x1), dim=-1)
    return x.flatten(-2)


def apply_rotary_pos_emb(tensor, sin, cos):
    sin = torch.repeat_interleave(sin[:, :, None, :], 2, 3)
    cos = torch.repeat_interleave(cos[:, :, None, :], 2, 3)
    return (tensor * cos) + (rotate_every_two(tensor) * sin)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class GPTJAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, rotary_dim, max_positions=32):
        super().__init__()
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
                1, 1, max_positions, max_positions),
            persistent=False,
        )
        self.embed_dim = embed_dim
        self.num_attention_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.scale_attn = torch.sqrt(torch.tensor(self.head_dim, dtype=torch.float32)).to(torch.get_default_dtype())
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=False)
        self.rotary_dim = rotary_dim
        self.embed_positions = create_sinusoidal_positions(max_positions, rotary_dim)

    def _split_heads(self, tensor, rotary):
        new_shape = tensor.size()[:-1] + (self.num_attention_heads, self.head_dim)
        tensor = tensor.view(new_shape)
        if rotary:
            return tensor
        return tensor.permute(0, 2, 1, 3)

    def _merge_heads(self, tensor):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (self.num_attention_heads * self.head_dim,)
        return tensor.view(new_shape)

    def _attn(self, query, key, value, attention_mask=None):
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        query = query.to(torch.float32)
        key = key.to(torch.float32)
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.tensor(mask_value, dtype=attn_weights.dtype).to(attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights, mask_value)
        attn_weights = attn_weights / self.scale_attn
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.to(value.dtype)
        return torch.matmul(attn_weights, value)

    def forward(self, hidden_states, position_ids, attention_mask=None):
        query = self._split_heads(self.q_proj(hidden_states), True)
        key = self._split_heads(self.k_proj(hidden_states), True)
        value = self._split_heads(self.v_proj(hidden_states), False)
        embed_positions = self.embed_positions
        if embed_positions.device != position_ids.device:
            embed_positions = embed_positions.to(position_ids.device)
        repeated_position_ids = position_ids.unsqueeze(-1).repeat(1, 1, embed_positions.shape[-1])
        sincos = torch.gather(embed_positions.unsqueeze(0).expand(position_ids.shape[0], -1, -1), 1,
                              repeated_position_ids)
        sin, cos = torch.split(sincos, sincos.shape[-1] // 2, dim=-1)
        k_rot = key[:, :, :, : self.rotary_dim]
        k_pass = key[:, :, :, self.rotary_dim:]
        q_rot = query[:, :, :, : self.rotary_dim]
        q_pass = query[:, :, :, self.rotary_dim:]
        k_rot = apply_rotary_pos_emb(k_rot, sin, cos)
        q_rot = apply_rotary_pos_emb(q_rot, sin, cos)
        key = torch.cat([k_rot, k_pass], dim=-1)
        query = torch.cat([q_rot, q_pass], dim=-1)
        key = key.permute(0, 2, 1, 3)
        query = query.permute(0, 2, 1, 3)
        attn_output = self._attn(query, key, value, attention_mask)
        return self.out_proj(self._merge_heads(attn_output))


class GPTJBlock(nn.Module):
    def __init__(self, embed_dim, num_heads, rotary_dim):
        super().__init__()
        self.ln_1 = nn.LayerNorm(embed_dim, eps=1e-5)
        self.attn = GPTJAttention(embed_dim, num_heads, rotary_dim)
        self.fc_in = nn.Linear(embed_dim, 4 * embed_dim)
        self.fc_out = nn.Linear(4 * embed_dim, embed_dim)

    def forward(self, hidden_states, position_ids, attention_mask=None):
        residual = hidden_states
        hidden_states = self.ln_1(hidden_states)
        attn_output = self.attn(hidden_states, position_ids, attention_mask)
        feed_forward_hidden_states = self.fc_out(gelu_new(self.fc_in(hidden_states)))
        return attn_output + feed_forward_hidden_states + residual


class GPTJForCausalLM(nn.Module):
    def __init__(self, vocab=64, embed_dim=32, num_heads=4, rotary_dim=4, n_layer=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, embed_dim)
        self.h = nn.ModuleList([GPTJBlock(embed_dim, num_heads, rotary_dim) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(embed_dim)
        self.lm_head = nn.Linear(embed_dim, vocab)

    def forward(self, input_ids, attention_mask):
        b, t = input_ids.shape
        position_ids = torch.arange(0, t, dtype=torch.long, device=input_ids.device).unsqueeze(0).expand(b, t)
        ext = attention_mask[:, None, None, :].to(dtype=torch.float32)
        ext = (1.0 - ext) * torch.finfo(torch.float32).min
        hidden = self.wte(input_ids)
        for block in self.h:
            hidden = block(hidden, position_ids, ext)
        logits = self.lm_head(self.ln_f(hidden)).to(torch.float32)
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = input_ids[..., 1:].contiguous()
        loss = F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
        return logits, loss


torch.manual_seed(0)
model = GPTJForCausalLM().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 64, (2, 7), generator=g)
    mask = torch.ones(2, 7, dtype=torch.long)
    mask[1, :2] = 0
    return ids, mask
