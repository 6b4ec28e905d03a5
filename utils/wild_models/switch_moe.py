"""A Switch/GShard-style mixture-of-experts layer as Mesh-TensorFlow ports
and fairseq's MoE write it: top-2 gating with a softmax over experts, the
second expert picked after masking the first with `masked_fill(finfo.min)`,
each token's slot in its expert's buffer from a `cumsum` over the one-hot
assignments, tokens past the expert capacity (`math.ceil` of the
capacity factor) dropped by a `lt` mask, dispatch and combine tensors
built with `F.one_hot` of the slots and contracted by `einsum` strings,
experts as one batched weight applied by `einsum`, plus the load-balancing
auxiliary loss `mean(me * ce) * E * E` and the router z-loss."""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class MoEConfig:
    d_model: int = 32
    d_ff: int = 64
    num_experts: int = 4
    capacity_factor: float = 1.0
    min_capacity: int = 2
    eval_capacity_factor: float = 1.0


def gumbel_rsample(shape, device):
    one = torch.tensor(1.0, device=device)
    zero = torch.tensor(0.0, device=device)
    return torch.distributions.gumbel.Gumbel(zero, one).rsample(shape)


def _capacity(num_tokens: int, num_experts: int, capacity_factor: float, min_capacity: int) -> int:
    capacity = math.ceil((num_tokens / num_experts) * capacity_factor)
    return max(capacity, min_capacity)


def top2gating(logits, capacity_factor: float, min_capacity: int, training: bool):
    gates = F.softmax(logits, dim=1)
    num_tokens, num_experts = gates.shape
    capacity = _capacity(num_tokens * 2, num_experts, capacity_factor, min_capacity)

    indices1_s = torch.argmax(gates, dim=1)
    mask1 = F.one_hot(indices1_s, num_classes=num_experts)
    # the second expert: the best one left once the first is masked out
    logits_w_noise = logits + gumbel_rsample(logits.shape, logits.device) if training else logits
    logits_except1 = logits_w_noise.masked_fill(mask1.bool(), torch.finfo(logits.dtype).min)
    indices2_s = torch.argmax(logits_except1, dim=1)
    mask2 = F.one_hot(indices2_s, num_classes=num_experts)

    # each token's position in its expert's buffer
    locations1 = torch.cumsum(mask1, dim=0) - 1
    locations2 = torch.cumsum(mask2, dim=0) - 1
    locations2 += torch.sum(mask1, dim=0, keepdim=True)

    me = torch.mean(gates, dim=0)
    ce = torch.mean(mask1.float(), dim=0)
    l_aux = torch.mean(me * ce) * num_experts * num_experts

    # drop the tokens past capacity
    mask1 *= torch.lt(locations1, capacity)
    mask2 *= torch.lt(locations2, capacity)
    locations1_s = torch.sum(locations1 * mask1, dim=1)
    locations2_s = torch.sum(locations2 * mask2, dim=1)

    mask1_float = mask1.float()
    mask2_float = mask2.float()
    gates1_s = torch.einsum("se,se->s", gates, mask1_float)
    gates2_s = torch.einsum("se,se->s", gates, mask2_float)
    denom_s = gates1_s + gates2_s
    denom_s = torch.clamp(denom_s, min=torch.finfo(denom_s.dtype).eps)
    gates1_s /= denom_s
    gates2_s /= denom_s

    gates1 = torch.einsum("s,se->se", gates1_s, mask1_float)
    gates2 = torch.einsum("s,se->se", gates2_s, mask2_float)
    locations1_sc = F.one_hot(locations1_s, num_classes=capacity).float()
    locations2_sc = F.one_hot(locations2_s, num_classes=capacity).float()
    combine1_sec = torch.einsum("se,sc->sec", gates1, locations1_sc)
    combine2_sec = torch.einsum("se,sc->sec", gates2, locations2_sc)
    combine_weights = combine1_sec + combine2_sec
    dispatch_mask = combine_weights.bool()
    return l_aux, combine_weights, dispatch_mask, mask1.sum(0)


class Experts(nn.Module):
    def __init__(self, cfg: MoEConfig):
        super().__init__()
        self.wi = nn.Parameter(torch.randn(cfg.num_experts, cfg.d_model, cfg.d_ff) / math.sqrt(cfg.d_model))
        self.wo = nn.Parameter(torch.randn(cfg.num_experts, cfg.d_ff, cfg.d_model) / math.sqrt(cfg.d_ff))

    def forward(self, dispatched):  # (experts, capacity, d_model)
        h = F.gelu(torch.einsum("ecm,emf->ecf", dispatched, self.wi))
        return torch.einsum("ecf,efm->ecm", h, self.wo)


class MOELayer(nn.Module):
    def __init__(self, cfg: MoEConfig):
        super().__init__()
        self.cfg = cfg
        self.wg = nn.Linear(cfg.d_model, cfg.num_experts, bias=False)
        self.experts = Experts(cfg)

    def forward(self, hidden_states):
        d_model = hidden_states.shape[-1]
        reshaped = hidden_states.reshape(-1, d_model)
        logits = self.wg(reshaped)
        factor = self.cfg.capacity_factor if self.training else self.cfg.eval_capacity_factor
        l_aux, combine_weights, dispatch_mask, exp_counts = top2gating(
            logits, factor, self.cfg.min_capacity, self.training)
        dispatched = torch.einsum("sec,sm->ecm", dispatch_mask.type_as(reshaped), reshaped)
        expert_output = self.experts(dispatched)
        combined = torch.einsum("sec,ecm->sm", combine_weights.type_as(reshaped), expert_output)
        z_loss = torch.logsumexp(logits, dim=-1).pow(2).mean()
        return combined.reshape(hidden_states.shape), l_aux, z_loss, exp_counts


class MoETransformerBlock(nn.Module):
    def __init__(self, cfg: MoEConfig = MoEConfig()):
        super().__init__()
        self.norm = nn.LayerNorm(cfg.d_model)
        self.moe = MOELayer(cfg)

    def forward(self, x):
        y, l_aux, z_loss, counts = self.moe(self.norm(x))
        return x + y, l_aux + 1e-3 * z_loss, counts


torch.manual_seed(0)
model = MoETransformerBlock().eval()
check_gradients = True


def example_inputs():
    return torch.randn(2, 9, 32, generator=torch.Generator().manual_seed(1))
