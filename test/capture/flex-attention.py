# torch.nn.attention.flex_attention's entry points run the program's
# score_mod and mask_mod under a torch function mode and the attention
# through torch.compile; capture refuses them where the program calls them,
# by name, with the dense-mask form to write instead.
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:block_mask %s:dense_mask %s:attend --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=BLOCK,DENSE,ATTEND
import torch
from torch.nn.attention.flex_attention import create_block_mask, create_mask, flex_attention


def causal(b, h, q_idx, kv_idx):
    return q_idx >= kv_idx


def block_mask(q):
    return create_block_mask(causal, None, None, q.size(2), q.size(2), device="cpu").to_dense()

# BLOCK: flex-attention.py:[[@LINE-2]]:12: error: torch.nn.attention.flex_attention.create_block_mask is not supported yet: it runs the score_mod and mask_mod under a torch function mode and the attention through torch.compile, which capture does not model; build the mask as a bool tensor from index tensors (torch.arange(Q_LEN)[:, None] against torch.arange(KV_LEN)[None, :]) and pass it to F.scaled_dot_product_attention(q, k, v, attn_mask=mask), a score_mod's bias as a float attn_mask
# BLOCK-NEXT: return create_block_mask(


def dense_mask(q):
    return create_mask(causal, 1, 1, q.size(2), q.size(2), device="cpu")

# DENSE: flex-attention.py:[[@LINE-2]]:12: error: torch.nn.attention.flex_attention.create_mask is not supported yet


def attend(q):
    def score_mod(score, b, h, q_idx, kv_idx):
        return score - (q_idx - kv_idx).abs()

    return flex_attention(q, q, q, score_mod=score_mod)

# ATTEND: flex-attention.py:[[@LINE-2]]:12: error: torch.nn.attention.flex_attention.flex_attention is not supported yet


def example_inputs():
    return (torch.randn(1, 2, 8, 4),)
