"""A PPO actor-critic as CleanRL's single-file agents write it: layer_init
with orthogonal weights and constant biases, separate actor and critic
MLPs, get_action_and_value building torch.distributions in forward (a
Categorical from logits for the discrete head; a Normal with a state-
independent log-std parameter expanded like the mean, log_prob and entropy
summed over the action dimension for the continuous head) and returning
log-probabilities, entropies and values for actions given as inputs, plus
the clipped surrogate loss of the update step."""
import numpy as np
import torch
import torch.nn as nn
from torch.distributions.categorical import Categorical
from torch.distributions.normal import Normal


def layer_init(layer, std=np.sqrt(2), bias_const=0.0):
    torch.nn.init.orthogonal_(layer.weight, std)
    torch.nn.init.constant_(layer.bias, bias_const)
    return layer


class Agent(nn.Module):
    def __init__(self, obs_dim=8, n_discrete=4, act_dim=2, clip_coef=0.2, ent_coef=0.01, vf_coef=0.5):
        super().__init__()
        self.clip_coef, self.ent_coef, self.vf_coef = clip_coef, ent_coef, vf_coef
        self.critic = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 1), std=1.0))
        self.actor = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, n_discrete), std=0.01))
        self.actor_mean = nn.Sequential(
            layer_init(nn.Linear(obs_dim, 64)), nn.Tanh(),
            layer_init(nn.Linear(64, act_dim), std=0.01))
        self.actor_logstd = nn.Parameter(torch.zeros(1, act_dim))

    def get_value(self, x):
        return self.critic(x)

    def get_action_and_value(self, x, action):
        logits = self.actor(x)
        probs = Categorical(logits=logits)
        return action, probs.log_prob(action), probs.entropy(), self.critic(x)

    def get_continuous_action_and_value(self, x, action):
        action_mean = self.actor_mean(x)
        action_logstd = self.actor_logstd.expand_as(action_mean)
        action_std = torch.exp(action_logstd)
        probs = Normal(action_mean, action_std)
        return action, probs.log_prob(action).sum(1), probs.entropy().sum(1)

    def forward(self, x, action, continuous_action, old_logprob, advantages, returns):
        _, newlogprob, entropy, newvalue = self.get_action_and_value(x, action)
        _, c_logprob, c_entropy = self.get_continuous_action_and_value(x, continuous_action)
        logratio = newlogprob - old_logprob
        ratio = logratio.exp()
        with torch.no_grad():
            approx_kl = ((ratio - 1) - logratio).mean()
        mb_advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        pg_loss1 = -mb_advantages * ratio
        pg_loss2 = -mb_advantages * torch.clamp(ratio, 1 - self.clip_coef, 1 + self.clip_coef)
        pg_loss = torch.max(pg_loss1, pg_loss2).mean()
        newvalue = newvalue.view(-1)
        v_loss = 0.5 * ((newvalue - returns) ** 2).mean()
        entropy_loss = entropy.mean() + c_entropy.mean()
        loss = pg_loss - self.ent_coef * entropy_loss + v_loss * self.vf_coef
        return loss, approx_kl, c_logprob


torch.manual_seed(0)
model = Agent().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    obs = torch.randn(6, 8, generator=g)
    action = torch.randint(0, 4, (6,), generator=g)
    continuous = torch.randn(6, 2, generator=g)
    old_logprob = torch.log(torch.full((6,), 0.25)) + 0.05 * torch.randn(6, generator=g)
    advantages = torch.randn(6, generator=g)
    returns = torch.randn(6, generator=g)
    return obs, action, continuous, old_logprob, advantages, returns
