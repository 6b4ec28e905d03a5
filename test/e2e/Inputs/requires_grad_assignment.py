"""A WassersteinGAN step: the critic switched on and clipped in place, then
frozen by assigning `requires_grad` before the generator's loss
(test_requires_grad_assignment.py)."""
import torch
from torch import nn


class Step(nn.Module):
    def __init__(self):
        super().__init__()
        self.critic = nn.Sequential(nn.Linear(4, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
        self.generator = nn.Sequential(nn.Linear(2, 8), nn.ReLU(), nn.Linear(8, 4))

    def forward(self, real, noise):
        for p in self.critic.parameters():
            p.requires_grad = True
        for p in self.critic.parameters():
            p.data.clamp_(-0.3, 0.3)
        fake = self.generator(noise)
        err_d = self.critic(real).mean() - self.critic(fake.detach()).mean()
        for p in self.critic.parameters():
            p.requires_grad = False
        err_g = -self.critic(fake).mean()
        return err_d, err_g


torch.manual_seed(0)
model = Step()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(5, 4, generator=g), torch.randn(5, 2, generator=g)
