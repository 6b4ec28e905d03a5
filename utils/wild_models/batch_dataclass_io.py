"""A forward that takes a batch object and returns a NamedTuple, as
Lightning and torchrec-style training code passes data around: a
`@dataclass` `Batch` with a dict of dense features, an optional mask and
an `int` field, its `.to(...)`-less fields read by attribute in forward,
`dataclasses.fields` iterated to validate shapes, the dense features
visited with `sorted(batch.dense.items())`, a `typing.NamedTuple`
`ModelOutput` with a default field returned (and `._replace`d), plus
`_asdict()` summed into a loss."""
import dataclasses
from dataclasses import dataclass, field
from typing import Dict, NamedTuple, Optional

import torch
import torch.nn.functional as F
from torch import nn


@dataclass
class Batch:
    dense: Dict[str, torch.Tensor]
    ids: torch.Tensor
    mask: Optional[torch.Tensor] = None
    num_candidates: int = 4
    meta: dict = field(default_factory=dict)


class ModelOutput(NamedTuple):
    logits: torch.Tensor
    embedding: torch.Tensor
    aux_loss: Optional[torch.Tensor] = None


class BatchModel(nn.Module):
    def __init__(self, dims=None, hidden=32, vocab=50):
        super().__init__()
        dims = dims or {"age": 1, "geo": 3, "history": 6}
        self.proj = nn.ModuleDict({k: nn.Linear(d, hidden) for k, d in dims.items()})
        self.emb = nn.Embedding(vocab, hidden)
        self.mlp = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.out = nn.Linear(hidden, 1)

    def forward(self, batch: Batch) -> ModelOutput:
        for f in dataclasses.fields(batch):
            value = getattr(batch, f.name)
            if isinstance(value, torch.Tensor):
                assert value.shape[0] == batch.ids.shape[0], f.name
        dense = sum(self.proj[name](x) for name, x in sorted(batch.dense.items()))
        tok = self.emb(batch.ids)  # [B, L, H]
        if batch.mask is not None:
            m = batch.mask.unsqueeze(-1).to(tok.dtype)
            tok = (tok * m).sum(1) / m.sum(1).clamp(min=1.0)
        else:
            tok = tok.mean(1)
        h = self.mlp(torch.cat([dense, tok], dim=-1))
        emb = F.normalize(h, dim=-1)
        scores = self.out(h).squeeze(-1)
        logits = scores.unsqueeze(-1).expand(-1, batch.num_candidates) + emb[:, : batch.num_candidates]
        out = ModelOutput(logits=logits, embedding=emb)
        if batch.meta.get("with_aux", False):
            out = out._replace(aux_loss=(emb.pow(2).sum(-1) - 1.0).abs().mean())
        total = sum(v.sum() for v in out._asdict().values() if v is not None)
        return out, total


torch.manual_seed(0)
model = BatchModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    dense = {"history": torch.randn(5, 6, generator=g), "age": torch.rand(5, 1, generator=g),
             "geo": torch.randn(5, 3, generator=g)}
    ids = torch.randint(0, 50, (5, 7), generator=g)
    mask = torch.arange(7)[None, :] < torch.tensor([7, 3, 5, 1, 6])[:, None]
    return (Batch(dense=dense, ids=ids, mask=mask, num_candidates=3, meta={"with_aux": True}),)
