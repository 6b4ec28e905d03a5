"""A log-mel spectrogram front end as the TTS and vocoder repos write it
(HiFi-GAN's meldataset, Whisper's audio.py): a Hann window registered as
a buffer, reflect padding by F.pad on an unsqueezed signal, torch.stft
with return_complex=True, magnitudes by .abs() (or the real and imaginary
squares summed), a mel filterbank built in numpy with Slaney-style
triangles and normalization and stored as a buffer, matmul, dynamic range
compression by torch.log(torch.clamp(x, min=1e-5)), and Whisper's
log10 clamped to 8 dB below the maximum."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def hz_to_mel(f):
    return 2595.0 * np.log10(1.0 + f / 700.0)


def mel_to_hz(m):
    return 700.0 * (10.0 ** (m / 2595.0) - 1.0)


def mel_filterbank(sr, n_fft, n_mels, fmin=0.0, fmax=None):
    fmax = fmax or sr / 2
    fftfreqs = np.linspace(0, sr / 2, 1 + n_fft // 2)
    mel_f = mel_to_hz(np.linspace(hz_to_mel(fmin), hz_to_mel(fmax), n_mels + 2))
    fdiff = np.diff(mel_f)
    ramps = np.subtract.outer(mel_f, fftfreqs)
    weights = np.zeros((n_mels, 1 + n_fft // 2), dtype=np.float32)
    for i in range(n_mels):
        lower = -ramps[i] / fdiff[i]
        upper = ramps[i + 2] / fdiff[i + 1]
        weights[i] = np.maximum(0, np.minimum(lower, upper))
    enorm = 2.0 / (mel_f[2:n_mels + 2] - mel_f[:n_mels])
    weights *= enorm[:, np.newaxis]
    return weights


def dynamic_range_compression_torch(x, C=1, clip_val=1e-5):
    return torch.log(torch.clamp(x, min=clip_val) * C)


def spectral_normalize_torch(magnitudes):
    return dynamic_range_compression_torch(magnitudes)


class LogMelSpectrogram(nn.Module):
    def __init__(self, sampling_rate=8000, n_fft=128, num_mels=20, hop_size=32, win_size=128, fmin=0, fmax=None):
        super().__init__()
        self.n_fft, self.hop_size, self.win_size = n_fft, hop_size, win_size
        mel = mel_filterbank(sampling_rate, n_fft, num_mels, fmin, fmax)
        self.register_buffer("mel_basis", torch.from_numpy(mel).float())
        self.register_buffer("hann_window", torch.hann_window(win_size))

    def mel_spectrogram(self, y, center=False):
        pad = int((self.n_fft - self.hop_size) / 2)
        y = F.pad(y.unsqueeze(1), (pad, pad), mode="reflect")
        y = y.squeeze(1)
        spec = torch.stft(y, self.n_fft, hop_length=self.hop_size, win_length=self.win_size,
                          window=self.hann_window, center=center, pad_mode="reflect", normalized=False,
                          onesided=True, return_complex=True)
        spec = torch.sqrt(spec.real.pow(2) + spec.imag.pow(2) + 1e-9)
        spec = torch.matmul(self.mel_basis, spec)
        return spectral_normalize_torch(spec)

    def log_mel_whisper(self, audio):
        stft = torch.stft(audio, self.n_fft, self.hop_size, window=self.hann_window, return_complex=True)
        magnitudes = stft[..., :-1].abs() ** 2
        mel_spec = self.mel_basis @ magnitudes
        log_spec = torch.clamp(mel_spec, min=1e-10).log10()
        log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
        log_spec = (log_spec + 4.0) / 4.0
        return log_spec

    def forward(self, y):
        return self.mel_spectrogram(y), self.log_mel_whisper(y)


model = LogMelSpectrogram().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return ((torch.rand(2, 1024, generator=g) * 2 - 1) * 0.5,)
