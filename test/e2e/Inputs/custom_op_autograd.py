"""A block built on torch.library custom ops with registered autograd
formulas: one whose eager body leaves torch (numpy), one with two results
(an output and a statistic saved for backward), called as the decorated
function and through torch.ops."""
import numpy as np
import torch
import torch.nn as nn


@torch.library.custom_op("dync_e2e::numpy_softsign", mutates_args=())
def numpy_softsign(x: torch.Tensor) -> torch.Tensor:
    x_np = x.detach().numpy()
    return torch.from_numpy(x_np / (1.0 + np.abs(x_np)))


@numpy_softsign.register_fake
def _(x):
    return torch.empty_like(x)


def _softsign_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _softsign_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad / (1.0 + x.abs()) ** 2


numpy_softsign.register_autograd(_softsign_backward, setup_context=_softsign_setup)


@torch.library.custom_op("dync_e2e::rms_scale", mutates_args=())
def rms_scale(x: torch.Tensor, weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6)
    return x * rstd * weight, rstd


@rms_scale.register_fake
def _(x, weight):
    return torch.empty_like(x), x.new_empty(x.shape[:-1] + (1,))


def _rms_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0], inputs[1], output[1])


def _rms_backward(ctx, grad_out, grad_rstd):
    x, weight, rstd = ctx.saved_tensors
    x_hat = x * rstd
    grad_weight = (grad_out * x_hat).reshape(-1, x.shape[-1]).sum(0)
    g = grad_out * weight
    return rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True)), grad_weight


rms_scale.register_autograd(_rms_backward, setup_context=_rms_setup)


class CustomOpBlock(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.weight = nn.Parameter(torch.linspace(0.5, 1.5, dim))
        self.fc1 = nn.Linear(dim, 16)
        self.fc2 = nn.Linear(16, dim)

    def forward(self, x):
        h, rstd = torch.ops.dync_e2e.rms_scale(x, self.weight)
        h = numpy_softsign(self.fc1(h))
        return x + self.fc2(h), rstd


def example_inputs():
    return (torch.randn(3, 8, generator=torch.Generator().manual_seed(1)),)
