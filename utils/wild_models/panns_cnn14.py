"""PANNs audio tagging (qiuqiangkong/audioset_tagging_cnn) with its
torchlibrosa-style front end: a `Spectrogram` module computing the STFT
as two Conv1d's whose weights are the real and imaginary DFT of a Hann
window (`np.fft` built at init, `pad_mode='reflect'` by F.pad), power
`real ** 2 + imag ** 2`, a `LogmelFilterBank` whose mel matrix is a
Parameter built with numpy (Slaney-style triangles), `10 * log10(clamp(x,
amin))` minus `10 * log10(max(amin, ref))` and `clamp(min=x.max() -
top_db)`; the model's `bn0` applied by `transpose(1, 3)` round trips,
`ConvBlock`s whose `forward(input, pool_size=(2, 2), pool_type='avg')`
dispatch on the pool string ('max', 'avg', 'avg+max'), `torch.mean(x,
dim=3)` over mel bins, `(x1, _) = torch.max(x, dim=2)` plus the mean over
time, framewise outputs by `interpolate` (repeat per frame) and
`pad_framewise_output` (the last frame repeated), and an output dict
`{'clipwise_output': ..., 'framewise_output': ..., 'embedding': ...}`."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def init_layer(layer):
    nn.init.xavier_uniform_(layer.weight)
    if hasattr(layer, "bias") and layer.bias is not None:
        layer.bias.data.fill_(0.)


def init_bn(bn):
    bn.bias.data.fill_(0.)
    bn.weight.data.fill_(1.)


class DFTBase(nn.Module):
    def dft_matrix(self, n):
        (x, y) = np.meshgrid(np.arange(n), np.arange(n))
        omega = np.exp(-2 * np.pi * 1j / n)
        return np.power(omega, x * y)


class Spectrogram(DFTBase):
    def __init__(self, n_fft=64, hop_length=16, win_length=None, window="hann", center=True, pad_mode="reflect",
                 power=2.0, freeze_parameters=True):
        super().__init__()
        if win_length is None:
            win_length = n_fft
        self.n_fft = n_fft
        self.stride = hop_length
        self.center = center
        self.pad_mode = pad_mode
        self.power = power
        n = np.arange(win_length)
        fft_window = 0.5 - 0.5 * np.cos(2 * np.pi * n / win_length)  # periodic Hann, as scipy's get_window
        W = self.dft_matrix(n_fft)
        out_channels = n_fft // 2 + 1
        self.conv_real = nn.Conv1d(1, out_channels, n_fft, stride=hop_length, bias=False)
        self.conv_imag = nn.Conv1d(1, out_channels, n_fft, stride=hop_length, bias=False)
        self.conv_real.weight.data = torch.Tensor(np.real(W[:, 0:out_channels] * fft_window[:, None]).T)[:, None, :]
        self.conv_imag.weight.data = torch.Tensor(np.imag(W[:, 0:out_channels] * fft_window[:, None]).T)[:, None, :]
        if freeze_parameters:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, input):
        x = input[:, None, :]
        if self.center:
            x = F.pad(x, pad=(self.n_fft // 2, self.n_fft // 2), mode=self.pad_mode)
        real = self.conv_real(x)
        imag = self.conv_imag(x)
        real = real[:, None, :, :].transpose(2, 3)
        imag = imag[:, None, :, :].transpose(2, 3)
        spectrogram = real ** 2 + imag ** 2
        if self.power == 2.0:
            pass
        else:
            spectrogram = spectrogram ** (self.power / 2.0)
        return spectrogram


def mel_filters(sr, n_fft, n_mels, fmin, fmax):
    def hz_to_mel(f):
        return 2595.0 * np.log10(1.0 + np.asarray(f) / 700.0)

    def mel_to_hz(m):
        return 700.0 * (10.0 ** (np.asarray(m) / 2595.0) - 1.0)

    fftfreqs = np.linspace(0, sr / 2, 1 + n_fft // 2)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    weights = np.zeros((n_mels, 1 + n_fft // 2))
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    enorm = 2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels])
    return weights * enorm[:, np.newaxis]


class LogmelFilterBank(nn.Module):
    def __init__(self, sr=8000, n_fft=64, n_mels=16, fmin=50.0, fmax=4000.0, is_log=True, ref=1.0, amin=1e-10,
                 top_db=80.0, freeze_parameters=True):
        super().__init__()
        self.is_log = is_log
        self.ref = ref
        self.amin = amin
        self.top_db = top_db
        self.melW = mel_filters(sr=sr, n_fft=n_fft, n_mels=n_mels, fmin=fmin, fmax=fmax).T
        self.melW = nn.Parameter(torch.Tensor(self.melW))
        if freeze_parameters:
            for param in self.parameters():
                param.requires_grad = False

    def forward(self, input):
        mel_spectrogram = torch.matmul(input, self.melW)
        if self.is_log:
            output = self.power_to_db(mel_spectrogram)
        else:
            output = mel_spectrogram
        return output

    def power_to_db(self, input):
        ref_value = self.ref
        log_spec = 10.0 * torch.log10(torch.clamp(input, min=self.amin, max=np.inf))
        log_spec -= 10.0 * np.log10(np.maximum(self.amin, ref_value))
        if self.top_db is not None:
            if self.top_db < 0:
                raise ValueError("top_db must be non-negative")
            log_spec = torch.clamp(log_spec, min=log_spec.max().item() - self.top_db, max=np.inf)
        return log_spec


class ConvBlock(nn.Module):
    def __init__(self, in_channels, out_channels):
        super(ConvBlock, self).__init__()
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1),
                               bias=False)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1),
                               bias=False)
        self.bn1 = nn.BatchNorm2d(out_channels)
        self.bn2 = nn.BatchNorm2d(out_channels)
        self.init_weight()

    def init_weight(self):
        init_layer(self.conv1)
        init_layer(self.conv2)
        init_bn(self.bn1)
        init_bn(self.bn2)

    def forward(self, input, pool_size=(2, 2), pool_type="avg"):
        x = input
        x = F.relu_(self.bn1(self.conv1(x)))
        x = F.relu_(self.bn2(self.conv2(x)))
        if pool_type == "max":
            x = F.max_pool2d(x, kernel_size=pool_size)
        elif pool_type == "avg":
            x = F.avg_pool2d(x, kernel_size=pool_size)
        elif pool_type == "avg+max":
            x1 = F.avg_pool2d(x, kernel_size=pool_size)
            x2 = F.max_pool2d(x, kernel_size=pool_size)
            x = x1 + x2
        else:
            raise Exception("Incorrect argument!")
        return x


def interpolate(x, ratio):
    (batch_size, time_steps, classes_num) = x.shape
    upsampled = x[:, :, None, :].repeat(1, 1, ratio, 1)
    upsampled = upsampled.reshape(batch_size, time_steps * ratio, classes_num)
    return upsampled


def pad_framewise_output(framewise_output, frames_num):
    pad = framewise_output[:, -1:, :].repeat(1, frames_num - framewise_output.shape[1], 1)
    output = torch.cat((framewise_output, pad), dim=1)
    return output


class Cnn14_DecisionLevelMax(nn.Module):
    def __init__(self, sample_rate=8000, window_size=64, hop_size=16, mel_bins=16, fmin=50, fmax=4000,
                 classes_num=7):
        super().__init__()
        self.interpolate_ratio = 8
        self.spectrogram_extractor = Spectrogram(n_fft=window_size, hop_length=hop_size, win_length=window_size,
                                                 window="hann", center=True, pad_mode="reflect",
                                                 freeze_parameters=True)
        self.logmel_extractor = LogmelFilterBank(sr=sample_rate, n_fft=window_size, n_mels=mel_bins, fmin=fmin,
                                                 fmax=fmax, ref=1.0, amin=1e-10, top_db=None,
                                                 freeze_parameters=True)
        self.bn0 = nn.BatchNorm2d(mel_bins)
        self.conv_block1 = ConvBlock(in_channels=1, out_channels=8)
        self.conv_block2 = ConvBlock(in_channels=8, out_channels=16)
        self.conv_block3 = ConvBlock(in_channels=16, out_channels=32)
        self.fc1 = nn.Linear(32, 32, bias=True)
        self.fc_audioset = nn.Linear(32, classes_num, bias=True)
        init_bn(self.bn0)
        init_layer(self.fc1)
        init_layer(self.fc_audioset)

    def forward(self, input, mixup_lambda=None):
        x = self.spectrogram_extractor(input)
        x = self.logmel_extractor(x)
        frames_num = x.shape[2]
        x = x.transpose(1, 3)
        x = self.bn0(x)
        x = x.transpose(1, 3)
        x = self.conv_block1(x, pool_size=(2, 2), pool_type="avg")
        x = F.dropout(x, p=0.2, training=self.training)
        x = self.conv_block2(x, pool_size=(2, 2), pool_type="avg+max")
        x = F.dropout(x, p=0.2, training=self.training)
        x = self.conv_block3(x, pool_size=(2, 2), pool_type="max")
        x = F.dropout(x, p=0.2, training=self.training)
        x = torch.mean(x, dim=3)
        x1 = F.max_pool1d(x, kernel_size=3, stride=1, padding=1)
        x2 = F.avg_pool1d(x, kernel_size=3, stride=1, padding=1)
        x = x1 + x2
        x = F.dropout(x, p=0.5, training=self.training)
        x = x.transpose(1, 2)
        x = F.relu_(self.fc1(x))
        x = F.dropout(x, p=0.5, training=self.training)
        segmentwise_output = torch.sigmoid(self.fc_audioset(x))
        (clipwise_output, _) = torch.max(segmentwise_output, dim=1)
        framewise_output = interpolate(segmentwise_output, self.interpolate_ratio)
        framewise_output = pad_framewise_output(framewise_output, frames_num)
        (embedding, _) = torch.max(x, dim=1)
        embedding = embedding + torch.mean(x, dim=1)
        output_dict = {"framewise_output": framewise_output, "clipwise_output": clipwise_output,
                       "embedding": embedding}
        return output_dict


torch.manual_seed(0)
model = Cnn14_DecisionLevelMax().eval()
with torch.no_grad():
    model.bn0.running_mean.fill_(-40.0)
    model.bn0.running_var.fill_(100.0)


def example_inputs():
    g = torch.Generator().manual_seed(1)
    t = torch.arange(2000) / 8000.0
    wave = 0.3 * torch.sin(2 * math.pi * 440.0 * t) + 0.05 * torch.randn(2, 2000, generator=g)
    return (wave,)
