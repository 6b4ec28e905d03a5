"""IMPALA's learner step as TorchBeast (monobeast) writes it: an inputs dict
of [T, B, ...] tensors (frame, reward, done, last_action), frames flattened
over time and batch by `flatten(0, 1)` and scaled to float, clipped reward
and one-hot last action concatenated, an LSTM core stepped in a Python loop
over `zip(core_input.unbind(), notdone.unbind())` with the state zeroed at
episode ends by `nd * s` over a tuple, policy logits and baseline reshaped
back to [T, B], greedy actions by argmax in eval mode, and the loss of
`learn()`: the bootstrap value from the last step, discounts from
`~done`, V-trace from logits (`collections.namedtuple` results, log-probs by
`-F.nll_loss(reduction="none")` on flattened logits, importance weights
clamped with `clamp_max`, a reversed Python loop accumulating vs - V under
`@torch.no_grad()`, stack of the reversed list), the policy-gradient,
baseline and entropy losses summed with their costs."""
import collections

import torch
import torch.nn as nn
import torch.nn.functional as F

VTraceFromLogitsReturns = collections.namedtuple(
    "VTraceFromLogitsReturns",
    ["vs", "pg_advantages", "log_rhos", "behavior_action_log_probs", "target_action_log_probs"])
VTraceReturns = collections.namedtuple("VTraceReturns", "vs pg_advantages")


def action_log_probs(policy_logits, actions):
    return -F.nll_loss(F.log_softmax(torch.flatten(policy_logits, 0, -2), dim=-1),
                       torch.flatten(actions), reduction="none").view_as(actions)


def from_logits(behavior_policy_logits, target_policy_logits, actions, discounts, rewards, values,
                bootstrap_value, clip_rho_threshold=1.0, clip_pg_rho_threshold=1.0):
    target_action_log_probs = action_log_probs(target_policy_logits, actions)
    behavior_action_log_probs = action_log_probs(behavior_policy_logits, actions)
    log_rhos = target_action_log_probs - behavior_action_log_probs
    vtrace_returns = from_importance_weights(
        log_rhos=log_rhos, discounts=discounts, rewards=rewards, values=values,
        bootstrap_value=bootstrap_value, clip_rho_threshold=clip_rho_threshold,
        clip_pg_rho_threshold=clip_pg_rho_threshold)
    return VTraceFromLogitsReturns(log_rhos=log_rhos, behavior_action_log_probs=behavior_action_log_probs,
                                   target_action_log_probs=target_action_log_probs,
                                   **vtrace_returns._asdict())


@torch.no_grad()
def from_importance_weights(log_rhos, discounts, rewards, values, bootstrap_value,
                            clip_rho_threshold=1.0, clip_pg_rho_threshold=1.0):
    rhos = torch.exp(log_rhos)
    if clip_rho_threshold is not None:
        clipped_rhos = torch.clamp(rhos, max=clip_rho_threshold)
    else:
        clipped_rhos = rhos
    cs = torch.clamp(rhos, max=1.0)
    values_t_plus_1 = torch.cat([values[1:], torch.unsqueeze(bootstrap_value, 0)], dim=0)
    deltas = clipped_rhos * (rewards + discounts * values_t_plus_1 - values)

    acc = torch.zeros_like(bootstrap_value)
    result = []
    for t in range(discounts.shape[0] - 1, -1, -1):
        acc = deltas[t] + discounts[t] * cs[t] * acc
        result.append(acc)
    result.reverse()
    vs_minus_v_xs = torch.stack(result)
    vs = torch.add(vs_minus_v_xs, values)

    broadcasted_bootstrap_values = torch.ones_like(vs[0]) * bootstrap_value
    vs_t_plus_1 = torch.cat([vs[1:], broadcasted_bootstrap_values.unsqueeze(0)])
    if clip_pg_rho_threshold is not None:
        clipped_pg_rhos = torch.clamp(rhos, max=clip_pg_rho_threshold)
    else:
        clipped_pg_rhos = rhos
    pg_advantages = clipped_pg_rhos * (rewards + discounts * vs_t_plus_1 - values)
    return VTraceReturns(vs=vs, pg_advantages=pg_advantages)


def compute_baseline_loss(advantages):
    return 0.5 * torch.sum(advantages ** 2)


def compute_entropy_loss(logits):
    policy = F.softmax(logits, dim=-1)
    log_policy = F.log_softmax(logits, dim=-1)
    return torch.sum(policy * log_policy)


def compute_policy_gradient_loss(logits, actions, advantages):
    cross_entropy = F.nll_loss(F.log_softmax(torch.flatten(logits, 0, 1), dim=-1),
                               target=torch.flatten(actions, 0, 1), reduction="none")
    cross_entropy = cross_entropy.view_as(advantages)
    return torch.sum(cross_entropy * advantages.detach())


