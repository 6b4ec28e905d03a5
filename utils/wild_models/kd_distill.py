"""Knowledge distillation as the distillation repos (RepDistiller,
torchdistill, the PyTorch KD tutorial) write it: a frozen teacher held on
the student wrapper (`requires_grad_(False)`, its logits and hint
features computed under `torch.no_grad()`), Hinton's loss
`F.kl_div(F.log_softmax(s / T), F.log_softmax(t / T), reduction="batchmean",
log_target=True) * T * T`, a FitNets hint by a 1x1 regressor and
`F.mse_loss`, an attention-transfer term from `x.pow(2).mean(1)` maps
normalized by `F.normalize(.view(B, -1))`, feature agreement by
`F.cosine_similarity`, and the weights of the terms in a dict."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ConvNet(nn.Module):
    def __init__(self, widths, classes=10):
        super().__init__()
        layers, cin = [], 3
        for w in widths:
            layers.append(nn.Sequential(nn.Conv2d(cin, w, 3, padding=1), nn.BatchNorm2d(w), nn.ReLU(), nn.MaxPool2d(2)))
            cin = w
        self.stages = nn.ModuleList(layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x, is_feat=False):
        feats = []
        for stage in self.stages:
            x = stage(x)
            feats.append(x)
        logits = self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))
        if is_feat:
            return feats, logits
        return logits


def attention_map(f):
    return F.normalize(f.pow(2).mean(1).view(f.size(0), -1))


class Distiller(nn.Module):
    def __init__(self, student, teacher, T=4.0, weights=None):
        super().__init__()
        self.student = student
        self.teacher = teacher.requires_grad_(False)
        self.T = T
        self.weights = weights or {"ce": 1.0, "kd": 0.9, "hint": 0.5, "at": 100.0, "cos": 0.1}
        s_ch = student.stages[1][0].out_channels
        t_ch = teacher.stages[1][0].out_channels
        self.regressor = nn.Sequential(nn.Conv2d(s_ch, t_ch, 1, bias=False), nn.BatchNorm2d(t_ch))

    def forward(self, images, targets):
        feat_s, logit_s = self.student(images, is_feat=True)
        with torch.no_grad():
            feat_t, logit_t = self.teacher(images, is_feat=True)
            feat_t = [f.detach() for f in feat_t]
        T = self.T
        losses = {}
        losses["ce"] = F.cross_entropy(logit_s, targets)
        losses["kd"] = F.kl_div(F.log_softmax(logit_s / T, dim=1), F.log_softmax(logit_t / T, dim=1),
                                reduction="batchmean", log_target=True) * T * T
        losses["hint"] = F.mse_loss(self.regressor(feat_s[1]), feat_t[1])
        losses["at"] = sum((attention_map(fs) - attention_map(ft)).pow(2).mean() for fs, ft in zip(feat_s, feat_t))
        pooled_s = self.regressor(feat_s[1]).flatten(2).mean(-1)
        pooled_t = feat_t[1].flatten(2).mean(-1)
        losses["cos"] = (1 - F.cosine_similarity(pooled_s, pooled_t, dim=1)).mean()
        total = sum(self.weights[k] * v for k, v in losses.items())
        return logit_s, total, losses


torch.manual_seed(0)
model = Distiller(ConvNet((8, 16, 16)), ConvNet((16, 24, 32))).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(4, 3, 16, 16, generator=g), torch.randint(0, 10, (4,), generator=g)
