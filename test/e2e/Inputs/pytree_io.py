"""Structured results and inputs: dicts, dataclasses and plain objects
returned, keyword arguments, keyword-only parameters, **kwargs, and inputs
that are nested dicts, lists, tuples and dataclasses."""
import collections
import dataclasses

import torch
from torch import nn


@dataclasses.dataclass
class Output:
    logits: torch.Tensor
    loss: object = None
    hidden: tuple = ()
    size: int = 0


@dataclasses.dataclass(frozen=True)
class Frozen:
    value: torch.Tensor
    tag: str = "frozen"


class Plain:
    def __init__(self, a, b):
        self.b = b
        self.a = a
        self.note = "set in __init__"


@dataclasses.dataclass
class Batch:
    tokens: torch.Tensor
    scale: float = 1.0


def dict_result(x):
    return {"logits": x + 1, "aux": [x * 2, 3], 0: None, "n": x.shape[0]}


def ordered_result(x):
    out = collections.OrderedDict()
    out["second"] = x * 2
    out["first"] = x + 1
    total = sum(value for key, value in out.items() if key in out)
    assert type(out) is collections.OrderedDict and isinstance(out, dict)
    return {"ordered": out, "copy": collections.OrderedDict(out, extra=total), "keys": list(out)}


def dataclass_result(x):
    h = x.relu()
    return Output(logits=h + 1, hidden=(h, None), size=x.shape[0])


def frozen_result(x):
    return Frozen(x - 1)


def object_result(x):
    return [Plain(x * 3, {"k": x}), 5]


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(16, 8)
        self.proj = nn.Linear(8, 4)

    def forward(self, input_ids, attention_mask=None, *, scale=1.0, return_dict=True, **kwargs):
        h = self.embed(input_ids)
        if attention_mask is not None:
            h = h * attention_mask.unsqueeze(-1)
        logits = self.proj(h) * scale
        if "bias" in kwargs:
            logits = logits + kwargs["bias"]
        if not return_dict:
            return (logits,)
        return {"logits": logits, "hidden": h}


model = Model().eval()


def forward_inputs():
    return (torch.tensor([[1, 2, 3], [4, 5, 6]]),)


def forward_kwargs():
    return {"attention_mask": torch.tensor([[1.0, 1.0, 0.0], [1.0, 0.0, 0.0]]), "scale": 2.0,
            "bias": torch.randn(4)}


def nested(batch, pairs, options):
    # batch: dict of a tensor and a dataclass; pairs: list of (tensor, int)
    # tuples; options: dict of constants.
    total = batch["x"] * batch["data"].scale + batch["data"].tokens
    for tensor, weight in pairs:
        total = total + tensor * weight
    if options["double"]:
        total = total * 2
    return {"total": total, "count": len(pairs)}


def nested_inputs():
    x = torch.randn(3)
    return ({"x": x, "data": Batch(torch.randn(3), 0.5)},
            [(torch.randn(3), 2), (torch.randn(3), 3)],
            {"double": True})


def example_inputs():
    return (torch.randn(2, 3),)
