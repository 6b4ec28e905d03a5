"""A GRU text classifier written without packing: batch-first nn.GRU over
embeddings, an explicit initial hidden state built in forward, masked mean
pooling of the outputs with the padding mask, and an nn.LSTMCell refinement
loop over a few steps, as in attention-pooling tutorials."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GRUClassifier(nn.Module):
    def __init__(self, vocab_size=100, emb=16, hidden=24, classes=4, layers=2, steps=3):
        super().__init__()
        self.hidden, self.layers, self.steps = hidden, layers, steps
        self.embed = nn.Embedding(vocab_size, emb, padding_idx=0)
        self.gru = nn.GRU(emb, hidden, num_layers=layers, batch_first=True)
        self.cell = nn.LSTMCell(hidden, hidden)
        self.out = nn.Linear(hidden, classes)

    def init_hidden(self, batch_size, device):
        return torch.zeros(self.layers, batch_size, self.hidden, device=device)

    def forward(self, tokens):
        mask = (tokens != 0).float()
        x = self.embed(tokens)
        h0 = self.init_hidden(tokens.size(0), tokens.device)
        outputs, h_n = self.gru(x, h0)
        pooled = (outputs * mask.unsqueeze(-1)).sum(1) / mask.sum(1, keepdim=True).clamp(min=1)
        h, c = h_n[-1], torch.zeros_like(h_n[-1])
        for _ in range(self.steps):
            h, c = self.cell(pooled, (h, c))
        return F.log_softmax(self.out(h), dim=-1)


torch.manual_seed(0)
model = GRUClassifier().eval()


def example_inputs():
    tokens = torch.randint(1, 100, (3, 9), generator=torch.Generator().manual_seed(1))
    tokens[1, 6:] = 0
    tokens[2, 4:] = 0
    return tokens
