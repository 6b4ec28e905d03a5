"""A fairseq-style Transformer decoder taking one incremental decoding step:
the per-layer attention caches live in an `incremental_state` dict of dicts
keyed by each module's uuid-derived id (`get_incremental_state` /
`set_incremental_state`), `prev_output_tokens[:, -1:]` kept after the
positions are computed, sinusoidal positions from `make_positions` (a
`cumsum` of the non-pad mask) or, when decoding, one row picked by the
prefix length, `Optional[Tensor]` keyword plumbing, `F.pad` of the key
padding mask, float32 softmax through a helper with an `onnx_trace` flag,
and encoder-decoder attention whose static keys are computed once and
cached."""
import math
import uuid
from typing import Dict, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


def make_positions(tensor, padding_idx: int, onnx_trace: bool = False):
    mask = tensor.ne(padding_idx).int()
    return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + padding_idx


def softmax(x, dim: int, onnx_trace: bool = False):
    if onnx_trace:
        return F.softmax(x.float(), dim=dim)
    return F.softmax(x, dim=dim, dtype=torch.float32)


class FairseqIncrementalState:
    # fairseq draws the id from uuid4(), a new one in every process; numbered
    # here so an artifact exported in one process finds the same keys in another
    _instances = 0

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        FairseqIncrementalState._instances += 1
        self._incremental_state_id = str(uuid.uuid5(uuid.NAMESPACE_OID, str(FairseqIncrementalState._instances)))

    def _get_full_incremental_state_key(self, key: str) -> str:
        return "{}.{}".format(self._incremental_state_id, key)

    def get_incremental_state(self, incremental_state, key: str):
        full_key = self._get_full_incremental_state_key(key)
        if incremental_state is None or full_key not in incremental_state:
            return None
        return incremental_state[full_key]

    def set_incremental_state(self, incremental_state, key: str, value):
        if incremental_state is not None:
            full_key = self._get_full_incremental_state_key(key)
            incremental_state[full_key] = value
        return incremental_state


class SinusoidalPositionalEmbedding(nn.Module):
    def __init__(self, embedding_dim, padding_idx, init_size=64):
        super().__init__()
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.register_buffer("weights", self.get_embedding(init_size, embedding_dim, padding_idx),
                             persistent=False)
        self.onnx_trace = False

    @staticmethod
    def get_embedding(num_embeddings: int, embedding_dim: int, padding_idx: Optional[int] = None):
        half_dim = embedding_dim // 2
        emb = math.log(10000) / (half_dim - 1)
        emb = torch.exp(torch.arange(half_dim, dtype=torch.float) * -emb)
        emb = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(1) * emb.unsqueeze(0)
        emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(num_embeddings, -1)
        if padding_idx is not None:
            emb[padding_idx, :] = 0
        return emb

    def forward(self, input, incremental_state: Optional[Dict[str, Dict[str, Optional[Tensor]]]] = None):
        bspair = torch.onnx.operators.shape_as_tensor(input) if self.onnx_trace else input.size()
        bsz, seq_len = bspair[0], bspair[1]
        if incremental_state is not None:
            # positions is the same for every token when decoding a single step
            pos = self.padding_idx + seq_len
            return self.weights[pos, :].expand(bsz, 1, -1)
        positions = make_positions(input, self.padding_idx, onnx_trace=self.onnx_trace)
        return self.weights.index_select(0, positions.view(-1)).view(bsz, seq_len, -1).detach()


