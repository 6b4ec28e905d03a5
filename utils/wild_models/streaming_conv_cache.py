"""One chunk of streaming speech inference with explicit caches, as
on-device ASR and VAD code does it (icefall's streaming Zipformer and
Conformer, torchaudio's Emformer, Silero-style VAD exports): the call takes
a chunk of features and a list of cache tensors and returns the outputs
with the new caches. A causal depthwise Conv1d per layer runs on
`torch.cat([conv_cache, x], dim=-1)` and keeps the last `kernel - 1`
frames as the next cache; self-attention sees a left-context key/value
cache `cat`ed before the chunk and cut back to `left_context` frames;
the attention mask is built from a `processed_lens` tensor (how many
frames each stream has seen) so that cache slots a stream never filled
are masked (`arange(left) < processed.clamp(max=left)` flipped to the
right end); relative positions come from `arange` offsets; the caches
are unpacked and repacked by list comprehensions over layers; `processed
+ chunk` is returned."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class StreamingLayer(nn.Module):
    def __init__(self, d, heads, kernel, left_context):
        super().__init__()
        self.d, self.heads, self.kernel, self.left = d, heads, kernel, left_context
        self.norm_attn = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.pos_bias = nn.Parameter(torch.randn(heads, 2 * (left_context + 16)) * 0.1)
        self.norm_conv = nn.LayerNorm(d)
        self.pw1 = nn.Conv1d(d, 2 * d, 1)
        self.dw = nn.Conv1d(d, d, kernel, groups=d)
        self.pw2 = nn.Conv1d(d, d, 1)
        self.ff = nn.Sequential(nn.LayerNorm(d), nn.Linear(d, 2 * d), nn.SiLU(), nn.Linear(2 * d, d))

    def attention(self, x, k_cache, v_cache, processed):
        b, t, _ = x.shape
        h, dh = self.heads, self.d // self.heads
        q, k, v = self.qkv(self.norm_attn(x)).chunk(3, dim=-1)
        k_all = torch.cat([k_cache, k], dim=1)
        v_all = torch.cat([v_cache, v], dim=1)
        new_k, new_v = k_all[:, -self.left:], v_all[:, -self.left:]
        q = q.view(b, t, h, dh).transpose(1, 2)
        k_all = k_all.view(b, -1, h, dh).transpose(1, 2)
        v_all = v_all.view(b, -1, h, dh).transpose(1, 2)
        scores = q @ k_all.transpose(-2, -1) / math.sqrt(dh)
        # relative distance of every key to every query, as an index into the bias table
        key_pos = torch.arange(-self.left, t, device=x.device)
        query_pos = torch.arange(t, device=x.device)
        rel = (query_pos[:, None] - key_pos[None, :]) + self.pos_bias.shape[1] // 2
        scores = scores + self.pos_bias[:, rel].unsqueeze(0)
        # cache slots this stream has not filled yet sit at the left end
        filled = processed.clamp(max=self.left)
        cache_valid = torch.arange(self.left, device=x.device).flip(0)[None, :] < filled[:, None]
        chunk_causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        mask = torch.cat([cache_valid[:, None, :].expand(b, t, self.left),
                          chunk_causal.expand(b, t, t)], dim=-1)
        scores = scores.masked_fill(~mask[:, None], float("-inf"))
        o = scores.softmax(-1) @ v_all
        return self.out(o.transpose(1, 2).reshape(b, t, self.d)), new_k, new_v

    def conv(self, x, conv_cache):
        y = self.norm_conv(x).transpose(1, 2)
        y = F.glu(self.pw1(y), dim=1)
        y = torch.cat([conv_cache, y], dim=-1)
        new_cache = y[..., -(self.kernel - 1):]
        y = self.pw2(F.silu(self.dw(y)))
        return y.transpose(1, 2), new_cache

    def forward(self, x, cache, processed):
        k_cache, v_cache, conv_cache = cache
        a, new_k, new_v = self.attention(x, k_cache, v_cache, processed)
        x = x + a
        c, new_conv = self.conv(x, conv_cache)
        x = x + c
        x = x + 0.5 * self.ff(x)
        return x, (new_k, new_v, new_conv)


class StreamingEncoder(nn.Module):
    def __init__(self, feat=20, d=32, heads=4, layers=2, kernel=5, left_context=12, vocab=30):
        super().__init__()
        self.d, self.kernel, self.left = d, kernel, left_context
        self.embed = nn.Linear(feat, d)
        self.layers = nn.ModuleList([StreamingLayer(d, heads, kernel, left_context) for _ in range(layers)])
        self.ctc = nn.Linear(d, vocab)

    def init_states(self, batch):
        return [(torch.zeros(batch, self.left, self.d), torch.zeros(batch, self.left, self.d),
                 torch.zeros(batch, self.d, self.kernel - 1)) for _ in self.layers]

    def forward(self, chunk, states, processed_lens):
        x = self.embed(chunk)
        new_states = []
        for layer, cache in zip(self.layers, states):
            x, new_cache = layer(x, cache, processed_lens)
            new_states.append(new_cache)
        log_probs = self.ctc(x).log_softmax(-1)
        return log_probs, new_states, processed_lens + chunk.shape[1]


torch.manual_seed(0)
model = StreamingEncoder().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    chunk = torch.randn(2, 8, 20, generator=g)
    # a second chunk: stream 0 has seen one chunk, stream 1 none yet
    with torch.no_grad():
        _, states, _ = model(torch.randn(2, 8, 20, generator=g), model.init_states(2), torch.zeros(2, dtype=torch.long))
    processed = torch.tensor([8, 0])
    states = [tuple(s.clone() for s in layer) for layer in states]
    return chunk, states, processed
