"""A network built from lazy modules, as Keras-style PyTorch code and
torchrl/d2l examples write it: `nn.LazyConv2d`, `nn.LazyBatchNorm2d`,
`nn.LazyLinear` whose input sizes are inferred on the first call (the
`LazyModuleMixin` pre-hook materializes `UninitializedParameter`s and
then removes itself, the class switching to the plain module's), a dry
run on a dummy batch under `no_grad` in the constructor as the d2l book
does, `apply` of an init function checking `isinstance(m, nn.Linear)`
afterwards, and a head built lazily from a tuple of widths."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def init_cnn(module):
    if isinstance(module, (nn.Linear, nn.Conv2d)):
        nn.init.xavier_uniform_(module.weight)
        if module.bias is not None:
            nn.init.zeros_(module.bias)


class LazyNet(nn.Module):
    def __init__(self, widths=(64, 32), num_classes=10, dummy_shape=(1, 3, 24, 24)):
        super().__init__()
        self.features = nn.Sequential(
            nn.LazyConv2d(16, kernel_size=3, padding=1), nn.LazyBatchNorm2d(), nn.ReLU(),
            nn.MaxPool2d(2),
            nn.LazyConv2d(32, kernel_size=3, padding=1), nn.LazyBatchNorm2d(), nn.ReLU(),
            nn.AdaptiveAvgPool2d((3, 3)), nn.Flatten())
        layers = []
        for width in widths:
            layers += [nn.LazyLinear(width), nn.ReLU()]
        layers.append(nn.LazyLinear(num_classes))
        self.classifier = nn.Sequential(*layers)
        self.side = nn.LazyLinear(num_classes)
        with torch.no_grad():
            self(torch.zeros(dummy_shape))
        self.apply(init_cnn)

    def forward(self, x):
        h = self.features(x)
        return self.classifier(h) + self.side(h[:, :8])


torch.manual_seed(0)
model = LazyNet()
with torch.no_grad():  # running statistics that are not the initial ones
    model.train()(torch.randn(6, 3, 24, 24))
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(2, 3, 24, 24, generator=g),)
