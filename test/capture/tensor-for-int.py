# A 0-d integer tensor the oracle computed, passed where torch takes an int
# (nn.LSTM sizes its initial state by a packed sequence's batch_sizes[0]),
# is refused with a message that says so: the size depends on the data.
# RUN: rm -f %t.so
# RUN: not %dync export %s:packed_sizes -o %t.so 2>&1 | FileCheck %s
# RUN: not ls %t.so
import torch


def packed_sizes(x, lengths):
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
    return torch.zeros(2, packed.batch_sizes[0], 3)

# CHECK: error: running {{.*}}zeros on fake tensors, with a tensor where torch takes an int (a size read from a tensor's values, as a packed sequence's batch_sizes[0] is, depends on the data: not supported yet) raised TypeError


def example_inputs():
    return torch.randn(5, 2, 4), torch.tensor([5, 3])
