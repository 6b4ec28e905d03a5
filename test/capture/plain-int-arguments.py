# A symbolic size where an ATen operator's schema takes a plain int
# (`one_hot(Tensor self, int num_classes)`, LongT5's count of global blocks)
# would be specialized by torch's argument parser to the example's value.
# torch's own Python kernel for the operator (torch._decomp's
# CompositeImplicitAutograd implementation) runs instead and keeps it
# symbolic, its range checks on the values asserted when the graph runs.
# RUN: %dync export %s:blocks --dynamic 'x:1=s[4,32]' --emit=graph | FileCheck %s
import torch


def blocks(x):
    ids = torch.arange(x.size(1)) // 4
    return torch.nn.functional.one_hot(ids, x.size(1) // 4 + 1) * x.sum()


# CHECK-LABEL: graph @blocks
# CHECK: symbols { s: [4, 32] } {
# CHECK: aten::_assert_async.msg({{.*}}, "one_hot: Class values must be non-negative.")
# CHECK: aten::lt.Scalar(%{{[0-9]+}}, s floordiv 4 + 1)
# CHECK: aten::_assert_async.msg({{.*}}, "one_hot: Class values must be smaller than num_classes.")
# CHECK: aten::arange.start_step(0, s floordiv 4 + 1, dtype=i64,
# CHECK: : tensor<i64, [s, s floordiv 4 + 1]>


def example_inputs():
    return (torch.randn(2, 8),)