class MultiheadAttention(FairseqIncrementalState, nn.Module):
    def __init__(self, embed_dim, num_heads, self_attention=False, encoder_decoder_attention=False):
        super().__init__()
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        assert self.head_dim * num_heads == self.embed_dim, "embed_dim must be divisible by num_heads"
        self.scaling = self.head_dim ** -0.5
        self.self_attention = self_attention
        self.encoder_decoder_attention = encoder_decoder_attention
        self.k_proj = nn.Linear(embed_dim, embed_dim)
        self.v_proj = nn.Linear(embed_dim, embed_dim)
        self.q_proj = nn.Linear(embed_dim, embed_dim)
        self.out_proj = nn.Linear(embed_dim, embed_dim)
        self.onnx_trace = False

    def _get_input_buffer(self, incremental_state):
        result = self.get_incremental_state(incremental_state, "attn_state")
        if result is not None:
            return result
        empty_result: Dict[str, Optional[Tensor]] = {}
        return empty_result

    def _set_input_buffer(self, incremental_state, buffer: Dict[str, Optional[Tensor]]):
        return self.set_incremental_state(incremental_state, "attn_state", buffer)

    @staticmethod
    def _append_prev_key_padding_mask(key_padding_mask: Optional[Tensor], prev_key_padding_mask: Optional[Tensor],
                                      batch_size: int, src_len: int, static_kv: bool) -> Optional[Tensor]:
        if prev_key_padding_mask is not None and static_kv:
            new_key_padding_mask = prev_key_padding_mask
        elif prev_key_padding_mask is not None and key_padding_mask is not None:
            new_key_padding_mask = torch.cat([prev_key_padding_mask.float(), key_padding_mask.float()], dim=1)
        elif prev_key_padding_mask is not None:
            if src_len > prev_key_padding_mask.size(1):
                filler = torch.zeros((batch_size, src_len - prev_key_padding_mask.size(1)),
                                     device=prev_key_padding_mask.device)
                new_key_padding_mask = torch.cat([prev_key_padding_mask.float(), filler.float()], dim=1)
            else:
                new_key_padding_mask = prev_key_padding_mask.float()
        elif key_padding_mask is not None:
            if src_len > key_padding_mask.size(1):
                new_key_padding_mask = F.pad(key_padding_mask.float(), (src_len - key_padding_mask.size(1), 0))
            else:
                new_key_padding_mask = key_padding_mask.float()
        else:
            new_key_padding_mask = prev_key_padding_mask
        return new_key_padding_mask

    def forward(self, query, key: Optional[Tensor], value: Optional[Tensor],
                key_padding_mask: Optional[Tensor] = None,
                incremental_state: Optional[Dict[str, Dict[str, Optional[Tensor]]]] = None,
                static_kv: bool = False, attn_mask: Optional[Tensor] = None):
        tgt_len, bsz, embed_dim = query.size()
        if incremental_state is not None:
            saved_state = self._get_input_buffer(incremental_state)
            if saved_state is not None and "prev_key" in saved_state:
                # previous time steps are cached - no need to recompute key and value if they are static
                if static_kv:
                    assert self.encoder_decoder_attention and not self.self_attention
                    key = value = None
        else:
            saved_state = None

        if self.self_attention:
            q = self.q_proj(query)
            k = self.k_proj(query)
            v = self.v_proj(query)
        else:
            q = self.q_proj(query)
            if key is None:
                assert value is None
                k = v = None
            else:
                k = self.k_proj(key)
                v = self.v_proj(key)
        q *= self.scaling

        q = q.contiguous().view(tgt_len, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        if k is not None:
            k = k.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)
        if v is not None:
            v = v.contiguous().view(-1, bsz * self.num_heads, self.head_dim).transpose(0, 1)

        if saved_state is not None:
            # saved states are stored with shape (bsz, num_heads, seq_len, head_dim)
            if "prev_key" in saved_state:
                _prev_key = saved_state["prev_key"]
                assert _prev_key is not None
                prev_key = _prev_key.view(bsz * self.num_heads, -1, self.head_dim)
                if static_kv:
                    k = prev_key
                else:
                    assert k is not None
                    k = torch.cat([prev_key, k], dim=1)
            if "prev_value" in saved_state:
                _prev_value = saved_state["prev_value"]
                assert _prev_value is not None
                prev_value = _prev_value.view(bsz * self.num_heads, -1, self.head_dim)
                if static_kv:
                    v = prev_value
                else:
                    assert v is not None
                    v = torch.cat([prev_value, v], dim=1)
            prev_key_padding_mask: Optional[Tensor] = None
            if "prev_key_padding_mask" in saved_state:
                prev_key_padding_mask = saved_state["prev_key_padding_mask"]
            assert k is not None and v is not None
            key_padding_mask = MultiheadAttention._append_prev_key_padding_mask(
                key_padding_mask=key_padding_mask, prev_key_padding_mask=prev_key_padding_mask,
                batch_size=bsz, src_len=k.size(1), static_kv=static_kv)
            saved_state["prev_key"] = k.view(bsz, self.num_heads, -1, self.head_dim)
            saved_state["prev_value"] = v.view(bsz, self.num_heads, -1, self.head_dim)
            saved_state["prev_key_padding_mask"] = key_padding_mask
            assert incremental_state is not None
            incremental_state = self._set_input_buffer(incremental_state, saved_state)
        assert k is not None
        src_len = k.size(1)

        attn_weights = torch.bmm(q, k.transpose(1, 2))
        assert list(attn_weights.size()) == [bsz * self.num_heads, tgt_len, src_len]
        if attn_mask is not None:
            attn_weights += attn_mask.unsqueeze(0)
        if key_padding_mask is not None:
            attn_weights = attn_weights.view(bsz, self.num_heads, tgt_len, src_len)
            attn_weights = attn_weights.masked_fill(
                key_padding_mask.unsqueeze(1).unsqueeze(2).to(torch.bool), float("-inf"))
            attn_weights = attn_weights.view(bsz * self.num_heads, tgt_len, src_len)
        attn_weights_float = softmax(attn_weights, dim=-1, onnx_trace=self.onnx_trace)
        attn_probs = attn_weights_float.type_as(attn_weights)
        attn = torch.bmm(attn_probs, v)
        attn = attn.transpose(0, 1).contiguous().view(tgt_len, bsz, self.embed_dim)
        attn = self.out_proj(attn)
        attn_weights = attn_weights_float.view(bsz, self.num_heads, tgt_len, src_len).transpose(1, 0)
        return attn, attn_weights.mean(dim=0)


