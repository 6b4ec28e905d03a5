"""Early-exit inference (BranchyNet / DeeBERT style) written for export
with `torch.cond`: after each encoder block an exit classifier gives
logits whose normalized entropy (`-(p * log_softmax).sum(-1) / log(C)`)
is averaged over the batch; `torch.cond(entropy.mean() < threshold,
exit_fn, continue_fn, (h, logits))` either returns the exit logits or runs
the remaining blocks and the final classifier (both branches closures
over the module, returning the same shapes), the per-block entropies
stacked for monitoring, and the threshold a float attribute."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


def normalized_entropy(logits):
    logp = F.log_softmax(logits, dim=-1)
    return -(logp.exp() * logp).sum(-1) / math.log(logits.size(-1))


class EarlyExitNet(nn.Module):
    def __init__(self, dim=24, classes=6, threshold=0.95):
        super().__init__()
        self.embed = nn.Linear(10, dim)
        self.first = nn.ModuleList([Block(dim), Block(dim)])
        self.rest = nn.ModuleList([Block(dim), Block(dim)])
        self.exit_head = nn.Linear(dim, classes)
        self.final_head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, classes))
        self.threshold = threshold

    def forward(self, x):
        h = self.embed(x)
        for block in self.first:
            h = block(h)
        exit_logits = self.exit_head(h)
        entropy = normalized_entropy(exit_logits)

        def exit_fn(h, logits):
            return logits.clone()

        def continue_fn(h, logits):
            for block in self.rest:
                h = block(h)
            return self.final_head(h)

        logits = torch.cond(entropy.mean() < self.threshold, exit_fn, continue_fn, (h, exit_logits))
        final_entropy = normalized_entropy(logits)
        return logits, torch.stack([entropy.mean(), final_entropy.mean()])


torch.manual_seed(0)
model = EarlyExitNet().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(4, 10, generator=g)
