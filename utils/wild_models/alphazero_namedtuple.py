"""An AlphaZero-style policy/value network as self-play code bases write
it (alpha-zero-general, minigo ports): options chosen by an `enum.Enum`
(`Activation.RELU.value` looked up with `getattr(F, ...)`), the position
passed as a dict of tensors (`batch["board"]`, `batch["legal"]`,
`batch.get("player")`), a residual tower, the policy head's illegal
moves removed with `masked_fill(~legal, float('-inf'))` before
`F.log_softmax`, a tanh value head, and the result returned as a
`typing.NamedTuple` (`PolicyValue(log_pi=..., value=..., entropy=...)`)
whose fields the caller reads by name; the training loss (cross-entropy
with visit-count targets plus MSE on outcomes) from `._replace` of the
tuple."""
import enum
from typing import NamedTuple, Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


class Activation(enum.Enum):
    RELU = "relu"
    SILU = "silu"


class PolicyValue(NamedTuple):
    log_pi: Tensor
    value: Tensor
    entropy: Tensor
    loss: Optional[Tensor] = None


class ResBlock(nn.Module):
    def __init__(self, channels, activation: Activation):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.act = getattr(F, activation.value)

    def forward(self, x):
        h = self.act(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return self.act(h + x)


class AlphaZeroNet(nn.Module):
    def __init__(self, board=6, planes=3, channels=16, blocks=2, activation=Activation.SILU):
        super().__init__()
        self.board = board
        self.activation = activation
        self.stem = nn.Sequential(nn.Conv2d(planes, channels, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(channels))
        self.tower = nn.Sequential(*[ResBlock(channels, activation) for _ in range(blocks)])
        self.policy_conv = nn.Conv2d(channels, 2, 1)
        self.policy_fc = nn.Linear(2 * board * board, board * board + 1)
        self.value_conv = nn.Conv2d(channels, 1, 1)
        self.value_fc = nn.Sequential(nn.Linear(board * board, 32), nn.ReLU(), nn.Linear(32, 1))
        self.player_embed = nn.Embedding(2, channels)

    def forward(self, batch: dict, targets: Optional[dict] = None) -> PolicyValue:
        x = batch["board"]
        act = getattr(F, self.activation.value)
        h = act(self.stem(x))
        player = batch.get("player")
        if player is not None:
            h = h + self.player_embed(player)[:, :, None, None]
        h = self.tower(h)
        p = act(self.policy_conv(h)).flatten(1)
        logits = self.policy_fc(p)
        logits = logits.masked_fill(~batch["legal"], float("-inf"))
        log_pi = F.log_softmax(logits, dim=-1)
        probs = log_pi.exp()
        entropy = -(probs * log_pi.masked_fill(~batch["legal"], 0.0)).sum(-1)
        v = act(self.value_conv(h)).flatten(1)
        value = torch.tanh(self.value_fc(v)).squeeze(-1)
        out = PolicyValue(log_pi=log_pi, value=value, entropy=entropy)
        if targets is not None:
            pi_loss = -(targets["pi"] * out.log_pi.masked_fill(~batch["legal"], 0.0)).sum(-1).mean()
            v_loss = F.mse_loss(out.value, targets["z"])
            out = out._replace(loss=pi_loss + v_loss)
        return out


torch.manual_seed(0)
model = AlphaZeroNet()
with torch.no_grad():
    for _m in model.modules():
        if isinstance(_m, nn.BatchNorm2d):
            _m.running_mean.normal_(0, 0.1)
            _m.running_var.uniform_(0.5, 1.5)
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    board = (torch.rand(2, 3, 6, 6, generator=g) > 0.6).float()
    legal = torch.rand(2, 37, generator=g) > 0.3
    legal[:, -1] = True
    pi = torch.rand(2, 37, generator=g) * legal
    pi = pi / pi.sum(-1, keepdim=True)
    batch = {"board": board, "legal": legal, "player": torch.tensor([0, 1])}
    targets = {"pi": pi, "z": torch.tensor([1.0, -1.0])}
    return batch, targets
