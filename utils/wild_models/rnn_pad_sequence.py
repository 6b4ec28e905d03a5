"""A character-level classifier over a list of variable-length sequences,
as NLP tutorials and fastText-style baselines write it: the batch given as
a Python list of 1-D LongTensors, lengths by
`torch.tensor([len(s) for s in seqs])`, padding by
`nn.utils.rnn.pad_sequence(batch_first=True, padding_value=0)`, an
`nn.Embedding(max_norm=1.0)` (which renormalizes the looked-up rows of its
weight in place on every call), an Elman `nn.RNN(nonlinearity="relu")`
of two layers over `pack_padded_sequence(enforce_sorted=False)`, the final
hidden state of the top layer `h_n[-1]`, a bag-of-characters branch by
`F.embedding_bag` with offsets from the lengths' exclusive `cumsum`, and
`F.nll_loss` on `log_softmax`."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence


class CharRNN(nn.Module):
    def __init__(self, vocab=40, dim=12, hidden=16, classes=5):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0, max_norm=1.0)
        self.bag_weight = nn.Parameter(torch.randn(vocab, dim) * 0.1)
        self.rnn = nn.RNN(dim, hidden, num_layers=2, nonlinearity="relu", batch_first=True)
        self.out = nn.Linear(hidden + dim, classes)

    def forward(self, seqs, labels):
        lengths = torch.tensor([len(s) for s in seqs])
        padded = pad_sequence(seqs, batch_first=True, padding_value=0)
        emb = self.embed(padded)
        packed = pack_padded_sequence(emb, lengths, batch_first=True, enforce_sorted=False)
        _, h_n = self.rnn(packed)
        flat = torch.cat(seqs)
        offsets = torch.cat([lengths.new_zeros(1), lengths.cumsum(0)[:-1]])
        bag = F.embedding_bag(flat, self.bag_weight, offsets, mode="mean")
        logits = self.out(torch.cat([h_n[-1], bag], dim=1))
        log_probs = F.log_softmax(logits, dim=-1)
        return log_probs, F.nll_loss(log_probs, labels)


torch.manual_seed(0)
model = CharRNN().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    seqs = [torch.randint(1, 40, (n,), generator=g) for n in (5, 9, 3, 7)]
    return seqs, torch.randint(0, 5, (4,), generator=g)
