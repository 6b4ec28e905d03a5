"""Temporal Shift Module in the style of the TSM repository (mit-han-lab):
a `TemporalShift` wrapper put around the first conv of each ResNet
bottleneck by `make_temporal_shift`, which walks the stages with
`list(stage.children())` and replaces `b.conv1` in place; the shift is the
static method `shift(x, n_segment, fold_div, inplace)`, reshaping
(n*t, c, h, w) to (n, t, c, h, w), filling a `torch.zeros_like` buffer by
slice writes (fold channels shifted left in time, fold shifted right, the
rest copied); the TSN head flattens segments into the batch, averages the
per-segment logits by a ConsensusModule with a string `consensus_type`,
and the input arrives as (batch, segments * 3, h, w) and is viewed back."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TemporalShift(nn.Module):
    def __init__(self, net, n_segment=3, n_div=8, inplace=False):
        super(TemporalShift, self).__init__()
        self.net = net
        self.n_segment = n_segment
        self.fold_div = n_div
        self.inplace = inplace

    def forward(self, x):
        x = self.shift(x, self.n_segment, fold_div=self.fold_div, inplace=self.inplace)
        return self.net(x)

    @staticmethod
    def shift(x, n_segment, fold_div=3, inplace=False):
        nt, c, h, w = x.size()
        n_batch = nt // n_segment
        x = x.view(n_batch, n_segment, c, h, w)
        fold = c // fold_div
        if inplace:
            raise NotImplementedError
        else:
            out = torch.zeros_like(x)
            out[:, :-1, :fold] = x[:, 1:, :fold]  # shift left
            out[:, 1:, fold: 2 * fold] = x[:, :-1, fold: 2 * fold]  # shift right
            out[:, :, 2 * fold:] = x[:, :, 2 * fold:]  # not shift
        return out.view(nt, c, h, w)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super(Bottleneck, self).__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, kernel_size=1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, kernel_size=3, stride=stride, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * self.expansion, kernel_size=1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * self.expansion)
        self.relu = nn.ReLU(inplace=True)
        self.downsample = downsample
        self.stride = stride

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class TinyResNet(nn.Module):
    def __init__(self, layers=(1, 1), width=8):
        super().__init__()
        self.inplanes = width
        self.conv1 = nn.Conv2d(3, width, 7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, stride=2, padding=1)
        self.layer1 = self._make_layer(width, layers[0])
        self.layer2 = self._make_layer(width * 2, layers[1], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 2 * Bottleneck.expansion, 1000)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes * Bottleneck.expansion:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes * Bottleneck.expansion, 1, stride=stride, bias=False),
                nn.BatchNorm2d(planes * Bottleneck.expansion))
        layers = [Bottleneck(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * Bottleneck.expansion
        for _ in range(1, blocks):
            layers.append(Bottleneck(self.inplanes, planes))
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer2(self.layer1(x))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


def make_temporal_shift(net, n_segment, n_div=8, place="blockres"):
    n_segment_list = [n_segment] * 4
    if place == "block":
        def make_block_temporal(stage, this_segment):
            blocks = list(stage.children())
            for i, b in enumerate(blocks):
                blocks[i] = TemporalShift(b, n_segment=this_segment, n_div=n_div)
            return nn.Sequential(*blocks)
        net.layer1 = make_block_temporal(net.layer1, n_segment_list[0])
        net.layer2 = make_block_temporal(net.layer2, n_segment_list[1])
    elif "blockres" in place:
        def make_block_temporal(stage, this_segment):
            blocks = list(stage.children())
            for i, b in enumerate(blocks):
                b.conv1 = TemporalShift(b.conv1, n_segment=this_segment, n_div=n_div)
            return stage
        net.layer1 = make_block_temporal(net.layer1, n_segment_list[0])
        net.layer2 = make_block_temporal(net.layer2, n_segment_list[1])
    else:
        raise NotImplementedError(place)


class ConsensusModule(nn.Module):
    def __init__(self, consensus_type, dim=1):
        super(ConsensusModule, self).__init__()
        self.consensus_type = consensus_type if consensus_type != "rnn" else "identity"
        self.dim = dim

    def forward(self, input):
        if self.consensus_type == "avg":
            return input.mean(dim=self.dim, keepdim=True)
        elif self.consensus_type == "identity":
            return input
        return None


class TSN(nn.Module):
    def __init__(self, num_class, num_segments, modality="RGB", consensus_type="avg", dropout=0.5,
                 is_shift=True, shift_div=8, shift_place="blockres"):
        super(TSN, self).__init__()
        self.modality = modality
        self.num_segments = num_segments
        self.new_length = 1 if modality == "RGB" else 5
        self.base_model = TinyResNet()
        if is_shift:
            make_temporal_shift(self.base_model, self.num_segments, n_div=shift_div, place=shift_place)
        feature_dim = getattr(self.base_model, "fc").in_features
        setattr(self.base_model, "fc", nn.Dropout(p=dropout))
        self.new_fc = nn.Linear(feature_dim, num_class)
        nn.init.normal_(self.new_fc.weight, 0, 0.001)
        nn.init.constant_(self.new_fc.bias, 0)
        self.consensus = ConsensusModule(consensus_type)

    def forward(self, input, no_reshape=False):
        if not no_reshape:
            sample_len = (3 if self.modality == "RGB" else 2) * self.new_length
            base_out = self.base_model(input.view((-1, sample_len) + input.size()[-2:]))
        else:
            base_out = self.base_model(input)
        base_out = self.new_fc(base_out)
        base_out = base_out.view((-1, self.num_segments) + base_out.size()[1:])
        output = self.consensus(base_out)
        return output.squeeze(1)


torch.manual_seed(0)
model = TSN(num_class=10, num_segments=4).eval()
with torch.no_grad():
    model.new_fc.weight.normal_(0, 0.1)


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(2, 4 * 3, 32, 32, generator=g),)
