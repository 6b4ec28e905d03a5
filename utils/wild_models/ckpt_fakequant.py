"""Quantization-aware training as QAT recipes write it by hand: a
`FakeQuantSTE` custom `autograd.Function` that rounds to an int8 grid in
forward and passes the gradient straight through (masked to the clipping
range) in backward, per-channel symmetric weight scales from
`amax(dim=1, keepdim=True)`, per-tensor activation scales held in an EMA
buffer, `QuantConv2d`/`QuantLinear` subclasses overriding `forward` to call
`F.conv2d`/`F.linear` on the fake-quantized weight, and the residual stages
wrapped in `torch.utils.checkpoint.checkpoint(stage, x, use_reentrant=False)`
when `self.use_checkpoint` is set, as memory-saving training code does."""
import torch
import torch.nn.functional as F
import torch.utils.checkpoint
from torch import nn


class FakeQuantSTE(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, scale, qmin, qmax):
        q = torch.clamp(torch.round(x / scale), qmin, qmax)
        ctx.save_for_backward(x, scale)
        ctx.qmin, ctx.qmax = qmin, qmax
        return q * scale

    @staticmethod
    def backward(ctx, grad_output):
        x, scale = ctx.saved_tensors
        inside = (x >= ctx.qmin * scale) & (x <= ctx.qmax * scale)
        return grad_output * inside.to(grad_output.dtype), None, None, None


def fake_quant_weight(w, bits=8):
    qmax = 2 ** (bits - 1) - 1
    scale = w.detach().abs().flatten(1).amax(dim=1).clamp(min=1e-8) / qmax
    scale = scale.view(-1, *([1] * (w.dim() - 1)))
    return FakeQuantSTE.apply(w, scale, -qmax - 1, qmax)


class ActQuant(nn.Module):
    def __init__(self, bits=8, momentum=0.1):
        super().__init__()
        self.bits = bits
        self.momentum = momentum
        self.register_buffer("running_amax", torch.tensor(4.0))

    def forward(self, x):
        if self.training:
            with torch.no_grad():
                self.running_amax.mul_(1 - self.momentum).add_(self.momentum * x.abs().max())
        qmax = 2 ** (self.bits - 1) - 1
        scale = (self.running_amax / qmax).clamp(min=1e-8)
        return FakeQuantSTE.apply(x, scale, -qmax - 1, qmax)


class QuantConv2d(nn.Conv2d):
    def forward(self, x):
        return F.conv2d(x, fake_quant_weight(self.weight), self.bias, self.stride, self.padding,
                        self.dilation, self.groups)


class QuantLinear(nn.Linear):
    def forward(self, x):
        return F.linear(x, fake_quant_weight(self.weight), self.bias)


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.act_q = ActQuant()
        self.conv1 = QuantConv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = QuantConv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(QuantConv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        x = self.act_q(x)
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class QATResNet(nn.Module):
    def __init__(self, num_classes=10, use_checkpoint=True):
        super().__init__()
        self.use_checkpoint = use_checkpoint
        self.stem = nn.Sequential(QuantConv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True))
        self.stages = nn.ModuleList([
            nn.Sequential(BasicBlock(8, 8), BasicBlock(8, 8)),
            nn.Sequential(BasicBlock(8, 16, 2), BasicBlock(16, 16)),
        ])
        self.head_q = ActQuant()
        self.fc = QuantLinear(16, num_classes)

    def forward(self, x, targets=None):
        x = self.stem(x)
        for stage in self.stages:
            if self.use_checkpoint and torch.is_grad_enabled():
                x = torch.utils.checkpoint.checkpoint(stage, x, use_reentrant=False)
            else:
                x = stage(x)
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        logits = self.fc(self.head_q(x))
        if targets is None:
            return logits
        return logits, F.cross_entropy(logits, targets, label_smoothing=0.1)


torch.manual_seed(0)
model = QATResNet().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(2, 3, 12, 12, generator=g), torch.tensor([3, 7])
