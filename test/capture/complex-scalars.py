# A Python complex number in a tensor expression (`1j * x`, a complex
# alpha) is a literal of the graph, `complex(RE, IM)`, passed as torch's
# binding passes it: a Scalar where the schema takes one, a wrapped number
# (a 0-dim complex128 tensor that type promotion treats as a Python scalar)
# where it takes a Tensor.
# RUN: %dync export %s:rotate --emit=graph | FileCheck %s
import torch


def rotate(x, z):
    a = -torch.exp(x) + 1j * x
    b = z * (2.5 - 0.5j)
    return a, b, torch.add(z, a, alpha=1j)

# CHECK: aten::mul.Tensor(%{{[a-z0-9_]+}}, complex(0.0, 1.0)) : tensor<c64, [4]>
# CHECK: complex(2.5, -0.5)) : tensor<c128, [4]>
# CHECK: alpha=complex(0.0, 1.0)


def example_inputs():
    return torch.randn(4), torch.randn(4, dtype=torch.complex128)
