"""Stateful metrics as torchmetrics writes them, run inside a model's
forward: a Metric base whose `add_state(name, default, dist_reduce_fx)`
keeps the defaults in a `_defaults` dict and the reduction (a string mapped
to a function, or a callable) in `_reductions`, and sets the state with
setattr; `forward` is torchmetrics' `_forward_reduce_state_update`: the
global state saved as a dict, `reset()` to the defaults, `update` on the
batch, the batch value computed, then each state merged back by its
reduction (sum, cat, max); `update` methods doing `self.total += ...` on
the state; a loop-form binned precision-recall curve writing
`confmat[i, 1, 1] = ...` per threshold, AUROC by the trapezoid rule with
`torch.trapz`, stat scores from one-hot sums and `_safe_divide`; a
MetricCollection as a ModuleDict whose forward returns a dict, next to a
small classifier that is scored."""
from typing import Any, Callable, Dict, Optional, Union

import torch
import torch.nn as nn
import torch.nn.functional as F


def dim_zero_sum(x):
    return torch.sum(x, dim=0)


def dim_zero_max(x):
    return torch.max(x, dim=0).values


def dim_zero_cat(x):
    if isinstance(x, torch.Tensor):
        return x
    x = [y.unsqueeze(0) if y.numel() == 1 and y.ndim == 0 else y for y in x]
    return torch.cat(x, dim=0)


def _safe_divide(num, denom, zero_division=0.0):
    num = num if num.is_floating_point() else num.float()
    denom = denom if denom.is_floating_point() else denom.float()
    zero_division = torch.tensor(zero_division, dtype=num.dtype)
    return torch.where(denom != 0, num / denom, zero_division)


class Metric(nn.Module):
    full_state_update: Optional[bool] = False

    def __init__(self):
        super().__init__()
        self._defaults: Dict[str, Union[list, torch.Tensor]] = {}
        self._persistent: Dict[str, bool] = {}
        self._reductions: Dict[str, Union[str, Callable, None]] = {}
        self._update_count = 0
        self._computed = None

    def add_state(self, name, default, dist_reduce_fx: Optional[Union[str, Callable]] = None, persistent=False):
        if dist_reduce_fx == "sum":
            dist_reduce_fx = dim_zero_sum
        elif dist_reduce_fx == "max":
            dist_reduce_fx = dim_zero_max
        elif dist_reduce_fx == "cat":
            dist_reduce_fx = dim_zero_cat
        setattr(self, name, default)
        self._defaults[name] = default.detach().clone() if isinstance(default, torch.Tensor) else []
        self._persistent[name] = persistent
        self._reductions[name] = dist_reduce_fx

    def reset(self):
        self._update_count = 0
        self._computed = None
        for attr, default in self._defaults.items():
            if isinstance(default, torch.Tensor):
                setattr(self, attr, default.detach().clone().to(getattr(self, attr).device))
            else:
                setattr(self, attr, [])

    def _reduce_states(self, incoming_state: Dict[str, Any]):
        for attr in self._defaults:
            local_state = getattr(self, attr)
            global_state = incoming_state[attr]
            reduce_fn = self._reductions[attr]
            if reduce_fn == dim_zero_sum:
                reduced = global_state + local_state
            elif reduce_fn == dim_zero_max:
                reduced = torch.max(global_state, local_state)
            elif reduce_fn == dim_zero_cat:
                if isinstance(global_state, torch.Tensor):
                    reduced = torch.cat([global_state, local_state])
                else:
                    reduced = global_state + local_state
            elif reduce_fn is None and isinstance(global_state, torch.Tensor):
                reduced = torch.stack([global_state, local_state])
            else:
                reduced = reduce_fn(torch.stack([global_state, local_state]))
            setattr(self, attr, reduced)

    def forward(self, *args, **kwargs):
        # _forward_reduce_state_update: the batch value from a fresh state,
        # then the global state merged back
        global_state = {attr: getattr(self, attr) for attr in self._defaults}
        _update_count = self._update_count
        self.reset()
        self.update(*args, **kwargs)
        batch_val = self.compute()
        self._update_count = _update_count + 1
        self._reduce_states(global_state)
        self._computed = None
        return batch_val


class MeanSquaredError(Metric):
    def __init__(self):
        super().__init__()
        self.add_state("sum_squared_error", default=torch.tensor(0.0), dist_reduce_fx="sum")
        self.add_state("total", default=torch.tensor(0), dist_reduce_fx="sum")

    def update(self, preds, target):
        diff = preds - target
        self.sum_squared_error += torch.sum(diff * diff)
        self.total += target.numel()

    def compute(self):
        return self.sum_squared_error / self.total


