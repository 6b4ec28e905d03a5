"""One beam-search step as fairseq's and OpenNMT's search code writes it:
log-probabilities of the next token for every beam added to the running
beam scores, `topk` over the flattened `(beam * vocab)` candidates (twice
the beam size, so finished hypotheses can be set aside), beam indices by
`torch.div(..., rounding_mode="floor")` and token ids by `fmod`, EOS
candidates masked with `-inf` through `masked_fill`, the surviving beams
picked by a second `topk` over active flags, the decoder's cache reordered
by `index_select` on flattened beam offsets, and the length penalty
`((5 + len) / 6) ** alpha`."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class GRUDecoder(nn.Module):
    def __init__(self, vocab=50, dim=32):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.cell = nn.GRUCell(dim, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, tokens, state):
        h = self.cell(self.embed(tokens), state)
        return F.log_softmax(self.out(h), dim=-1), h


class BeamSearchStep(nn.Module):
    def __init__(self, beam_size=3, eos=2, pad=0, alpha=0.6):
        super().__init__()
        self.beam_size, self.eos, self.pad, self.alpha = beam_size, eos, pad, alpha
        self.decoder = GRUDecoder()

    def forward(self, tokens, scores, hidden, cands_to_ignore, step: int):
        # tokens: (bsz * beam, step + 1), scores: (bsz * beam, step), hidden: (bsz * beam, dim)
        bsz = tokens.size(0) // self.beam_size
        beam_size = self.beam_size
        lprobs, hidden = self.decoder(tokens[:, step], hidden)
        vocab_size = lprobs.size(-1)
        lprobs[:, self.pad] = -math.inf
        lprobs = lprobs.view(bsz, -1, vocab_size)
        lprobs = lprobs + scores[:, step - 1].view(bsz, beam_size).unsqueeze(-1)
        top_prediction = torch.topk(lprobs.view(bsz, -1), k=min(beam_size * 2, lprobs.view(bsz, -1).size(1) - 1))
        cand_scores = top_prediction[0]
        indices_buf = top_prediction[1]
        cand_beams = torch.div(indices_buf, vocab_size, rounding_mode="floor")
        cand_indices = indices_buf.fmod(vocab_size)

        bbsz_offsets = (torch.arange(0, bsz) * beam_size).unsqueeze(1).type_as(tokens)
        cand_bbsz_idx = cand_beams.add(bbsz_offsets)
        eos_mask = cand_indices.eq(self.eos) & cand_scores.ne(-math.inf)
        eos_mask[:, :beam_size][cands_to_ignore] = torch.tensor(0).to(eos_mask)
        penalty = ((5.0 + step + 1) / 6.0) ** self.alpha
        finalized_scores = torch.masked_select(cand_scores[:, :beam_size], eos_mask[:, :beam_size]) / penalty

        # keep the best beam_size candidates that did not end
        cand_size = 2 * beam_size
        cand_offsets = torch.arange(0, cand_size).type_as(cand_indices)
        active_mask = torch.add(eos_mask.type_as(cand_offsets) * cand_size, cand_offsets[: eos_mask.size(1)])
        new_cands_to_ignore, active_hypos = torch.topk(active_mask, k=beam_size, dim=1, largest=False)
        active_bbsz_idx = torch.gather(cand_bbsz_idx, dim=1, index=active_hypos).view(-1)
        active_scores = torch.gather(cand_scores, dim=1, index=active_hypos).view(-1)

        new_tokens = torch.index_select(tokens[:, : step + 1], dim=0, index=active_bbsz_idx)
        new_tokens = torch.cat([new_tokens, torch.gather(cand_indices, 1, active_hypos).view(-1, 1)], dim=1)
        new_scores = torch.index_select(scores[:, :step], dim=0, index=active_bbsz_idx)
        new_scores = torch.cat([new_scores, active_scores.view(-1, 1)], dim=1)
        new_hidden = hidden.index_select(0, active_bbsz_idx)
        return new_tokens, new_scores, new_hidden, finalized_scores, eos_mask.any(dim=1)


torch.manual_seed(0)
model = BeamSearchStep().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    bsz, beam, step = 2, 3, 3
    tokens = torch.randint(3, 50, (bsz * beam, step + 1), generator=g)
    scores = -torch.rand(bsz * beam, step, generator=g).cumsum(1)
    hidden = torch.randn(bsz * beam, 32, generator=g)
    tokens[1, 2] = 2
    cands_to_ignore = torch.zeros(bsz, beam, dtype=torch.bool)
    cands_to_ignore[1, 0] = True
    return tokens, scores, hidden, cands_to_ignore, step
