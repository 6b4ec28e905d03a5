# A kernel layout probe runs a call's CPU kernel on real tensors; a call
# given a symbolic size inside a slice (`y[:, :, i:i + n]`, LongT5's
# `_concatenate_3_blocks`) is not probed, since the real kernel would read
# each bound as an int and pin n to its example size (`s floordiv 2 == 5`,
# `+ 1 == 6`, `+ 2 == 7`): one graph per count instead of one for the
# range. The transposed input is in neither standard layout, which is
# where the probe runs.
# RUN: %dync export %s:blocks --dynamic 'x:1=s[4,32]' --emit=graph | FileCheck %s
import torch


def blocks(x):
    n = x.shape[1] // 2
    y = x.transpose(1, 2)
    return torch.cat([y[:, :, i:i + n] for i in range(3)], dim=1)


def example_inputs():
    return (torch.randn(1, 10, 4),)


# CHECK: graph @blocks(%x: tensor<f32, [1, s, 4]> = L['x'])
# CHECK-NEXT: symbols { s: [4, 32] }
# CHECK-NOT: ==
# CHECK: aten::slice.Tensor({{.*}}, 2, 0, s floordiv 2)
# CHECK: aten::slice.Tensor({{.*}}, 2, 2, s floordiv 2 + 2)
# CHECK: aten::cat.default({{.*}}) : tensor<f32, [1, 12, s floordiv 2]
