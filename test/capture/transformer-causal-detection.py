# nn.TransformerDecoder given a float tgt_mask and no tgt_is_causal asks
# whether the mask is causal by comparing its values
# (_detect_is_causal_mask), and its attention branches on the answer: a
# decision from tensor data, refused at the user's line in plain words
# (torch.export refuses it too), and the refusal says what to pass instead
# (compiler/LibraryAdvice.cpp). Passing tgt_is_causal=True decides it
# without reading the mask, and then the export succeeds
# (test/e2e/test_library_advice.py compares it with eager).
# RUN: rm -f %t.dync.so
# RUN: not %dync export --data-branches=refuse %s:detected -o %t.dync.so 2>&1 | FileCheck %s
# RUN: not ls %t.dync.so
# RUN: %dync export %s:declared --emit=graph | FileCheck %s --check-prefix=DECLARED
import torch
from torch import nn

torch.manual_seed(0)
DECODER = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 1).eval()


def detected(tgt, memory):
    mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[0])
    return DECODER(tgt, memory, tgt_mask=mask)

# CHECK: transformer-causal-detection.py:[[@LINE-2]]:12: error: data-dependent branch
# CHECK-SAME: (in multi_head_attention_forward, {{.*}}functional.py:{{[0-9]+}}); torch's nn.TransformerDecoder, given a float tgt_mask and no tgt_is_causal, compares the mask's values with a causal mask's (_detect_is_causal_mask) and its attention branches on the answer: pass tgt_is_causal=True with a causal mask, or False with any other, which decides it without reading the mask


def declared(tgt, memory):
    mask = nn.Transformer.generate_square_subsequent_mask(tgt.shape[0])
    return DECODER(tgt, memory, tgt_mask=mask, tgt_is_causal=True)

# DECLARED: graph @declared


def example_inputs():
    return torch.randn(5, 2, 8), torch.randn(4, 2, 8)
