"""open_clip / Whisper-style attention through
`F.scaled_dot_product_attention` with each of its mask forms: a text
tower whose causal mask is a float buffer of `-inf` built with
`torch.empty(...).fill_(float("-inf")).triu_(1)` and passed as
`attn_mask`, a vision tower with `is_causal=False` and no mask, a prefix
decoder with `is_causal=True` and no mask, and a cross-attention whose
additive float mask comes from a boolean key padding mask by
`masked_fill(~keep, float("-inf"))` on `zeros`, `dropout_p` chosen from
`self.training`, `scale=` given explicitly in one place; the towers
pooled at the argmax (EOT) token and by mean, a contrastive logit scale."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    def __init__(self, dim, heads, dropout=0.1, scaled=False):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.dropout = dropout
        self.scale = (dim // heads) ** -0.5 * 0.9 if scaled else None

    def forward(self, x, attn_mask=None, is_causal=False):
        B, N, C = x.shape
        q, k, v = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        x = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask,
                                           dropout_p=self.dropout if self.training else 0.0,
                                           is_causal=is_causal, scale=self.scale)
        return self.proj(x.transpose(1, 2).reshape(B, N, C))


class CrossAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(dim, dim)
        self.kv = nn.Linear(dim, 2 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, ctx, key_padding_mask):
        B, N, C = x.shape
        M = ctx.shape[1]
        h = self.heads
        q = self.q(x).view(B, N, h, C // h).transpose(1, 2)
        k, v = self.kv(ctx).view(B, M, 2, h, C // h).permute(2, 0, 3, 1, 4)
        keep = ~key_padding_mask
        bias = torch.zeros(B, 1, 1, M, dtype=x.dtype, device=x.device)
        bias = bias.masked_fill(~keep[:, None, None, :], float("-inf"))
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
        return self.proj(out.transpose(1, 2).reshape(B, N, C))


class Block(nn.Module):
    def __init__(self, dim, heads, scaled=False):
        super().__init__()
        self.ln_1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads, scaled=scaled)
        self.ln_2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, attn_mask=None, is_causal=False):
        x = x + self.attn(self.ln_1(x), attn_mask=attn_mask, is_causal=is_causal)
        return x + self.mlp(self.ln_2(x))


class CLIPWithDecoder(nn.Module):
    def __init__(self, dim=32, heads=4, vocab=60, context_length=12, patch=4, image=16):
        super().__init__()
        self.context_length = context_length
        self.token_embedding = nn.Embedding(vocab, dim)
        self.positional_embedding = nn.Parameter(torch.randn(context_length, dim) * 0.01)
        self.text_blocks = nn.ModuleList([Block(dim, heads) for _ in range(2)])
        self.register_buffer("attn_mask", self.build_attention_mask(), persistent=False)
        self.conv1 = nn.Conv2d(3, dim, patch, patch, bias=False)
        self.class_embedding = nn.Parameter(torch.randn(dim) * dim ** -0.5)
        self.vis_pos = nn.Parameter(torch.randn((image // patch) ** 2 + 1, dim) * 0.02)
        self.vis_blocks = nn.ModuleList([Block(dim, heads, scaled=True) for _ in range(2)])
        self.dec_block = Block(dim, heads)
        self.cross = CrossAttention(dim, heads)
        self.ln_final = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.logit_scale = nn.Parameter(torch.ones([]) * math.log(1 / 0.07))

    def build_attention_mask(self):
        mask = torch.empty(self.context_length, self.context_length)
        mask.fill_(float("-inf"))
        mask.triu_(1)
        return mask

    def encode_text(self, text):
        L = text.shape[1]
        x = self.token_embedding(text) + self.positional_embedding[:L]
        for blk in self.text_blocks:
            x = blk(x, attn_mask=self.attn_mask[:L, :L])
        x = self.ln_final(x)
        return x, x[torch.arange(x.shape[0]), text.argmax(dim=-1)]

    def encode_image(self, image):
        x = self.conv1(image).flatten(2).transpose(1, 2)
        cls = self.class_embedding.to(x.dtype) + torch.zeros(x.shape[0], 1, x.shape[-1], dtype=x.dtype)
        x = torch.cat([cls, x], dim=1) + self.vis_pos.to(x.dtype)
        for blk in self.vis_blocks:
            x = blk(x)
        return x, x.mean(1)

    def forward(self, image, text, image_padding):
        tokens, text_features = self.encode_text(text)
        patches, image_features = self.encode_image(image)
        h = self.dec_block(tokens, is_causal=True)
        h = h + self.cross(h, patches, image_padding)
        lm_logits = self.lm_head(self.ln_final(h))
        image_features = image_features / image_features.norm(dim=1, keepdim=True)
        text_features = text_features / text_features.norm(dim=1, keepdim=True)
        logits_per_image = self.logit_scale.exp() * image_features @ text_features.t()
        return logits_per_image, lm_logits


torch.manual_seed(0)
model = CLIPWithDecoder().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    image = torch.randn(3, 3, 16, 16, generator=g)
    text = torch.randint(1, 59, (3, 10), generator=g)
    text[0, 6] = 59
    text[1, 9] = 59
    text[2, 3] = 59
    image_padding = torch.zeros(3, 17, dtype=torch.bool)
    image_padding[1, 12:] = True
    return image, text, image_padding
