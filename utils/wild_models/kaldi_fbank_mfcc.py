"""A Kaldi-compatible speech front end as torchaudio.compliance.kaldi and
k2/icefall recipes compute it, written in torch ops, feeding a small
TDNN-F classifier: the waveform framed by `Tensor.unfold(-1,
window_size, window_shift)` (snip edges), per-frame DC removal by
`mean(-1, keepdim=True)`, pre-emphasis with the first sample replicated
by `F.pad(..., mode='replicate')`, a Povey window
`torch.hann_window(periodic=False).pow(0.85)`, frames zero-padded to the
next power of two (`1 << (n - 1).bit_length()`) for `torch.fft.rfft`,
the power spectrum by `.abs().pow(2.0)`, log frame energy floored with
`torch.finfo(dtype).eps` and `torch.max(x, x.new_tensor(eps))`, a mel
filterbank built at construction from `mel_scale` (`1127 *
log1p(f / 700)`), `torch.linspace` centres and `torch.max(zeros,
torch.min(up, down))` triangles, an orthonormal DCT-II matrix and a
sinusoidal cepstral lifter as buffers, deltas by `conv1d` with
replicate padding and a `torch.arange` kernel, per-utterance CMVN, and
SpecAugment time/frequency masks drawn only under `self.training`."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def mel_scale(freq):
    return 1127.0 * torch.log1p(freq / 700.0)


def get_mel_banks(num_bins, padded_window_size, sample_freq, low_freq, high_freq):
    num_fft_bins = padded_window_size // 2
    nyquist = 0.5 * sample_freq
    if high_freq <= 0.0:
        high_freq += nyquist
    fft_bin_width = sample_freq / padded_window_size
    mel_low = mel_scale(torch.tensor(low_freq, dtype=torch.float64))
    mel_high = mel_scale(torch.tensor(high_freq, dtype=torch.float64))
    mel_delta = (mel_high - mel_low) / (num_bins + 1)
    b = torch.arange(num_bins, dtype=torch.float64).unsqueeze(1)
    left_mel = mel_low + b * mel_delta
    center_mel = mel_low + (b + 1.0) * mel_delta
    right_mel = mel_low + (b + 2.0) * mel_delta
    mel = mel_scale(fft_bin_width * torch.arange(num_fft_bins, dtype=torch.float64)).unsqueeze(0)
    up_slope = (mel - left_mel) / (center_mel - left_mel)
    down_slope = (right_mel - mel) / (right_mel - center_mel)
    bins = torch.max(torch.zeros(1, dtype=torch.float64), torch.min(up_slope, down_slope))
    bins = F.pad(bins, (0, 1), mode="constant", value=0.0)
    return bins.float()


def dct_matrix(num_ceps, num_bins):
    n = torch.arange(num_bins, dtype=torch.float64)
    k = torch.arange(num_ceps, dtype=torch.float64).unsqueeze(1)
    dct = torch.cos(math.pi / num_bins * (n + 0.5) * k) * math.sqrt(2.0 / num_bins)
    dct[0] *= 1.0 / math.sqrt(2.0)
    return dct.t().float()


def lifter_coeffs(num_ceps, cepstral_lifter):
    i = torch.arange(num_ceps, dtype=torch.float64)
    return (1.0 + 0.5 * cepstral_lifter * torch.sin(math.pi * i / cepstral_lifter)).float()


class KaldiFrontEnd(nn.Module):
    def __init__(self, sample_frequency=16000.0, frame_length_ms=25.0, frame_shift_ms=10.0, num_mel_bins=23,
                 num_ceps=13, low_freq=20.0, high_freq=0.0, preemphasis_coefficient=0.97, cepstral_lifter=22.0,
                 use_energy=True, freq_masks=2, time_masks=2, max_f=4, max_t=6):
        super().__init__()
        self.window_shift = int(sample_frequency * frame_shift_ms * 0.001)
        self.window_size = int(sample_frequency * frame_length_ms * 0.001)
        self.padded_window_size = 1 << (self.window_size - 1).bit_length()
        self.preemphasis_coefficient = preemphasis_coefficient
        self.use_energy = use_energy
        self.freq_masks, self.time_masks, self.max_f, self.max_t = freq_masks, time_masks, max_f, max_t
        window = torch.hann_window(self.window_size, periodic=False, dtype=torch.float64).pow(0.85)
        self.register_buffer("window", window.float(), persistent=False)
        self.register_buffer("mel_banks", get_mel_banks(num_mel_bins, self.padded_window_size, sample_frequency,
                                                        low_freq, high_freq), persistent=False)
        self.register_buffer("dct", dct_matrix(num_ceps, num_mel_bins), persistent=False)
        self.register_buffer("lifter", lifter_coeffs(num_ceps, cepstral_lifter), persistent=False)
        self.register_buffer("delta_kernel", torch.arange(-2, 3, dtype=torch.float32) / 10.0, persistent=False)

    def _frames(self, waveform):
        strided = waveform.unfold(-1, self.window_size, self.window_shift)
        strided = strided - strided.mean(-1, keepdim=True)
        epsilon = torch.finfo(strided.dtype).eps
        log_energy = torch.max(strided.pow(2).sum(-1), strided.new_tensor(epsilon)).log()
        if self.preemphasis_coefficient != 0.0:
            offset = F.pad(strided, (1, 0), mode="replicate")
            strided = strided - self.preemphasis_coefficient * offset[..., :-1]
        strided = strided * self.window
        padding = self.padded_window_size - self.window_size
        if padding > 0:
            strided = F.pad(strided, (0, padding), mode="constant", value=0.0)
        return strided, log_energy

    def deltas(self, feats):
        b, t, c = feats.shape
        x = feats.transpose(1, 2).reshape(b * c, 1, t)
        x = F.pad(x, (2, 2), mode="replicate")
        d = F.conv1d(x, self.delta_kernel.flip(0).view(1, 1, -1))
        return d.reshape(b, c, t).transpose(1, 2)

    def spec_augment(self, feats):
        b, t, f = feats.shape
        for _ in range(self.freq_masks):
            width = torch.randint(0, self.max_f + 1, (b, 1, 1), device=feats.device)
            start = (torch.rand(b, 1, 1, device=feats.device) * (f - width)).long()
            idx = torch.arange(f, device=feats.device).view(1, 1, f)
            feats = feats.masked_fill((idx >= start) & (idx < start + width), 0.0)
        for _ in range(self.time_masks):
            width = torch.randint(0, self.max_t + 1, (b, 1, 1), device=feats.device)
            start = (torch.rand(b, 1, 1, device=feats.device) * (t - width)).long()
            idx = torch.arange(t, device=feats.device).view(1, t, 1)
            feats = feats.masked_fill((idx >= start) & (idx < start + width), 0.0)
        return feats

    def forward(self, waveform):
        frames, log_energy = self._frames(waveform)
        spectrum = torch.fft.rfft(frames).abs().pow(2.0)
        mel = torch.matmul(spectrum, self.mel_banks.t())
        mel = torch.max(mel, mel.new_tensor(torch.finfo(mel.dtype).eps)).log()
        mfcc = torch.matmul(mel, self.dct) * self.lifter
        if self.use_energy:
            mfcc[..., 0] = log_energy
        feats = torch.cat([mfcc, self.deltas(mfcc), self.deltas(self.deltas(mfcc))], dim=-1)
        feats = feats - feats.mean(1, keepdim=True)
        feats = feats / feats.std(1, keepdim=True).clamp_min(1e-5)
        if self.training:
            feats = self.spec_augment(feats)
        return feats, mel


class TDNNF(nn.Module):
    def __init__(self, in_dim, dim, bottleneck, context, dilation):
        super().__init__()
        self.linear = nn.Conv1d(in_dim, bottleneck, context, dilation=dilation, bias=False)
        self.affine = nn.Conv1d(bottleneck, dim, 1)
        self.norm = nn.BatchNorm1d(dim)
        self.skip = in_dim == dim
        self.trim = (context - 1) * dilation

    def forward(self, x):
        y = self.norm(F.relu(self.affine(self.linear(x))))
        if self.skip:
            left = self.trim // 2
            y = y + 0.66 * x[:, :, left:left + y.shape[-1]]
        return y


class KeywordSpotter(nn.Module):
    def __init__(self, num_classes=5):
        super().__init__()
        self.frontend = KaldiFrontEnd()
        self.tdnn = nn.Sequential(TDNNF(39, 32, 16, 3, 1), TDNNF(32, 32, 16, 3, 2), TDNNF(32, 32, 16, 3, 1))
        self.out = nn.Linear(64, num_classes)

    def forward(self, waveform, labels=None):
        feats, mel = self.frontend(waveform)
        h = self.tdnn(feats.transpose(1, 2))
        stats = torch.cat([h.mean(-1), h.std(-1)], dim=-1)
        logits = self.out(stats)
        out = {"logits": logits, "log_mel": mel}
        if labels is not None:
            out["loss"] = F.cross_entropy(logits, labels)
        return out


torch.manual_seed(0)
model = KeywordSpotter()
with torch.no_grad():
    for _m in model.modules():
        if isinstance(_m, nn.BatchNorm1d):
            _m.running_mean.normal_(0, 0.1)
            _m.running_var.uniform_(0.5, 1.5)
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    t = torch.arange(4000) / 16000.0
    wave = 0.3 * torch.sin(2 * math.pi * 440.0 * t) + 0.05 * torch.randn(2, 4000, generator=g)
    return wave, torch.tensor([1, 3])
