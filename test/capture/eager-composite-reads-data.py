# In the variant that records autograd, calls run eager's kernels on fake
# tensors. istft's composite kernel checks its window envelope by reading
# the data (`aten.equal`), which fakes cannot give; that call alone runs
# torch's decomposition under the Python dispatcher, as export traces it,
# so calls with grad mode on are compiled (Vocos's ISTFT head).
# RUN: %dync export %s:Head.forward -v -o %t.so 2>&1 | FileCheck %s --check-prefix=LOG --allow-empty
# RUN: %dync inspect %t.so | FileCheck %s
import torch
import torch.nn as nn


class Head(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.out = nn.Linear(8, 18)
        self.register_buffer("window", torch.hann_window(16))

    def forward(self, x):
        mag, p = self.out(x).transpose(1, 2).chunk(2, dim=1)
        spec = torch.exp(mag).clip(max=1e2) * (torch.cos(p) + 1j * torch.sin(p))
        return torch.istft(spec, 16, 4, 16, self.window, center=True)


def example_inputs():
    return (torch.randn(2, 10, 8),)

# LOG-NOT: not compiled

# CHECK-LABEL: graph @Head.forward$grad(
# CHECK-NOT:   {{^}}graph
# CHECK:       aten::_fft_c2r.default(
# CHECK:       {{^}}}
