"""A LightningModule's training step as Lightning's strategy runs it:
`_LightningModuleWrapperBase.forward(*inputs, **kwargs)` dispatching by
the trainer's stage string (`getattr(self._forward_module, "training_step")`),
`self.hparams` as an `AttributeDict` (a dict subclass with `__getattr__`),
`self.log`/`self.log_dict` storing detached tensors in a results dict and
appending epoch-level values to a `defaultdict(list)`, torchmetrics-style
`Accuracy`/`MeanMetric` modules whose `forward` updates `add_`-ed state
buffers and returns the batch value, a `shared_step(batch, stage)` with an
f-string metric prefix, `batch` as a dict unpacked by keys, gradient
clipping values read from `hparams`, and the step returning
`{"loss": loss, "preds": preds.detach()}`."""
import collections

import torch
import torch.nn.functional as F
from torch import nn


class AttributeDict(dict):
    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError as exp:
            raise AttributeError(f'Missing attribute "{key}"') from exp

    def __setattr__(self, key, val):
        self[key] = val


class Accuracy(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        self.num_classes = num_classes
        self.register_buffer("correct", torch.tensor(0))
        self.register_buffer("total", torch.tensor(0))

    def forward(self, preds, target):
        if preds.is_floating_point():
            preds = preds.argmax(dim=-1)
        correct = (preds == target).sum()
        self.correct.add_(correct)
        self.total.add_(target.numel())
        return correct.float() / target.numel()


class MeanMetric(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("mean_value", torch.tensor(0.0))
        self.register_buffer("weight", torch.tensor(0.0))

    def forward(self, value, weight=1.0):
        value = torch.as_tensor(value, dtype=torch.float32)
        weight = torch.broadcast_to(torch.as_tensor(weight, dtype=torch.float32), value.shape)
        self.mean_value.add_((value * weight).sum())
        self.weight.add_(weight.sum())
        return (value * weight).sum() / weight.sum()


class TrainerState:
    def __init__(self, stage):
        self.stage = stage


class Trainer:
    def __init__(self):
        self.state = TrainerState("train")
        self.global_step = 41


class LitClassifier(nn.Module):
    def __init__(self, **kwargs):
        super().__init__()
        self.hparams = AttributeDict(kwargs)
        self.backbone = nn.Sequential(nn.Linear(self.hparams.in_dim, self.hparams.hidden), nn.GELU(),
                                      nn.LayerNorm(self.hparams.hidden))
        self.head = nn.Linear(self.hparams.hidden, self.hparams.num_classes)
        self.train_acc = Accuracy(self.hparams.num_classes)
        self.train_loss = MeanMetric()
        self._results = {}
        self._epoch_results = collections.defaultdict(list)
        self.trainer = None

    def log(self, name, value, prog_bar=False, on_step=True, on_epoch=False, batch_size=None):
        if isinstance(value, torch.Tensor):
            value = value.detach()
        if on_step:
            self._results[name] = value
        if on_epoch:
            self._epoch_results[name].append((value, batch_size))

    def log_dict(self, dictionary, **kwargs):
        for k, v in dictionary.items():
            self.log(k, v, **kwargs)

    def forward(self, x):
        return self.head(self.backbone(x))

    def shared_step(self, batch, stage):
        x, y, weight = batch["x"], batch["y"], batch.get("weight")
        logits = self(x)
        loss = F.cross_entropy(logits, y, reduction="none", label_smoothing=self.hparams.label_smoothing)
        if weight is not None:
            loss = (loss * weight).sum() / weight.sum()
        else:
            loss = loss.mean()
        preds = logits.argmax(dim=-1)
        acc = self.train_acc(logits, y)
        self.log_dict({f"{stage}/loss": loss, f"{stage}/acc": acc}, prog_bar=True, on_epoch=True,
                      batch_size=x.shape[0])
        return loss, preds

    def training_step(self, batch, batch_idx):
        loss, preds = self.shared_step(batch, "train")
        self.train_loss(loss.detach())
        if self.trainer is not None and batch_idx % self.hparams.log_every_n_steps == 0:
            self.log("global_step", float(self.trainer.global_step))
        reg = self.hparams.weight_decay_in_loss * sum(p.pow(2).sum() for p in self.head.parameters())
        return {"loss": loss + reg, "preds": preds.detach()}


class _LightningModuleWrapperBase(nn.Module):
    def __init__(self, forward_module):
        super().__init__()
        self._forward_module = forward_module

    def forward(self, *inputs, **kwargs):
        trainer = self._forward_module.trainer
        if trainer is not None:
            stage = trainer.state.stage
            method = {"train": "training_step", "validate": "validation_step", "test": "test_step"}.get(stage)
            if method is not None:
                return getattr(self._forward_module, method)(*inputs, **kwargs)
        return self._forward_module(*inputs, **kwargs)


torch.manual_seed(0)
module = LitClassifier(in_dim=12, hidden=24, num_classes=4, label_smoothing=0.05, log_every_n_steps=1,
                       weight_decay_in_loss=1e-3)
module.trainer = Trainer()
model = _LightningModuleWrapperBase(module).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    batch = {"x": torch.randn(6, 12, generator=g), "y": torch.randint(0, 4, (6,), generator=g),
             "weight": torch.rand(6, generator=g) + 0.5}
    return batch, 3
