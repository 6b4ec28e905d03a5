"""Torch switches that pick eager's CPU kernels or fill what factories leave
uninitialized, and torch dtypes and devices a program keeps in variables
(test_guarded_switches.py changes each after loading and checks the call
misses with a reason naming it, and matches eager)."""
import torch

DTYPE = torch.float32
DEVICE = torch.device("cpu")


def convolved(x):
    """A convolution (oneDNN or NNPACK may run it) and a factory whose
    memory deterministic algorithms may fill."""
    weight = torch.linspace(-1.0, 1.0, 6).reshape(2, 1, 3)
    y = torch.nn.functional.conv1d(x.reshape(1, 1, -1), weight)
    return y.reshape(-1) + torch.empty(0).sum()


def cast(x):
    """A module-level dtype and device, and torch.float32 itself."""
    return x.to(DTYPE) * 3 + torch.ones(8, device=DEVICE) + x.to(torch.float32)


def asks(x):
    """Asks whether it is compiled: eager, calling it when the artifact
    serves it, answers False, so the graph must be this path."""
    if torch.compiler.is_compiling():
        return x + 1
    return x - 1


def attends(x):
    """A float32 matmul (oneDNN may compute it in bf16 or tf32) and
    scaled_dot_product_attention (its flash or math kernel on CPU)."""
    q = x.reshape(1, 1, 2, 4)
    attended = torch.nn.functional.scaled_dot_product_attention(q, q * 2, q + 1)
    return attended.reshape(-1) + (x.reshape(2, 4) @ x.reshape(4, 2)).sum()


def example_inputs():
    return (torch.linspace(-2.0, 2.0, 8) / 3,)
