"""Evidential deep learning as pytorch-classification-uncertainty (Sensoy
et al.'s EDL) and Deep Evidential Regression's PyTorch ports write it: a
LeNet whose outputs become evidence by relu/exp/softplus picked by name,
Dirichlet concentrations `alpha = evidence + 1`, targets by
`torch.eye(num_classes)[labels]`, the digamma, log and MSE forms of the
loss sharing `edl_loss(func, ...)` with the KL to the uniform Dirichlet by
`torch.lgamma`/`torch.digamma`, the annealing coefficient as
`torch.min(torch.tensor(1.0), torch.tensor(epoch / annealing_step))` of a
Python epoch number, uncertainty `num_classes / S`, and a Normal-Inverse-
Gamma regression head split by `torch.split(.., 1, dim=-1)` with the
NIG negative log-likelihood (`torch.log(np.pi / v)`, lgamma) and its
evidence regularizer."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def relu_evidence(y):
    return F.relu(y)


def exp_evidence(y):
    return torch.exp(torch.clamp(y, -10, 10))


def softplus_evidence(y):
    return F.softplus(y)


def one_hot_embedding(labels, num_classes=10):
    y = torch.eye(num_classes)
    return y[labels]


def kl_divergence(alpha, num_classes, device=None):
    ones = torch.ones([1, num_classes], dtype=torch.float32, device=device)
    sum_alpha = torch.sum(alpha, dim=1, keepdim=True)
    first_term = (torch.lgamma(sum_alpha) - torch.lgamma(alpha).sum(dim=1, keepdim=True)
                  + torch.lgamma(ones).sum(dim=1, keepdim=True) - torch.lgamma(ones.sum(dim=1, keepdim=True)))
    second_term = (alpha - ones).mul(torch.digamma(alpha) - torch.digamma(sum_alpha)).sum(dim=1, keepdim=True)
    return first_term + second_term


def loglikelihood_loss(y, alpha, device=None):
    S = torch.sum(alpha, dim=1, keepdim=True)
    loglikelihood_err = torch.sum((y - (alpha / S)) ** 2, dim=1, keepdim=True)
    loglikelihood_var = torch.sum(alpha * (S - alpha) / (S * S * (S + 1)), dim=1, keepdim=True)
    return loglikelihood_err + loglikelihood_var


def mse_loss(y, alpha, epoch_num, num_classes, annealing_step, device=None):
    loglikelihood = loglikelihood_loss(y, alpha, device=device)
    annealing_coef = torch.min(torch.tensor(1.0, dtype=torch.float32),
                               torch.tensor(epoch_num / annealing_step, dtype=torch.float32))
    kl_alpha = (alpha - 1) * (1 - y) + 1
    kl_div = annealing_coef * kl_divergence(kl_alpha, num_classes, device=device)
    return loglikelihood + kl_div


def edl_loss(func, y, alpha, epoch_num, num_classes, annealing_step, device=None):
    S = torch.sum(alpha, dim=1, keepdim=True)
    A = torch.sum(y * (func(S) - func(alpha)), dim=1, keepdim=True)
    annealing_coef = torch.min(torch.tensor(1.0, dtype=torch.float32),
                               torch.tensor(epoch_num / annealing_step, dtype=torch.float32))
    kl_alpha = (alpha - 1) * (1 - y) + 1
    kl_div = annealing_coef * kl_divergence(kl_alpha, num_classes, device=device)
    return A + kl_div


def NIG_NLL(y, gamma, v, alpha, beta, reduce=True):
    twoBlambda = 2 * beta * (1 + v)
    nll = (0.5 * torch.log(np.pi / v) - alpha * torch.log(twoBlambda)
           + (alpha + 0.5) * torch.log(v * (y - gamma) ** 2 + twoBlambda)
           + torch.lgamma(alpha) - torch.lgamma(alpha + 0.5))
    return torch.mean(nll) if reduce else nll


def NIG_Reg(y, gamma, v, alpha, beta, reduce=True):
    error = torch.abs(y - gamma)
    reg = error * (2 * v + alpha)
    return torch.mean(reg) if reduce else reg


class DenseNormalGamma(nn.Module):
    def __init__(self, n_input, n_out_tasks=1):
        super().__init__()
        self.n_out = 4 * n_out_tasks
        self.linear = nn.Linear(n_input, self.n_out)

    def evidence(self, x):
        return F.softplus(x)

    def forward(self, x):
        out = self.linear(x)
        mu, logv, logalpha, logbeta = torch.split(out, out.shape[-1] // 4, dim=-1)
        v = self.evidence(logv)
        alpha = self.evidence(logalpha) + 1
        beta = self.evidence(logbeta)
        return mu, v, alpha, beta


class LeNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, kernel_size=5)
        self.conv2 = nn.Conv2d(8, 16, kernel_size=5)
        self.fc1 = nn.Linear(16 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, num_classes)

    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        x = F.relu(F.max_pool2d(self.conv2(x), 2))
        x = x.view(x.size()[0], -1)
        x = F.relu(self.fc1(x))
        return self.fc2(x), x


class EvidentialModel(nn.Module):
    def __init__(self, num_classes=10, annealing_step=10, evidence="relu", coeff=1e-2):
        super().__init__()
        self.num_classes, self.annealing_step, self.coeff = num_classes, annealing_step, coeff
        self.net = LeNet(num_classes)
        self.nig = DenseNormalGamma(64)
        self.evidence_fn = {"relu": relu_evidence, "exp": exp_evidence, "softplus": softplus_evidence}[evidence]

    def forward(self, inputs, labels, targets, epoch):
        outputs, features = self.net(inputs)
        _, preds = torch.max(outputs, 1)
        y = one_hot_embedding(labels, self.num_classes)
        evidence = self.evidence_fn(outputs)
        alpha = evidence + 1
        loss_digamma = torch.mean(edl_loss(torch.digamma, y, alpha, epoch, self.num_classes, self.annealing_step))
        loss_log = torch.mean(edl_loss(torch.log, y, alpha, epoch, self.num_classes, self.annealing_step))
        loss_mse = torch.mean(mse_loss(y, alpha, epoch, self.num_classes, self.annealing_step))
        uncertainty = self.num_classes / torch.sum(alpha, dim=1, keepdim=True)
        match = torch.reshape(torch.eq(preds, labels).float(), (-1, 1))
        total_evidence = torch.sum(evidence, 1, keepdim=True)
        mean_evidence_succ = torch.sum(total_evidence * match) / torch.sum(match + 1e-20)
        gamma, v, nig_alpha, beta = self.nig(features)
        loss_reg = NIG_NLL(targets, gamma, v, nig_alpha, beta) + self.coeff * NIG_Reg(targets, gamma, v, nig_alpha, beta)
        aleatoric = beta / (nig_alpha - 1)
        epistemic = beta / (v * (nig_alpha - 1))
        return {"loss": loss_digamma + loss_log + loss_mse + loss_reg, "uncertainty": uncertainty,
                "mean_evidence_succ": mean_evidence_succ, "aleatoric": aleatoric, "epistemic": epistemic}


torch.manual_seed(0)
model = EvidentialModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(6, 1, 28, 28, generator=g), torch.randint(0, 10, (6,), generator=g),
            torch.randn(6, 1, generator=g), 3)
