"""A BiLSTM-CRF tagger as pytorch-crf (kmkurn) and the NER code built on it
write it: an embedding and bidirectional nn.LSTM emitting tag scores, a CRF
with start, end and transition parameters, the numerator by indexing
transitions with tags[i - 1], tags[i] in a loop over time with the mask
multiplied in, the partition function by the forward algorithm (broadcast
score + transitions + emissions, logsumexp over the previous tag,
torch.where on the mask each step), sequence ends from mask.long().sum(0)
gathered from the tags, and Viterbi scores with max over the previous tag
and the back-pointers kept in a list of tensors; the log-likelihood
reduced by sum, the best path's score and last tag returned."""
import torch
import torch.nn as nn


class CRF(nn.Module):
    def __init__(self, num_tags, batch_first=False):
        super().__init__()
        self.num_tags = num_tags
        self.batch_first = batch_first
        self.start_transitions = nn.Parameter(torch.empty(num_tags))
        self.end_transitions = nn.Parameter(torch.empty(num_tags))
        self.transitions = nn.Parameter(torch.empty(num_tags, num_tags))
        nn.init.uniform_(self.start_transitions, -0.1, 0.1)
        nn.init.uniform_(self.end_transitions, -0.1, 0.1)
        nn.init.uniform_(self.transitions, -0.1, 0.1)

    def forward(self, emissions, tags, mask=None, reduction="sum"):
        if mask is None:
            mask = torch.ones_like(tags, dtype=torch.uint8, device=tags.device)
        if mask.dtype != torch.uint8:
            mask = mask.byte()
        if self.batch_first:
            emissions = emissions.transpose(0, 1)
            tags = tags.transpose(0, 1)
            mask = mask.transpose(0, 1)
        numerator = self._compute_score(emissions, tags, mask)
        denominator = self._compute_normalizer(emissions, mask)
        llh = numerator - denominator
        if reduction == "none":
            return llh
        if reduction == "sum":
            return llh.sum()
        if reduction == "mean":
            return llh.mean()
        return llh.sum() / mask.float().sum()

    def _compute_score(self, emissions, tags, mask):
        seq_length, batch_size = tags.shape
        mask = mask.type_as(emissions)
        score = self.start_transitions[tags[0]]
        score += emissions[0, torch.arange(batch_size), tags[0]]
        for i in range(1, seq_length):
            score += self.transitions[tags[i - 1], tags[i]] * mask[i]
            score += emissions[i, torch.arange(batch_size), tags[i]] * mask[i]
        seq_ends = mask.long().sum(dim=0) - 1
        last_tags = tags[seq_ends, torch.arange(batch_size)]
        score += self.end_transitions[last_tags]
        return score

    def _compute_normalizer(self, emissions, mask):
        seq_length = emissions.size(0)
        score = self.start_transitions + emissions[0]
        for i in range(1, seq_length):
            broadcast_score = score.unsqueeze(2)
            broadcast_emissions = emissions[i].unsqueeze(1)
            next_score = broadcast_score + self.transitions + broadcast_emissions
            next_score = torch.logsumexp(next_score, dim=1)
            score = torch.where(mask[i].unsqueeze(1).bool(), next_score, score)
        score += self.end_transitions
        return torch.logsumexp(score, dim=1)

    def _viterbi_decode(self, emissions, mask):
        seq_length, batch_size = mask.shape
        score = self.start_transitions + emissions[0]
        history = []
        for i in range(1, seq_length):
            broadcast_score = score.unsqueeze(2)
            broadcast_emission = emissions[i].unsqueeze(1)
            next_score = broadcast_score + self.transitions + broadcast_emission
            next_score, indices = next_score.max(dim=1)
            score = torch.where(mask[i].unsqueeze(1).bool(), next_score, score)
            history.append(indices)
        score += self.end_transitions
        best_score, best_last_tag = score.max(dim=1)
        return best_score, best_last_tag, torch.stack(history)


class BiLSTM_CRF(nn.Module):
    def __init__(self, vocab_size=30, tagset_size=5, embedding_dim=12, hidden_dim=16):
        super().__init__()
        self.word_embeds = nn.Embedding(vocab_size, embedding_dim, padding_idx=0)
        self.lstm = nn.LSTM(embedding_dim, hidden_dim // 2, num_layers=1, bidirectional=True,
                            batch_first=True)
        self.hidden2tag = nn.Linear(hidden_dim, tagset_size)
        self.crf = CRF(tagset_size, batch_first=True)

    def forward(self, sentence, tags, mask):
        embeds = self.word_embeds(sentence)
        lstm_out, _ = self.lstm(embeds)
        emissions = self.hidden2tag(lstm_out)
        nll = -self.crf(emissions, tags, mask=mask, reduction="sum")
        best_score, best_last_tag, history = self.crf._viterbi_decode(
            emissions.transpose(0, 1), mask.transpose(0, 1))
        return nll, best_score, best_last_tag, history


torch.manual_seed(0)
model = BiLSTM_CRF().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    sentence = torch.randint(1, 30, (3, 7), generator=g)
    tags = torch.randint(0, 5, (3, 7), generator=g)
    lengths = torch.tensor([7, 5, 3])
    mask = torch.arange(7)[None, :] < lengths[:, None]
    sentence = sentence * mask
    return sentence, tags, mask
