"""A speculative-decoding verify step as gpt-fast and inference loops
write it: the target model scores the prefix plus the draft tokens in one
call, the draft tokens are accepted while the target's greedy choice
agrees (`cumprod` over the matches, its `sum` the accepted count), or
by rejection sampling on `torch.clamp(p - q, min=0)` residuals with uniform
draws passed in, the first rejected position's replacement gathered by
`gather`, the bonus token appended when all are accepted (`torch.where`
with scalars), and the new sequence lengths returned."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyLM(nn.Module):
    def __init__(self, vocab=40, dim=32, heads=4, layers=2, max_len=32):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, batch_first=True, norm_first=True)
        self.blocks = nn.ModuleList([layer] + [nn.TransformerEncoderLayer(
            dim, heads, 2 * dim, dropout=0.0, batch_first=True, norm_first=True) for _ in range(layers - 1)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx):
        T = idx.size(1)
        pos = torch.arange(T, device=idx.device)
        x = self.tok(idx) + self.pos(pos)[None]
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=idx.device)
        for blk in self.blocks:
            x = blk(x, src_mask=mask, is_causal=True)
        return self.head(self.ln_f(x))


def logits_to_probs(logits, temperature: float = 1.0):
    return F.softmax(logits / max(temperature, 1e-5), dim=-1)


class SpeculativeVerifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.target = TinyLM()

    def forward(self, prefix, draft_tokens, draft_probs, uniform):
        k = draft_tokens.size(1)
        seq = torch.cat([prefix, draft_tokens], dim=1)
        target_logits = self.target(seq)[:, -k - 1:]
        target_probs = logits_to_probs(target_logits)

        # greedy verification: accept while argmax agrees
        greedy = target_logits.argmax(dim=-1)
        matches = (greedy[:, :k] == draft_tokens).to(torch.int64)
        n_greedy = torch.cumprod(matches, dim=1).sum(dim=1)

        # rejection sampling: accept token i with probability min(1, p/q)
        p = target_probs[:, :k].gather(-1, draft_tokens.unsqueeze(-1)).squeeze(-1)
        q = draft_probs.gather(-1, draft_tokens.unsqueeze(-1)).squeeze(-1)
        accept = uniform < torch.clamp(p / q, max=1.0)
        n_accepted = torch.cumprod(accept.long(), dim=1).sum(dim=1)

        # residual distribution at the first rejected position
        rows = torch.arange(prefix.size(0), device=prefix.device)
        first_reject = torch.clamp(n_accepted, max=k - 1)
        residual = torch.clamp(target_probs[rows, first_reject] - draft_probs[rows, first_reject], min=0.0)
        residual = residual / residual.sum(dim=-1, keepdim=True).clamp_min(1e-12)
        replacement = residual.argmax(dim=-1)
        bonus = target_probs[:, -1].argmax(dim=-1)
        next_token = torch.where(n_accepted == k, bonus, replacement)

        positions = torch.arange(k + 1, device=prefix.device)[None, :]
        out = torch.where(positions < n_accepted[:, None], F.pad(draft_tokens, (0, 1), value=0), -1)
        out = out.scatter(1, n_accepted[:, None], next_token[:, None])
        return out, n_greedy, n_accepted, prefix.size(1) + n_accepted + 1


torch.manual_seed(0)
model = SpeculativeVerifier().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    prefix = torch.randint(0, 40, (3, 6), generator=g)
    draft_probs = F.softmax(torch.randn(3, 4, 40, generator=g) * 3, dim=-1)
    draft_tokens = draft_probs.argmax(-1)
    draft_tokens[0, 2] = 5
    uniform = torch.rand(3, 4, generator=g)
    return prefix, draft_tokens, draft_probs, uniform
