"""Domain-adversarial training (DANN, as the pytorch-DANN and
Transfer-Learning-Library ports write it): a `GradientReverseFunction`
(`torch.autograd.Function` whose forward stores the Python float `coeff`
on `ctx` and returns `input * 1.0`, whose backward returns
`grad_output.neg() * ctx.coeff, None`), wrapped in a `WarmStartGradientReverseLayer`
module whose coefficient follows `2 (hi - lo) / (1 + exp(-alpha i / max_iters)) - (hi - lo) + lo`
from a step counter kept on the module (`np.exp` on a Python float), the
feature extractor shared by a label classifier and a domain discriminator,
a gradient hook registered on the features by `register_hook` to scale
them, and the classification plus domain BCE losses returned."""
import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd import Function


class GradientReverseFunction(Function):
    @staticmethod
    def forward(ctx, input, coeff=1.0):
        ctx.coeff = coeff
        output = input * 1.0
        return output

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output.neg() * ctx.coeff, None


class WarmStartGradientReverseLayer(nn.Module):
    def __init__(self, alpha=1.0, lo=0.0, hi=1.0, max_iters=1000, auto_step=False):
        super().__init__()
        self.alpha = alpha
        self.lo = lo
        self.hi = hi
        self.iter_num = 300
        self.max_iters = max_iters
        self.auto_step = auto_step

    def forward(self, input):
        coeff = float(2.0 * (self.hi - self.lo) / (1.0 + np.exp(-self.alpha * self.iter_num / self.max_iters))
                      - (self.hi - self.lo) + self.lo)
        if self.auto_step:
            self.step()
        return GradientReverseFunction.apply(input, coeff)

    def step(self):
        self.iter_num += 1


class DANN(nn.Module):
    def __init__(self, in_dim=20, hidden=32, classes=4, feature_grad_scale=0.5):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(in_dim, hidden), nn.BatchNorm1d(hidden), nn.ReLU(),
                                      nn.Linear(hidden, hidden), nn.ReLU())
        self.classifier = nn.Linear(hidden, classes)
        self.grl = WarmStartGradientReverseLayer()
        self.domain = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))
        self.feature_grad_scale = feature_grad_scale

    def forward(self, x_s, y_s, x_t):
        x = torch.cat((x_s, x_t), dim=0)
        f = self.features(x)
        if f.requires_grad:
            f.register_hook(lambda grad: grad * self.feature_grad_scale)
        f_s, f_t = f.chunk(2, dim=0)
        y_pred = self.classifier(f_s)
        cls_loss = F.cross_entropy(y_pred, y_s)
        d = self.domain(self.grl(f)).squeeze(1)
        d_label = torch.cat((torch.ones(x_s.size(0)), torch.zeros(x_t.size(0)))).to(x.device)
        transfer_loss = F.binary_cross_entropy_with_logits(d, d_label)
        domain_acc = ((d > 0).float() == d_label).float().mean()
        return y_pred, cls_loss + transfer_loss, domain_acc


torch.manual_seed(0)
model = DANN().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(6, 20, generator=g), torch.randint(0, 4, (6,), generator=g), torch.randn(6, 20, generator=g) + 0.5
