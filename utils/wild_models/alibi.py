"""ALiBi attention as BLOOM's and MPT's reference code builds it: slopes
from the closest power of two (math.log2, with the extra interleaved slopes
for a head count that is not a power of two), the bias from the cumulative
sum of the attention mask (positions of left padding not counted), added to
baddbmm's scores with beta=1.0 and alpha=1/sqrt(d), the padding and causal
masks combined with | and applied by masked_fill with the dtype's minimum,
softmax in float32 then cast back, and fused qkv split by view."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def build_alibi_tensor(attention_mask, num_heads, dtype):
    batch_size, seq_length = attention_mask.shape
    closest_power_of_2 = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest_power_of_2) - 3))),
                        device=attention_mask.device, dtype=torch.float32)
    powers = torch.arange(1, 1 + closest_power_of_2, device=attention_mask.device, dtype=torch.int32)
    slopes = torch.pow(base, powers)
    if closest_power_of_2 != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest_power_of_2) - 3))),
                                  device=attention_mask.device, dtype=torch.float32)
        num_remaining_heads = min(closest_power_of_2, num_heads - closest_power_of_2)
        extra_powers = torch.arange(1, 1 + 2 * num_remaining_heads, 2,
                                    device=attention_mask.device, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, extra_powers)], dim=0)
    arange_tensor = ((attention_mask.cumsum(dim=-1) - 1) * attention_mask)[:, None, :]
    alibi = slopes[..., None] * arange_tensor
    return alibi.reshape(batch_size * num_heads, 1, seq_length).to(dtype)


class BloomAttention(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.hidden_size, self.num_heads = hidden_size, num_heads
        self.head_dim = hidden_size // num_heads
        self.inv_norm_factor = 1.0 / math.sqrt(self.head_dim)
        self.beta = 1.0
        self.query_key_value = nn.Linear(hidden_size, 3 * hidden_size, bias=True)
        self.dense = nn.Linear(hidden_size, hidden_size)

    def _split_heads(self, fused_qkv):
        batch_size, seq_length, three_times_hidden_size = fused_qkv.shape
        fused_qkv = fused_qkv.view(batch_size, seq_length, self.num_heads, 3, self.head_dim)
        return fused_qkv[..., 0, :], fused_qkv[..., 1, :], fused_qkv[..., 2, :]

    def forward(self, hidden_states, residual, alibi, attention_mask):
        fused_qkv = self.query_key_value(hidden_states)
        query_layer, key_layer, value_layer = self._split_heads(fused_qkv)
        batch_size, q_length, _, _ = query_layer.shape
        query_layer = query_layer.transpose(1, 2).reshape(batch_size * self.num_heads, q_length, self.head_dim)
        key_layer = key_layer.permute(0, 2, 3, 1).reshape(batch_size * self.num_heads, self.head_dim, q_length)
        value_layer = value_layer.transpose(1, 2).reshape(batch_size * self.num_heads, q_length, self.head_dim)
        matmul_result = alibi.baddbmm(batch1=query_layer, batch2=key_layer,
                                      beta=self.beta, alpha=self.inv_norm_factor)
        attention_scores = matmul_result.view(batch_size, self.num_heads, q_length, -1)
        input_dtype = attention_scores.dtype
        attn_weights = torch.masked_fill(attention_scores, attention_mask,
                                         torch.finfo(attention_scores.dtype).min)
        attention_probs = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(input_dtype)
        attention_probs_reshaped = attention_probs.view(batch_size * self.num_heads, q_length, -1)
        context_layer = torch.bmm(attention_probs_reshaped, value_layer)
        context_layer = context_layer.view(batch_size, self.num_heads, q_length, self.head_dim)
        context_layer = context_layer.permute(0, 2, 1, 3).reshape(batch_size, q_length, self.hidden_size)
        return self.dense(context_layer) + residual


class BloomBlock(nn.Module):
    def __init__(self, hidden_size, num_heads):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(hidden_size)
        self.self_attention = BloomAttention(hidden_size, num_heads)
        self.post_attention_layernorm = nn.LayerNorm(hidden_size)
        self.dense_h_to_4h = nn.Linear(hidden_size, 4 * hidden_size)
        self.dense_4h_to_h = nn.Linear(4 * hidden_size, hidden_size)

    def forward(self, hidden_states, alibi, attention_mask):
        layernorm_output = self.input_layernorm(hidden_states)
        attention_output = self.self_attention(layernorm_output, hidden_states, alibi, attention_mask)
        layernorm_output = self.post_attention_layernorm(attention_output)
        mlp = self.dense_4h_to_h(F.gelu(self.dense_h_to_4h(layernorm_output), approximate="tanh"))
        return mlp + attention_output


def prepare_causal_attention_mask(attention_mask, seq_length):
    causal = torch.triu(torch.ones(seq_length, seq_length, dtype=torch.bool,
                                   device=attention_mask.device), diagonal=1)
    padding = ~attention_mask.bool()[:, None, None, :]
    return causal[None, None] | padding


class BloomModel(nn.Module):
    def __init__(self, vocab_size=64, hidden_size=24, n_layer=2, n_head=6):
        super().__init__()
        self.num_heads = n_head
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size)
        self.word_embeddings_layernorm = nn.LayerNorm(hidden_size)
        self.h = nn.ModuleList([BloomBlock(hidden_size, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(hidden_size)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)
        self.lm_head.weight = self.word_embeddings.weight

    def forward(self, input_ids, attention_mask):
        hidden_states = self.word_embeddings_layernorm(self.word_embeddings(input_ids))
        batch_size, seq_length = input_ids.shape
        alibi = build_alibi_tensor(attention_mask, self.num_heads, dtype=hidden_states.dtype)
        causal_mask = prepare_causal_attention_mask(attention_mask, seq_length)
        for block in self.h:
            hidden_states = block(hidden_states, alibi, causal_mask)
        return self.lm_head(self.ln_f(hidden_states))


torch.manual_seed(0)
model = BloomModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 64, (2, 7), generator=g)
    mask = torch.ones(2, 7, dtype=torch.long)
    mask[1, :2] = 0  # left padding
    return ids, mask
