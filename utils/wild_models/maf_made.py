"""A masked autoregressive flow on tabular data as ikostrikov's
pytorch-flows writes it: MADE masks from input/hidden/output degrees
(`arange % in_flow_features`, `(out_degrees.unsqueeze(-1) >=
in_degrees.unsqueeze(0)).float()`), MaskedLinear layers multiplying their
weight by a mask buffer with an optional conditioning Linear, a `mode`
string ("direct" or "inverse") threaded through every flow, the inverse
direction solved column by column in a Python loop writing `x[:, i_col]`
into `torch.zeros_like`, BatchNormFlow using batch statistics only in
training and its running buffers otherwise, Reverse permutations held as
numpy arrays and used as indices, FlowSequential iterating
`self._modules.values()` and summing log-determinants, `log_probs` by the
standard-normal density plus the log-Jacobian, and sampling from given
noise through the inverse flow under `torch.no_grad()`."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def get_mask(in_features, out_features, in_flow_features, mask_type=None):
    if mask_type == "input":
        in_degrees = torch.arange(in_features) % in_flow_features
    else:
        in_degrees = torch.arange(in_features) % (in_flow_features - 1)
    if mask_type == "output":
        out_degrees = torch.arange(out_features) % in_flow_features - 1
    else:
        out_degrees = torch.arange(out_features) % (in_flow_features - 1)
    return (out_degrees.unsqueeze(-1) >= in_degrees.unsqueeze(0)).float()


class MaskedLinear(nn.Module):
    def __init__(self, in_features, out_features, mask, cond_in_features=None, bias=True):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        if cond_in_features is not None:
            self.cond_linear = nn.Linear(cond_in_features, out_features, bias=False)
        self.register_buffer("mask", mask)

    def forward(self, inputs, cond_inputs=None):
        output = F.linear(inputs, self.linear.weight * self.mask, self.linear.bias)
        if cond_inputs is not None:
            output += self.cond_linear(cond_inputs)
        return output


nn.MaskedLinear = MaskedLinear


class MADE(nn.Module):
    def __init__(self, num_inputs, num_hidden, num_cond_inputs=None, act="relu", pre_exp_tanh=False):
        super().__init__()
        activations = {"relu": nn.ReLU, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh}
        act_func = activations[act]
        input_mask = get_mask(num_inputs, num_hidden, num_inputs, mask_type="input")
        hidden_mask = get_mask(num_hidden, num_hidden, num_inputs)
        output_mask = get_mask(num_hidden, num_inputs * 2, num_inputs, mask_type="output")
        self.joiner = nn.MaskedLinear(num_inputs, num_hidden, input_mask, num_cond_inputs)
        self.trunk = nn.Sequential(act_func(), nn.MaskedLinear(num_hidden, num_hidden, hidden_mask), act_func(),
                                   nn.MaskedLinear(num_hidden, num_inputs * 2, output_mask))

    def forward(self, inputs, cond_inputs=None, mode="direct"):
        if mode == "direct":
            h = self.joiner(inputs, cond_inputs)
            m, a = self.trunk(h).chunk(2, 1)
            u = (inputs - m) * torch.exp(-a)
            return u, -a.sum(-1, keepdim=True)
        x = torch.zeros_like(inputs)
        for i_col in range(inputs.shape[1]):
            h = self.joiner(x, cond_inputs)
            m, a = self.trunk(h).chunk(2, 1)
            x[:, i_col] = inputs[:, i_col] * torch.exp(a[:, i_col]) + m[:, i_col]
        return x, -a.sum(-1, keepdim=True)


class BatchNormFlow(nn.Module):
    def __init__(self, num_inputs, momentum=0.0, eps=1e-5):
        super().__init__()
        self.log_gamma = nn.Parameter(torch.zeros(num_inputs))
        self.beta = nn.Parameter(torch.zeros(num_inputs))
        self.momentum = momentum
        self.eps = eps
        self.register_buffer("running_mean", torch.zeros(num_inputs))
        self.register_buffer("running_var", torch.ones(num_inputs))

    def forward(self, inputs, cond_inputs=None, mode="direct"):
        if mode == "direct":
            if self.training:
                self.batch_mean = inputs.mean(0)
                self.batch_var = (inputs - self.batch_mean).pow(2).mean(0) + self.eps
                self.running_mean.mul_(self.momentum)
                self.running_var.mul_(self.momentum)
                self.running_mean.add_(self.batch_mean.data * (1 - self.momentum))
                self.running_var.add_(self.batch_var.data * (1 - self.momentum))
                mean = self.batch_mean
                var = self.batch_var
            else:
                mean = self.running_mean
                var = self.running_var
            x_hat = (inputs - mean) / var.sqrt()
            y = torch.exp(self.log_gamma) * x_hat + self.beta
            return y, (self.log_gamma - 0.5 * torch.log(var)).sum(-1, keepdim=True)
        if self.training:
            mean = self.batch_mean
            var = self.batch_var
        else:
            mean = self.running_mean
            var = self.running_var
        x_hat = (inputs - self.beta) / torch.exp(self.log_gamma)
        y = x_hat * var.sqrt() + mean
        return y, (-self.log_gamma + 0.5 * torch.log(var)).sum(-1, keepdim=True)


class Reverse(nn.Module):
    def __init__(self, num_inputs):
        super().__init__()
        self.perm = np.array(np.arange(0, num_inputs)[::-1])
        self.inv_perm = np.argsort(self.perm)

    def forward(self, inputs, cond_inputs=None, mode="direct"):
        if mode == "direct":
            return inputs[:, self.perm], torch.zeros(inputs.size(0), 1, device=inputs.device)
        return inputs[:, self.inv_perm], torch.zeros(inputs.size(0), 1, device=inputs.device)


class FlowSequential(nn.Sequential):
    def forward(self, inputs, cond_inputs=None, mode="direct", logdets=None):
        self.num_inputs = inputs.size(-1)
        if logdets is None:
            logdets = torch.zeros(inputs.size(0), 1, device=inputs.device)
        assert mode in ["direct", "inverse"]
        if mode == "direct":
            for module in self._modules.values():
                inputs, logdet = module(inputs, cond_inputs, mode)
                logdets += logdet
        else:
            for module in reversed(self._modules.values()):
                inputs, logdet = module(inputs, cond_inputs, mode)
                logdets += logdet
        return inputs, logdets

    def log_probs(self, inputs, cond_inputs=None):
        u, log_jacob = self(inputs, cond_inputs)
        log_probs = (-0.5 * u.pow(2) - 0.5 * math.log(2 * math.pi)).sum(-1, keepdim=True)
        return (log_probs + log_jacob).sum(-1, keepdim=True)

    def sample(self, noise, cond_inputs=None):
        samples = self.forward(noise, cond_inputs, mode="inverse")[0]
        return samples


class MAF(nn.Module):
    def __init__(self, num_inputs=5, num_hidden=24, num_cond_inputs=3, num_blocks=3):
        super().__init__()
        modules = []
        for _ in range(num_blocks):
            modules += [MADE(num_inputs, num_hidden, num_cond_inputs, act="relu"),
                        BatchNormFlow(num_inputs), Reverse(num_inputs)]
        self.flow = FlowSequential(*modules)
        for module in self.flow.modules():
            if isinstance(module, nn.Linear):
                nn.init.orthogonal_(module.weight)
                if hasattr(module, "bias") and module.bias is not None:
                    module.bias.data.fill_(0)

    def forward(self, data, cond_data, noise):
        loss = -self.flow.log_probs(data, cond_data).mean()
        # sampling as the training script runs it, for plots: without a graph
        with torch.no_grad():
            samples = self.flow.sample(noise, cond_data)
        return loss, samples


torch.manual_seed(0)
model = MAF().eval()
for _m in model.flow:
    if isinstance(_m, BatchNormFlow):
        _m.running_mean.uniform_(-0.2, 0.2)
        _m.running_var.uniform_(0.8, 1.3)
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(16, 5, generator=g), torch.randn(16, 3, generator=g), torch.randn(16, 5, generator=g)
