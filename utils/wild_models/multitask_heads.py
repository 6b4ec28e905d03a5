"""Multi-task heads on a shared encoder, as MT-DNN, jiant and many
fine-tuning scripts write them: heads in an `nn.ModuleDict` keyed by task
name and chosen by a string argument (`self.heads[task]`), per-task
settings in a dict of dicts (`self.task_cfg[task]["kind"]` choosing
classification, token tagging or regression), `task in self.heads`
checked with a `KeyError` for an unknown task, a task-specific adapter
read with `self.adapters[task] if task in self.adapters else None`, the
loss function picked from a dict of callables, and labels passed as an
optional keyword."""
import torch
import torch.nn as nn
import torch.nn.functional as F


TASKS = {
    "sentiment": {"kind": "sequence", "num_labels": 3},
    "ner": {"kind": "token", "num_labels": 9},
    "similarity": {"kind": "regression", "num_labels": 1},
}

LOSSES = {
    "sequence": F.cross_entropy,
    "token": lambda logits, labels: F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=-100),
    "regression": lambda logits, labels: F.mse_loss(logits.squeeze(-1), labels),
}


class Adapter(nn.Module):
    def __init__(self, dim, bottleneck=8):
        super().__init__()
        self.down = nn.Linear(dim, bottleneck)
        self.up = nn.Linear(bottleneck, dim)

    def forward(self, h):
        return h + self.up(F.relu(self.down(h)))


class MultiTaskModel(nn.Module):
    def __init__(self, vocab=60, dim=32, tasks=TASKS):
        super().__init__()
        self.task_cfg = tasks
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        layer = nn.TransformerEncoderLayer(dim, 4, dim * 2, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.heads = nn.ModuleDict({name: nn.Linear(dim, cfg["num_labels"]) for name, cfg in tasks.items()})
        self.adapters = nn.ModuleDict({"ner": Adapter(dim)})

    def forward(self, input_ids, task="sentiment", labels=None):
        if task not in self.heads:
            raise KeyError(f"unknown task {task!r}; known: {sorted(self.heads)}")
        mask = input_ids.ne(0)
        h = self.encoder(self.embed(input_ids), src_key_padding_mask=~mask)
        adapter = self.adapters[task] if task in self.adapters else None
        if adapter is not None:
            h = adapter(h)
        kind = self.task_cfg[task]["kind"]
        if kind == "token":
            logits = self.heads[task](h)
        else:
            pooled = (h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
            logits = self.heads[task](pooled)
        out = {"logits": logits}
        if labels is not None:
            out["loss"] = LOSSES[kind](logits, labels)
        return out


torch.manual_seed(0)
model = MultiTaskModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(1, 60, (3, 8), generator=g)
    ids[1, 6:] = 0
    return (ids,)


def example_kwargs():
    g = torch.Generator().manual_seed(2)
    labels = torch.randint(0, 9, (3, 8), generator=g)
    labels[1, 6:] = -100
    return {"task": "ner", "labels": labels}
