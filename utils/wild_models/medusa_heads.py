"""A Medusa speculative-decoding step as the Medusa reference code writes
it: extra decoding heads of `ResBlock`s (`x + act(linear(x))`) over the
base model's last hidden state, their logits stacked with `torch.stack`,
candidates built from the base greedy token and each head's `topk`,
a sparse tree of candidates gathered with a precomputed
`tree_indices` buffer and `retrieve_indices` padded with -1 (a zero
column appended so -1 reads it), and tree attention through a mask
built in __init__ from the tree's ancestry."""
import torch
import torch.nn as nn
import torch.nn.functional as F

TOPK = 3
MEDUSA_CHOICES = [(0,), (1,), (2,), (0, 0), (0, 1), (1, 0), (0, 0, 0)]


def generate_medusa_buffers(medusa_choices):
    sorted_choices = sorted(medusa_choices, key=lambda x: (len(x), x))
    medusa_len = len(sorted_choices) + 1
    depth_counts = []
    prev_depth = 0
    for path in sorted_choices:
        depth = len(path)
        if depth != prev_depth:
            depth_counts.append(0)
        depth_counts[depth - 1] += 1
        prev_depth = depth
    attn_mask = torch.eye(medusa_len, medusa_len)
    attn_mask[:, 0] = 1
    start = 0
    for i in range(len(depth_counts)):
        for j in range(depth_counts[i]):
            cur = sorted_choices[start + j]
            if len(cur) == 1:
                continue
            ancestor_idx = []
            for c in range(len(cur) - 1):
                ancestor_idx.append(sorted_choices.index(cur[:c + 1]) + 1)
            attn_mask[j + start + 1, ancestor_idx] = 1
        start += depth_counts[i]
    tree_indices = torch.zeros(medusa_len, dtype=torch.long)
    tree_indices[0] = 0
    start = 0
    for i in range(len(depth_counts)):
        for j in range(depth_counts[i]):
            cur = sorted_choices[start + j]
            tree_indices[start + j + 1] = cur[-1] + TOPK * i + 1
        start += depth_counts[i]
    position_ids = torch.zeros(medusa_len, dtype=torch.long)
    start = 0
    for i in range(len(depth_counts)):
        position_ids[start + 1: start + depth_counts[i] + 1] = i + 1
        start += depth_counts[i]
    retrieve_paths = []
    for path in sorted_choices[::-1]:
        if not any(list(p[:len(path)]) == list(path) for p in retrieve_paths):
            retrieve_paths.append(path)
    max_length = max(len(p) for p in retrieve_paths)
    retrieve_indices = []
    for path in retrieve_paths:
        idx = [sorted_choices.index(path[:c + 1]) + 1 for c in range(len(path))]
        retrieve_indices.append([0] + idx + [-1] * (max_length - len(path)))
    return {"medusa_attn_mask": attn_mask.unsqueeze(0).unsqueeze(0),
            "tree_indices": tree_indices, "medusa_position_ids": position_ids,
            "retrieve_indices": torch.tensor(retrieve_indices, dtype=torch.long)}


class ResBlock(nn.Module):
    def __init__(self, hidden_size):
        super().__init__()
        self.linear = nn.Linear(hidden_size, hidden_size)
        torch.nn.init.zeros_(self.linear.weight)
        self.act = nn.SiLU()

    def forward(self, x):
        return x + self.act(self.linear(x))


class TinyBase(nn.Module):
    def __init__(self, vocab, dim, heads):
        super().__init__()
        self.heads = heads
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(32, dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.o = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids, position_ids, attn_mask):
        x = self.embed(ids) + self.pos(position_ids)
        b, n, d = x.shape
        q, k, v = self.qkv(x).view(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)
        h = self.norm(x + self.o(y.transpose(1, 2).reshape(b, n, d)))
        return h, self.lm_head(h)


class MedusaModel(nn.Module):
    def __init__(self, vocab=48, dim=32, heads=4, medusa_num_heads=3, medusa_num_layers=1):
        super().__init__()
        self.base_model = TinyBase(vocab, dim, heads)
        self.medusa = medusa_num_heads
        self.medusa_head = nn.ModuleList([
            nn.Sequential(*([ResBlock(dim)] * medusa_num_layers), nn.Linear(dim, vocab, bias=False))
            for _ in range(medusa_num_heads)])
        for k, v in generate_medusa_buffers(MEDUSA_CHOICES).items():
            self.register_buffer(k, v, persistent=False)

    def forward(self, input_ids):
        n = input_ids.shape[1]
        causal = torch.ones(n, n, dtype=torch.bool).tril()[None, None]
        pos = torch.arange(n)[None]
        hidden, logits = self.base_model(input_ids, pos, causal)
        medusa_logits = torch.stack([head(hidden) for head in self.medusa_head], dim=0)
        candidates_logit = torch.argmax(logits[:, -1]).unsqueeze(0)
        candidates_medusa_logits = torch.topk(medusa_logits[:, 0, -1], TOPK, dim=-1).indices
        candidates = torch.cat([candidates_logit, candidates_medusa_logits.view(-1)], dim=-1)
        tree_candidates = candidates[self.tree_indices]
        tree_candidates_ext = torch.cat(
            [tree_candidates, torch.zeros((1), dtype=torch.long, device=tree_candidates.device)], dim=0)
        cart_candidates = tree_candidates_ext[self.retrieve_indices]
        tree_candidates = tree_candidates.unsqueeze(0)
        # verify the tree in one call: prefix attends causally, tree tokens by ancestry
        m = tree_candidates.shape[1]
        full_ids = torch.cat([input_ids[:1], tree_candidates], dim=1)
        prefix = torch.ones(n + m, n, dtype=torch.bool)
        prefix[:n] = causal[0, 0]
        tree = torch.zeros(n + m, m, dtype=torch.bool)
        tree[n:] = self.medusa_attn_mask[0, 0].bool()
        mask = torch.cat([prefix, tree], dim=1)[None, None]
        full_pos = torch.cat([pos[0], self.medusa_position_ids + n])[None]
        _, tree_logits = self.base_model(full_ids, full_pos, mask)
        tree_logits = tree_logits[0, n:][self.retrieve_indices]
        posterior_mask = (cart_candidates[:, 1:] == torch.argmax(tree_logits[:, :-1], dim=-1)).int()
        candidates_accept_length = torch.cumprod(posterior_mask, dim=1).sum(dim=1)
        accept_length = candidates_accept_length.max()
        best_candidate = torch.argmax(candidates_accept_length).to(torch.long)
        return medusa_logits, cart_candidates, best_candidate, accept_length


torch.manual_seed(0)
model = MedusaModel().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 48, (1, 6), generator=g)
