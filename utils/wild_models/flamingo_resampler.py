"""Flamingo in the style of lucidrains' flamingo-pytorch: a Perceiver
resampler (learned latents repeated over batch and media, time position
embeddings, keys and values from the media concatenated with the latents),
and gated cross-attention blocks whose `attn_gate`/`ff_gate` parameters go
through `tanh`, with text-to-media masks from the cumulative count of media
tokens (`media_locations.cumsum`), attending only the immediately preceding
image, and text before any image zeroed after the softmax."""
import torch
import torch.nn.functional as F
from einops import rearrange, repeat
from torch import einsum, nn


# einops_exts' helper, which flamingo-pytorch imports (not installed here).
def rearrange_many(tensors, pattern, **kwargs):
    return map(lambda t: rearrange(t, pattern, **kwargs), tensors)


def exists(val):
    return val is not None


def FeedForward(dim, mult=4):
    inner_dim = int(dim * mult)
    return nn.Sequential(
        nn.LayerNorm(dim),
        nn.Linear(dim, inner_dim, bias=False),
        nn.GELU(),
        nn.Linear(inner_dim, dim, bias=False))


class PerceiverAttention(nn.Module):
    def __init__(self, *, dim, dim_head=16, heads=2):
        super().__init__()
        self.scale = dim_head ** -0.5
        self.heads = heads
        inner_dim = dim_head * heads
        self.norm_media = nn.LayerNorm(dim)
        self.norm_latents = nn.LayerNorm(dim)
        self.to_q = nn.Linear(dim, inner_dim, bias=False)
        self.to_kv = nn.Linear(dim, inner_dim * 2, bias=False)
        self.to_out = nn.Linear(inner_dim, dim, bias=False)

    def forward(self, x, latents):
        """x: (b, t, n, D) media features; latents: (b, t, n_latents, D)."""
        x = self.norm_media(x)
        latents = self.norm_latents(latents)
        b, m, h = *x.shape[:2], self.heads
        q = self.to_q(latents)
        kv_input = torch.cat((x, latents), dim=-2)
        k, v = self.to_kv(kv_input).chunk(2, dim=-1)
        q, k, v = rearrange_many((q, k, v), "b t n (h d) -> b h t n d", h=h)
        q = q * self.scale
        sim = einsum("... i d, ... j d  -> ... i j", q, k)
        sim = sim - sim.amax(dim=-1, keepdim=True).detach()
        attn = sim.softmax(dim=-1)
        out = einsum("... i j, ... j d -> ... i d", attn, v)
        out = rearrange(out, "b h t n d -> b t n (h d)", h=h)
        return self.to_out(out)


class PerceiverResampler(nn.Module):
    def __init__(self, *, dim, depth, dim_head=16, heads=2, num_latents=4, num_media_embeds=4, ff_mult=2):
        super().__init__()
        self.latents = nn.Parameter(torch.randn(num_latents, dim))
        self.media_pos_emb = nn.Parameter(torch.randn(num_media_embeds, 1, dim))
        self.layers = nn.ModuleList([])
        for _ in range(depth):
            self.layers.append(nn.ModuleList([
                PerceiverAttention(dim=dim, dim_head=dim_head, heads=heads),
                FeedForward(dim=dim, mult=ff_mult)]))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        if x.ndim == 3:
            x = rearrange(x, "b n d -> b 1 n d")
        times = x.shape[1]
        x = x + self.media_pos_emb[:times]
        latents = repeat(self.latents, "n d -> b m n d", b=x.shape[0], m=x.shape[1])
        for attn, ff in self.layers:
            latents = attn(x, latents) + latents
            latents = ff(latents) + latents
        return self.norm(latents)


