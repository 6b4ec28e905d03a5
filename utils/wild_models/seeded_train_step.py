"""A training step in train mode under fairseq's `set_torch_seed`
(a class-based context manager: `__enter__` saves `torch.get_rng_state()`
and calls `torch.manual_seed(seed)`, `__exit__` puts the state back), the
seed `self.seed + num_updates` as fairseq's trainer derives it per update,
around a timm-style ResNet-ish classifier whose random layers draw in
train mode: timm `drop_path` (`x.new_empty(shape).bernoulli_(keep_prob)`,
`div_(keep_prob)` when `scale_by_keep`) with the stochastic-depth rates
from `torch.linspace(0, rate, depth)` read by `.item()` in `__init__`,
`nn.Dropout` before the head, BatchNorm on batch statistics updating its
running buffers, and `F.dropout(..., training=self.training)` on
features; the loss and the drawn-mask count returned."""
import torch
import torch.nn.functional as F
from torch import nn


class set_torch_seed:
    def __init__(self, *seeds):
        assert isinstance(seeds[0], int)
        seed = seeds[0]
        self.rng_state = self.get_rng_state()
        torch.manual_seed(seed)

    def get_rng_state(self):
        return {"torch_rng_state": torch.get_rng_state()}

    def set_rng_state(self, state):
        torch.set_rng_state(state["torch_rng_state"])

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.set_rng_state(self.rng_state)


def drop_path(x, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep:
        random_tensor.div_(keep_prob)
    return x * random_tensor


class DropPath(nn.Module):
    def __init__(self, drop_prob=0.0, scale_by_keep=True):
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)

    def extra_repr(self):
        return f"drop_prob={round(self.drop_prob, 3):0.3f}"


class BasicBlock(nn.Module):
    def __init__(self, dim, drop_path_rate):
        super().__init__()
        self.conv1 = nn.Conv2d(dim, dim, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(dim)
        self.conv2 = nn.Conv2d(dim, dim, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(dim)
        self.drop_path = DropPath(drop_path_rate) if drop_path_rate > 0.0 else nn.Identity()

    def forward(self, x):
        shortcut = x
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.bn2(self.conv2(x))
        return F.relu(self.drop_path(x) + shortcut)


class Classifier(nn.Module):
    def __init__(self, dim=16, depth=4, classes=5, drop_rate=0.2, drop_path_rate=0.3):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, dim, 3, padding=1, bias=False), nn.BatchNorm2d(dim), nn.ReLU())
        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]
        self.blocks = nn.Sequential(*[BasicBlock(dim, dpr[i]) for i in range(depth)])
        self.drop_rate = drop_rate
        self.head_drop = nn.Dropout(drop_rate)
        self.fc = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.blocks(self.stem(x))
        x = x.mean((2, 3))
        x = F.dropout(x, p=self.drop_rate / 2, training=self.training)
        return self.fc(self.head_drop(x))


class SeededTrainStep(nn.Module):
    def __init__(self, seed=1):
        super().__init__()
        self.model = Classifier()
        self.seed = seed

    def forward(self, images, target, num_updates: int):
        with set_torch_seed(self.seed + num_updates):
            logits = self.model(images)
            loss = F.cross_entropy(logits, target, label_smoothing=0.1)
        return loss, logits


torch.manual_seed(0)
model = SeededTrainStep().train()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(8, 3, 8, 8, generator=g), torch.randint(0, 5, (8,), generator=g), 1000
