"""A neural ODE solved with a fixed-step Runge-Kutta 4 loop as small ODE
tutorials write it: the dynamics an MLP of the state and the time
concatenated as a column built with torch.full_like, the step size from
the time span, and the trajectory collected in a list and stacked."""
import torch
import torch.nn as nn


class ODEFunc(nn.Module):
    def __init__(self, dim=4, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim + 1, hidden), nn.Tanh(), nn.Linear(hidden, dim))
        self.nfe = 0

    def forward(self, t, y):
        t_col = torch.full_like(y[:, :1], t)
        return self.net(torch.cat([y, t_col], dim=1))


def rk4_step(func, t, y, dt):
    k1 = func(t, y)
    k2 = func(t + dt / 2, y + dt * k1 / 2)
    k3 = func(t + dt / 2, y + dt * k2 / 2)
    k4 = func(t + dt, y + dt * k3)
    return y + dt * (k1 + 2 * k2 + 2 * k3 + k4) / 6


class NeuralODE(nn.Module):
    def __init__(self, t0=0.0, t1=1.0, steps=8):
        super().__init__()
        self.func = ODEFunc()
        self.t0, self.t1, self.steps = t0, t1, steps

    def forward(self, y0):
        dt = (self.t1 - self.t0) / self.steps
        t, y = self.t0, y0
        trajectory = [y0]
        for _ in range(self.steps):
            y = rk4_step(self.func, t, y, dt)
            t = t + dt
            trajectory.append(y)
        return torch.stack(trajectory, dim=0)


torch.manual_seed(0)
model = NeuralODE().eval()
check_gradients = True


def example_inputs():
    return (torch.randn(3, 4, generator=torch.Generator().manual_seed(1)),)
