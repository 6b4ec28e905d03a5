"""A Rainbow-style dueling, distributional DQN as Kaixhin/Rainbow and the
common Atari agents write it: the Nature CNN torso over stacked frames
scaled by 1/255, NoisyLinear layers whose factorized noise buffers are
drawn at construction (sign(x) * sqrt|x|, torch.ger) and used only in
training mode (eval uses the mean weights), value and advantage streams
combined as v + a - a.mean(1, keepdim=True) over atoms, softmax over the
support (or log_softmax), the expected Q over a support buffer from
linspace, and the greedy action by argmax."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class NoisyLinear(nn.Module):
    def __init__(self, in_features, out_features, std_init=0.5):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.std_init = std_init
        self.weight_mu = nn.Parameter(torch.empty(out_features, in_features))
        self.weight_sigma = nn.Parameter(torch.empty(out_features, in_features))
        self.register_buffer("weight_epsilon", torch.empty(out_features, in_features))
        self.bias_mu = nn.Parameter(torch.empty(out_features))
        self.bias_sigma = nn.Parameter(torch.empty(out_features))
        self.register_buffer("bias_epsilon", torch.empty(out_features))
        self.reset_parameters()
        self.reset_noise()

    def reset_parameters(self):
        mu_range = 1 / math.sqrt(self.in_features)
        self.weight_mu.data.uniform_(-mu_range, mu_range)
        self.weight_sigma.data.fill_(self.std_init / math.sqrt(self.in_features))
        self.bias_mu.data.uniform_(-mu_range, mu_range)
        self.bias_sigma.data.fill_(self.std_init / math.sqrt(self.out_features))

    def _scale_noise(self, size):
        x = torch.randn(size)
        return x.sign().mul_(x.abs().sqrt_())

    def reset_noise(self):
        epsilon_in = self._scale_noise(self.in_features)
        epsilon_out = self._scale_noise(self.out_features)
        self.weight_epsilon.copy_(epsilon_out.ger(epsilon_in))
        self.bias_epsilon.copy_(epsilon_out)

    def forward(self, input):
        if self.training:
            return F.linear(input, self.weight_mu + self.weight_sigma * self.weight_epsilon,
                            self.bias_mu + self.bias_sigma * self.bias_epsilon)
        return F.linear(input, self.weight_mu, self.bias_mu)


class DQN(nn.Module):
    def __init__(self, history_length=4, action_space=6, atoms=11, hidden_size=64,
                 noisy_std=0.1, v_min=-10.0, v_max=10.0):
        super().__init__()
        self.atoms = atoms
        self.action_space = action_space
        self.convs = nn.Sequential(nn.Conv2d(history_length, 16, 8, stride=4, padding=0), nn.ReLU(),
                                   nn.Conv2d(16, 32, 4, stride=2, padding=0), nn.ReLU(),
                                   nn.Conv2d(32, 32, 3, stride=1, padding=0), nn.ReLU())
        self.conv_output_size = 32 * 2 * 2
        self.fc_h_v = NoisyLinear(self.conv_output_size, hidden_size, std_init=noisy_std)
        self.fc_h_a = NoisyLinear(self.conv_output_size, hidden_size, std_init=noisy_std)
        self.fc_z_v = NoisyLinear(hidden_size, self.atoms, std_init=noisy_std)
        self.fc_z_a = NoisyLinear(hidden_size, action_space * self.atoms, std_init=noisy_std)
        self.register_buffer("support", torch.linspace(v_min, v_max, atoms))

    def forward(self, x, log=False):
        x = self.convs(x.float() / 255)
        x = x.view(-1, self.conv_output_size)
        v = self.fc_z_v(F.relu(self.fc_h_v(x)))
        a = self.fc_z_a(F.relu(self.fc_h_a(x)))
        v, a = v.view(-1, 1, self.atoms), a.view(-1, self.action_space, self.atoms)
        q = v + a - a.mean(1, keepdim=True)
        if log:
            q = F.log_softmax(q, dim=2)
        else:
            q = F.softmax(q, dim=2)
        expected = (q * self.support).sum(2)
        return q, expected, expected.argmax(1)


torch.manual_seed(0)
model = DQN().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 256, (2, 4, 44, 44), generator=g, dtype=torch.uint8)


def example_kwargs():
    return {"log": True}
