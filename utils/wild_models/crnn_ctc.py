"""CRNN for scene text (meijieru/crnn.pytorch and its many forks): a VGG-style
CNN built from a `convRelu(i, batchNormalization)` helper with
`add_module('conv{0}'.format(i), ...)` names, asymmetric `MaxPool2d((2, 2),
(2, 1), (0, 1))` pools, `assert h == 1, "the height of conv must be 1"`,
`conv.squeeze(2).permute(2, 0, 1)` to [w, b, c], BidirectionalLSTM layers
that fold time into the batch with `recurrent.view(T * b, h)`, per-step
`log_softmax(2)`, CTC loss with `torch.full` input lengths and
`torch.IntTensor`-style target lengths, and greedy decoding by
`max(2)` and `transpose(1, 0).contiguous().view(-1)`."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BidirectionalLSTM(nn.Module):
    def __init__(self, nIn, nHidden, nOut):
        super(BidirectionalLSTM, self).__init__()
        self.rnn = nn.LSTM(nIn, nHidden, bidirectional=True)
        self.embedding = nn.Linear(nHidden * 2, nOut)

    def forward(self, input):
        recurrent, _ = self.rnn(input)
        T, b, h = recurrent.size()
        t_rec = recurrent.view(T * b, h)
        output = self.embedding(t_rec)  # [T * b, nOut]
        output = output.view(T, b, -1)
        return output


class CRNN(nn.Module):
    def __init__(self, imgH, nc, nclass, nh, n_rnn=2, leakyRelu=False):
        super(CRNN, self).__init__()
        assert imgH % 16 == 0, "imgH has to be a multiple of 16"
        ks = [3, 3, 3, 3, 3, 3, 2]
        ps = [1, 1, 1, 1, 1, 1, 0]
        ss = [1, 1, 1, 1, 1, 1, 1]
        nm = [8, 16, 32, 32, 48, 48, 48]
        cnn = nn.Sequential()

        def convRelu(i, batchNormalization=False):
            nIn = nc if i == 0 else nm[i - 1]
            nOut = nm[i]
            cnn.add_module("conv{0}".format(i), nn.Conv2d(nIn, nOut, ks[i], ss[i], ps[i]))
            if batchNormalization:
                cnn.add_module("batchnorm{0}".format(i), nn.BatchNorm2d(nOut))
            if leakyRelu:
                cnn.add_module("relu{0}".format(i), nn.LeakyReLU(0.2, inplace=True))
            else:
                cnn.add_module("relu{0}".format(i), nn.ReLU(True))

        convRelu(0)
        cnn.add_module("pooling{0}".format(0), nn.MaxPool2d(2, 2))
        convRelu(1)
        cnn.add_module("pooling{0}".format(1), nn.MaxPool2d(2, 2))
        convRelu(2, True)
        convRelu(3)
        cnn.add_module("pooling{0}".format(2), nn.MaxPool2d((2, 2), (2, 1), (0, 1)))
        convRelu(4, True)
        convRelu(5)
        cnn.add_module("pooling{0}".format(3), nn.MaxPool2d((2, 2), (2, 1), (0, 1)))
        convRelu(6, True)
        self.cnn = cnn
        self.rnn = nn.Sequential(BidirectionalLSTM(48, nh, nh), BidirectionalLSTM(nh, nh, nclass))
        self.ctc = nn.CTCLoss(blank=0, reduction="mean", zero_infinity=True)

    def forward(self, input, text, length):
        conv = self.cnn(input)
        b, c, h, w = conv.size()
        assert h == 1, "the height of conv must be 1"
        conv = conv.squeeze(2)
        conv = conv.permute(2, 0, 1)  # [w, b, c]
        output = self.rnn(conv)
        preds = F.log_softmax(output, 2)
        preds_size = torch.full(size=(b,), fill_value=preds.size(0), dtype=torch.long)
        cost = self.ctc(preds, text, preds_size, length)
        _, best = preds.max(2)
        best = best.transpose(1, 0).contiguous().view(-1)
        return preds, cost, best


torch.manual_seed(0)
model = CRNN(32, 1, 11, 16).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    length = torch.tensor([4, 3, 5], dtype=torch.int32)
    text = torch.randint(1, 11, (int(length.sum()),), generator=g, dtype=torch.int32)
    return torch.randn(3, 1, 32, 64, generator=g), text, length