class TransformerDecoderLayer(nn.Module):
    def __init__(self, embed_dim, heads, ffn_dim):
        super().__init__()
        self.self_attn = MultiheadAttention(embed_dim, heads, self_attention=True)
        self.self_attn_layer_norm = nn.LayerNorm(embed_dim)
        self.encoder_attn = MultiheadAttention(embed_dim, heads, encoder_decoder_attention=True)
        self.encoder_attn_layer_norm = nn.LayerNorm(embed_dim)
        self.fc1 = nn.Linear(embed_dim, ffn_dim)
        self.fc2 = nn.Linear(ffn_dim, embed_dim)
        self.final_layer_norm = nn.LayerNorm(embed_dim)
        self.normalize_before = True

    def maybe_layer_norm(self, layer_norm, x, before: bool = False, after: bool = False):
        assert before ^ after
        if after ^ self.normalize_before:
            return layer_norm(x)
        return x

    def forward(self, x, encoder_out: Optional[Tensor], encoder_padding_mask: Optional[Tensor],
                incremental_state=None, self_attn_mask: Optional[Tensor] = None):
        residual = x
        x = self.maybe_layer_norm(self.self_attn_layer_norm, x, before=True)
        x, _ = self.self_attn(query=x, key=x, value=x, incremental_state=incremental_state,
                              attn_mask=self_attn_mask)
        x = residual + x
        residual = x
        x = self.maybe_layer_norm(self.encoder_attn_layer_norm, x, before=True)
        x, attn = self.encoder_attn(query=x, key=encoder_out, value=encoder_out,
                                    key_padding_mask=encoder_padding_mask,
                                    incremental_state=incremental_state, static_kv=True)
        x = residual + x
        residual = x
        x = self.maybe_layer_norm(self.final_layer_norm, x, before=True)
        x = self.fc2(F.relu(self.fc1(x)))
        return residual + x, attn


def fill_with_neg_inf(t):
    return t.float().fill_(float("-inf")).type_as(t)


