"""MuZero's fully connected network as muzero-general (werner-duvaud)
writes it: an `AbstractNetwork` with `initial_inference` and
`recurrent_inference`, `mlp` built from a sizes list, encoded states scaled
to [0, 1] by a per-sample min and max with `scale_encoded_state[
scale_encoded_state < 1e-5] += 1e-5`, actions one-hot encoded by
`torch.zeros(...).to(action.device).float()` and `scatter_(1,
action.long(), 1.0)`, the value and reward as categorical supports turned
back into scalars by `support_to_scalar` (softmax, a `torch.tensor([x for
x in range(-support_size, support_size + 1)])` support expanded and
summed, then the invertible transform's inverse with `torch.sign` and
`torch.sqrt`), the reward of the initial inference as `torch.log(
torch.zeros(1, 2 * support_size + 1).scatter(1, index, 1.0).repeat(len(
observation), 1))`, and an unrolled loss over recurrent steps."""
import torch
import torch.nn as nn


def mlp(input_size, layer_sizes, output_size, output_activation=torch.nn.Identity,
        activation=torch.nn.ELU):
    sizes = [input_size] + layer_sizes + [output_size]
    layers = []
    for i in range(len(sizes) - 1):
        act = activation if i < len(sizes) - 2 else output_activation
        layers += [torch.nn.Linear(sizes[i], sizes[i + 1]), act()]
    return torch.nn.Sequential(*layers)


def support_to_scalar(logits, support_size):
    probabilities = torch.softmax(logits, dim=1)
    support = (torch.tensor([x for x in range(-support_size, support_size + 1)])
               .expand(probabilities.shape).float().to(device=probabilities.device))
    x = torch.sum(support * probabilities, dim=1, keepdim=True)
    x = torch.sign(x) * (((torch.sqrt(1 + 4 * 0.001 * (torch.abs(x) + 1 + 0.001)) - 1) / (2 * 0.001)) ** 2 - 1)
    return x


def scalar_to_support(x, support_size):
    x = torch.sign(x) * (torch.sqrt(torch.abs(x) + 1) - 1) + 0.001 * x
    x = torch.clamp(x, -support_size, support_size)
    floor = x.floor()
    prob = x - floor
    logits = torch.zeros(x.shape[0], x.shape[1], 2 * support_size + 1).to(x.device)
    logits.scatter_(2, (floor + support_size).long().unsqueeze(-1), (1 - prob).unsqueeze(-1))
    indexes = floor + support_size + 1
    prob = prob.masked_fill_(2 * support_size < indexes, 0.0)
    indexes = indexes.masked_fill_(2 * support_size < indexes, 0.0)
    logits.scatter_(2, indexes.long().unsqueeze(-1), prob.unsqueeze(-1))
    return logits


