"""An ensemble of Q-networks evaluated in one call the way the PyTorch
"model ensembling" tutorial and REDQ/DroQ-style agents do it:
`torch.func.stack_module_state` over identically-shaped critics at
construction, the stacked tensors kept as `nn.Parameter`s in an
`nn.ParameterDict` (dots in names replaced) and buffers in a plain dict,
a stateless copy of one critic moved to the `meta` device, and in
forward `torch.func.functional_call(base, (params, buffers), (x,))`
wrapped in `torch.vmap(..., in_dims=(0, 0, None))`; the target is the
minimum over a random-free subset of members (`q[[0, 2]].min(0)`), the
TD loss `F.smooth_l1_loss` against `reward + gamma * (1 - done) *
target`, and the per-member mean returned too."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state


class Critic(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + act_dim, hidden), nn.LayerNorm(hidden), nn.ReLU(),
                                 nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)


class EnsembleQ(nn.Module):
    def __init__(self, obs_dim=6, act_dim=2, num_q=4, gamma=0.99):
        super().__init__()
        critics = [Critic(obs_dim, act_dim) for _ in range(num_q)]
        params, buffers = stack_module_state(critics)
        self.names = list(params.keys())
        self.params = nn.ParameterDict({k.replace(".", "_"): nn.Parameter(v) for k, v in params.items()})
        self.buffers_ = buffers
        base = copy.deepcopy(critics[0]).to("meta")
        self.__dict__["base"] = base
        self.gamma = gamma

    def q_all(self, obs, act):
        x = torch.cat([obs, act], dim=-1)
        params = {k: self.params[k.replace(".", "_")] for k in self.names}

        def fmodel(p, b, inp):
            return functional_call(self.base, (p, b), (inp,))

        return torch.vmap(fmodel, in_dims=(0, 0, None))(params, self.buffers_, x).squeeze(-1)

    def forward(self, obs, act, reward, done, next_obs, next_act):
        q = self.q_all(obs, act)
        with torch.no_grad():
            q_next = self.q_all(next_obs, next_act)
            target = q_next[[0, 2]].min(0).values
            y = reward + self.gamma * (1.0 - done) * target
        loss = F.smooth_l1_loss(q, y.unsqueeze(0).expand_as(q))
        return q.mean(0), loss


torch.manual_seed(0)
model = EnsembleQ().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    obs = torch.randn(5, 6, generator=g)
    act = torch.rand(5, 2, generator=g) * 2 - 1
    reward = torch.randn(5, generator=g)
    done = (torch.rand(5, generator=g) > 0.8).float()
    next_obs = torch.randn(5, 6, generator=g)
    next_act = torch.rand(5, 2, generator=g) * 2 - 1
    return obs, act, reward, done, next_obs, next_act
