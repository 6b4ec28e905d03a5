# --warmup N calls the entry N times on its example inputs, under no_grad,
# before capture: a program that fills its own state on its first call (a
# bias table cached by device, LeViT's; grids built when a size changes,
# YOLO's) is captured in the state later calls see. Without it the graph is
# the cold call's, guarded on the cache's missing entry. The object the calls ran on
# is the one captured, also when the class's constructor makes it. A call
# that raises stops the export, naming the module.
# RUN: %dync export %s:BiasCache.forward --emit=guards | FileCheck %s --check-prefix=COLD
# RUN: %dync export %s:BiasCache.forward --warmup 1 --emit=graph | FileCheck %s --check-prefix=WARM
# RUN: %dync export %s:BiasCache.forward --warmup 1 --emit=guards | FileCheck %s --check-prefix=WARM-GUARDS
# RUN: %dync export %s:Grids.forward --warmup 2 --emit=graph | FileCheck %s --check-prefix=GRIDS
# RUN: not %dync export %s:Failing.forward --warmup 1 --emit=graph 2>&1 | FileCheck %s --check-prefix=RAISES
import torch
from torch import nn


class BiasCache(nn.Module):
    def __init__(self):
        super().__init__()
        self.biases = nn.Parameter(torch.ones(2, 5))
        self.register_buffer("idxs", torch.zeros(4, 4, dtype=torch.long), persistent=False)
        self.cache = {}

    def get_biases(self, device):
        key = str(device)
        if key not in self.cache:
            self.cache[key] = self.biases[:, self.idxs]
        return self.cache[key]

    def forward(self, x):
        return x + self.get_biases(x.device)


model = BiasCache().eval()

# COLD: absent L['self'].cache['cpu']
# WARM: graph @BiasCache.forward(%x: tensor<f32, [3, 2, 4, 4]> = L['x'],
# WARM-NEXT: %self_cache_cpu: tensor<f32, [2, 4, 4]> = L['self'].cache['cpu'])
# WARM-NEXT: aten::add.Tensor(%x, %self_cache_cpu)
# WARM-GUARDS: tensor L['self'].cache['cpu'] : tensor<f32, [2, 4, 4]>
# WARM-GUARDS: type L['self'].cache : builtins:dict
# WARM-GUARDS-NOT: keys L['self'].cache


class Grids(nn.Module):
    # No module-level instance: Grids() is made once, called, and captured.
    def __init__(self):
        super().__init__()
        self.grid = [torch.empty(0)]
        self.calls = 0

    def forward(self, x):
        self.calls += 1
        ny, nx = x.shape[2:4]
        if self.grid[0].shape[1:3] != x.shape[2:4]:
            yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing="ij")
            self.grid[0] = torch.stack((xv, yv), 2).view(1, ny, nx, 2).float()
        return x.permute(0, 2, 3, 1) + self.grid[0] * self.calls

# GRIDS: graph @Grids.forward(%x: tensor<f32, [3, 2, 4, 4]> = L['x'],
# GRIDS-NEXT: %self_grid_0: tensor<f32, [1, 4, 4, 2]> = L['self'].grid[0])
# GRIDS-NOT: aten::arange
# GRIDS: aten::mul.Tensor(%self_grid_0, 3)


class Failing(nn.Module):
    def forward(self, x):
        raise RuntimeError("not on this input")

# RAISES: warmup.py: error: --warmup: calling Failing.forward on the example inputs (call 1 of 1) raised: {{.*}}RuntimeError: not on this input


def example_inputs():
    return (torch.randn(3, 2, 4, 4),)
