"""A CNN deployed with eager-mode post-training static quantization, the
recipe of PyTorch's static quantization tutorial and of torchvision's
`quantization/` models: `QuantStub`/`DeQuantStub` around the network,
`nn.quantized.FloatFunctional` for the residual add (`skip_add.add`) and
the concat (`cat`), `torch.ao.quantization.fuse_modules` of conv-bn-relu
triples named in nested lists, the x86 backend's default qconfig
(`get_default_qconfig`), `prepare`, calibration by a few forward passes,
`convert` into quantized modules (`QuantizedConvReLU2d`, packed weights),
a quantized `AdaptiveAvgPool2d` and `Linear`; the model takes and returns
float tensors, with quint8 tensors between."""
import torch
import torch.ao.quantization as tq
import torch.nn as nn


class ConvBNReLU(nn.Sequential):
    def __init__(self, cin, cout, stride=1, relu=True):
        layers = [nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout)]
        if relu:
            layers.append(nn.ReLU())
        super().__init__(*layers)


class Residual(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = ConvBNReLU(c, c)
        self.conv2 = ConvBNReLU(c, c, relu=False)
        self.skip_add = nn.quantized.FloatFunctional()
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.skip_add.add(self.conv2(self.conv1(x)), x))


class QuantizableNet(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.quant = tq.QuantStub()
        self.stem = ConvBNReLU(3, 16, 2)
        self.block1 = Residual(16)
        self.branch = ConvBNReLU(16, 16, 2)
        self.side = ConvBNReLU(16, 16, 2)
        self.cat = nn.quantized.FloatFunctional()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, classes)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = self.block1(self.stem(x))
        x = self.cat.cat([self.branch(x), self.side(x)], dim=1)
        x = torch.flatten(self.pool(x), 1)
        return self.dequant(self.fc(x))

    def fuse_model(self):
        for name, m in self.named_modules():
            if isinstance(m, ConvBNReLU):
                tq.fuse_modules(m, [["0", "1", "2"]] if len(m) == 3 else [["0", "1"]], inplace=True)


def quantize(net, calibration):
    torch.backends.quantized.engine = "x86"
    net.eval()
    net.fuse_model()
    net.qconfig = tq.get_default_qconfig("x86")
    tq.prepare(net, inplace=True)
    with torch.no_grad():
        for batch in calibration:
            net(batch)
    return tq.convert(net, inplace=True)


torch.manual_seed(0)
_g = torch.Generator().manual_seed(2)
model = quantize(QuantizableNet(), [torch.randn(4, 3, 32, 32, generator=_g) for _ in range(4)])


def example_inputs():
    return torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
