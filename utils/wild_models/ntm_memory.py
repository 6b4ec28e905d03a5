"""A Neural Turing Machine as pytorch-ntm (loudinthecloud) writes it, on
the copy task: an NTMMemory whose `reset(batch_size)` stores
`mem_bias.clone().repeat(batch_size, 1, 1)` on the module and whose writes
keep `self.prev_mem` and rebind `self.memory`, content addressing by
`F.cosine_similarity` of `memory + 1e-16`, interpolation with the previous
weighting, the circular shift as a per-batch loop of `F.conv1d` over
`torch.cat([w[-1:], w, w[:1]])`, sharpening by `w ** gamma` over its sum,
heads whose controller output is split at `np.cumsum` offsets
(`_split_cols`), erase/add writes by outer products, an LSTM controller
stepped with its state kept on the module, the read vectors fed back, a
loop over the input sequence and then over the output length with zero
inputs, and the BCE copy loss on the sigmoid outputs."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def _split_cols(mat, lengths):
    assert mat.size()[1] == sum(lengths), "Lengths must be summed to num columns"
    l = np.cumsum([0] + lengths)
    return [mat[:, s:e] for s, e in zip(l[:-1], l[1:])]


def _convolve(w, s):
    assert s.size(0) == 3
    t = torch.cat([w[-1:], w, w[:1]])
    return F.conv1d(t.view(1, 1, -1), s.view(1, 1, -1)).view(-1)


class NTMMemory(nn.Module):
    def __init__(self, N, M):
        super().__init__()
        self.N, self.M = N, M
        self.register_buffer('mem_bias', torch.Tensor(N, M))
        stdev = 1 / (np.sqrt(N + M))
        nn.init.uniform_(self.mem_bias, -stdev, stdev)

    def reset(self, batch_size):
        self.batch_size = batch_size
        self.memory = self.mem_bias.clone().repeat(batch_size, 1, 1)

    def size(self):
        return self.N, self.M

    def read(self, w):
        return torch.matmul(w.unsqueeze(1), self.memory).squeeze(1)

    def write(self, w, e, a):
        self.prev_mem = self.memory
        erase = torch.matmul(w.unsqueeze(-1), e.unsqueeze(1))
        add = torch.matmul(w.unsqueeze(-1), a.unsqueeze(1))
        self.memory = self.prev_mem * (1 - erase) + add

    def address(self, k, β, g, s, γ, w_prev):
        wc = self._similarity(k, β)
        wg = self._interpolate(w_prev, wc, g)
        ŵ = self._shift(wg, s)
        return self._sharpen(ŵ, γ)

    def _similarity(self, k, β):
        k = k.view(self.batch_size, 1, -1)
        return F.softmax(β * F.cosine_similarity(self.memory + 1e-16, k + 1e-16, dim=-1), dim=1)

    def _interpolate(self, w_prev, wc, g):
        return g * wc + (1 - g) * w_prev

    def _shift(self, wg, s):
        result = torch.zeros(wg.size())
        for b in range(self.batch_size):
            result[b] = _convolve(wg[b], s[b])
        return result

    def _sharpen(self, ŵ, γ):
        w = ŵ ** γ
        return torch.div(w, torch.sum(w, dim=1).view(-1, 1) + 1e-16)


class NTMHeadBase(nn.Module):
    def __init__(self, memory, controller_size):
        super().__init__()
        self.memory = memory
        self.N, self.M = memory.size()
        self.controller_size = controller_size

    def create_new_state(self, batch_size):
        return torch.zeros(batch_size, self.N)

    def _address_memory(self, k, β, g, s, γ, w_prev):
        k = k.clone()
        β = F.softplus(β)
        g = torch.sigmoid(g)
        s = F.softmax(s, dim=1)
        γ = 1 + F.softplus(γ)
        return self.memory.address(k, β, g, s, γ, w_prev)


class NTMReadHead(NTMHeadBase):
    def __init__(self, memory, controller_size):
        super().__init__(memory, controller_size)
        self.read_lengths = [self.M, 1, 1, 3, 1]
        self.fc_read = nn.Linear(controller_size, sum(self.read_lengths))
        nn.init.xavier_uniform_(self.fc_read.weight, gain=1.4)
        nn.init.normal_(self.fc_read.bias, std=0.01)

    def forward(self, embeddings, w_prev):
        o = self.fc_read(embeddings)
        k, β, g, s, γ = _split_cols(o, self.read_lengths)
        w = self._address_memory(k, β, g, s, γ, w_prev)
        return self.memory.read(w), w


class NTMWriteHead(NTMHeadBase):
    def __init__(self, memory, controller_size):
        super().__init__(memory, controller_size)
        self.write_lengths = [self.M, 1, 1, 3, 1, self.M, self.M]
        self.fc_write = nn.Linear(controller_size, sum(self.write_lengths))
        nn.init.xavier_uniform_(self.fc_write.weight, gain=1.4)
        nn.init.normal_(self.fc_write.bias, std=0.01)

    def forward(self, embeddings, w_prev):
        o = self.fc_write(embeddings)
        k, β, g, s, γ, e, a = _split_cols(o, self.write_lengths)
        e = torch.sigmoid(e)
        w = self._address_memory(k, β, g, s, γ, w_prev)
        self.memory.write(w, e, a)
        return w


class LSTMController(nn.Module):
    def __init__(self, num_inputs, num_outputs, num_layers):
        super().__init__()
        self.num_outputs, self.num_layers = num_outputs, num_layers
        self.lstm = nn.LSTM(input_size=num_inputs, hidden_size=num_outputs, num_layers=num_layers)
        self.lstm_h_bias = nn.Parameter(torch.randn(num_layers, 1, num_outputs) * 0.05)
        self.lstm_c_bias = nn.Parameter(torch.randn(num_layers, 1, num_outputs) * 0.05)

    def create_new_state(self, batch_size):
        return (self.lstm_h_bias.clone().repeat(1, batch_size, 1),
                self.lstm_c_bias.clone().repeat(1, batch_size, 1))

    def forward(self, x, prev_state):
        outp, state = self.lstm(x.unsqueeze(0), prev_state)
        return outp.squeeze(0), state


class NTM(nn.Module):
    def __init__(self, num_inputs, num_outputs, controller, memory, heads):
        super().__init__()
        self.num_inputs, self.num_outputs = num_inputs, num_outputs
        self.controller, self.memory, self.heads = controller, memory, heads
        self.N, self.M = memory.size()
        self.num_read_heads = 0
        self.init_r = []
        for head in heads:
            if isinstance(head, NTMReadHead):
                init_r_bias = torch.randn(1, self.M) * 0.01
                self.register_buffer("read{}_bias".format(self.num_read_heads), init_r_bias.data)
                self.init_r += [init_r_bias]
                self.num_read_heads += 1
        self.fc = nn.Linear(controller.num_outputs + self.num_read_heads * self.M, num_outputs)

    def create_new_state(self, batch_size):
        init_r = [r.clone().repeat(batch_size, 1) for r in self.init_r]
        controller_state = self.controller.create_new_state(batch_size)
        heads_state = [head.create_new_state(batch_size) for head in self.heads]
        return init_r, controller_state, heads_state

    def forward(self, x, prev_state):
        prev_reads, prev_controller_state, prev_heads_states = prev_state
        inp = torch.cat([x] + prev_reads, dim=1)
        controller_outp, controller_state = self.controller(inp, prev_controller_state)
        reads, heads_states = [], []
        for head, prev_head_state in zip(self.heads, prev_heads_states):
            if isinstance(head, NTMReadHead):
                r, head_state = head(controller_outp, prev_head_state)
                reads += [r]
            else:
                head_state = head(controller_outp, prev_head_state)
            heads_states += [head_state]
        inp2 = torch.cat([controller_outp] + reads, dim=1)
        o = torch.sigmoid(self.fc(inp2))
        return o, (reads, controller_state, heads_states)


class EncapsulatedNTM(nn.Module):
    def __init__(self, num_inputs=9, num_outputs=8, controller_size=32, controller_layers=1,
                 num_heads=1, N=16, M=8):
        super().__init__()
        self.num_inputs, self.num_outputs = num_inputs, num_outputs
        memory = NTMMemory(N, M)
        controller = LSTMController(num_inputs + M * num_heads, controller_size, controller_layers)
        heads = nn.ModuleList([])
        for i in range(num_heads):
            heads += [NTMReadHead(memory, controller_size), NTMWriteHead(memory, controller_size)]
        self.ntm = NTM(num_inputs, num_outputs, controller, memory, heads)
        self.memory = memory

    def init_sequence(self, batch_size):
        self.batch_size = batch_size
        self.memory.reset(batch_size)
        self.previous_state = self.ntm.create_new_state(batch_size)

    def step(self, x=None):
        if x is None:
            x = torch.zeros(self.batch_size, self.num_inputs)
        o, self.previous_state = self.ntm(x, self.previous_state)
        return o, self.previous_state

    def forward(self, inp, target):
        """The copy task's train_batch: feed the sequence, then read it back."""
        batch_size = inp.size(1)
        self.init_sequence(batch_size)
        for i in range(inp.size(0)):
            self.step(inp[i])
        y_out = torch.zeros(target.size())
        for i in range(target.size(0)):
            y_out[i], _ = self.step()
        loss = F.binary_cross_entropy(y_out, target)
        y_out_binarized = (y_out.clone().data > 0.5).float()
        cost = torch.sum(torch.abs(y_out_binarized - target.data))
        return loss, y_out, cost / batch_size


torch.manual_seed(0)
model = EncapsulatedNTM().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    seq = torch.bernoulli(torch.full((5, 2, 8), 0.5), generator=g)
    inp = torch.zeros(6, 2, 9)
    inp[:5, :, :8] = seq
    inp[5, :, 8] = 1.0
    return inp, seq.clone()
