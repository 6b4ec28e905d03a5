"""QMIX's learner step as PyMARL writes it: a SimpleNamespace of args, an
episode batch dict of [B, T, n_agents, ...] tensors, agent inputs built per
time step from observations, the one-hot previous action (`zeros_like` at
t = 0) and `torch.eye(n_agents)` ids expanded over the batch, `th.cat([x.
reshape(bs * n_agents, -1) for x in inputs], dim=1)`, an RNN agent (fc,
GRUCell, fc) whose hidden state is `expand`ed from `init_hidden()` and
unrolled in a Python loop with outputs `th.stack(mac_out, dim=1)`, a target
network made by `copy.deepcopy`, chosen action values by `gather(dim=3)`,
unavailable actions set to -9999999 by boolean-mask assignment on a
detached `clone()` (double Q: the online network's argmax picks the target's
value), the QMixer's hypernetworks with `th.abs` weights, `bmm` and `elu`,
a state-value head, one-step TD targets with `(1 - terminated)`, and the TD
error masked by the filled-steps mask with the mask's sum as divisor."""
import copy
from types import SimpleNamespace

import torch as th
import torch.nn as nn
import torch.nn.functional as F


class RNNAgent(nn.Module):
    def __init__(self, input_shape, args):
        super().__init__()
        self.args = args
        self.fc1 = nn.Linear(input_shape, args.rnn_hidden_dim)
        self.rnn = nn.GRUCell(args.rnn_hidden_dim, args.rnn_hidden_dim)
        self.fc2 = nn.Linear(args.rnn_hidden_dim, args.n_actions)

    def init_hidden(self):
        # on the same device as the weights
        return self.fc1.weight.new(1, self.args.rnn_hidden_dim).zero_()

    def forward(self, inputs, hidden_state):
        x = F.relu(self.fc1(inputs))
        h_in = hidden_state.reshape(-1, self.args.rnn_hidden_dim)
        h = self.rnn(x, h_in)
        q = self.fc2(h)
        return q, h


