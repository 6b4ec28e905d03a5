"""fairseq's `LabelSmoothedCrossEntropyCriterion` around a small decoder
language model: `label_smoothed_nll_loss(lprobs, target, epsilon,
ignore_index, reduce)` gathering the target column, `eps_i = epsilon /
(lprobs.size(-1) - 1)`, padding zeroed by `masked_fill_(pad_mask, 0.0)`,
`ignore_prefix_size` slicing, `sample_size` from `ntokens` or the batch
size by `sentence_avg`, `nll_loss` and `n_correct` by `argmax` and
`ne(padding_idx)` for the logging output, the loss divided by `log(2)`
into bits as fairseq reports it, next to torch's own
`F.cross_entropy(label_smoothing=, ignore_index=)` on the same logits."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def label_smoothed_nll_loss(lprobs, target, epsilon, ignore_index=None, reduce=True):
    if target.dim() == lprobs.dim() - 1:
        target = target.unsqueeze(-1)
    nll_loss = -lprobs.gather(dim=-1, index=target)
    smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
    if ignore_index is not None:
        pad_mask = target.eq(ignore_index)
        nll_loss.masked_fill_(pad_mask, 0.0)
        smooth_loss.masked_fill_(pad_mask, 0.0)
    else:
        nll_loss = nll_loss.squeeze(-1)
        smooth_loss = smooth_loss.squeeze(-1)
    if reduce:
        nll_loss = nll_loss.sum()
        smooth_loss = smooth_loss.sum()
    eps_i = epsilon / (lprobs.size(-1) - 1)
    loss = (1.0 - epsilon - eps_i) * nll_loss + eps_i * smooth_loss
    return loss, nll_loss


class TinyDecoder(nn.Module):
    def __init__(self, vocab=50, dim=32, heads=4, layers=2, padding_idx=1):
        super().__init__()
        self.padding_idx = padding_idx
        self.embed_tokens = nn.Embedding(vocab, dim, padding_idx=padding_idx)
        self.embed_scale = math.sqrt(dim)
        self.embed_positions = nn.Embedding(64, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, 64, dropout=0.0, batch_first=True, norm_first=True)
        self.layers = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.output_projection = nn.Linear(dim, vocab, bias=False)
        self.output_projection.weight = self.embed_tokens.weight

    def forward(self, prev_output_tokens):
        t = prev_output_tokens.size(1)
        positions = torch.cumsum(prev_output_tokens.ne(self.padding_idx).int(), dim=1) * \
            prev_output_tokens.ne(self.padding_idx).int() + self.padding_idx
        x = self.embed_scale * self.embed_tokens(prev_output_tokens) + self.embed_positions(positions.long())
        causal = torch.triu(torch.ones(t, t, dtype=torch.bool, device=x.device), 1)
        x = self.layers(x, mask=causal, src_key_padding_mask=prev_output_tokens.eq(self.padding_idx))
        return self.output_projection(x)


class LabelSmoothedCriterionModel(nn.Module):
    def __init__(self, label_smoothing=0.1, sentence_avg=False, ignore_prefix_size=1, report_accuracy=True):
        super().__init__()
        self.decoder = TinyDecoder()
        self.padding_idx = self.decoder.padding_idx
        self.eps = label_smoothing
        self.sentence_avg = sentence_avg
        self.ignore_prefix_size = ignore_prefix_size
        self.report_accuracy = report_accuracy

    def get_lprobs_and_target(self, net_output, target):
        lprobs = F.log_softmax(net_output, dim=-1, dtype=torch.float32)
        if self.ignore_prefix_size > 0:
            lprobs = lprobs[:, self.ignore_prefix_size:, :].contiguous()
            target = target[:, self.ignore_prefix_size:].contiguous()
        return lprobs.view(-1, lprobs.size(-1)), target.view(-1)

    def compute_accuracy(self, lprobs, target):
        mask = target.ne(self.padding_idx)
        n_correct = torch.sum(lprobs.argmax(1).masked_select(mask).eq(target.masked_select(mask)))
        total = torch.sum(mask)
        return n_correct, total

    def forward(self, sample):
        net_output = self.decoder(sample["net_input"]["prev_output_tokens"])
        lprobs, target = self.get_lprobs_and_target(net_output, sample["target"])
        loss, nll_loss = label_smoothed_nll_loss(lprobs, target, self.eps, ignore_index=self.padding_idx)
        sample_size = sample["target"].size(0) if self.sentence_avg else sample["ntokens"]
        logging_output = {
            "loss": loss.data,
            "nll_loss": nll_loss.data,
            "ntokens": sample["ntokens"],
            "nsentences": sample["target"].size(0),
            "sample_size": sample_size,
        }
        if self.report_accuracy:
            n_correct, total = self.compute_accuracy(lprobs, target)
            logging_output["n_correct"] = n_correct
            logging_output["total"] = total
        torch_ce = F.cross_entropy(net_output[:, self.ignore_prefix_size:].reshape(-1, net_output.size(-1)),
                                   target, ignore_index=self.padding_idx, label_smoothing=self.eps,
                                   reduction="sum")
        return loss / sample_size / math.log(2), torch_ce / sample_size, logging_output


torch.manual_seed(0)
model = LabelSmoothedCriterionModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(4, 50, (3, 10), generator=g)
    tokens[1, 7:] = 1
    tokens[2, 5:] = 1
    target = torch.cat((tokens[:, 1:], torch.full((3, 1), 2)), 1)
    target[tokens == 1] = 1
    ntokens = int(target.ne(1).sum())
    return ({"net_input": {"prev_output_tokens": tokens}, "target": target, "ntokens": ntokens},)
