"""Orthogonal recurrent network as expRNN (Lezcano-Casado and
Martinez-Rubio) writes it: the recurrent kernel parameterised by an
unconstrained matrix whose strict upper triangle gives a skew-symmetric
`A = triu(1); A - A.t()`, mapped onto SO(n) by `torch.matrix_exp` in
forward, a Cayley-map alternative by `torch.linalg.solve(I + A, I - A)`
chosen by a string option, modReLU (`sign(z) * relu(|z| + b)` with a
bias Parameter), an input kernel initialised with kaiming_normal_, a
Python loop over time with the hidden state starting from
`input.new_zeros`, the last state read out for copying-task style
classification, and an orthogonality error `||W^T W - I||` returned as a
diagnostic."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class modrelu(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.features = features
        self.b = nn.Parameter(torch.Tensor(self.features))
        self.reset_parameters()

    def reset_parameters(self):
        self.b.data.uniform_(-0.01, 0.01)

    def forward(self, inputs):
        norm = torch.abs(inputs)
        biased_norm = norm + self.b
        magnitude = F.relu(biased_norm)
        phase = torch.sign(inputs)
        return phase * magnitude


def cayley_map(X):
    n = X.size(0)
    Id = torch.eye(n, dtype=X.dtype, device=X.device)
    return torch.linalg.solve(Id + X, Id - X)


class Orthogonal(nn.Module):
    def __init__(self, n, triv="expm"):
        super().__init__()
        self.log_recurrent_kernel = nn.Parameter(torch.empty(n, n))
        self.triv = torch.matrix_exp if triv == "expm" else cayley_map
        self.reset_parameters()

    def reset_parameters(self):
        # a block-diagonal skew init: 2x2 rotations by angles in (0, pi)
        n = self.log_recurrent_kernel.size(0)
        with torch.no_grad():
            self.log_recurrent_kernel.zero_()
            s = torch.rand(n // 2) * torch.pi
            for i in range(n // 2):
                self.log_recurrent_kernel[2 * i, 2 * i + 1] = s[i]

    def skew(self):
        A = self.log_recurrent_kernel.triu(diagonal=1)
        return A - A.t()

    def forward(self, input):
        return input.matmul(self.kernel())

    def kernel(self):
        return self.triv(self.skew())


class ExpRNNCell(nn.Module):
    def __init__(self, input_size, hidden_size, triv="expm"):
        super().__init__()
        self.input_size, self.hidden_size = input_size, hidden_size
        self.recurrent_kernel = Orthogonal(hidden_size, triv)
        self.input_kernel = nn.Linear(in_features=self.input_size, out_features=self.hidden_size, bias=False)
        self.nonlinearity = modrelu(hidden_size)
        nn.init.kaiming_normal_(self.input_kernel.weight.data, nonlinearity="relu")

    def default_hidden(self, input):
        return input.new_zeros(input.size(0), self.hidden_size, requires_grad=False)

    def forward(self, input, hidden):
        input = self.input_kernel(input)
        hidden = self.recurrent_kernel(hidden)
        out = input + hidden
        return self.nonlinearity(out)


class ExpRNNModel(nn.Module):
    def __init__(self, n_inputs=6, hidden=24, n_classes=6, triv="expm"):
        super().__init__()
        self.rnn = ExpRNNCell(n_inputs, hidden, triv)
        self.cayley_rnn = ExpRNNCell(n_inputs, hidden, "cayley")
        self.lin = nn.Linear(2 * hidden, n_classes)
        self.loss_func = nn.CrossEntropyLoss()

    def forward(self, inputs, y):
        state = self.rnn.default_hidden(inputs[:, 0, ...])
        state_c = self.cayley_rnn.default_hidden(inputs[:, 0, ...])
        outputs = []
        for input in torch.unbind(inputs, dim=1):
            state = self.rnn(input, state)
            state_c = self.cayley_rnn(input, state_c)
            outputs.append(self.lin(torch.cat([state, state_c], -1)))
        logits = torch.stack(outputs, dim=1)
        loss = self.loss_func(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
        W = self.rnn.recurrent_kernel.kernel()
        ortho_err = torch.linalg.matrix_norm(W.t() @ W - torch.eye(W.size(0)))
        return logits, loss, ortho_err


torch.manual_seed(0)
model = ExpRNNModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(2, 9, 6, generator=g), torch.randint(0, 6, (2, 9), generator=g)