class TransformerDecoder(nn.Module):
    def __init__(self, vocab=48, embed_dim=32, heads=4, layers=2, padding_idx=1):
        super().__init__()
        self.padding_idx = padding_idx
        self.embed_tokens = nn.Embedding(vocab, embed_dim, padding_idx=padding_idx)
        self.embed_scale = math.sqrt(embed_dim)
        self.embed_positions = SinusoidalPositionalEmbedding(embed_dim, padding_idx)
        self.layers = nn.ModuleList([TransformerDecoderLayer(embed_dim, heads, 2 * embed_dim)
                                     for _ in range(layers)])
        self.layer_norm = nn.LayerNorm(embed_dim)
        self.output_projection = nn.Linear(embed_dim, vocab, bias=False)
        self.output_projection.weight = self.embed_tokens.weight
        self._future_mask = torch.empty(0)

    def buffered_future_mask(self, tensor):
        dim = tensor.size(0)
        if self._future_mask.size(0) == 0 or self._future_mask.size(0) < dim:
            self._future_mask = torch.triu(fill_with_neg_inf(torch.zeros([dim, dim])), 1)
        self._future_mask = self._future_mask.to(tensor)
        return self._future_mask[:dim, :dim]

    def extract_features(self, prev_output_tokens, encoder_out: Dict[str, Tensor], incremental_state=None):
        positions = self.embed_positions(prev_output_tokens, incremental_state=incremental_state)
        if incremental_state is not None:
            prev_output_tokens = prev_output_tokens[:, -1:]
            if positions is not None:
                positions = positions[:, -1:]
        x = self.embed_scale * self.embed_tokens(prev_output_tokens)
        x += positions
        x = x.transpose(0, 1)
        self_attn_padding_mask: Optional[Tensor] = None
        attn: Optional[Tensor] = None
        for layer in self.layers:
            self_attn_mask = self.buffered_future_mask(x) if incremental_state is None else None
            x, layer_attn = layer(x, encoder_out["encoder_out"], encoder_out["encoder_padding_mask"],
                                  incremental_state, self_attn_mask=self_attn_mask)
            attn = layer_attn.float().to(x)
        x = self.layer_norm(x)
        return x.transpose(0, 1), {"attn": [attn], "inner_states": None}

    def forward(self, prev_output_tokens, encoder_out, incremental_state=None):
        x, extra = self.extract_features(prev_output_tokens, encoder_out, incremental_state)
        return self.output_projection(x), extra


class DecodeStep(nn.Module):
    """One step of a sequence generator: the generator owns the incremental
    state across steps; here it arrives as tensors and the updated state is
    handed back."""

    def __init__(self):
        super().__init__()
        self.decoder = TransformerDecoder()

    def forward(self, tokens, encoder_out, encoder_padding_mask, cache):
        incremental_state: Dict[str, Dict[str, Optional[Tensor]]] = {}
        for i, layer in enumerate(self.decoder.layers):
            prev_k, prev_v, enc_k, enc_v = cache[i]
            layer.self_attn._set_input_buffer(incremental_state, {"prev_key": prev_k, "prev_value": prev_v})
            layer.encoder_attn._set_input_buffer(incremental_state, {
                "prev_key": enc_k, "prev_value": enc_v, "prev_key_padding_mask": encoder_padding_mask})
        logits, extra = self.decoder(tokens, {"encoder_out": encoder_out,
                                              "encoder_padding_mask": encoder_padding_mask},
                                     incremental_state=incremental_state)
        lprobs = F.log_softmax(logits[:, -1, :], dim=-1, dtype=torch.float32)
        lprobs[:, self.decoder.padding_idx] = -math.inf
        new_cache = []
        for layer in self.decoder.layers:
            s = layer.self_attn._get_input_buffer(incremental_state)
            new_cache.append((s["prev_key"], s["prev_value"]))
        return lprobs, extra["attn"][0], new_cache


torch.manual_seed(0)
model = DecodeStep().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    bsz, heads, hd, src, step = 2, 4, 8, 7, 4
    tokens = torch.randint(2, 48, (bsz, step), generator=g)
    encoder_out = torch.randn(src, bsz, 32, generator=g)
    encoder_padding_mask = torch.zeros(bsz, src, dtype=torch.bool)
    encoder_padding_mask[1, -2:] = True
    cache = [tuple(torch.randn(bsz, heads, n, hd, generator=g) for n in (step - 1, step - 1, src, src))
             for _ in range(2)]
    return tokens, encoder_out, encoder_padding_mask, cache
