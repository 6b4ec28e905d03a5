"""A model whose forward walks a nested batch the way Lightning and
accelerate utilities do: `apply_to_collection(data, torch.Tensor, fn)`
recursing through `collections.abc.Mapping` (rebuilt by `type(data)(...)`
from `items()`), namedtuples (`_make` after `hasattr(data, '_fields')`),
lists and tuples (`isinstance(data, Sequence) and not isinstance(data,
str)`) and `dataclasses.is_dataclass` objects (`dataclasses.replace`),
leaving strings and ints alone; the batch moved and cast by
`move_data_to_device` reading `self.device` and `self.dtype` properties
from `next(self.parameters())`; encoders chosen per item by
`functools.singledispatchmethod` registered on `torch.Tensor`, `dict` and
`list`, so the same forward takes a tensor, a dict of tensors or a list
of tensors; a `collections.OrderedDict` of named features fused in key
order."""
import collections
import dataclasses
import functools
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import torch
import torch.nn as nn
import torch.nn.functional as F


def apply_to_collection(data, dtype, function, *args, **kwargs):
    if isinstance(data, dtype):
        return function(data, *args, **kwargs)
    elem_type = type(data)
    if isinstance(data, Mapping):
        return elem_type([(k, apply_to_collection(v, dtype, function, *args, **kwargs)) for k, v in data.items()])
    is_namedtuple = isinstance(data, tuple) and hasattr(data, "_asdict") and hasattr(data, "_fields")
    is_sequence = isinstance(data, Sequence) and not isinstance(data, str)
    if is_namedtuple or is_sequence:
        out = [apply_to_collection(d, dtype, function, *args, **kwargs) for d in data]
        return elem_type(*out) if is_namedtuple else elem_type(out)
    if dataclasses.is_dataclass(data) and not isinstance(data, type):
        changes = {f.name: apply_to_collection(getattr(data, f.name), dtype, function, *args, **kwargs)
                   for f in dataclasses.fields(data) if f.init}
        return dataclasses.replace(data, **changes)
    return data


class Patches(NamedTuple):
    pixels: torch.Tensor
    scale: float = 1.0


@dataclasses.dataclass
class AudioClip:
    wave: torch.Tensor
    sample_rate: int = 16000
    name: str = "clip"


class DeviceDtypeMixin:
    @property
    def device(self):
        return next(self.parameters()).device

    @property
    def dtype(self):
        return next(self.parameters()).dtype


class CollectionModel(DeviceDtypeMixin, nn.Module):
    def __init__(self, dim=24, vocab=50):
        super().__init__()
        self.image = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.GELU(),
                                   nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, dim))
        self.text = nn.EmbeddingBag(vocab, dim, mode="mean")
        self.audio = nn.Sequential(nn.Conv1d(1, 8, 9, stride=4), nn.ReLU(), nn.AdaptiveMaxPool1d(1),
                                   nn.Flatten(), nn.Linear(8, dim))
        self.patch = nn.Linear(12, dim)
        self.fuse = nn.Linear(dim, dim)
        self.head = nn.Linear(dim, 3)

    def move_data_to_device(self, batch):
        def to(t):
            if t.is_floating_point():
                return t.to(self.device, self.dtype, non_blocking=True)
            return t.to(self.device, non_blocking=True)
        return apply_to_collection(batch, torch.Tensor, to)

    @functools.singledispatchmethod
    def encode(self, item):
        raise TypeError(f"cannot encode {type(item).__name__}")

    @encode.register
    def _(self, item: torch.Tensor):
        if item.dim() == 4:
            return self.image(item)
        return self.text(item)

    @encode.register
    def _(self, item: dict):
        ids, mask = item["ids"], item.get("mask")
        if mask is not None:
            ids = ids.masked_fill(~mask, 0)
            weights = mask.to(self.dtype)
            emb = self.text.weight[ids] * weights[..., None]
            return emb.sum(1) / weights.sum(1, keepdim=True).clamp_min(1.0)
        return self.text(ids)

    @encode.register
    def _(self, item: list):
        return torch.stack([self.encode(x) for x in item], 0).mean(0)

    @encode.register
    def _(self, item: Patches):
        return self.patch(item.pixels).mean(1) * item.scale

    @encode.register
    def _(self, item: AudioClip):
        wave = item.wave / max(item.sample_rate / 16000, 1.0)
        return self.audio(wave[:, None, :])

    def forward(self, batch):
        batch = self.move_data_to_device(batch)
        if isinstance(batch, Mapping):
            features = collections.OrderedDict((k, self.encode(v)) for k, v in sorted(batch.items()))
        elif isinstance(batch, (list, tuple)):
            features = collections.OrderedDict((str(i), self.encode(v)) for i, v in enumerate(batch))
        else:
            features = collections.OrderedDict(only=self.encode(batch))
        h = 0
        for name, f in features.items():
            h = h + F.layer_norm(f, f.shape[-1:])
        h = F.gelu(self.fuse(h / len(features)))
        logits = self.head(h)
        return {"logits": logits, "features": features}


torch.manual_seed(0)
model = CollectionModel()
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(1, 50, (2, 6), generator=g)
    mask = torch.ones(2, 6, dtype=torch.bool)
    mask[1, 4:] = False
    batch = {
        "image": torch.randn(2, 3, 16, 16, generator=g, dtype=torch.float64),
        "text": {"ids": ids, "mask": mask},
        "views": [torch.randn(2, 3, 16, 16, generator=g), torch.randn(2, 3, 16, 16, generator=g)],
        "patches": Patches(torch.randn(2, 4, 12, generator=g), 0.5),
        "audio": AudioClip(torch.randn(2, 200, generator=g), sample_rate=32000, name="a"),
        "tokens": torch.randint(1, 50, (2, 5), generator=g),
    }
    return (batch,)
