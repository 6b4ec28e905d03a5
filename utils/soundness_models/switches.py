"""Functions whose result depends on torch's kernel switches (oneDNN, its
determinism, NNPACK, CPU float16 reductions, the deterministic fill of
uninitialized memory, the float32 matmul precision, the attention kernels),
on torch dtype and device objects kept in module variables or read from
torch itself, and on torch.compiler.is_compiling()."""
import torch

DTYPE = torch.float32
DEVICE = torch.device("cpu")


def convolved(x):
    weight = torch.linspace(-1.0, 1.0, 6).reshape(2, 1, 3)
    y = torch.nn.functional.conv1d(x.reshape(1, 1, -1), weight)
    return y.reshape(-1) + torch.empty(0).sum()


def cast(x):
    return x.to(DTYPE) * 3 + torch.ones(12, device=DEVICE) + x.to(torch.float32)


def asks(x):
    if torch.compiler.is_compiling():
        return x + 1
    return x - 1


def example_convolved():
    return (torch.randn(12),)


def attends(x):
    q = x.reshape(1, 1, 3, 4)
    attended = torch.nn.functional.scaled_dot_product_attention(q, q * 2, q + 1)
    return attended.reshape(-1) + (x.reshape(3, 4) @ x.reshape(4, 3)).sum()


example_cast = example_asks = example_attends = example_convolved
