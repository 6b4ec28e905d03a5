"""A QRNN language-model layer stack as Salesforce's pytorch-qrnn writes it
without its CUDA kernel: gates from one Linear over the current and the
previous time step (the window-2 "convolution" by `torch.cat` of `X` and
`X` shifted with `F.pad` of the sequence dimension and a remembered last
input), `chunk(3)` into Z, F, O with tanh/sigmoid, the ForgetMult
recurrence `h = f * z + (1 - f) * h` as a Python loop over time starting
from `None`, zoneout skipped in eval, `torch.stack` of the hidden states,
and weight-tied decoding with a log-softmax."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CPUForgetMult(nn.Module):
    def forward(self, f, x, hidden_init=None):
        result = []
        forgets = f.split(1, dim=0)
        prev_h = hidden_init
        for i, h in enumerate((f * x).split(1, dim=0)):
            if prev_h is not None:
                h = h + (1 - forgets[i]) * prev_h
            # h is (1, batch, hidden): squeeze the time step away
            h = h.view(h.size()[1:])
            result.append(h)
            prev_h = h
        return torch.stack(result)


class QRNNLayer(nn.Module):
    def __init__(self, input_size, hidden_size=None, save_prev_x=False, zoneout=0, window=1,
                 output_gate=True):
        super().__init__()
        assert window in [1, 2], "This QRNN implementation currently only handles convolutional window of size 1 or size 2"
        self.window = window
        self.input_size = input_size
        self.hidden_size = hidden_size if hidden_size else input_size
        self.zoneout = zoneout
        self.save_prev_x = save_prev_x
        self.prevX = None
        self.output_gate = output_gate
        self.linear = nn.Linear(self.window * self.input_size,
                                3 * self.hidden_size if self.output_gate else 2 * self.hidden_size)

    def forward(self, X, hidden=None):
        seq_len, batch_size, _ = X.size()
        source = None
        if self.window == 1:
            source = X
        elif self.window == 2:
            # the previous time step's input, the first one from the remembered batch or zeros
            Xm1 = []
            Xm1.append(self.prevX if self.prevX is not None else X[:1, :, :] * 0)
            if len(X) > 1:
                Xm1.append(X[:-1, :, :])
            Xm1 = torch.cat(Xm1, 0)
            source = torch.cat([X, Xm1], 2)
        Y = self.linear(source)
        if self.output_gate:
            Y = Y.view(seq_len, batch_size, 3 * self.hidden_size)
            Z, F_, O = Y.chunk(3, dim=2)
        else:
            Y = Y.view(seq_len, batch_size, 2 * self.hidden_size)
            Z, F_ = Y.chunk(2, dim=2)
        Z = torch.tanh(Z)
        F_ = torch.sigmoid(F_)
        if self.zoneout:
            if self.training:
                mask = F_.new_empty(F_.size(), requires_grad=False).bernoulli_(1 - self.zoneout)
                F_ = F_ * mask
            else:
                F_ *= 1 - self.zoneout
        C = CPUForgetMult()(F_, Z, hidden)
        if self.output_gate:
            H = torch.sigmoid(O) * C
        else:
            H = C
        if self.window > 1 and self.save_prev_x:
            self.prevX = X[-1:, :, :].detach()
        return H, C[-1:, :, :]


class QRNN(nn.Module):
    def __init__(self, input_size, hidden_size, num_layers=1, **kwargs):
        super().__init__()
        self.layers = nn.ModuleList([QRNNLayer(input_size if l == 0 else hidden_size, hidden_size, **kwargs)
                                     for l in range(num_layers)])
        self.num_layers = len(self.layers)

    def forward(self, input, hidden=None):
        next_hidden = []
        for i, layer in enumerate(self.layers):
            input, hn = layer(input, None if hidden is None else hidden[i])
            next_hidden.append(hn)
        next_hidden = torch.cat(next_hidden, 0).view(self.num_layers, *next_hidden[0].size()[-2:])
        return input, next_hidden


class RNNModel(nn.Module):
    def __init__(self, ntoken=50, ninp=32, nhid=32, nlayers=2):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = QRNN(ninp, nhid, num_layers=nlayers, window=2, zoneout=0.0)
        self.decoder = nn.Linear(nhid, ntoken)
        self.decoder.weight = self.encoder.weight

    def forward(self, input, hidden):
        emb = self.encoder(input)
        output, hidden = self.rnn(emb, hidden)
        decoded = self.decoder(output.view(output.size(0) * output.size(1), output.size(2)))
        return F.log_softmax(decoded, dim=-1).view(output.size(0), output.size(1), -1), hidden


torch.manual_seed(0)
model = RNNModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, 50, (7, 2), generator=g), torch.randn(2, 2, 32, generator=g)
