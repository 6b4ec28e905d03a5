"""Rainbow's learning step as Kaixhin's Rainbow writes it: a DQN with
NoisyLinear layers (factorised noise buffers from `sign() * sqrt()`,
`ger`, the mean weights only in eval), dueling value/advantage streams
over atoms with `softmax(dim=2)` or `log_softmax` by a `log` flag, and
`Agent.learn` as a module: `log_ps[range(self.batch_size), actions]` with a
Python range, double-Q selection of next actions by the support-weighted sum
under `torch.no_grad()`, the n-step Bellman target Tz clamped to [Vmin,
Vmax], the C51 projection by `floor`/`ceil` with in-place boolean-mask
fixes `l[(u > 0) * (l == u)] -= 1`, the flat `offset` from `linspace`
expanded and cast with `.to(actions)`, two `m.view(-1).index_add_` into a
`new_zeros` distribution, the cross-entropy weighted by prioritized-replay
importance weights, and the new priorities `loss.detach()`."""
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
        x = torch.randn(size, device=self.weight_mu.device)
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
    def __init__(self, history_length, action_space, atoms, hidden_size=32, noisy_std=0.1):
        super().__init__()
        self.atoms = atoms
        self.action_space = action_space
        self.convs = nn.Sequential(nn.Conv2d(history_length, 8, 3, stride=2, padding=0), nn.ReLU(),
                                   nn.Conv2d(8, 8, 3, stride=1, padding=0), nn.ReLU())
        self.conv_output_size = 8 * 3 * 3
        self.fc_h_v = NoisyLinear(self.conv_output_size, hidden_size, std_init=noisy_std)
        self.fc_h_a = NoisyLinear(self.conv_output_size, hidden_size, std_init=noisy_std)
        self.fc_z_v = NoisyLinear(hidden_size, self.atoms, std_init=noisy_std)
        self.fc_z_a = NoisyLinear(hidden_size, action_space * self.atoms, std_init=noisy_std)

    def forward(self, x, log=False):
        x = self.convs(x)
        x = x.view(-1, self.conv_output_size)
        v = self.fc_z_v(F.relu(self.fc_h_v(x)))
        a = self.fc_z_a(F.relu(self.fc_h_a(x)))
        v, a = v.view(-1, 1, self.atoms), a.view(-1, self.action_space, self.atoms)
        q = v + a - a.mean(1, keepdim=True)
        if log:
            q = F.log_softmax(q, dim=2)
        else:
            q = F.softmax(q, dim=2)
        return q

    def reset_noise(self):
        for name, module in self.named_children():
            if "fc" in name:
                module.reset_noise()


class Agent(nn.Module):
    def __init__(self, action_space=4, atoms=11, V_min=-5.0, V_max=5.0, batch_size=6, multi_step=3,
                 discount=0.99, history_length=2):
        super().__init__()
        self.action_space = action_space
        self.atoms = atoms
        self.Vmin = V_min
        self.Vmax = V_max
        self.register_buffer("support", torch.linspace(V_min, V_max, self.atoms))
        self.delta_z = (V_max - V_min) / (self.atoms - 1)
        self.batch_size = batch_size
        self.n = multi_step
        self.discount = discount
        self.online_net = DQN(history_length, action_space, atoms)
        self.target_net = DQN(history_length, action_space, atoms)
        self.target_net.load_state_dict(self.online_net.state_dict())
        for param in self.target_net.parameters():
            param.requires_grad = False

    def forward(self, states, actions, returns, next_states, nonterminals, weights):
        log_ps = self.online_net(states, log=True)
        log_ps_a = log_ps[range(self.batch_size), actions]

        with torch.no_grad():
            pns = self.online_net(next_states)
            dns = self.support.expand_as(pns) * pns
            argmax_indices_ns = dns.sum(2).argmax(1)
            pns = self.target_net(next_states)
            pns_a = pns[range(self.batch_size), argmax_indices_ns]

            Tz = returns.unsqueeze(1) + nonterminals * (self.discount ** self.n) * self.support.unsqueeze(0)
            Tz = Tz.clamp(min=self.Vmin, max=self.Vmax)
            b = (Tz - self.Vmin) / self.delta_z
            l, u = b.floor().to(torch.int64), b.ceil().to(torch.int64)
            # a target on an atom would put no mass anywhere: move one end
            l[(u > 0) * (l == u)] -= 1
            u[(l < (self.atoms - 1)) * (l == u)] += 1

            m = states.new_zeros(self.batch_size, self.atoms)
            offset = torch.linspace(0, ((self.batch_size - 1) * self.atoms), self.batch_size).unsqueeze(1).expand(
                self.batch_size, self.atoms).to(actions)
            m.view(-1).index_add_(0, (l + offset).view(-1), (pns_a * (u.float() - b)).view(-1))
            m.view(-1).index_add_(0, (u + offset).view(-1), (pns_a * (b - l.float())).view(-1))

        loss = -torch.sum(m * log_ps_a, 1)
        weighted_loss = (weights * loss).mean()
        return weighted_loss, loss.detach(), m


torch.manual_seed(0)
model = Agent().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    B = 6
    states = torch.rand(B, 2, 11, 11, generator=g)
    next_states = torch.rand(B, 2, 11, 11, generator=g)
    actions = torch.randint(0, 4, (B,), generator=g)
    # returns on and between atoms, and past the support's ends
    returns = torch.tensor([0.0, 1.0, -7.0, 2.37, 9.0, -1.5])
    nonterminals = torch.tensor([[1.0], [1.0], [0.0], [1.0], [0.0], [1.0]])
    weights = torch.rand(B, generator=g)
    return states, actions, returns, next_states, nonterminals, weights
