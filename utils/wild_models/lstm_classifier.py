"""A text classifier as in the classic sentiment tutorials: nn.Embedding
with a padding index, a bidirectional two-layer nn.LSTM over a packed
padded batch (pack_padded_sequence with the lengths, enforce_sorted=False),
the last layer's final hidden states of both directions concatenated, and
a linear head."""
import torch
import torch.nn as nn


class LSTMClassifier(nn.Module):
    def __init__(self, vocab_size=100, embedding_dim=16, hidden_dim=24, output_dim=3, n_layers=2,
                 bidirectional=True, pad_idx=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embedding_dim, padding_idx=pad_idx)
        self.rnn = nn.LSTM(embedding_dim, hidden_dim, num_layers=n_layers,
                           bidirectional=bidirectional, dropout=0.0)
        self.fc = nn.Linear(hidden_dim * 2, output_dim)
        self.dropout = nn.Dropout(0.5)

    def forward(self, text, text_lengths):
        embedded = self.dropout(self.embedding(text))
        packed = nn.utils.rnn.pack_padded_sequence(embedded, text_lengths.to("cpu"), enforce_sorted=False)
        packed_output, (hidden, cell) = self.rnn(packed)
        output, output_lengths = nn.utils.rnn.pad_packed_sequence(packed_output)
        hidden = self.dropout(torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1))
        return self.fc(hidden)


torch.manual_seed(0)
model = LSTMClassifier().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    text = torch.randint(1, 100, (7, 3), generator=g)  # (sequence, batch)
    lengths = torch.tensor([7, 4, 5])
    for b, n in enumerate(lengths.tolist()):
        text[n:, b] = 0
    return text, lengths