class QMixer(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.n_agents = args.n_agents
        self.state_dim = args.state_shape
        self.embed_dim = args.mixing_embed_dim
        if getattr(args, "hypernet_layers", 1) == 1:
            self.hyper_w_1 = nn.Linear(self.state_dim, self.embed_dim * self.n_agents)
            self.hyper_w_final = nn.Linear(self.state_dim, self.embed_dim)
        elif getattr(args, "hypernet_layers", 1) == 2:
            hypernet_embed = self.args.hypernet_embed
            self.hyper_w_1 = nn.Sequential(nn.Linear(self.state_dim, hypernet_embed), nn.ReLU(),
                                           nn.Linear(hypernet_embed, self.embed_dim * self.n_agents))
            self.hyper_w_final = nn.Sequential(nn.Linear(self.state_dim, hypernet_embed), nn.ReLU(),
                                               nn.Linear(hypernet_embed, self.embed_dim))
        else:
            raise Exception("Error setting number of hypernet layers.")
        self.hyper_b_1 = nn.Linear(self.state_dim, self.embed_dim)
        self.V = nn.Sequential(nn.Linear(self.state_dim, self.embed_dim), nn.ReLU(),
                               nn.Linear(self.embed_dim, 1))

    def forward(self, agent_qs, states):
        bs = agent_qs.size(0)
        states = states.reshape(-1, self.state_dim)
        agent_qs = agent_qs.view(-1, 1, self.n_agents)
        w1 = th.abs(self.hyper_w_1(states))
        b1 = self.hyper_b_1(states)
        w1 = w1.view(-1, self.n_agents, self.embed_dim)
        b1 = b1.view(-1, 1, self.embed_dim)
        hidden = F.elu(th.bmm(agent_qs, w1) + b1)
        w_final = th.abs(self.hyper_w_final(states))
        w_final = w_final.view(-1, self.embed_dim, 1)
        v = self.V(states).view(-1, 1, 1)
        y = th.bmm(hidden, w_final) + v
        q_tot = y.view(bs, -1, 1)
        return q_tot


class BasicMAC(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.n_agents = args.n_agents
        input_shape = args.obs_shape + args.n_actions + args.n_agents
        self.agent = RNNAgent(input_shape, args)
        self.hidden_states = None

    def _build_inputs(self, batch, t):
        bs = batch["obs"].shape[0]
        inputs = [batch["obs"][:, t]]
        if self.args.obs_last_action:
            if t == 0:
                inputs.append(th.zeros_like(batch["actions_onehot"][:, t]))
            else:
                inputs.append(batch["actions_onehot"][:, t - 1])
        if self.args.obs_agent_id:
            inputs.append(th.eye(self.n_agents, device=batch["obs"].device).unsqueeze(0).expand(bs, -1, -1))
        return th.cat([x.reshape(bs * self.n_agents, -1) for x in inputs], dim=1)

    def init_hidden(self, batch_size):
        self.hidden_states = self.agent.init_hidden().unsqueeze(0).expand(batch_size, self.n_agents, -1)

    def forward(self, batch, t):
        agent_inputs = self._build_inputs(batch, t)
        agent_outs, self.hidden_states = self.agent(agent_inputs, self.hidden_states)
        return agent_outs.view(batch["obs"].shape[0], self.n_agents, -1)


class QLearner(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.mac = BasicMAC(args)
        self.mixer = QMixer(args)
        self.target_mac = copy.deepcopy(self.mac)
        self.target_mixer = copy.deepcopy(self.mixer)
        for p in list(self.target_mac.parameters()) + list(self.target_mixer.parameters()):
            p.requires_grad_(False)

    def forward(self, batch):
        max_seq_length = batch["obs"].shape[1]
        rewards = batch["reward"][:, :-1]
        actions = batch["actions"][:, :-1]
        terminated = batch["terminated"][:, :-1].float()
        mask = batch["filled"][:, :-1].float()
        mask[:, 1:] = mask[:, 1:] * (1 - terminated[:, :-1])
        avail_actions = batch["avail_actions"]

        mac_out = []
        self.mac.init_hidden(batch["obs"].shape[0])
        for t in range(max_seq_length):
            agent_outs = self.mac(batch, t=t)
            mac_out.append(agent_outs)
        mac_out = th.stack(mac_out, dim=1)
        chosen_action_qvals = th.gather(mac_out[:, :-1], dim=3, index=actions).squeeze(3)

        target_mac_out = []
        self.target_mac.init_hidden(batch["obs"].shape[0])
        for t in range(max_seq_length):
            target_agent_outs = self.target_mac(batch, t=t)
            target_mac_out.append(target_agent_outs)
        target_mac_out = th.stack(target_mac_out[1:], dim=1)
        target_mac_out[avail_actions[:, 1:] == 0] = -9999999

        if self.args.double_q:
            mac_out_detach = mac_out.clone().detach()
            mac_out_detach[avail_actions == 0] = -9999999
            cur_max_actions = mac_out_detach[:, 1:].max(dim=3, keepdim=True)[1]
            target_max_qvals = th.gather(target_mac_out, 3, cur_max_actions).squeeze(3)
        else:
            target_max_qvals = target_mac_out.max(dim=3)[0]

        if self.mixer is not None:
            chosen_action_qvals = self.mixer(chosen_action_qvals, batch["state"][:, :-1])
            target_max_qvals = self.target_mixer(target_max_qvals, batch["state"][:, 1:])

        targets = rewards + self.args.gamma * (1 - terminated) * target_max_qvals
        td_error = chosen_action_qvals - targets.detach()
        mask = mask.expand_as(td_error)
        masked_td_error = td_error * mask
        loss = (masked_td_error ** 2).sum() / mask.sum()
        mask_elems = mask.sum()
        td_error_abs = masked_td_error.abs().sum() / mask_elems
        q_taken_mean = (chosen_action_qvals * mask).sum() / (mask_elems * self.args.n_agents)
        return loss, td_error_abs, q_taken_mean, mac_out


args = SimpleNamespace(n_agents=3, n_actions=5, obs_shape=6, state_shape=10, rnn_hidden_dim=16,
                       mixing_embed_dim=8, hypernet_layers=2, hypernet_embed=12, obs_last_action=True,
                       obs_agent_id=True, double_q=True, gamma=0.99)
th.manual_seed(0)
model = QLearner(args).eval()
check_gradients = True


def example_inputs():
    g = th.Generator().manual_seed(1)
    B, T = 2, 6
    avail = (th.rand(B, T, args.n_agents, args.n_actions, generator=g) < 0.7).long()
    avail[..., 0] = 1  # the no-op is always available
    actions = th.multinomial(avail.float().view(-1, args.n_actions), 1, generator=g).view(
        B, T, args.n_agents, 1)
    filled = th.ones(B, T, 1, dtype=th.long)
    filled[1, 4:] = 0
    terminated = th.zeros(B, T, 1, dtype=th.long)
    terminated[1, 3] = 1
    batch = {
        "obs": th.randn(B, T, args.n_agents, args.obs_shape, generator=g),
        "state": th.randn(B, T, args.state_shape, generator=g),
        "actions": actions,
        "actions_onehot": F.one_hot(actions.squeeze(-1), args.n_actions).float(),
        "avail_actions": avail,
        "reward": th.randn(B, T, 1, generator=g),
        "terminated": terminated,
        "filled": filled,
    }
    return (batch,)