class AtariNet(nn.Module):
    def __init__(self, observation_shape=(1, 12, 12), num_actions=4, use_lstm=True,
                 discounting=0.99, baseline_cost=0.5, entropy_cost=0.0006, reward_clipping="abs_one"):
        super().__init__()
        self.observation_shape = observation_shape
        self.num_actions = num_actions
        self.conv1 = nn.Conv2d(observation_shape[0], 8, kernel_size=4, stride=2)
        self.conv2 = nn.Conv2d(8, 8, kernel_size=3, stride=1)
        self.fc = nn.Linear(8 * 3 * 3, 32)
        core_output_size = self.fc.out_features + num_actions + 1
        self.use_lstm = use_lstm
        if use_lstm:
            self.core = nn.LSTM(core_output_size, core_output_size, 2)
        self.policy = nn.Linear(core_output_size, self.num_actions)
        self.baseline = nn.Linear(core_output_size, 1)
        self.flags = dict(discounting=discounting, baseline_cost=baseline_cost,
                          entropy_cost=entropy_cost, reward_clipping=reward_clipping)

    def initial_state(self, batch_size):
        if not self.use_lstm:
            return tuple()
        return tuple(torch.zeros(self.core.num_layers, batch_size, self.core.hidden_size) for _ in range(2))

    def net(self, inputs, core_state=()):
        x = inputs["frame"]
        T, B, *_ = x.shape
        x = torch.flatten(x, 0, 1)
        x = x.float() / 255.0
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = x.view(T * B, -1)
        x = F.relu(self.fc(x))
        one_hot_last_action = F.one_hot(inputs["last_action"].view(T * B), self.num_actions).float()
        clipped_reward = torch.clamp(inputs["reward"], -1, 1).view(T * B, 1)
        core_input = torch.cat([x, clipped_reward, one_hot_last_action], dim=-1)
        if self.use_lstm:
            core_input = core_input.view(T, B, -1)
            core_output_list = []
            notdone = (~inputs["done"]).float()
            for input, nd in zip(core_input.unbind(), notdone.unbind()):
                nd = nd.view(1, -1, 1)
                core_state = tuple(nd * s for s in core_state)
                output, core_state = self.core(input.unsqueeze(0), core_state)
                core_output_list.append(output)
            core_output = torch.flatten(torch.cat(core_output_list), 0, 1)
        else:
            core_output = core_input
            core_state = tuple()
        policy_logits = self.policy(core_output)
        baseline = self.baseline(core_output)
        if self.training:
            action = torch.multinomial(F.softmax(policy_logits, dim=1), num_samples=1)
        else:
            action = torch.argmax(policy_logits, dim=1)
        policy_logits = policy_logits.view(T, B, self.num_actions)
        baseline = baseline.view(T, B)
        action = action.view(T, B)
        return dict(policy_logits=policy_logits, baseline=baseline, action=action), core_state

    def forward(self, batch, initial_agent_state):
        flags = self.flags
        learner_outputs, unused_state = self.net(batch, initial_agent_state)
        bootstrap_value = learner_outputs["baseline"][-1]
        # the first step's outputs belong to the previous rollout
        batch = {key: tensor[1:] for key, tensor in batch.items()}
        learner_outputs = {key: tensor[:-1] for key, tensor in learner_outputs.items()}
        rewards = batch["reward"]
        if flags["reward_clipping"] == "abs_one":
            clipped_rewards = torch.clamp(rewards, -1, 1)
        elif flags["reward_clipping"] == "none":
            clipped_rewards = rewards
        discounts = (~batch["done"]).float() * flags["discounting"]
        vtrace_returns = from_logits(
            behavior_policy_logits=batch["policy_logits"], target_policy_logits=learner_outputs["policy_logits"],
            actions=batch["action"], discounts=discounts, rewards=clipped_rewards,
            values=learner_outputs["baseline"], bootstrap_value=bootstrap_value)
        pg_loss = compute_policy_gradient_loss(learner_outputs["policy_logits"], batch["action"],
                                               vtrace_returns.pg_advantages)
        baseline_loss = flags["baseline_cost"] * compute_baseline_loss(
            vtrace_returns.vs - learner_outputs["baseline"])
        entropy_loss = flags["entropy_cost"] * compute_entropy_loss(learner_outputs["policy_logits"])
        total_loss = pg_loss + baseline_loss + entropy_loss
        stats = {
            "total_loss": total_loss,
            "pg_loss": pg_loss,
            "baseline_loss": baseline_loss,
            "entropy_loss": entropy_loss,
            "mean_log_rho": vtrace_returns.log_rhos.mean(),
        }
        return stats, learner_outputs["action"], unused_state


torch.manual_seed(0)
model = AtariNet().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    T, B, A = 5, 3, 4
    batch = {
        "frame": torch.randint(0, 256, (T + 1, B, 1, 12, 12), dtype=torch.uint8, generator=g),
        "reward": torch.randn(T + 1, B, generator=g) * 2,
        "done": torch.rand(T + 1, B, generator=g) < 0.2,
        "last_action": torch.randint(0, A, (T + 1, B), generator=g),
        "action": torch.randint(0, A, (T + 1, B), generator=g),
        "policy_logits": torch.randn(T + 1, B, A, generator=g),
    }
    return batch, model.initial_state(B)