class MulticlassStatScores(Metric):
    def __init__(self, num_classes, average="macro"):
        super().__init__()
        self.num_classes, self.average = num_classes, average
        for name in ("tp", "fp", "tn", "fn"):
            self.add_state(name, torch.zeros(num_classes, dtype=torch.long), dist_reduce_fx="sum")
        self.add_state("max_confidence", torch.tensor(0.0), dist_reduce_fx="max")

    def update(self, preds, target):
        if preds.is_floating_point():
            self.max_confidence = torch.max(self.max_confidence, preds.softmax(-1).max())
            preds = preds.argmax(dim=1)
        preds_oh = F.one_hot(preds, self.num_classes)
        target_oh = F.one_hot(target, self.num_classes)
        tp = (preds_oh & target_oh).sum(0)
        fp = (preds_oh & ~target_oh.bool()).sum(0)
        fn = (~preds_oh.bool() & target_oh).sum(0)
        tn = target.numel() - tp - fp - fn
        self.tp += tp
        self.fp += fp
        self.tn += tn
        self.fn += fn

    def compute(self):
        precision = _safe_divide(self.tp, self.tp + self.fp)
        recall = _safe_divide(self.tp, self.tp + self.fn)
        f1 = _safe_divide(2 * precision * recall, precision + recall)
        if self.average == "macro":
            return {"f1": f1.mean(), "precision": precision.mean(), "recall": recall.mean()}
        return {"f1": f1, "precision": precision, "recall": recall}


class BinaryAUROC(Metric):
    def __init__(self, thresholds=11):
        super().__init__()
        self.register_buffer("thresholds", torch.linspace(0, 1, thresholds), persistent=False)
        self.add_state("confmat", torch.zeros(thresholds, 2, 2, dtype=torch.long), dist_reduce_fx="sum")
        self.add_state("scores", [], dist_reduce_fx="cat")

    def update(self, preds, target):
        if not torch.all((preds >= 0) * (preds <= 1)):
            preds = preds.sigmoid()
        self.scores.append(preds)
        len_t = len(self.thresholds)
        confmat = self.thresholds.new_empty((len_t, 2, 2), dtype=torch.int64)
        target = target == 1
        for i in range(len_t):
            preds_t = preds >= self.thresholds[i]
            confmat[i, 1, 1] = (target & preds_t).sum()
            confmat[i, 0, 1] = ((~target) & preds_t).sum()
            confmat[i, 1, 0] = (target & (~preds_t)).sum()
        confmat[:, 0, 0] = len(preds_t) - confmat[:, 0, 1] - confmat[:, 1, 0] - confmat[:, 1, 1]
        self.confmat += confmat

    def compute(self):
        tps = self.confmat[:, 1, 1]
        fps = self.confmat[:, 0, 1]
        fns = self.confmat[:, 1, 0]
        tns = self.confmat[:, 0, 0]
        tpr = _safe_divide(tps, tps + fns).flip(0)
        fpr = _safe_divide(fps, fps + tns).flip(0)
        return torch.trapz(tpr, fpr)


class MetricCollection(nn.ModuleDict):
    def __init__(self, metrics: Dict[str, Metric], prefix: Optional[str] = None):
        super().__init__(metrics)
        self.prefix = prefix

    def forward(self, *args, **kwargs):
        res = {}
        for name, metric in self.items():
            value = metric(*args, **kwargs)
            if isinstance(value, dict):
                for key, v in value.items():
                    res[f"{self.prefix or ''}{name}_{key}"] = v
            else:
                res[f"{self.prefix or ''}{name}"] = value
        return res


class ScoredClassifier(nn.Module):
    def __init__(self, in_features=12, num_classes=4):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_features, 32), nn.GELU(), nn.Linear(32, num_classes))
        self.regressor = nn.Linear(in_features, 1)
        self.cls_metrics = MetricCollection({"stats": MulticlassStatScores(num_classes)}, prefix="val/")
        self.mse = MeanSquaredError()
        self.auroc = BinaryAUROC()

    def forward(self, x, labels, values):
        logits = self.net(x)
        pred_values = self.regressor(x).squeeze(-1)
        logs = self.cls_metrics(logits, labels)
        logs["val/mse"] = self.mse(pred_values, values)
        logs["val/auroc"] = self.auroc(logits[:, 0].sigmoid(), (labels == 0).long())
        logs["val/loss"] = F.cross_entropy(logits, labels)
        return logs


torch.manual_seed(0)
model = ScoredClassifier().eval()
# a previous batch already accumulated, as mid-epoch
with torch.no_grad():
    _g = torch.Generator().manual_seed(2)
    model(torch.randn(10, 12, generator=_g), torch.randint(0, 4, (10,), generator=_g), torch.randn(10, generator=_g))
    model.auroc.scores = []


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(16, 12, generator=g), torch.randint(0, 4, (16,), generator=g), torch.randn(16, generator=g)
