"""A MobileNetV3 in the style of torchvision: `_make_divisible`, inverted
residual blocks from a list of per-block configs, squeeze-excite with
hardsigmoid, hardswish, and stochastic depth that is the identity when not
training."""
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F


def _make_divisible(v, divisor=8, min_value=None):
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:
        new_v += divisor
    return new_v


class StochasticDepth(nn.Module):
    def __init__(self, p: float, mode: str):
        super().__init__()
        self.p = p
        self.mode = mode

    def forward(self, input):
        if p_is_off(self.p) or not self.training:
            return input
        survival_rate = 1.0 - self.p
        if self.mode == "row":
            size = [input.shape[0]] + [1] * (input.ndim - 1)
        else:
            size = [1] * input.ndim
        noise = torch.empty(size, dtype=input.dtype, device=input.device)
        noise = noise.bernoulli_(survival_rate)
        if survival_rate > 0.0:
            noise.div_(survival_rate)
        return input * noise


def p_is_off(p):
    return p < 0.0 or p == 0.0


class SqueezeExcitation(nn.Module):
    def __init__(self, input_channels, squeeze_channels, scale_activation=nn.Hardsigmoid):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = nn.ReLU()
        self.scale_activation = scale_activation()

    def _scale(self, input):
        scale = self.avgpool(input)
        scale = self.fc1(scale)
        scale = self.activation(scale)
        scale = self.fc2(scale)
        return self.scale_activation(scale)

    def forward(self, input):
        scale = self._scale(input)
        return scale * input


class Conv2dNormActivation(nn.Sequential):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, groups=1,
                 norm_layer=nn.BatchNorm2d, activation_layer=nn.ReLU):
        padding = (kernel_size - 1) // 2
        layers = [nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding,
                            groups=groups, bias=norm_layer is None)]
        if norm_layer is not None:
            layers.append(norm_layer(out_channels))
        if activation_layer is not None:
            layers.append(activation_layer(inplace=True))
        super().__init__(*layers)
        self.out_channels = out_channels


class InvertedResidualConfig:
    def __init__(self, input_channels, kernel, expanded_channels, out_channels, use_se,
                 activation, stride, width_mult=1.0):
        self.input_channels = _make_divisible(input_channels * width_mult)
        self.kernel = kernel
        self.expanded_channels = _make_divisible(expanded_channels * width_mult)
        self.out_channels = _make_divisible(out_channels * width_mult)
        self.use_se = use_se
        self.use_hs = activation == "HS"
        self.stride = stride


class InvertedResidual(nn.Module):
    def __init__(self, cnf, norm_layer, stochastic_depth_prob):
        super().__init__()
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        layers = []
        activation_layer = nn.Hardswish if cnf.use_hs else nn.ReLU
        if cnf.expanded_channels != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, cnf.expanded_channels, 1,
                                               norm_layer=norm_layer, activation_layer=activation_layer))
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.expanded_channels, cnf.kernel,
                                           cnf.stride, groups=cnf.expanded_channels,
                                           norm_layer=norm_layer, activation_layer=activation_layer))
        if cnf.use_se:
            squeeze_channels = _make_divisible(cnf.expanded_channels // 4, 8)
            layers.append(SqueezeExcitation(cnf.expanded_channels, squeeze_channels))
        layers.append(Conv2dNormActivation(cnf.expanded_channels, cnf.out_channels, 1,
                                           norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")

    def forward(self, input):
        result = self.block(input)
        if self.use_res_connect:
            result = self.stochastic_depth(result)
            result += input
        return result


class MobileNetV3(nn.Module):
    def __init__(self, settings, last_channel=64, num_classes=10):
        super().__init__()
        norm_layer = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)
        layers = [Conv2dNormActivation(3, settings[0].input_channels, 3, 2, norm_layer=norm_layer,
                                       activation_layer=nn.Hardswish)]
        total = len(settings)
        for i, cnf in enumerate(settings):
            layers.append(InvertedResidual(cnf, norm_layer, 0.2 * i / total))
        lastconv_input = settings[-1].out_channels
        layers.append(Conv2dNormActivation(lastconv_input, 6 * lastconv_input, 1,
                                           norm_layer=norm_layer, activation_layer=nn.Hardswish))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(
            nn.Linear(6 * lastconv_input, last_channel), nn.Hardswish(inplace=True),
            nn.Dropout(p=0.2, inplace=True), nn.Linear(last_channel, num_classes))
        for m in self.modules():
            if isinstance(m, nn.BatchNorm2d):
                nn.init.uniform_(m.weight, 0.5, 1.5)
                m.running_var.uniform_(0.5, 1.5)

    def forward(self, x):
        x = self.features(x)
        x = self.avgpool(x)
        x = torch.flatten(x, 1)
        return self.classifier(x)


bneck = partial(InvertedResidualConfig, width_mult=0.5)
settings = [
    bneck(16, 3, 16, 16, True, "RE", 2),
    bneck(16, 3, 72, 24, False, "RE", 2),
    bneck(24, 3, 88, 24, False, "RE", 1),
    bneck(24, 5, 96, 40, True, "HS", 2),
    bneck(40, 5, 240, 40, True, "HS", 1),
]
torch.manual_seed(0)
with torch.no_grad():
    model = MobileNetV3(settings).eval()


def example_inputs():
    return torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
