"""Mel-spectrogram inversion as torchaudio's transforms write it, rebuilt
without torchaudio: a Slaney-normed triangular mel filterbank made with
`torch.linspace` on the mel scale, breakpoints converted back to Hz with
a boolean-mask write, and `torch.min` of rising and falling slopes, registered as a buffer;
InverseMelScale by `torch.linalg.lstsq(fb.T, melspec, driver="gels")
.solution` clamped at zero (the newer driver-based version), a power-to-magnitude `pow(1 /
power)`, and torchaudio's `griffinlim` loop with momentum: the initial
phase a complex `torch.full(.., 1)` (rand_init=False), `torch.istft` then `torch.stft`
with `return_complex=True` on a hann window buffer, `angles.div(
angles.abs().add(1e-16))` normalisation and `tprev.mul_(momentum /
(1 + momentum))` in place, the waveform `torch.istft` of `specgram *
angles` with `length`; packed as `specgram.reshape([-1] + shape[-2:])`
and unpacked at the end, under a small post-net that predicts the mel
from features."""
import math
from typing import Optional

import torch
import torch.nn as nn


def _hz_to_mel(freq: float) -> float:
    f_min = 0.0
    f_sp = 200.0 / 3
    mels = (freq - f_min) / f_sp
    min_log_hz = 1000.0
    min_log_mel = (min_log_hz - f_min) / f_sp
    logstep = math.log(6.4) / 27.0
    if freq >= min_log_hz:
        mels = min_log_mel + math.log(freq / min_log_hz) / logstep
    return mels


def _mel_to_hz(mels):
    f_min = 0.0
    f_sp = 200.0 / 3
    freqs = f_min + f_sp * mels
    min_log_hz = 1000.0
    min_log_mel = (min_log_hz - f_min) / f_sp
    logstep = math.log(6.4) / 27.0
    log_t = mels >= min_log_mel
    freqs[log_t] = min_log_hz * torch.exp(logstep * (mels[log_t] - min_log_mel))
    return freqs


def melscale_fbanks(n_freqs, f_min, f_max, n_mels, sample_rate, norm: Optional[str] = "slaney"):
    all_freqs = torch.linspace(0, sample_rate // 2, n_freqs)
    m_min = _hz_to_mel(f_min)
    m_max = _hz_to_mel(f_max)
    m_pts = torch.linspace(m_min, m_max, n_mels + 2)
    f_pts = _mel_to_hz(m_pts)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)
    zero = torch.zeros(1)
    down_slopes = (-1.0 * slopes[:, :-2]) / f_diff[:-1]
    up_slopes = slopes[:, 2:] / f_diff[1:]
    fb = torch.max(zero, torch.min(down_slopes, up_slopes))
    if norm is not None and norm == "slaney":
        enorm = 2.0 / (f_pts[2: n_mels + 2] - f_pts[:n_mels])
        fb *= enorm.unsqueeze(0)
    return fb


def griffinlim(specgram, window, n_fft, hop_length, win_length, power, n_iter, momentum, length, rand_init):
    if not 0 <= momentum < 1:
        raise ValueError("momentum must be in range [0, 1). Found: {}".format(momentum))
    momentum = momentum / (1 + momentum)

    # pack batch
    shape = specgram.size()
    specgram = specgram.reshape([-1] + list(shape[-2:]))

    specgram = specgram.pow(1 / power)

    # initialize the phase
    if rand_init:
        angles = torch.rand(specgram.size(), dtype=torch.cfloat, device=specgram.device)
    else:
        angles = torch.full(specgram.size(), 1, dtype=torch.cfloat, device=specgram.device)

    # And initialize the previous iterate to 0
    tprev = torch.tensor(0.0, dtype=specgram.dtype, device=specgram.device)
    for _ in range(n_iter):
        # Invert with our current estimate of the phases
        inverse = torch.istft(specgram * angles, n_fft=n_fft, hop_length=hop_length, win_length=win_length,
                              window=window, length=length)

        # Rebuild the spectrogram
        rebuilt = torch.stft(input=inverse, n_fft=n_fft, hop_length=hop_length, win_length=win_length,
                             window=window, center=True, pad_mode="reflect", normalized=False, onesided=True,
                             return_complex=True)

        # Update our phase estimates
        angles = rebuilt
        if momentum:
            angles = angles - tprev.mul_(momentum)
        angles = angles.div(angles.abs().add(1e-16))

        # Store the previous iterate
        tprev = rebuilt

    # Return the final phase estimates
    waveform = torch.istft(specgram * angles, n_fft=n_fft, hop_length=hop_length, win_length=win_length,
                           window=window, length=length)

    # unpack batch
    waveform = waveform.reshape(shape[:-2] + waveform.shape[-1:])
    return waveform


class InverseMelScale(nn.Module):
    def __init__(self, n_stft, n_mels=20, sample_rate=8000, f_min=0.0, f_max=None, norm="slaney"):
        super().__init__()
        self.n_mels = n_mels
        self.sample_rate = sample_rate
        self.f_max = f_max or float(sample_rate // 2)
        self.f_min = f_min
        fb = melscale_fbanks(n_stft, self.f_min, self.f_max, self.n_mels, self.sample_rate, norm)
        self.register_buffer("fb", fb)

    def forward(self, melspec):
        shape = melspec.size()
        melspec = melspec.view(-1, shape[-2], shape[-1])
        n_mels, time = shape[-2], shape[-1]
        freq, _ = self.fb.size()  # (freq, n_mels)
        if self.n_mels != n_mels:
            raise ValueError("Expected an input with {} mel bins. Found: {}".format(self.n_mels, n_mels))
        specgram = torch.relu(torch.linalg.lstsq(self.fb.transpose(-1, -2)[None], melspec, driver="gels").solution)
        specgram = specgram.view(shape[:-2] + (freq, time))
        return specgram


class GriffinLim(nn.Module):
    def __init__(self, n_fft=64, n_iter=8, win_length=None, hop_length=None, power=2.0, momentum=0.99,
                 length=None, rand_init=False):
        super().__init__()
        self.n_fft = n_fft
        self.n_iter = n_iter
        self.win_length = win_length if win_length is not None else n_fft
        self.hop_length = hop_length if hop_length is not None else self.win_length // 2
        self.register_buffer("window", torch.hann_window(self.win_length))
        self.length, self.power, self.momentum, self.rand_init = length, power, momentum, rand_init

    def forward(self, specgram):
        return griffinlim(specgram, self.window, self.n_fft, self.hop_length, self.win_length, self.power,
                          self.n_iter, self.momentum, self.length, self.rand_init)


class MelToWave(nn.Module):
    def __init__(self, feat_dim=12, n_mels=20, n_fft=64):
        super().__init__()
        self.postnet = nn.Sequential(nn.Conv1d(feat_dim, 32, 5, padding=2), nn.Tanh(), nn.Conv1d(32, n_mels, 5, padding=2))
        self.inverse_mel = InverseMelScale(n_fft // 2 + 1, n_mels=n_mels)
        self.griffin_lim = GriffinLim(n_fft=n_fft, n_iter=6)

    def forward(self, features):
        log_mel = self.postnet(features)
        mel_power = torch.exp(log_mel.clamp(max=4.0))
        spec = self.inverse_mel(mel_power)
        return self.griffin_lim(spec), log_mel


torch.manual_seed(0)
model = MelToWave().eval()


def example_inputs():
    return (torch.randn(2, 12, 17, generator=torch.Generator().manual_seed(1)),)
