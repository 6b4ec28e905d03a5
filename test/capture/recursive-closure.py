# A function whose closure holds itself (a nested function that calls
# itself by name) is wrapped once: its cell refers back to the same value,
# and calls through it are inlined to the depth the program takes.
# RUN: %dync export %s:scaled --emit=graph | FileCheck %s
import torch


def make_factorial():
    def factorial(n):
        return 1 if n <= 1 else n * factorial(n - 1)

    return factorial


factorial = make_factorial()


def scaled(x):
    return x * factorial(4)


def example_inputs():
    return (torch.randn(3),)

# CHECK-LABEL: graph @scaled(
# CHECK-NEXT:    %0 = aten::mul.Tensor(%x, 24) : tensor<f32, [3]>
# CHECK-NEXT:    return %0
