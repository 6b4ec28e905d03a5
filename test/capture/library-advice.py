# Refusals that arise in torch's own code at a spot the caller decides end
# with what to do instead (compiler/LibraryAdvice.cpp); one that arises in
# the program's own code, even when torch called it, gets no such advice.
# RUN: not %dync export %s:encoder_causal --emit=graph --data-branches=refuse 2>&1 | FileCheck %s --check-prefix=CAUSAL
# RUN: not %dync export %s:encoder_nested --example encoder_nested=padded_inputs --emit=graph 2>&1 | FileCheck %s --check-prefix=NESTED
# RUN: not %dync export %s:own_layer --emit=graph --data-branches=refuse 2>&1 | FileCheck %s --check-prefix=OWN
import copy

import torch
from torch import nn

torch.manual_seed(0)
ENCODER = nn.TransformerEncoder(
    nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 1).eval()


class DataLayer(nn.TransformerEncoderLayer):
    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        if src.sum().item() > 0:
            return src * 2
        return src


OWN = nn.TransformerEncoder(DataLayer(8, 2, 16, batch_first=True), 1, enable_nested_tensor=False)


def encoder_causal(x, mask):
    return ENCODER(x, mask=mask)

# CAUSAL: library-advice.py:[[@LINE-2]]:12: error: data-dependent branch: {{.*}} (in multi_head_attention_forward, {{.*}}); torch's nn.TransformerEncoder, given a float mask and no is_causal, compares the mask's values with a causal mask's (_detect_is_causal_mask) and its attention branches on the answer: pass is_causal=True with a causal mask, or False with any other, which decides it without reading the mask


def encoder_nested(x, pad):
    with torch.no_grad():
        return ENCODER(x, src_key_padding_mask=pad)

# NESTED: library-advice.py:[[@LINE-2]]:16: error: {{.*}}_nested_tensor_from_mask{{.*}} (in TransformerEncoder.forward, {{.*}}transformer.py:{{[0-9]+}}); torch's nn.TransformerEncoder, in eval mode without grad and given a src_key_padding_mask, packs the input into a nested tensor by the mask's values (its inference fast path), which capture cannot follow: construct it with enable_nested_tensor=False, which keeps the padded input and the mask (the output's padded steps then hold values where the nested path's hold zeros)


def own_layer(x, mask):
    return OWN(x, mask=mask)

# OWN: library-advice.py:19:12: error: data-dependent branch: {{.*}} computed from tensor data
# OWN-NOT: torch's nn.TransformerEncoder


def example_inputs():
    return torch.randn(2, 5, 8), nn.Transformer.generate_square_subsequent_mask(5)


def padded_inputs():
    return torch.randn(2, 5, 8), torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
