"""Wrapper modules that forward attribute reads to the module they wrap,
as DDP/FSDP, timm's ModelEmaV2, Lightning and accelerate users write them:
an `EMAWrapper` whose `__getattr__` falls back from `nn.Module.__getattr__`
to `getattr(self.module, name)` (so `wrapper.encode(x)` and
`wrapper.num_classes` reach the inner model), a `unwrap_model` helper
peeling `.module` while `hasattr(model, "module")`, a `DataParallelish`
container whose forward is `self.module(*inputs, **kwargs)`, an EMA copy
made by `copy.deepcopy` with `requires_grad_(False)` and updated by
`torch._foreach_lerp_` under `no_grad` before export, and a task wrapper
reading the inner config through the chain (`self.model.config["dim"]`)."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class Backbone(nn.Module):
    def __init__(self, dim=24, num_classes=7):
        super().__init__()
        self.config = {"dim": dim, "num_classes": num_classes, "pool": "mean"}
        self.num_classes = num_classes
        self.stem = nn.Linear(12, dim)
        self.blocks = nn.Sequential(*[nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU())
                                      for _ in range(2)])
        self.head = nn.Linear(dim, num_classes)

    def encode(self, x):
        h = self.stem(x)
        return h + self.blocks(h)

    def forward(self, x):
        h = self.encode(x)
        pooled = h.mean(1) if self.config["pool"] == "mean" else h[:, 0]
        return self.head(pooled)


class DataParallelish(nn.Module):
    """What DistributedDataParallel looks like to model code: the real model
    is `.module`, and forward just calls it."""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


class EMAWrapper(nn.Module):
    def __init__(self, model, decay=0.9):
        super().__init__()
        self.module = copy.deepcopy(model).requires_grad_(False)
        self.decay = decay

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.module, name)

    @torch.no_grad()
    def update(self, model):
        ema_params = list(self.module.parameters())
        params = list(model.parameters())
        torch._foreach_lerp_(ema_params, params, 1.0 - self.decay)

    def forward(self, x):
        return self.module(x)


def unwrap_model(model):
    while hasattr(model, "module"):
        model = model.module
    return model


class Distiller(nn.Module):
    """Student trained against the EMA teacher; both reached through
    wrappers the way a training script holds them."""

    def __init__(self):
        super().__init__()
        student = Backbone()
        self.model = DataParallelish(student)
        self.ema = EMAWrapper(student)
        with torch.no_grad():
            for p in student.parameters():
                p.add_(0.05 * torch.randn_like(p))
        self.ema.update(student)
        dim = unwrap_model(self.model).config["dim"]
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, temperature=2.0):
        inner = unwrap_model(self.model)
        logits = self.model(x)
        feats = self.proj(inner.encode(x))
        with torch.no_grad():
            teacher_feats = self.ema.encode(x)
            teacher_logits = self.ema(x)
        num_classes = self.ema.num_classes
        assert logits.shape[-1] == num_classes
        kd = F.kl_div(F.log_softmax(logits / temperature, -1), F.softmax(teacher_logits / temperature, -1),
                      reduction="batchmean") * temperature ** 2
        hint = F.mse_loss(feats, teacher_feats)
        return logits, kd + hint


torch.manual_seed(0)
model = Distiller().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(3, 5, 12, generator=g),)