class MaskedCrossAttention(nn.Module):
    def __init__(self, *, dim, dim_head=16, heads=2, only_attend_immediate_media=True):
        super().__init__()
        self.scale = dim_head ** -0.5
        self.heads = heads
        inner_dim = dim_head * heads
        self.norm = nn.LayerNorm(dim)
        self.to_q = nn.Linear(dim, inner_dim, bias=False)
        self.to_kv = nn.Linear(dim, inner_dim * 2, bias=False)
        self.to_out = nn.Linear(inner_dim, dim, bias=False)
        self.only_attend_immediate_media = only_attend_immediate_media

    def forward(self, x, media, media_locations=None):
        b, t, m = media.shape[:3]
        h = self.heads
        x = self.norm(x)
        q = self.to_q(x)
        media = rearrange(media, "b t n d -> b (t n) d")
        k, v = self.to_kv(media).chunk(2, dim=-1)
        q, k, v = rearrange_many((q, k, v), "b n (h d) -> b h n d", h=h)
        q = q * self.scale
        sim = einsum("... i d, ... j d -> ... i j", q, k)
        if exists(media_locations):
            text_time = media_locations.cumsum(dim=-1)
            media_time = torch.arange(t, device=x.device) + 1
            mask_op = torch.eq if self.only_attend_immediate_media else torch.ge
            text_to_media_mask = mask_op(rearrange(text_time, "b i -> b 1 i 1"),
                                         repeat(media_time, "j -> 1 1 1 (j m)", m=m))
            sim = sim.masked_fill(~text_to_media_mask, -torch.finfo(sim.dtype).max)
        sim = sim - sim.amax(dim=-1, keepdim=True).detach()
        attn = sim.softmax(dim=-1)
        if exists(media_locations) and self.only_attend_immediate_media:
            text_without_media_mask = text_time == 0
            text_without_media_mask = rearrange(text_without_media_mask, "b i -> b 1 i 1")
            attn = attn.masked_fill(text_without_media_mask, 0.)
        out = einsum("... i j, ... j d -> ... i d", attn, v)
        out = rearrange(out, "b h n d -> b n (h d)")
        return self.to_out(out)


class GatedCrossAttentionBlock(nn.Module):
    def __init__(self, *, dim, dim_head=16, heads=2, ff_mult=2, only_attend_immediate_media=True):
        super().__init__()
        self.attn = MaskedCrossAttention(dim=dim, dim_head=dim_head, heads=heads,
                                         only_attend_immediate_media=only_attend_immediate_media)
        self.attn_gate = nn.Parameter(torch.tensor([0.]))
        self.ff = FeedForward(dim, mult=ff_mult)
        self.ff_gate = nn.Parameter(torch.tensor([0.]))

    def forward(self, x, media, media_locations=None):
        x = self.attn(x, media, media_locations=media_locations) * self.attn_gate.tanh() + x
        x = self.ff(x) * self.ff_gate.tanh() + x
        return x


class CausalBlock(nn.Module):
    def __init__(self, dim, heads=2):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ff = FeedForward(dim, mult=2)

    def forward(self, x):
        n = x.shape[1]
        causal = torch.ones((n, n), dtype=torch.bool, device=x.device).triu(1)
        y = self.norm(x)
        x = x + self.attn(y, y, y, attn_mask=causal, need_weights=False)[0]
        return x + self.ff(x)


class Flamingo(nn.Module):
    def __init__(self, num_tokens=50, dim=32, depth=2, media_token_id=3, cross_attn_every=1):
        super().__init__()
        self.token_emb = nn.Embedding(num_tokens, dim)
        self.media_token_id = media_token_id
        self.perceiver_resampler = PerceiverResampler(dim=dim, depth=2)
        self.layers = nn.ModuleList([])
        for ind in range(depth):
            self.layers.append(nn.ModuleList([
                CausalBlock(dim),
                GatedCrossAttentionBlock(dim=dim) if not (ind % cross_attn_every) else None]))
        self.to_logits = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, num_tokens, bias=False))
        self.to_logits[-1].weight = self.token_emb.weight

    def forward(self, text, image_embeds):
        batch, device = text.shape[0], text.device
        media_locations = text == self.media_token_id
        text_tokens = self.token_emb(text)
        image_embeds = self.perceiver_resampler(image_embeds)
        for attn_ff, flamingo_cross_attn in self.layers:
            text_tokens = attn_ff(text_tokens)
            if exists(flamingo_cross_attn) and exists(image_embeds):
                text_tokens = flamingo_cross_attn(text_tokens, image_embeds, media_locations=media_locations)
        logits = self.to_logits(text_tokens)
        loss = F.cross_entropy(rearrange(logits[:, :-1], "b n c -> b c n"), text[:, 1:])
        return logits, loss


torch.manual_seed(0)
model = Flamingo().eval()
# A trained model's gates are open; the zero init would hide the cross-attention.
with torch.no_grad():
    for block in model.modules():
        if isinstance(block, GatedCrossAttentionBlock):
            block.attn_gate.fill_(0.7)
            block.ff_gate.fill_(0.4)
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    text = torch.randint(4, 50, (2, 10), generator=g)
    text[0, 2] = 3
    text[0, 6] = 3
    text[1, 4] = 3
    image_embeds = torch.randn(2, 2, 6, 32, generator=g)
    return text, image_embeds
