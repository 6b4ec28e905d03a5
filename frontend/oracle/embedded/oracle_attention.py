"""dync's decomposition of CPU attention,
`aten::_scaled_dot_product_flash_attention_for_cpu`.

torch's listed decomposition computes the output through
`_scaled_dot_product_attention_math` (matrix products, a softmax, which
fusion then computes in loops), but returns the attention weights, of sizes
[N, H, L, S], in place of the operator's second result, the log-sum-exp of
each query's scores, [N, H, L], which the CPU kernel computes in float32 for
half-precision inputs; and it lays the output out as CUDA's flash attention
does, not as the CPU kernel does (like the query). A program that reads the
second result (it calls the operator itself) would get another tensor than
eager's, and one that reads strides other strides. This decomposition
computes the output through `_scaled_dot_product_attention_math` too, and
the recorder lays both results out as the operator's meta function does
(`_Decompositions.lays_out_as_operator`); it computes the log-sum-exp as the
kernel does: of the
scaled scores with the mask added (the kernel takes a mask of the query's
dtype only; `F.scaled_dot_product_attention` converts a boolean one) and
those above the diagonal left out when causal, 0 for a row with every score
masked out, as the kernel sets it. A graph that does not read it (any
`F.scaled_dot_product_attention` call) loses those calls to dead-code
elimination.
"""

import math

import torch

aten = torch.ops.aten


def _keys_per_query_head(query, key):
    """Keys repeated so that each query head has its own: the kernel gives
    query head h the key head h // (query heads / key heads)."""
    groups = query.shape[1] // key.shape[1]
    return key if groups == 1 else key.repeat_interleave(groups, dim=1)


def _causal(queries, keys):
    """Where query i may attend to key j: j <= i, counted from the first of
    each, as the kernel aligns them."""
    return torch.ones(queries, keys, dtype=torch.bool).tril()


def _log_sum_exp(query, key, attn_mask, is_causal, scale):
    accumulate = torch.float64 if query.dtype == torch.float64 else torch.float32
    query, key = query.to(accumulate), _keys_per_query_head(query, key).to(accumulate)
    if scale is None:
        scale = 1.0 / math.sqrt(query.shape[-1])
    scores = torch.matmul(query, key.transpose(-2, -1)) * scale
    if is_causal:
        scores = scores.masked_fill(_causal(*scores.shape[-2:]).logical_not(), -math.inf)
    if attn_mask is not None:
        scores = scores + attn_mask.to(accumulate)
    result = torch.logsumexp(scores, dim=-1)
    return torch.where(result == -math.inf, torch.zeros_like(result), result)


def flash_attention_for_cpu(
    query, key, value, dropout_p=0.0, is_causal=False, *, attn_mask=None, scale=None
):
    torch._check(
        query.dim() == 4 and key.dim() == 4 and value.dim() == 4,
        lambda: "q, k, v must be 4 dimensional tensors",
    )
    torch._check(dropout_p == 0.0, lambda: f"dropout probability must be zero, got {dropout_p}")
    torch._check(
        attn_mask is None or attn_mask.dtype == query.dtype,
        lambda: "scaled_dot_product_attention_flash_attention: Attention mask is the same data "
        "type as query",
    )
    if is_causal and attn_mask is not None:
        # The kernel takes both; the math path refuses the pair, so the
        # causal mask joins the given one.
        attn_mask = attn_mask.masked_fill(
            _causal(query.shape[-2], key.shape[-2]).logical_not(), -math.inf
        )
        is_causal = False
    output, _ = aten._scaled_dot_product_attention_math.default(
        query,
        key,
        value,
        attn_mask=attn_mask,
        dropout_p=0.0,
        is_causal=is_causal,
        scale=scale,
        enable_gqa=query.shape[1] != key.shape[1],
    )
    return output, _log_sum_exp(query, key, attn_mask, is_causal, scale)
