"""An S4D layer (diagonal state space) as its standalone file writes it:
complex diagonal A from a real log-part and an imaginary part, the
convolution kernel through a Vandermonde product of complex exponentials
(torch.view_as_complex over a parameter), a long convolution by rfft and
irfft with n = 2L, a skip term D, GELU and a GLU output projection."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class S4DKernel(nn.Module):
    def __init__(self, d_model, N=8, dt_min=0.001, dt_max=0.1):
        super().__init__()
        H = d_model
        log_dt = torch.rand(H) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min)
        C = torch.randn(H, N // 2, dtype=torch.cfloat)
        self.C = nn.Parameter(torch.view_as_real(C))
        self.log_dt = nn.Parameter(log_dt)
        self.log_A_real = nn.Parameter(torch.log(0.5 * torch.ones(H, N // 2)))
        self.A_imag = nn.Parameter(math.pi * torch.arange(N // 2).repeat(H, 1).float())

    def forward(self, L):
        dt = torch.exp(self.log_dt)
        C = torch.view_as_complex(self.C)
        A = -torch.exp(self.log_A_real) + 1j * self.A_imag
        dtA = A * dt.unsqueeze(-1)
        K = dtA.unsqueeze(-1) * torch.arange(L, device=A.device)
        C = C * (torch.exp(dtA) - 1.) / A
        K = 2 * torch.einsum("hn, hnl -> hl", C, torch.exp(K)).real
        return K


class S4D(nn.Module):
    def __init__(self, d_model=8, d_state=8):
        super().__init__()
        self.h = d_model
        self.D = nn.Parameter(torch.randn(self.h))
        self.kernel = S4DKernel(self.h, N=d_state)
        self.output_linear = nn.Sequential(nn.Conv1d(self.h, 2 * self.h, kernel_size=1), nn.GLU(dim=-2))

    def forward(self, u):
        L = u.size(-1)
        k = self.kernel(L=L)
        k_f = torch.fft.rfft(k, n=2 * L)
        u_f = torch.fft.rfft(u, n=2 * L)
        y = torch.fft.irfft(u_f * k_f, n=2 * L)[..., :L]
        y = y + u * self.D.unsqueeze(-1)
        y = F.gelu(y)
        return self.output_linear(y)


torch.manual_seed(0)
model = S4D().eval()
check_gradients = True


def example_inputs():
    return (torch.randn(2, 8, 16, generator=torch.Generator().manual_seed(1)),)
