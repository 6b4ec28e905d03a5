# Torch's convolution decides `batch < 16` (which kernel it would pick), so
# the graph captured at the example's batch serves [2, 15] and one captured
# at 16 serves the rest; the two are the same graph, so the artifact holds
# one graph over [2, 32] (with the earlier one's name and one set of
# kernels), beside the one for batch 1.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:conv -o %t/conv.dync.so --dynamic 'x:0=batch[1,32]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=NOTES
# RUN: %dync inspect %t/conv.dync.so | FileCheck %s --check-prefix=GRAPHS
import torch

torch.manual_seed(0)
weight = torch.randn(4, 3, 3, 3)


def conv(x):
    return torch.nn.functional.conv2d(x, weight, padding=1).relu()


def example_inputs():
    return (torch.randn(4, 3, 8, 8),)

# NOTES: adding a graph for batch = 1
# NOTES: the program cuts the range at 16, so the graph for batch serves batch in [2, 15]
# NOTES-SAME: adding a graph for batch = 16
# NOTES: dync: note: conv: the graphs for batch in [2, 15] and [16, 32] are the same; one graph serves both
# NOTES-NOT: the graphs for

# GRAPHS-NOT: graph @conv$batch_16
# GRAPHS: graph @conv(%x: tensor<f32, [batch, 3, 8, 8]> = L['x'],
# GRAPHS: symbols { batch: [2, 32] }
# GRAPHS-NOT: graph @conv$batch_16
# GRAPHS: graph @conv$batch_1(%x: tensor<f32, [1, 3, 8, 8]> = L['x'],
# GRAPHS-NOT: graph @conv$batch_16
