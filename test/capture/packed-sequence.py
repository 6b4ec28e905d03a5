# nn.utils.rnn.pack_padded_sequence sizes its results by the lengths'
# values, and torch's fake aten::_pack_padded_sequence gives them other
# sizes and another dtype than eager does (batch_sizes float32, not int64):
# capture refuses it at the user's line rather than record those types, and
# says what works instead (test/e2e/test_library_advice.py runs the advice).
# RUN: rm -f %t.so
# RUN: not %dync export %s:packed_sizes -o %t.so 2>&1 | FileCheck %s
# RUN: not ls %t.so
import torch


def packed_sizes(x, lengths):
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
    return torch.zeros(2, packed.batch_sizes[0], 3)

# CHECK: packed-sequence.py:[[@LINE-3]]:14: error: aten._pack_padded_sequence.default sizes its results by the values of its tensors, and torch's fake implementation of it differs from eager (its packed data keeps the padded length where eager's holds the sum of the lengths, and its batch_sizes is float32 where eager's is int64), so it cannot be captured (in pack_padded_sequence, {{.*}}rnn.py:{{[0-9]+}}); call the RNN on the padded tensor itself: for a one-directional RNN, each sequence's outputs up to its length are the packed call's;


def example_inputs():
    return torch.randn(5, 2, 4), torch.tensor([5, 3])
