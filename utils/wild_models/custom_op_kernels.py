"""User-defined operators as projects now register them with
`torch.library.custom_op` (the PyTorch custom-ops tutorial, torchao and
inference engines wrap their kernels this way): an opaque op whose eager
body leaves torch (numpy), with `register_fake` giving its output's
metadata and `register_autograd` plus `setup_context` its backward; a
fused RMSNorm op returning two tensors (the output and the reciprocal RMS
saved for backward), a `mutates_args` op updating a running-statistics
buffer in place, an op taking a Python float and int beside tensors, and
calls through `torch.ops.mylib.name` as well as through the decorated
function, in a small MLP block."""
import numpy as np
import torch
import torch.nn as nn


@torch.library.custom_op("wild_custom::numpy_gelu_tanh", mutates_args=())
def numpy_gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    x_np = x.detach().cpu().numpy()
    y_np = 0.5 * x_np * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x_np + 0.044715 * x_np ** 3)))
    return torch.from_numpy(y_np.astype(x_np.dtype)).to(x.device)


@numpy_gelu_tanh.register_fake
def _(x):
    return torch.empty_like(x)


def _gelu_setup_context(ctx, inputs, output):
    (x,) = inputs
    ctx.save_for_backward(x)


def _gelu_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    k = (2.0 / torch.pi) ** 0.5
    inner = k * (x + 0.044715 * x ** 3)
    t = torch.tanh(inner)
    d = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
    return grad * d


numpy_gelu_tanh.register_autograd(_gelu_backward, setup_context=_gelu_setup_context)


@torch.library.custom_op("wild_custom::fused_rms_norm", mutates_args=())
def fused_rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return x * rstd * weight, rstd


@fused_rms_norm.register_fake
def _(x, weight, eps):
    return torch.empty_like(x), x.new_empty(x.shape[:-1] + (1,))


def _rms_setup_context(ctx, inputs, output):
    x, weight, eps = inputs
    _, rstd = output
    ctx.save_for_backward(x, weight, rstd)


def _rms_backward(ctx, grad_out, grad_rstd):
    x, weight, rstd = ctx.saved_tensors
    x_hat = x * rstd
    grad_weight = (grad_out * x_hat).reshape(-1, x.shape[-1]).sum(0)
    g = grad_out * weight
    grad_x = rstd * (g - x_hat * (g * x_hat).mean(-1, keepdim=True))
    return grad_x, grad_weight, None


fused_rms_norm.register_autograd(_rms_backward, setup_context=_rms_setup_context)


@torch.library.custom_op("wild_custom::ema_stats_", mutates_args=("running",))
def ema_stats_(running: torch.Tensor, x: torch.Tensor, momentum: float, steps: int) -> None:
    batch = x.detach().abs().amax(dim=0)
    for _ in range(steps):
        running.mul_(1 - momentum).add_(batch, alpha=momentum)


@ema_stats_.register_fake
def _(running, x, momentum, steps):
    return None


class CustomOpBlock(nn.Module):
    def __init__(self, dim=16, hidden=48):
        super().__init__()
        self.norm_weight = nn.Parameter(torch.ones(dim) + 0.1 * torch.randn(dim))
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.register_buffer("absmax", torch.zeros(hidden))
        self.eps = 1e-6

    def forward(self, x):
        h, rstd = torch.ops.wild_custom.fused_rms_norm(x, self.norm_weight, self.eps)
        h = self.fc1(h)
        ema_stats_(self.absmax, h.reshape(-1, h.shape[-1]), 0.1, 2)
        h = numpy_gelu_tanh(h)
        return x + self.fc2(h), rstd


class CustomOpMLP(nn.Module):
    def __init__(self, depth=2, dim=16, classes=5):
        super().__init__()
        self.blocks = nn.ModuleList([CustomOpBlock(dim) for _ in range(depth)])
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        rstds = []
        for block in self.blocks:
            x, rstd = block(x)
            rstds.append(rstd)
        y, _ = fused_rms_norm(x, torch.ones(x.shape[-1]), 1e-6)
        return self.head(y.mean(1)), torch.cat(rstds, -1)


torch.manual_seed(0)
model = CustomOpMLP().eval()
check_gradients = True


def example_inputs():
    return (torch.randn(2, 6, 16, generator=torch.Generator().manual_seed(1)),)
