"""Longformer's sliding-window attention as its Hugging Face implementation
computes it: queries and keys cut into overlapping chunks of twice the
window by as_strided over the chunked tensor's storage-free view, scores by
einsum per chunk, the diagonals pulled out by _pad_and_transpose_last_two_dims
(F.pad then view to skew), the window's start and end triangles masked with
flip of a triu of ones, the padding mask turned into a float window bias
through the same chunked matmul, and values gathered back with the skewed
chunks (_pad_and_diagonalize). Padded to a multiple of the window in
forward."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _pad_and_transpose_last_two_dims(hidden_states_padded, padding):
    hidden_states_padded = F.pad(hidden_states_padded, padding)
    return hidden_states_padded.view(*hidden_states_padded.size()[:-2],
                                     hidden_states_padded.size(-1), hidden_states_padded.size(-2))


def _pad_and_diagonalize(chunked_hidden_states):
    total_num_heads, num_chunks, window_overlap, hidden_dim = chunked_hidden_states.size()
    chunked_hidden_states = F.pad(chunked_hidden_states, (0, window_overlap + 1))
    chunked_hidden_states = chunked_hidden_states.view(total_num_heads, num_chunks, -1)
    chunked_hidden_states = chunked_hidden_states[:, :, :-window_overlap]
    chunked_hidden_states = chunked_hidden_states.view(total_num_heads, num_chunks, window_overlap,
                                                       window_overlap + hidden_dim)
    return chunked_hidden_states[:, :, :, :-1]


def _chunk(hidden_states, window_overlap):
    hidden_states = hidden_states.view(hidden_states.size(0), torch.div(
        hidden_states.size(1), (window_overlap * 2), rounding_mode="trunc"),
        window_overlap * 2, hidden_states.size(2))
    chunk_size = list(hidden_states.size())
    chunk_size[1] = chunk_size[1] * 2 - 1
    chunk_stride = list(hidden_states.stride())
    chunk_stride[1] = chunk_stride[1] // 2
    return hidden_states.as_strided(size=chunk_size, stride=chunk_stride)


def _mask_invalid_locations(input_tensor, affected_seq_len):
    beginning_mask_2d = input_tensor.new_ones(affected_seq_len, affected_seq_len + 1).tril().flip(dims=[0])
    beginning_mask = beginning_mask_2d[None, :, None, :]
    ending_mask = beginning_mask.flip(dims=(1, 3))
    beginning_input = input_tensor[:, :affected_seq_len, :, : affected_seq_len + 1]
    beginning_mask = beginning_mask.expand(beginning_input.size())
    input_tensor[:, :affected_seq_len, :, : affected_seq_len + 1] = torch.full_like(
        beginning_input, -float("inf")).where(beginning_mask.bool(), beginning_input)
    ending_input = input_tensor[:, -affected_seq_len:, :, -(affected_seq_len + 1):]
    ending_mask = ending_mask.expand(ending_input.size())
    input_tensor[:, -affected_seq_len:, :, -(affected_seq_len + 1):] = torch.full_like(
        ending_input, -float("inf")).where(ending_mask.bool(), ending_input)


def sliding_chunks_query_key_matmul(query, key, window_overlap):
    batch_size, seq_len, num_heads, head_dim = query.size()
    chunks_count = torch.div(seq_len, window_overlap, rounding_mode="trunc") - 1
    query = query.transpose(1, 2).reshape(batch_size * num_heads, seq_len, head_dim)
    key = key.transpose(1, 2).reshape(batch_size * num_heads, seq_len, head_dim)
    query = _chunk(query, window_overlap)
    key = _chunk(key, window_overlap)
    diagonal_chunked_attention_scores = torch.einsum("bcxd,bcyd->bcxy", (query, key))
    diagonal_chunked_attention_scores = _pad_and_transpose_last_two_dims(
        diagonal_chunked_attention_scores, padding=(0, 0, 0, 1))
    diagonal_attention_scores = diagonal_chunked_attention_scores.new_zeros(
        (batch_size * num_heads, chunks_count + 1, window_overlap, window_overlap * 2 + 1))
    diagonal_attention_scores[:, :-1, :, window_overlap:] = diagonal_chunked_attention_scores[
        :, :, :window_overlap, : window_overlap + 1]
    diagonal_attention_scores[:, -1, :, window_overlap:] = diagonal_chunked_attention_scores[
        :, -1, window_overlap:, : window_overlap + 1]
    diagonal_attention_scores[:, 1:, :, :window_overlap] = diagonal_chunked_attention_scores[
        :, :, -(window_overlap + 1):-1, window_overlap + 1:]
    diagonal_attention_scores[:, 0, 1:window_overlap, 1:window_overlap] = diagonal_chunked_attention_scores[
        :, 0, : window_overlap - 1, 1 - window_overlap:]
    diagonal_attention_scores = diagonal_attention_scores.view(
        batch_size, num_heads, seq_len, 2 * window_overlap + 1).transpose(2, 1)
    _mask_invalid_locations(diagonal_attention_scores, window_overlap)
    return diagonal_attention_scores


def sliding_chunks_matmul_attn_probs_value(attn_probs, value, window_overlap):
    batch_size, seq_len, num_heads, head_dim = value.size()
    chunks_count = torch.div(seq_len, window_overlap, rounding_mode="trunc") - 1
    chunked_attn_probs = attn_probs.transpose(1, 2).reshape(
        batch_size * num_heads, torch.div(seq_len, window_overlap, rounding_mode="trunc"),
        window_overlap, 2 * window_overlap + 1)
    value = value.transpose(1, 2).reshape(batch_size * num_heads, seq_len, head_dim)
    padded_value = F.pad(value, (0, 0, window_overlap, window_overlap), value=-1)
    chunked_value_size = (batch_size * num_heads, chunks_count + 1, 3 * window_overlap, head_dim)
    chunked_value_stride = padded_value.stride()
    chunked_value_stride = (chunked_value_stride[0], window_overlap * chunked_value_stride[1],
                            chunked_value_stride[1], chunked_value_stride[2])
    chunked_value = padded_value.as_strided(size=chunked_value_size, stride=chunked_value_stride)
    chunked_attn_probs = _pad_and_diagonalize(chunked_attn_probs)
    context = torch.einsum("bcwd,bcdh->bcwh", (chunked_attn_probs, chunked_value))
    return context.view(batch_size, num_heads, seq_len, head_dim).transpose(1, 2)


class LongformerSelfAttention(nn.Module):
    def __init__(self, hidden_size, num_heads, attention_window):
        super().__init__()
        self.num_heads = num_heads
        self.head_dim = hidden_size // num_heads
        self.embed_dim = hidden_size
        self.query = nn.Linear(hidden_size, self.embed_dim)
        self.key = nn.Linear(hidden_size, self.embed_dim)
        self.value = nn.Linear(hidden_size, self.embed_dim)
        self.one_sided_attn_window_size = attention_window // 2

    def forward(self, hidden_states, attention_mask):
        hidden_states = hidden_states.transpose(0, 1)
        query_vectors = self.query(hidden_states)
        key_vectors = self.key(hidden_states)
        value_vectors = self.value(hidden_states)
        seq_len, batch_size, embed_dim = hidden_states.size()
        query_vectors /= math.sqrt(self.head_dim)
        query_vectors = query_vectors.view(seq_len, batch_size, self.num_heads, self.head_dim).transpose(0, 1)
        key_vectors = key_vectors.view(seq_len, batch_size, self.num_heads, self.head_dim).transpose(0, 1)
        attn_scores = sliding_chunks_query_key_matmul(query_vectors, key_vectors, self.one_sided_attn_window_size)
        remove_from_windowed_attention_mask = (attention_mask != 0)[:, :, None, None]
        float_mask = remove_from_windowed_attention_mask.type_as(query_vectors).masked_fill(
            remove_from_windowed_attention_mask, torch.finfo(query_vectors.dtype).min)
        diagonal_mask = sliding_chunks_query_key_matmul(
            float_mask.new_ones(size=float_mask.size()), float_mask, self.one_sided_attn_window_size)
        attn_scores += diagonal_mask
        attn_probs = F.softmax(attn_scores, dim=-1, dtype=torch.float32)
        attn_probs = torch.masked_fill(attn_probs, remove_from_windowed_attention_mask, 0.0)
        attn_probs = attn_probs.type_as(attn_scores)
        value_vectors = value_vectors.view(seq_len, batch_size, self.num_heads, self.head_dim).transpose(0, 1)
        attn_output = sliding_chunks_matmul_attn_probs_value(attn_probs, value_vectors,
                                                             self.one_sided_attn_window_size)
        return attn_output.reshape(batch_size, seq_len, embed_dim).contiguous()


class LongformerLayer(nn.Module):
    def __init__(self, hidden_size, num_heads, attention_window):
        super().__init__()
        self.attention = LongformerSelfAttention(hidden_size, num_heads, attention_window)
        self.output = nn.Linear(hidden_size, hidden_size)
        self.norm1 = nn.LayerNorm(hidden_size)
        self.ffn = nn.Sequential(nn.Linear(hidden_size, 2 * hidden_size), nn.GELU(),
                                 nn.Linear(2 * hidden_size, hidden_size))
        self.norm2 = nn.LayerNorm(hidden_size)

    def forward(self, hidden_states, attention_mask):
        x = self.norm1(hidden_states + self.output(self.attention(hidden_states, attention_mask)))
        return self.norm2(x + self.ffn(x))


class Longformer(nn.Module):
    def __init__(self, vocab_size=50, hidden_size=16, num_heads=2, attention_window=4, n_layer=2,
                 pad_token_id=1):
        super().__init__()
        self.attention_window = attention_window
        self.pad_token_id = pad_token_id
        self.embeddings = nn.Embedding(vocab_size, hidden_size, padding_idx=pad_token_id)
        self.layers = nn.ModuleList([LongformerLayer(hidden_size, num_heads, attention_window)
                                     for _ in range(n_layer)])

    def _pad_to_window_size(self, input_ids, attention_mask):
        attention_window = self.attention_window
        seq_len = input_ids.shape[1]
        padding_len = (attention_window - seq_len % attention_window) % attention_window
        if padding_len > 0:
            input_ids = F.pad(input_ids, (0, padding_len), value=self.pad_token_id)
            attention_mask = F.pad(attention_mask, (0, padding_len), value=0)
        return padding_len, input_ids, attention_mask

    def forward(self, input_ids, attention_mask):
        padding_len, input_ids, attention_mask = self._pad_to_window_size(input_ids, attention_mask)
        # 0: local attention, -> negative for padding (the HF extended mask convention)
        extended = (attention_mask - 1) * 10000.0
        hidden_states = self.embeddings(input_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states, extended)
        if padding_len > 0:
            hidden_states = hidden_states[:, :-padding_len]
        return hidden_states


torch.manual_seed(0)
model = Longformer().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(2, 50, (2, 10), generator=g)
    mask = torch.ones(2, 10, dtype=torch.long)
    mask[1, 8:] = 0
    ids[1, 8:] = 1
    return ids, mask
