"""A DeepSeek-V3 MoE layer as its remote `modeling_deepseek.py` runs it at
inference: the `noaux_tc` gate (sigmoid scores, an
`e_score_correction_bias` buffer added for choice only, group-limited
routing by the sum of each group's `topk(2)`, a group mask by `scatter_`
expanded to experts, `masked_fill(~score_mask.bool(), -inf)`,
`topk(sorted=False)`, weights gathered from the uncorrected scores,
normalized and scaled by `routed_scaling_factor`), and `moe_infer` under
`@torch.no_grad()` taken when `not self.training`: per-expert counts by
`new_zeros(...).scatter_(1, topk_ids, 1).sum(0)`, tokens sorted by
`topk_ids.view(-1).argsort()`, the counts brought to the host by
`.cpu().numpy()` and a Python loop slicing `sorted_tokens[start:end]` per
expert (skipping experts with no tokens), `torch.cat` of the outputs or
`new_empty(0)`, the results put back by `new_x[idxs] = outs` into
`torch.empty_like`, and combined by `.type(...).mul_(weights).sum(1)`;
shared experts added, in a two-layer decoder with RMSNorm."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DeepseekV3Config:
    hidden_size = 32
    moe_intermediate_size = 24
    n_routed_experts = 8
    num_experts_per_tok = 2
    n_group = 4
    topk_group = 2
    routed_scaling_factor = 2.5
    norm_topk_prob = True
    n_shared_experts = 1
    vocab_size = 64
    num_hidden_layers = 2


class DeepseekV3RMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


class DeepseekV3MLP(nn.Module):
    def __init__(self, config, hidden_size=None, intermediate_size=None):
        super().__init__()
        self.hidden_size = config.hidden_size if hidden_size is None else hidden_size
        self.intermediate_size = config.moe_intermediate_size if intermediate_size is None else intermediate_size
        self.gate_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.up_proj = nn.Linear(self.hidden_size, self.intermediate_size, bias=False)
        self.down_proj = nn.Linear(self.intermediate_size, self.hidden_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class MoEGate(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.top_k = config.num_experts_per_tok
        self.n_routed_experts = config.n_routed_experts
        self.routed_scaling_factor = config.routed_scaling_factor
        self.n_group, self.topk_group = config.n_group, config.topk_group
        self.norm_topk_prob = config.norm_topk_prob
        self.weight = nn.Parameter(torch.empty((self.n_routed_experts, config.hidden_size)))
        self.register_buffer("e_score_correction_bias", torch.empty((self.n_routed_experts)))
        nn.init.kaiming_uniform_(self.weight, a=5 ** 0.5)
        nn.init.uniform_(self.e_score_correction_bias, -0.1, 0.1)

    def forward(self, hidden_states):
        bsz, seq_len, h = hidden_states.shape
        hidden_states = hidden_states.view(-1, h)
        logits = F.linear(hidden_states.type(torch.float32), self.weight.type(torch.float32), None)
        scores = logits.sigmoid()
        scores_for_choice = scores.view(bsz * seq_len, -1) + self.e_score_correction_bias.unsqueeze(0)
        group_scores = scores_for_choice.view(bsz * seq_len, self.n_group, -1).topk(2, dim=-1)[0].sum(dim=-1)
        group_idx = torch.topk(group_scores, k=self.topk_group, dim=-1, sorted=False)[1]
        group_mask = torch.zeros_like(group_scores)
        group_mask.scatter_(1, group_idx, 1)
        score_mask = (group_mask.unsqueeze(-1)
                      .expand(bsz * seq_len, self.n_group, self.n_routed_experts // self.n_group)
                      .reshape(bsz * seq_len, -1))
        tmp_scores = scores_for_choice.masked_fill(~score_mask.bool(), float("-inf"))
        _, topk_idx = torch.topk(tmp_scores, k=self.top_k, dim=-1, sorted=False)
        topk_weight = scores.gather(1, topk_idx)
        if self.top_k > 1 and self.norm_topk_prob:
            denominator = topk_weight.sum(dim=-1, keepdim=True) + 1e-20
            topk_weight = topk_weight / denominator
        topk_weight = topk_weight * self.routed_scaling_factor
        return topk_idx, topk_weight


class DeepseekV3MoE(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.num_experts_per_tok = config.num_experts_per_tok
        self.ep_size, self.experts_per_rank, self.ep_rank = 1, config.n_routed_experts, 0
        self.experts = nn.ModuleList([DeepseekV3MLP(config) for _ in range(config.n_routed_experts)])
        self.gate = MoEGate(config)
        self.shared_experts = DeepseekV3MLP(
            config, intermediate_size=config.moe_intermediate_size * config.n_shared_experts)

    def forward(self, hidden_states):
        identity = hidden_states
        orig_shape = hidden_states.shape
        topk_idx, topk_weight = self.gate(hidden_states)
        hidden_states = hidden_states.view(-1, hidden_states.shape[-1])
        if not self.training:
            y = self.moe_infer(hidden_states, topk_idx, topk_weight).view(*orig_shape)
        y = y + self.shared_experts(identity)
        return y

    @torch.no_grad()
    def moe_infer(self, x, topk_ids, topk_weight):
        cnts = topk_ids.new_zeros((topk_ids.shape[0], len(self.experts)))
        cnts.scatter_(1, topk_ids, 1)
        tokens_per_expert = cnts.sum(dim=0)
        idxs = topk_ids.view(-1).argsort()
        sorted_tokens = x[idxs // topk_ids.shape[1]]
        tokens_per_expert = tokens_per_expert.cpu().numpy()
        outputs = []
        start_idx = 0
        for i, num_tokens in enumerate(tokens_per_expert):
            end_idx = start_idx + num_tokens
            if num_tokens == 0:
                continue
            expert = self.experts[i + self.ep_rank * self.experts_per_rank]
            tokens_for_this_expert = sorted_tokens[start_idx:end_idx]
            expert_out = expert(tokens_for_this_expert)
            outputs.append(expert_out)
            start_idx = end_idx
        outs = torch.cat(outputs, dim=0) if len(outputs) else sorted_tokens.new_empty(0)
        new_x = torch.empty_like(outs)
        new_x[idxs] = outs
        final_out = (new_x.view(*topk_ids.shape, -1).type(topk_weight.dtype)
                     .mul_(topk_weight.unsqueeze(dim=-1)).sum(dim=1).type(new_x.dtype))
        return final_out


class DeepseekV3DecoderLayer(nn.Module):
    def __init__(self, config, layer_idx):
        super().__init__()
        self.mixer = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.mlp = DeepseekV3MoE(config) if layer_idx > 0 else DeepseekV3MLP(config, intermediate_size=48)
        self.input_layernorm = DeepseekV3RMSNorm(config.hidden_size)
        self.post_attention_layernorm = DeepseekV3RMSNorm(config.hidden_size)

    def forward(self, hidden_states):
        hidden_states = hidden_states + self.mixer(self.input_layernorm(hidden_states))
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


class DeepseekV3Model(nn.Module):
    def __init__(self, config=DeepseekV3Config()):
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([DeepseekV3DecoderLayer(config, i) for i in range(config.num_hidden_layers)])
        self.norm = DeepseekV3RMSNorm(config.hidden_size)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        for layer in self.layers:
            hidden_states = layer(hidden_states)
        return self.lm_head(self.norm(hidden_states)).float()


torch.manual_seed(0)
model = DeepseekV3Model().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 64, (2, 7), generator=g)
