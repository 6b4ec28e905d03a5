# A TorchScript function (`@torch.jit.script def f(...)`, as WaveGlow's
# fused gated activation is written) is captured by inlining the Python
# function torch.jit.script compiled, which torch keeps on it for tracers:
# its operations join the graph. Its channel count arrives as a one-element
# IntTensor made in the caller, whose value fake tensors know.
# RUN: %dync export %s:gated --emit=graph | FileCheck %s
import torch


@torch.jit.script
def fused_add_tanh_sigmoid_multiply(input_a, input_b, n_channels):
    n_channels_int = n_channels[0]
    in_act = input_a + input_b
    t_act = torch.tanh(in_act[:, :n_channels_int, :])
    s_act = torch.sigmoid(in_act[:, n_channels_int:, :])
    return t_act * s_act


def gated(a, b):
    return fused_add_tanh_sigmoid_multiply(a, b, torch.IntTensor([3]))

# CHECK-LABEL: graph @gated(
# CHECK:       aten::add.Tensor(%a, %b)
# CHECK:       aten::tanh.default({{.*}}) : tensor<f32, [2, 3, 5]>
# CHECK:       aten::sigmoid.default({{.*}}) : tensor<f32, [2, 3, 5]>
# CHECK:       aten::mul.Tensor(
# CHECK:       return


def example_inputs():
    return (torch.randn(2, 6, 5), torch.randn(2, 6, 5))
