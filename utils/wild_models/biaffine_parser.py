"""A graph-based dependency parser in the manner of Dozat & Manning's
biaffine parser (SuPar / the Stanford parser ports): word and tag
embeddings concatenated, a bidirectional `nn.LSTM` over
`pack_padded_sequence(..., lengths.cpu(), batch_first=True,
enforce_sorted=False)` and `pad_packed_sequence` back, four MLPs
(arc-dep, arc-head, rel-dep, rel-head), the `Biaffine` scorer appending a
ones column with `torch.cat((x, torch.ones_like(x[..., :1])), -1)` and
`torch.einsum('bxi,oij,byj->boxy', ...)`, an `nn.Bilinear` label scorer
on the gold heads gathered with `torch.gather`, arc scores masked by
`masked_fill_(~mask.unsqueeze(1), float('-inf'))`, and the loss over
`mask` positions by boolean indexing."""
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class MLP(nn.Module):
    def __init__(self, n_in, n_out, dropout=0.0):
        super().__init__()
        self.linear = nn.Linear(n_in, n_out)
        self.activation = nn.LeakyReLU(negative_slope=0.1)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.dropout(self.activation(self.linear(x)))


class Biaffine(nn.Module):
    def __init__(self, n_in, n_out=1, bias_x=True, bias_y=True):
        super().__init__()
        self.n_in = n_in
        self.n_out = n_out
        self.bias_x = bias_x
        self.bias_y = bias_y
        self.weight = nn.Parameter(torch.zeros(n_out, n_in + bias_x, n_in + bias_y))
        nn.init.normal_(self.weight, std=0.1)

    def forward(self, x, y):
        if self.bias_x:
            x = torch.cat((x, torch.ones_like(x[..., :1])), -1)
        if self.bias_y:
            y = torch.cat((y, torch.ones_like(y[..., :1])), -1)
        s = torch.einsum("bxi,oij,byj->boxy", x, self.weight, y)
        s = s.squeeze(1)
        return s


class BiaffineDependencyModel(nn.Module):
    def __init__(self, n_words=50, n_tags=12, n_rels=7, n_embed=24, n_tag_embed=8,
                 n_lstm_hidden=24, n_mlp_arc=32, n_mlp_rel=16, pad_index=0):
        super().__init__()
        self.word_embed = nn.Embedding(n_words, n_embed, padding_idx=pad_index)
        self.tag_embed = nn.Embedding(n_tags, n_tag_embed)
        self.lstm = nn.LSTM(n_embed + n_tag_embed, n_lstm_hidden, num_layers=2,
                            batch_first=True, bidirectional=True)
        self.mlp_arc_d = MLP(n_lstm_hidden * 2, n_mlp_arc)
        self.mlp_arc_h = MLP(n_lstm_hidden * 2, n_mlp_arc)
        self.mlp_rel_d = MLP(n_lstm_hidden * 2, n_mlp_rel)
        self.mlp_rel_h = MLP(n_lstm_hidden * 2, n_mlp_rel)
        self.arc_attn = Biaffine(n_mlp_arc, bias_x=True, bias_y=False)
        self.rel_attn = nn.Bilinear(n_mlp_rel, n_mlp_rel, n_rels)
        self.pad_index = pad_index
        self.criterion = nn.CrossEntropyLoss()

    def forward(self, words, tags, arcs, rels):
        mask = words.ne(self.pad_index)
        lens = mask.sum(1)
        embed = torch.cat((self.word_embed(words), self.tag_embed(tags)), -1)
        x = pack_padded_sequence(embed, lens.cpu(), batch_first=True, enforce_sorted=False)
        x, _ = self.lstm(x)
        x, _ = pad_packed_sequence(x, batch_first=True, total_length=words.shape[1])
        arc_d = self.mlp_arc_d(x)
        arc_h = self.mlp_arc_h(x)
        rel_d = self.mlp_rel_d(x)
        rel_h = self.mlp_rel_h(x)
        s_arc = self.arc_attn(arc_d, arc_h)
        s_arc.masked_fill_(~mask.unsqueeze(1), float("-inf"))
        gold_h = torch.gather(rel_h, 1, arcs.unsqueeze(-1).expand(-1, -1, rel_h.shape[-1]))
        s_rel = self.rel_attn(rel_d.contiguous(), gold_h.contiguous())
        # the root token (position 0) has no head
        mask[:, 0] = 0
        arc_loss = self.criterion(s_arc[mask], arcs[mask])
        rel_loss = self.criterion(s_rel[mask], rels[mask])
        return s_arc.argmax(-1), s_rel.argmax(-1), arc_loss + rel_loss


torch.manual_seed(0)
model = BiaffineDependencyModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    words = torch.randint(1, 50, (3, 7), generator=g)
    words[1, 5:] = 0
    words[2, 4:] = 0
    tags = torch.randint(0, 12, (3, 7), generator=g)
    lens = words.ne(0).sum(1)
    arcs = torch.stack([torch.randint(0, int(n), (7,), generator=g) for n in lens])
    rels = torch.randint(0, 7, (3, 7), generator=g)
    return words, tags, arcs, rels
