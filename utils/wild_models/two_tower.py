"""A two-tower retrieval model as TensorFlow-Recommenders ports and
torchrec's examples write it: a user tower over id and history embeddings
(`nn.EmbeddingBag(mode="mean")` with `padding_idx`), an item tower,
`F.normalize`d outputs, in-batch sampled softmax with a learnable
temperature clamped by `clamp_`-free `torch.clamp(min=...)`, the
log-Q sampling-bias correction `logits - torch.log(item_freq)`, accidental
hits of the same item masked with `masked_fill(finfo.min)` off the
diagonal, labels from `torch.arange`, and recall@k of the scores by `topk`
and `eq(...).any(-1)`."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Tower(nn.Module):
    def __init__(self, in_dim, hidden, out_dim):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(in_dim, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))

    def forward(self, x):
        return F.normalize(self.mlp(x), p=2, dim=-1)


class TwoTower(nn.Module):
    def __init__(self, n_users=40, n_items=60, dim=16, out_dim=16, init_temperature=0.07):
        super().__init__()
        self.user_emb = nn.Embedding(n_users, dim)
        self.hist_emb = nn.EmbeddingBag(n_items, dim, mode="mean", padding_idx=0)
        self.item_emb = nn.Embedding(n_items, dim, padding_idx=0)
        self.user_tower = Tower(2 * dim, 32, out_dim)
        self.item_tower = Tower(dim, 32, out_dim)
        self.log_temperature = nn.Parameter(torch.tensor(math.log(init_temperature)))

    def forward(self, user_ids, history, item_ids, item_log_freq):
        user = torch.cat([self.user_emb(user_ids), self.hist_emb(history)], dim=-1)
        q = self.user_tower(user)
        c = self.item_tower(self.item_emb(item_ids))
        temperature = torch.clamp(self.log_temperature.exp(), min=1e-2)
        logits = torch.matmul(q, c.t()) / temperature
        logits = logits - item_log_freq[None, :]  # log-Q correction
        # the same item elsewhere in the batch is not a negative
        same_item = item_ids[:, None] == item_ids[None, :]
        diagonal = torch.eye(logits.size(0), dtype=torch.bool, device=logits.device)
        logits = logits.masked_fill(same_item & ~diagonal, torch.finfo(logits.dtype).min)
        labels = torch.arange(logits.size(0), device=logits.device)
        loss = F.cross_entropy(logits, labels)
        k = min(3, logits.size(1))
        recall = torch.topk(logits, k, dim=-1).indices.eq(labels[:, None]).any(-1).float().mean()
        return loss, recall, q, c


torch.manual_seed(0)
model = TwoTower().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    B = 6
    history = torch.randint(1, 60, (B, 5), generator=g)
    history[2, 3:] = 0
    item_ids = torch.randint(1, 60, (B,), generator=g)
    item_ids[4] = item_ids[1]
    item_log_freq = torch.log(torch.rand(B, generator=g) * 0.1 + 1e-3)
    return torch.randint(0, 40, (B,), generator=g), history, item_ids, item_log_freq
