"""Regularizers computed in the training forward, as papers' reference
code adds them to the loss: SRIP's orthogonality penalty
`torch.linalg.matrix_norm(W W^T - I, ord=2)` over the conv and linear
weights found by `named_parameters()` (`"weight" in name and p.dim() > 1`,
conv kernels flattened by `view(p.size(0), -1)`), a spectral-norm
penalty by power iteration from `u` buffers under `torch.no_grad()` then
`u @ W @ v` with grad (the iterate not written back), the nuclear norm
`matrix_norm(W, "nuc")` of a low-rank adapter, a Jacobian penalty along a fixed random probe
direction held as a buffer, by the finite difference `(f(x + eps v) -
f(x)) / eps`, an L1 penalty `sum(p.abs().sum() for p in ...)` from a
generator expression, and the weighted total in a dict with
`{k: v.detach() for k, v in ...}` logging values."""
import torch
import torch.nn.functional as F
from torch import nn


class RegularizedNet(nn.Module):
    def __init__(self, cin=3, dim=16, classes=6, rank=4, power_iterations=3):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, dim, 3, padding=1)
        self.conv2 = nn.Conv2d(dim, dim, 3, padding=1, bias=False)
        self.fc = nn.Linear(dim, dim)
        self.lora_a = nn.Parameter(torch.randn(rank, dim) * 0.1)
        self.lora_b = nn.Parameter(torch.randn(classes, rank) * 0.1)
        self.head = nn.Linear(dim, classes)
        self.power_iterations = power_iterations
        self.register_buffer("probe", F.normalize(torch.randn(1, cin * 8 * 8), dim=1).view(1, cin, 8, 8))
        self.reg_weights = {"srip": 1e-2, "spectral": 1e-3, "nuclear": 1e-3, "jacobian": 1e-2, "l1": 1e-5}
        for name, p in self.named_parameters():
            if "weight" in name and p.dim() > 1:
                self.register_buffer(name.replace(".", "_") + "_u", F.normalize(torch.randn(p.size(0)), dim=0))

    def features(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = x.mean(dim=(2, 3))
        return F.relu(self.fc(x))

    def logits(self, h):
        return self.head(h) + h @ self.lora_a.t() @ self.lora_b.t()

    def srip(self):
        total = 0.0
        for name, p in self.named_parameters():
            if "weight" in name and p.dim() > 1:
                w = p.view(p.size(0), -1)
                rows, cols = w.shape
                gram = w @ w.t() if rows <= cols else w.t() @ w
                eye = torch.eye(gram.size(0), device=w.device, dtype=w.dtype)
                total = total + torch.linalg.matrix_norm(gram - eye, ord=2)
        return total

    def spectral(self):
        total = []
        for name, p in self.named_parameters():
            if "weight" in name and p.dim() > 1:
                w = p.view(p.size(0), -1)
                u = getattr(self, name.replace(".", "_") + "_u")
                with torch.no_grad():
                    for _ in range(self.power_iterations):
                        v = F.normalize(torch.mv(w.t(), u), dim=0, eps=1e-12)
                        u = F.normalize(torch.mv(w, v), dim=0, eps=1e-12)
                sigma = torch.dot(u, torch.mv(w, v))
                total.append(sigma ** 2)
        return torch.stack(total).sum()

    def jacobian(self, x, h, eps=1e-3):
        v = self.probe.expand_as(x)
        jv = (self.features(x + eps * v) - h) / eps
        return jv.pow(2).sum(1).mean()

    def forward(self, x, target):
        h = self.features(x)
        logits = self.logits(h)
        task = F.cross_entropy(logits, target)
        regs = {
            "srip": self.srip(),
            "spectral": self.spectral(),
            "nuclear": torch.linalg.matrix_norm(self.lora_b @ self.lora_a, "nuc"),
            "jacobian": self.jacobian(x, h),
            "l1": sum(p.abs().sum() for n, p in self.named_parameters() if not n.endswith("bias")),
        }
        loss = task + sum(self.reg_weights[k] * v for k, v in regs.items())
        log = {k: v.detach() for k, v in regs.items()}
        log["task"] = task.detach()
        return loss, log


torch.manual_seed(0)
model = RegularizedNet().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(4, 3, 8, 8, generator=g), torch.tensor([0, 5, 2, 1])
