# An nn.Module held by a closure cell (a lambda over a submodule stored on
# self, as minGPT's MLP is) or by a class attribute is read through that
# cell or attribute like a submodule reached from self: its parameters are
# graph inputs with their tensor guards, its type, training flag and hook
# tables are guarded. Before, such a module had no source and its first
# parameter was refused as "not reached from the frame's inputs".
# RUN: %dync export %s:Block.forward %s:Shared.forward --emit=guards | FileCheck %s
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.mlp = nn.ModuleDict(dict(fc=nn.Linear(4, 8), proj=nn.Linear(8, 4), act=nn.GELU()))
        m = self.mlp
        self.mlpf = lambda x: m.proj(m.act(m.fc(x)))

    def forward(self, x):
        return x + self.mlpf(x)

# CHECK-LABEL: guards @Block.forward(self, x) {
# CHECK-DAG:   tensor L['self'].mlpf.__closure__[0].cell_contents._modules['fc']._parameters['weight'] : tensor<f32, [8, 4], requires_grad>
# CHECK-DAG:   tensor L['self'].mlpf.__closure__[0].cell_contents._modules['proj']._parameters['bias'] : tensor<f32, [4], requires_grad>
# CHECK-DAG:   function L['self'].mlpf : "modules-in-cells":Block.__init__.<locals>.<lambda> line [[# @LINE - 8]]
# CHECK-DAG:   type L['self'].mlpf.__closure__[0].cell_contents : torch.nn.modules.container:ModuleDict
# CHECK-DAG:   equals L['self'].mlpf.__closure__[0].cell_contents._modules['act'].approximate : "none"
# CHECK-DAG:   empty L['self'].mlpf.__closure__[0].cell_contents._modules['fc']._forward_hooks
# CHECK:       }


class Shared(nn.Module):
    norm = nn.LayerNorm(4)

    def forward(self, x):
        return self.norm(x) * 2

# CHECK-LABEL: guards @Shared.forward(self, x) {
# CHECK-DAG:   tensor type(L['self']).norm._parameters['weight'] : tensor<f32, [4], requires_grad>
# CHECK-DAG:   absent L['self'].norm
# CHECK-DAG:   type type(L['self']).norm : torch.nn.modules.normalization:LayerNorm
# CHECK-DAG:   equals type(L['self']).norm.eps : 1e-05
# CHECK:       }


def example_inputs():
    return (torch.randn(2, 4),)
