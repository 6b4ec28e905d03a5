"""A CNN prepared for deployment with torch.fx, as inference code bases
(torchvision's quantization helpers, MMDeploy, TensorRT front ends) do:
`torch.fx.symbolic_trace` of an eval-mode ResNet-style net with a leaf
function registered by `torch.fx.wrap` (kept as a call in the graph), a
custom `fx.Tracer` whose `is_leaf_module` keeps a whole submodule opaque,
a Conv/BN fusion pass over the graph (the FX tutorial's: `call_module`
nodes matched through `gm.get_submodule`, `torch.nn.utils.fusion.
fuse_conv_bn_eval`, the fused conv set on its parent by `setattr`, the BN
node's uses replaced), a second pass over `graph.nodes` that rewrites `F.relu` calls
into `torch.clamp_min` by `inserting_after`/`replace_all_uses_with`/
`erase_node`, `graph.lint()`, `eliminate_dead_code()` and `recompile()`.
The deployed model is the GraphModule: its forward is Python code that
torch.fx generated (no file on disk), the entry `model.forward`."""
import math

import torch
import torch.fx
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.fusion import fuse_conv_bn_eval


def round_channels(x):
    # a helper called with a tensor: symbolic_trace keeps it as one call node
    return x * (1.0 / math.sqrt(x.shape[1]))


torch.fx.wrap("round_channels")


class ConvBN(nn.Sequential):
    def __init__(self, cin, cout, stride=1, groups=1):
        super().__init__(nn.Conv2d(cin, cout, 3, stride, 1, groups=groups, bias=False),
                         nn.BatchNorm2d(cout))


class SqueezeExcite(nn.Module):
    """Kept a leaf module by the tracer: its forward runs as Python."""

    def __init__(self, c, r=4):
        super().__init__()
        self.fc1 = nn.Conv2d(c, c // r, 1)
        self.fc2 = nn.Conv2d(c // r, c, 1)

    def forward(self, x):
        s = x.mean((2, 3), keepdim=True)
        if s.shape[1] > 8:  # a Python branch an opaque module may keep
            s = F.relu(self.fc1(s))
        else:
            s = self.fc1(s).clamp_min(0)
        return x * torch.sigmoid(self.fc2(s))


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.a = ConvBN(cin, cout, stride)
        self.b = ConvBN(cout, cout)
        self.se = SqueezeExcite(cout)
        self.down = ConvBN(cin, cout, stride) if (stride != 1 or cin != cout) else None

    def forward(self, x):
        y = F.relu(self.a(x))
        y = self.se(self.b(y))
        skip = x if self.down is None else self.down(x)
        return F.relu(y + skip)


class Net(nn.Module):
    def __init__(self, classes=10):
        super().__init__()
        self.stem = ConvBN(3, 16, 2)
        self.layers = nn.Sequential(Block(16, 16, 1), Block(16, 32, 2), Block(32, 32, 1))
        self.head = nn.Linear(32, classes)

    def forward(self, x):
        x = F.relu(self.stem(x))
        x = self.layers(x)
        x = round_channels(x)
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.head(x).softmax(-1)


class LeafTracer(torch.fx.Tracer):
    def is_leaf_module(self, m, qualname):
        return isinstance(m, SqueezeExcite) or super().is_leaf_module(m, qualname)


def relu_to_clamp(gm):
    for node in list(gm.graph.nodes):
        if node.op == "call_function" and node.target is F.relu:
            with gm.graph.inserting_after(node):
                new = gm.graph.call_function(torch.clamp_min, (node.args[0], 0.0))
            node.replace_all_uses_with(new)
            gm.graph.erase_node(node)
    gm.graph.lint()
    gm.graph.eliminate_dead_code()
    gm.recompile()
    return gm


def fuse_conv_bn(gm):
    for node in list(gm.graph.nodes):
        if node.op != "call_module" or not isinstance(gm.get_submodule(node.target), nn.BatchNorm2d):
            continue
        conv_node = node.args[0]
        if conv_node.op != "call_module" or len(conv_node.users) > 1:
            continue
        conv = gm.get_submodule(conv_node.target)
        if not isinstance(conv, nn.Conv2d):
            continue
        parent_name, _, name = conv_node.target.rpartition(".")
        parent = gm.get_submodule(parent_name) if parent_name else gm
        setattr(parent, name, fuse_conv_bn_eval(conv, gm.get_submodule(node.target)))
        node.replace_all_uses_with(conv_node)
        gm.graph.erase_node(node)
    gm.delete_all_unused_submodules()
    gm.recompile()
    return gm


def deploy(net):
    net = net.eval()
    graph = LeafTracer().trace(net)
    gm = torch.fx.GraphModule(net, graph, "Net")
    gm = fuse_conv_bn(gm)
    return relu_to_clamp(gm)


torch.manual_seed(0)
_net = Net()
with torch.no_grad():  # running statistics that differ from the identity
    for m in _net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.2, 0.2)
            m.running_var.uniform_(0.5, 1.5)
model = deploy(_net)


def example_inputs():
    return torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
