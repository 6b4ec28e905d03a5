"""A capsule network with dynamic routing as its popular ports write it:
primary capsules from a conv reshaped to vectors, squash, prediction
vectors through a weight tensor and matmul with broadcasting, routing
logits initialized with zeros_like and refined over a Python loop of
iterations (softmax over the output capsules, weighted sums, agreement by
a dot product), class scores as the capsules' lengths."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def squash(s, dim=-1):
    squared_norm = (s ** 2).sum(dim=dim, keepdim=True)
    return squared_norm / (1 + squared_norm) * s / torch.sqrt(squared_norm + 1e-8)


class CapsNet(nn.Module):
    def __init__(self, in_caps_dim=8, num_classes=4, out_caps_dim=16, routing_iters=3):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, kernel_size=5, stride=1)
        self.primary = nn.Conv2d(32, 4 * in_caps_dim, kernel_size=5, stride=2)
        self.in_caps_dim, self.num_classes, self.routing_iters = in_caps_dim, num_classes, routing_iters
        num_in_caps = 4 * 6 * 6
        self.W = nn.Parameter(0.01 * torch.randn(1, num_in_caps, num_classes, out_caps_dim, in_caps_dim))

    def forward(self, x):
        x = F.relu(self.conv1(x))
        u = self.primary(x)
        batch_size = u.size(0)
        u = u.view(batch_size, 4, self.in_caps_dim, u.size(-2), u.size(-1))
        u = u.permute(0, 1, 3, 4, 2).contiguous().view(batch_size, -1, self.in_caps_dim)
        u = squash(u)
        u_hat = torch.matmul(self.W, u[:, :, None, :, None]).squeeze(-1)
        b = torch.zeros_like(u_hat[..., 0])
        for i in range(self.routing_iters):
            c = F.softmax(b, dim=2)
            v = squash((c.unsqueeze(-1) * u_hat).sum(dim=1, keepdim=True))
            if i < self.routing_iters - 1:
                b = b + (u_hat * v).sum(dim=-1)
        v = v.squeeze(1)
        return v.norm(dim=-1), v


torch.manual_seed(0)
model = CapsNet().eval()
check_gradients = True


def example_inputs():
    return (torch.randn(2, 1, 20, 20, generator=torch.Generator().manual_seed(1)),)
