"""A network pruned with `torch.nn.utils.prune` as the PyTorch pruning
tutorial and lottery-ticket code bases do it: `prune.l1_unstructured` on
conv weights, `prune.ln_structured(n=2, dim=0)` removing whole filters,
`prune.random_unstructured` on a bias, `prune.global_unstructured` over
(module, "weight") pairs with `L1Unstructured`, a second round on an
already pruned weight (a `PruningContainer`), and `prune.remove` making one
pruning permanent; every other pruned weight is recomputed before each call
by the forward pre-hook as `weight_orig * weight_mask`, the masks being
buffers. The sparsity is reported from the masks in forward."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.prune as prune


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 3)
        self.conv2 = nn.Conv2d(6, 16, 3)
        self.fc1 = nn.Linear(16 * 5 * 5, 64)
        self.fc2 = nn.Linear(64, 32)
        self.fc3 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, int(x.nelement() / x.shape[0]))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        logits = self.fc3(x)
        masks = [buf for name, buf in self.named_buffers() if name.endswith("weight_mask")]
        kept = sum(float(m.sum()) for m in masks)
        total = sum(m.nelement() for m in masks)
        return logits, torch.tensor(1.0 - kept / total)


def pruned_lenet():
    net = LeNet()
    prune.random_unstructured(net.conv1, name="bias", amount=0.3)
    prune.l1_unstructured(net.conv1, name="weight", amount=0.3)
    prune.ln_structured(net.conv2, name="weight", amount=0.25, n=2, dim=0)
    prune.global_unstructured(
        [(net.fc1, "weight"), (net.fc2, "weight"), (net.fc3, "weight")],
        pruning_method=prune.L1Unstructured, amount=0.5)
    prune.l1_unstructured(net.fc1, name="weight", amount=0.2)  # a second round: a PruningContainer
    prune.remove(net.fc3, "weight")
    return net


torch.manual_seed(0)
model = pruned_lenet().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(4, 1, 28, 28, generator=g),)
