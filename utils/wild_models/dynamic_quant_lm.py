"""The word-level language model of the PyTorch "dynamic quantization on
an LSTM" tutorial, deployed as that tutorial deploys it: an
`nn.Embedding`, a two-layer `nn.LSTM` and a decoder `nn.Linear`, then
`torch.ao.quantization.quantize_dynamic(model, {nn.LSTM, nn.Linear},
dtype=torch.qint8)`, which swaps in `quantized.dynamic` modules holding
packed int8 weights (`torch.ops.quantized.linear_dynamic`,
`torch.quantized_lstm`); forward takes the token ids and an initial
hidden state tuple from `init_hidden` and returns the logits and the new
(h, c); the loss is the cross-entropy of next tokens."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LSTMModel(nn.Module):
    def __init__(self, ntoken=60, ninp=32, nhid=48, nlayers=2, dropout=0.5):
        super(LSTMModel, self).__init__()
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = nn.LSTM(ninp, nhid, nlayers, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nhid = nhid
        self.nlayers = nlayers
        self.encoder.weight.data.uniform_(-0.1, 0.1)
        self.decoder.bias.data.zero_()
        self.decoder.weight.data.uniform_(-0.1, 0.1)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        loss = F.cross_entropy(decoded[:-1].reshape(-1, decoded.shape[-1]), input[1:].reshape(-1))
        return decoded, hidden, loss

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                weight.new_zeros(self.nlayers, bsz, self.nhid))


torch.manual_seed(0)
torch.backends.quantized.engine = "x86" if "x86" in torch.backends.quantized.supported_engines else "fbgemm"
model = torch.ao.quantization.quantize_dynamic(LSTMModel().eval(), {nn.LSTM, nn.Linear}, dtype=torch.qint8)


def example_inputs():
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, 60, (9, 3), generator=g)
    h = torch.randn(2, 3, 48, generator=g) * 0.1
    c = torch.randn(2, 3, 48, generator=g) * 0.1
    return tokens, (h, c)
