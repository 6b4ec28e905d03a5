"""A sparse mixture-of-experts layer as written in standalone MoE repos: a
router's softmax, top-k experts per token renormalized, a one_hot expert
mask permuted to (experts, k, tokens), a Python loop over experts that
gathers their tokens with torch.where and adds the weighted outputs back
with index_add_; plus a load-balancing auxiliary loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Expert(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.w1 = nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class SparseMoE(nn.Module):
    def __init__(self, dim=32, hidden=48, num_experts=4, top_k=2):
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.gate = nn.Linear(dim, num_experts, bias=False)
        self.experts = nn.ModuleList([Expert(dim, hidden) for _ in range(num_experts)])

    def forward(self, hidden_states):
        batch_size, sequence_length, hidden_dim = hidden_states.shape
        hidden_states = hidden_states.view(-1, hidden_dim)
        router_logits = self.gate(hidden_states)
        routing_weights = F.softmax(router_logits, dim=1, dtype=torch.float)
        routing_weights, selected_experts = torch.topk(routing_weights, self.top_k, dim=-1)
        routing_weights /= routing_weights.sum(dim=-1, keepdim=True)
        routing_weights = routing_weights.to(hidden_states.dtype)
        final = torch.zeros((batch_size * sequence_length, hidden_dim), dtype=hidden_states.dtype,
                            device=hidden_states.device)
        expert_mask = F.one_hot(selected_experts, num_classes=self.num_experts).permute(2, 1, 0)
        for expert_idx in range(self.num_experts):
            expert_layer = self.experts[expert_idx]
            idx, top_x = torch.where(expert_mask[expert_idx])
            current_state = hidden_states[None, top_x].reshape(-1, hidden_dim)
            current_hidden = expert_layer(current_state) * routing_weights[top_x, idx, None]
            final.index_add_(0, top_x, current_hidden.to(hidden_states.dtype))
        final = final.reshape(batch_size, sequence_length, hidden_dim)
        return final, router_logits


def load_balancing_loss(router_logits, num_experts, top_k):
    routing_weights = F.softmax(router_logits, dim=-1)
    _, selected = torch.topk(routing_weights, top_k, dim=-1)
    expert_mask = F.one_hot(selected, num_experts)
    tokens_per_expert = torch.mean(expert_mask.float(), dim=0)
    router_prob_per_expert = torch.mean(routing_weights, dim=0)
    return torch.sum(tokens_per_expert * router_prob_per_expert.unsqueeze(0)) * num_experts


class MoEBlock(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.moe = SparseMoE(dim)

    def forward(self, x):
        out, router_logits = self.moe(self.norm(x))
        aux = load_balancing_loss(router_logits, self.moe.num_experts, self.moe.top_k)
        return x + out, aux


torch.manual_seed(0)
model = MoEBlock().eval()


def example_inputs():
    return torch.randn(2, 6, 32, generator=torch.Generator().manual_seed(1))
