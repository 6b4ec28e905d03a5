"""AWD-LSTM language model (salesforce/awd-lstm-lm, fastai) with an
adaptive softmax output as fairseq and the PyTorch word-language-model
examples use it: `embedded_dropout` that masks rows of the embedding
weight and calls `F.embedding` with the module's `padding_idx`,
`max_norm`, `norm_type`, `scale_grad_by_freq` and `sparse` attributes,
`LockedDropout` drawing one mask over time (`x.data.new(1, B, H).bernoulli_`)
only in training, a list of single-layer `nn.LSTM`s of different sizes
stepped with a list of hidden tuples, and `nn.AdaptiveLogSoftmaxWithLoss`
with cutoffs: its `(output, loss)` named tuple for the targets and
`log_prob` for the full distribution of the last step."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def embedded_dropout(embed, words, dropout=0.1, scale=None):
    if dropout:
        mask = embed.weight.data.new().resize_((embed.weight.size(0), 1)).bernoulli_(1 - dropout).expand_as(
            embed.weight) / (1 - dropout)
        masked_embed_weight = mask * embed.weight
    else:
        masked_embed_weight = embed.weight
    if scale:
        masked_embed_weight = scale.expand_as(masked_embed_weight) * masked_embed_weight
    padding_idx = embed.padding_idx
    if padding_idx is None:
        padding_idx = -1
    return F.embedding(words, masked_embed_weight, padding_idx, embed.max_norm, embed.norm_type,
                       embed.scale_grad_by_freq, embed.sparse)


class LockedDropout(nn.Module):
    def forward(self, x, dropout=0.5):
        if not self.training or not dropout:
            return x
        m = x.data.new(1, x.size(1), x.size(2)).bernoulli_(1 - dropout)
        mask = m.requires_grad_(False) / (1 - dropout)
        return mask.expand_as(x) * x


class RNNModel(nn.Module):
    def __init__(self, ntoken=60, ninp=16, nhid=24, nlayers=3, cutoffs=(10, 30)):
        super().__init__()
        self.lockdrop = LockedDropout()
        self.encoder = nn.Embedding(ntoken, ninp, padding_idx=0)
        self.rnns = nn.ModuleList(
            nn.LSTM(ninp if l == 0 else nhid, nhid if l != nlayers - 1 else ninp, 1) for l in range(nlayers))
        self.crit = nn.AdaptiveLogSoftmaxWithLoss(ninp, ntoken, cutoffs=list(cutoffs), div_value=2.0)
        self.ninp, self.nhid, self.nlayers = ninp, nhid, nlayers
        self.dropouti, self.dropouth, self.dropout, self.dropoute = 0.25, 0.2, 0.3, 0.1

    def init_hidden(self, bsz):
        weight = next(self.parameters()).data
        return [(weight.new(1, bsz, self.nhid if l != self.nlayers - 1 else self.ninp).zero_(),
                 weight.new(1, bsz, self.nhid if l != self.nlayers - 1 else self.ninp).zero_())
                for l in range(self.nlayers)]

    def forward(self, input, targets, hidden=None):
        if hidden is None:
            hidden = self.init_hidden(input.size(1))
        emb = embedded_dropout(self.encoder, input, dropout=self.dropoute if self.training else 0)
        emb = self.lockdrop(emb, self.dropouti)
        raw_output = emb
        new_hidden = []
        for l, rnn in enumerate(self.rnns):
            raw_output, new_h = rnn(raw_output, hidden[l])
            new_hidden.append(new_h)
            if l != self.nlayers - 1:
                raw_output = self.lockdrop(raw_output, self.dropouth)
        output = self.lockdrop(raw_output, self.dropout)
        flat = output.view(-1, output.size(2))
        out = self.crit(flat, targets.view(-1))
        last_log_probs = self.crit.log_prob(output[-1])
        return out.output, out.loss, last_log_probs, new_hidden


torch.manual_seed(0)
model = RNNModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 60, (7, 3), generator=g), torch.randint(0, 60, (7, 3), generator=g)