class AbstractNetwork(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def get_weights(self):
        return {key: value.cpu() for key, value in self.state_dict().items()}


class MuZeroFullyConnectedNetwork(AbstractNetwork):
    def __init__(self, observation_shape, stacked_observations, action_space_size, encoding_size,
                 fc_reward_layers, fc_value_layers, fc_policy_layers, fc_representation_layers,
                 fc_dynamics_layers, support_size):
        super().__init__()
        self.action_space_size = action_space_size
        self.full_support_size = 2 * support_size + 1
        self.representation_network = torch.nn.DataParallel(mlp(
            observation_shape[0] * observation_shape[1] * observation_shape[2] * (stacked_observations + 1)
            + stacked_observations * observation_shape[1] * observation_shape[2],
            fc_representation_layers, encoding_size))
        self.dynamics_encoded_state_network = torch.nn.DataParallel(
            mlp(encoding_size + self.action_space_size, fc_dynamics_layers, encoding_size))
        self.dynamics_reward_network = torch.nn.DataParallel(
            mlp(encoding_size, fc_reward_layers, self.full_support_size))
        self.prediction_policy_network = torch.nn.DataParallel(
            mlp(encoding_size, fc_policy_layers, self.action_space_size))
        self.prediction_value_network = torch.nn.DataParallel(
            mlp(encoding_size, fc_value_layers, self.full_support_size))

    def prediction(self, encoded_state):
        policy_logits = self.prediction_policy_network(encoded_state)
        value = self.prediction_value_network(encoded_state)
        return policy_logits, value

    def representation(self, observation):
        encoded_state = self.representation_network(observation.view(observation.shape[0], -1))
        min_encoded_state = encoded_state.min(1, keepdim=True)[0]
        max_encoded_state = encoded_state.max(1, keepdim=True)[0]
        scale_encoded_state = max_encoded_state - min_encoded_state
        scale_encoded_state[scale_encoded_state < 1e-5] += 1e-5
        encoded_state_normalized = (encoded_state - min_encoded_state) / scale_encoded_state
        return encoded_state_normalized

    def dynamics(self, encoded_state, action):
        action_one_hot = (torch.zeros((action.shape[0], self.action_space_size)).to(action.device).float())
        action_one_hot.scatter_(1, action.long(), 1.0)
        x = torch.cat((encoded_state, action_one_hot), dim=1)
        next_encoded_state = self.dynamics_encoded_state_network(x)
        reward = self.dynamics_reward_network(next_encoded_state)
        min_next_encoded_state = next_encoded_state.min(1, keepdim=True)[0]
        max_next_encoded_state = next_encoded_state.max(1, keepdim=True)[0]
        scale_next_encoded_state = max_next_encoded_state - min_next_encoded_state
        scale_next_encoded_state[scale_next_encoded_state < 1e-5] += 1e-5
        next_encoded_state_normalized = (next_encoded_state - min_next_encoded_state) / scale_next_encoded_state
        return next_encoded_state_normalized, reward

    def initial_inference(self, observation):
        encoded_state = self.representation(observation)
        policy_logits, value = self.prediction(encoded_state)
        reward = torch.log((torch.zeros(1, self.full_support_size)
                            .scatter(1, torch.tensor([[self.full_support_size // 2]]).long(), 1.0)
                            .repeat(len(observation), 1).to(observation.device)))
        return value, reward, policy_logits, encoded_state

    def recurrent_inference(self, encoded_state, action):
        next_encoded_state, reward = self.dynamics(encoded_state, action)
        policy_logits, value = self.prediction(next_encoded_state)
        return value, reward, policy_logits, next_encoded_state


class MuZeroTrainStep(nn.Module):
    """The unrolled part of muzero-general's `Trainer.update_weights`."""

    def __init__(self, support_size=5):
        super().__init__()
        self.support_size = support_size
        self.model = MuZeroFullyConnectedNetwork((1, 1, 6), 0, 3, 8, [16], [16], [16], [16], [16],
                                                 support_size)

    def forward(self, observation_batch, action_batch, target_value, target_reward, target_policy):
        target_value = scalar_to_support(target_value, self.support_size)
        target_reward = scalar_to_support(target_reward, self.support_size)
        value, reward, policy_logits, hidden_state = self.model.initial_inference(observation_batch)
        predictions = [(value, reward, policy_logits)]
        for i in range(1, action_batch.shape[1]):
            value, reward, policy_logits, hidden_state = self.model.recurrent_inference(
                hidden_state, action_batch[:, i])
            if hidden_state.requires_grad:  # the trainer runs with grad; inference does not
                hidden_state.register_hook(lambda grad: grad * 0.5)
            predictions.append((value, reward, policy_logits))
        value_loss, reward_loss, policy_loss = (0, 0, 0)
        for i, (value, reward, policy_logits) in enumerate(predictions):
            value_loss += (-target_value[:, i, :] * torch.nn.LogSoftmax(dim=1)(value)).sum(1)
            if i > 0:
                reward_loss += (-target_reward[:, i, :] * torch.nn.LogSoftmax(dim=1)(reward)).sum(1)
            policy_loss += (-target_policy[:, i, :] * torch.nn.LogSoftmax(dim=1)(policy_logits)).sum(1)
        loss = value_loss * 0.25 + reward_loss + policy_loss
        root_value = support_to_scalar(predictions[0][0], self.support_size)
        return loss.mean(), root_value


torch.manual_seed(0)
model = MuZeroTrainStep().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    batch, unroll = 4, 3
    return (torch.randn(batch, 1, 1, 6, generator=g), torch.randint(0, 3, (batch, unroll, 1), generator=g),
            torch.randn(batch, unroll, generator=g) * 3, torch.randn(batch, unroll, generator=g),
            torch.softmax(torch.randn(batch, unroll, 3, generator=g), -1))
