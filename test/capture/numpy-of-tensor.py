# `.numpy()` of a tensor the function is given or computes needs its values,
# which fake tensors do not have: capture stops at the user's line in plain
# words (TimesNet picks its FFT periods so), never with torch's "tensor
# subclasses" error.
# RUN: not %dync export %s:periods --emit=graph 2>&1 | FileCheck %s --check-prefix=DATA
# RUN: not %dync export %s:of_input --emit=graph 2>&1 | FileCheck %s --check-prefix=INPUT
import torch


def periods(x):
    amplitudes = torch.fft.rfft(x, dim=0).abs().mean(-1)
    _, top = torch.topk(amplitudes, 2)
    top = top.detach().cpu().numpy()
    return x.shape[0] // top

# DATA: numpy-of-tensor.py:[[@LINE-3]]:11: error: torch.Tensor.numpy copies the tensor's values into a NumPy array, but a tensor's values are known only when the graph runs, not while capturing, so it cannot be captured (torch.export refuses it too): keep them a tensor, or read a single integer with .item() (a data-dependent size; see torch._check)
# DATA-NEXT: {{^}}    top = top.detach().cpu().numpy()
# DATA-NOT: tensor subclasses


def of_input(x):
    return torch.from_numpy(x.numpy() * 2)

# INPUT: numpy-of-tensor.py:[[@LINE-2]]:29: error: torch.Tensor.numpy copies the tensor's values


def example_inputs():
    return (torch.randn(12, 3),)
