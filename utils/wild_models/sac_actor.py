"""A soft actor-critic update's losses as CleanRL's `sac_continuous_action`
and stable-baselines3 write them: the actor's mean and clamped log-std
(rescaled into `[LOG_STD_MIN, LOG_STD_MAX]` by tanh), `Normal(mean,
std).rsample()` with the noise drawn from a seeded generator in the
caller's place here (an `eps` argument, since eager and the artifact must
draw the same), tanh squashing with the `log(1 - y^2 + eps)` log-prob
correction summed over actions, action scale and bias buffers, twin Q
networks over `torch.cat([obs, action], 1)`, `torch.min` of the targets,
the entropy temperature `log_alpha.exp()`, and the critic, actor and alpha
losses with `detach()`ed targets."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal

LOG_STD_MAX = 2
LOG_STD_MIN = -5


class SoftQNetwork(nn.Module):
    def __init__(self, obs_dim, act_dim):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim + act_dim, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc3 = nn.Linear(64, 1)

    def forward(self, x, a):
        x = torch.cat([x, a], 1)
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        return self.fc3(x)


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, high, low):
        super().__init__()
        self.fc1 = nn.Linear(obs_dim, 64)
        self.fc2 = nn.Linear(64, 64)
        self.fc_mean = nn.Linear(64, act_dim)
        self.fc_logstd = nn.Linear(64, act_dim)
        self.register_buffer("action_scale", torch.tensor((high - low) / 2.0, dtype=torch.float32))
        self.register_buffer("action_bias", torch.tensor((high + low) / 2.0, dtype=torch.float32))

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        mean = self.fc_mean(x)
        log_std = self.fc_logstd(x)
        log_std = torch.tanh(log_std)
        log_std = LOG_STD_MIN + 0.5 * (LOG_STD_MAX - LOG_STD_MIN) * (log_std + 1)
        return mean, log_std

    def get_action(self, x, eps):
        mean, log_std = self(x)
        std = log_std.exp()
        normal = Normal(mean, std)
        x_t = mean + std * eps  # normal.rsample() with the caller's noise
        y_t = torch.tanh(x_t)
        action = y_t * self.action_scale + self.action_bias
        log_prob = normal.log_prob(x_t)
        # Enforcing Action Bound
        log_prob -= torch.log(self.action_scale * (1 - y_t.pow(2)) + 1e-6)
        log_prob = log_prob.sum(1, keepdim=True)
        mean = torch.tanh(mean) * self.action_scale + self.action_bias
        return action, log_prob, mean


class SAC(nn.Module):
    def __init__(self, obs_dim=8, act_dim=3, gamma=0.99):
        super().__init__()
        high = np.array([1.0, 2.0, 0.5], dtype=np.float32)
        self.actor = Actor(obs_dim, act_dim, high, -high)
        self.qf1 = SoftQNetwork(obs_dim, act_dim)
        self.qf2 = SoftQNetwork(obs_dim, act_dim)
        self.qf1_target = SoftQNetwork(obs_dim, act_dim)
        self.qf2_target = SoftQNetwork(obs_dim, act_dim)
        self.qf1_target.load_state_dict(self.qf1.state_dict())
        self.qf2_target.load_state_dict(self.qf2.state_dict())
        self.target_entropy = -float(np.prod((act_dim,)))
        self.log_alpha = nn.Parameter(torch.zeros(1))
        self.gamma = gamma

    def forward(self, obs, actions, rewards, next_obs, dones, eps_next, eps):
        alpha = self.log_alpha.exp().detach()
        with torch.no_grad():
            next_state_actions, next_state_log_pi, _ = self.actor.get_action(next_obs, eps_next)
            qf1_next_target = self.qf1_target(next_obs, next_state_actions)
            qf2_next_target = self.qf2_target(next_obs, next_state_actions)
            min_qf_next_target = torch.min(qf1_next_target, qf2_next_target) - alpha * next_state_log_pi
            next_q_value = rewards.flatten() + (1 - dones.flatten()) * self.gamma * min_qf_next_target.view(-1)

        qf1_a_values = self.qf1(obs, actions).view(-1)
        qf2_a_values = self.qf2(obs, actions).view(-1)
        qf1_loss = F.mse_loss(qf1_a_values, next_q_value)
        qf2_loss = F.mse_loss(qf2_a_values, next_q_value)
        qf_loss = qf1_loss + qf2_loss

        pi, log_pi, _ = self.actor.get_action(obs, eps)
        qf1_pi = self.qf1(obs, pi)
        qf2_pi = self.qf2(obs, pi)
        min_qf_pi = torch.min(qf1_pi, qf2_pi)
        actor_loss = ((alpha * log_pi) - min_qf_pi).mean()

        alpha_loss = (-self.log_alpha.exp() * (log_pi.detach() + self.target_entropy)).mean()
        return qf_loss, actor_loss, alpha_loss, pi


torch.manual_seed(0)
model = SAC().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    B = 5
    return (torch.randn(B, 8, generator=g), torch.rand(B, 3, generator=g) * 2 - 1,
            torch.randn(B, generator=g), torch.randn(B, 8, generator=g),
            (torch.rand(B, generator=g) < 0.2).float(),
            torch.randn(B, 3, generator=g), torch.randn(B, 3, generator=g))
