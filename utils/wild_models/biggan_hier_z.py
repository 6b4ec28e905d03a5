"""BigGAN's generator as ajbrock/BigGAN-PyTorch writes it: an `arch`
dict from `G_arch(ch, attention, ...)` keyed by resolution with
`in_channels`/`out_channels`/`upsample`/`resolution`/`attention` lists
(attention resolutions parsed from a string `'64'` by `split('_')`),
`functools.partial` layer factories (`self.which_conv`, `which_bn =
functools.partial(layers.ccbn, which_linear=..., cross_replica=...)`),
hierarchical latents (`zs = torch.split(z, self.z_chunk_size, 1)`, the
shared class embedding concatenated to each chunk by a list
comprehension), class-conditional BatchNorm `ccbn` whose gain is `1 +
self.gain(y)` and bias `self.bias(y)` reshaped `(y.size(0), -1, 1, 1)`,
applied by `F.batch_norm` on running stats in eval, `GBlock`s with
`upsample = functools.partial(F.interpolate, scale_factor=2)`, a
learnable-sc 1x1 conv when channels change, SAGAN self-attention with
`F.max_pool2d` on phi and g and a learned `gamma` Parameter, the blocks
kept as `nn.ModuleList([nn.ModuleList(...)])` pairs iterated with
`for index, blocklist in enumerate(self.blocks): for block in blocklist:`
and `ys[index]`, and an output `torch.tanh` layer."""
import functools

import torch
import torch.nn as nn
import torch.nn.functional as F


def G_arch(ch=64, attention="64", ksize="333333", dilation="111111"):
    arch = {}
    arch[32] = {"in_channels": [ch * item for item in [4, 4, 4]],
                "out_channels": [ch * item for item in [4, 4, 4]],
                "upsample": [True] * 3,
                "resolution": [8, 16, 32],
                "attention": {2 ** i: (2 ** i in [int(item) for item in attention.split("_")])
                              for i in range(3, 6)}}
    arch[16] = {"in_channels": [ch * item for item in [4, 2]],
                "out_channels": [ch * item for item in [2, 1]],
                "upsample": [True] * 2,
                "resolution": [8, 16],
                "attention": {2 ** i: (2 ** i in [int(item) for item in attention.split("_")])
                              for i in range(3, 5)}}
    return arch


class identity(nn.Module):
    def forward(self, input):
        return input


class Attention(nn.Module):
    def __init__(self, ch, which_conv=nn.Conv2d, name="attention"):
        super(Attention, self).__init__()
        self.ch = ch
        self.which_conv = which_conv
        self.theta = self.which_conv(self.ch, self.ch // 8, kernel_size=1, padding=0, bias=False)
        self.phi = self.which_conv(self.ch, self.ch // 8, kernel_size=1, padding=0, bias=False)
        self.g = self.which_conv(self.ch, self.ch // 2, kernel_size=1, padding=0, bias=False)
        self.o = self.which_conv(self.ch // 2, self.ch, kernel_size=1, padding=0, bias=False)
        self.gamma = nn.Parameter(torch.tensor(0.), requires_grad=True)

    def forward(self, x, y=None):
        theta = self.theta(x)
        phi = F.max_pool2d(self.phi(x), [2, 2])
        g = F.max_pool2d(self.g(x), [2, 2])
        theta = theta.view(-1, self.ch // 8, x.shape[2] * x.shape[3])
        phi = phi.view(-1, self.ch // 8, x.shape[2] * x.shape[3] // 4)
        g = g.view(-1, self.ch // 2, x.shape[2] * x.shape[3] // 4)
        beta = F.softmax(torch.bmm(theta.transpose(1, 2), phi), -1)
        o = self.o(torch.bmm(g, beta.transpose(1, 2)).view(-1, self.ch // 2, x.shape[2], x.shape[3]))
        return self.gamma * o + x


class ccbn(nn.Module):
    def __init__(self, output_size, input_size, which_linear, eps=1e-5, momentum=0.1, cross_replica=False,
                 mybn=False, norm_style="bn"):
        super(ccbn, self).__init__()
        self.output_size, self.input_size = output_size, input_size
        self.gain = which_linear(input_size, output_size)
        self.bias = which_linear(input_size, output_size)
        self.eps = eps
        self.momentum = momentum
        self.cross_replica = cross_replica
        self.mybn = mybn
        self.norm_style = norm_style
        if self.cross_replica or self.mybn:
            raise NotImplementedError
        elif self.norm_style in ["bn", "in"]:
            self.register_buffer("stored_mean", torch.zeros(output_size))
            self.register_buffer("stored_var", torch.ones(output_size))

    def forward(self, x, y):
        gain = (1 + self.gain(y)).view(y.size(0), -1, 1, 1)
        bias = self.bias(y).view(y.size(0), -1, 1, 1)
        if self.mybn or self.cross_replica:
            return self.bn(x, gain=gain, bias=bias)
        else:
            if self.norm_style == "bn":
                out = F.batch_norm(x, self.stored_mean, self.stored_var, None, None, self.training, 0.1, self.eps)
            elif self.norm_style == "in":
                out = F.instance_norm(x, self.stored_mean, self.stored_var, None, None, self.training, 0.1,
                                      self.eps)
            return out * gain + bias

    def extra_repr(self):
        s = "out: {output_size}, in: {input_size},"
        s += " cross_replica={cross_replica}"
        return s.format(**self.__dict__)


class bn(nn.Module):
    def __init__(self, output_size, eps=1e-5, momentum=0.1, cross_replica=False, mybn=False):
        super(bn, self).__init__()
        self.output_size = output_size
        self.gain = nn.Parameter(torch.ones(output_size), requires_grad=True)
        self.bias = nn.Parameter(torch.zeros(output_size), requires_grad=True)
        self.eps = eps
        self.momentum = momentum
        self.register_buffer("stored_mean", torch.zeros(output_size))
        self.register_buffer("stored_var", torch.ones(output_size))

    def forward(self, x, y=None):
        return F.batch_norm(x, self.stored_mean, self.stored_var, self.gain, self.bias, self.training,
                            self.momentum, self.eps)


class GBlock(nn.Module):
    def __init__(self, in_channels, out_channels, which_conv=nn.Conv2d, which_bn=bn, activation=None,
                 upsample=None):
        super(GBlock, self).__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.which_conv, self.which_bn = which_conv, which_bn
        self.activation = activation
        self.upsample = upsample
        self.conv1 = self.which_conv(self.in_channels, self.out_channels)
        self.conv2 = self.which_conv(self.out_channels, self.out_channels)
        self.learnable_sc = in_channels != out_channels or upsample
        if self.learnable_sc:
            self.conv_sc = self.which_conv(in_channels, out_channels, kernel_size=1, padding=0)
        self.bn1 = self.which_bn(in_channels)
        self.bn2 = self.which_bn(out_channels)

    def forward(self, x, y):
        h = self.activation(self.bn1(x, y))
        if self.upsample:
            h = self.upsample(h)
            x = self.upsample(x)
        h = self.conv1(h)
        h = self.activation(self.bn2(h, y))
        h = self.conv2(h)
        if self.learnable_sc:
            x = self.conv_sc(x)
        return h + x


class Generator(nn.Module):
    def __init__(self, G_ch=8, dim_z=24, bottom_width=4, resolution=16, G_kernel_size=3, G_attn="8",
                 n_classes=10, num_G_SVs=1, num_G_SV_itrs=1, G_shared=True, shared_dim=8, hier=True,
                 cross_replica=False, mybn=False, G_activation=nn.ReLU(inplace=False), norm_style="bn", **kwargs):
        super(Generator, self).__init__()
        self.ch = G_ch
        self.dim_z = dim_z
        self.bottom_width = bottom_width
        self.resolution = resolution
        self.kernel_size = G_kernel_size
        self.attention = G_attn
        self.n_classes = n_classes
        self.G_shared = G_shared
        self.shared_dim = shared_dim if shared_dim > 0 else dim_z
        self.hier = hier
        self.cross_replica = cross_replica
        self.mybn = mybn
        self.activation = G_activation
        self.norm_style = norm_style
        self.arch = G_arch(self.ch, self.attention)[resolution]
        if self.hier:
            self.num_slots = len(self.arch["in_channels"]) + 1
            self.z_chunk_size = (self.dim_z // self.num_slots)
            self.dim_z = self.z_chunk_size * self.num_slots
        else:
            self.num_slots = 1
            self.z_chunk_size = 0
        self.which_conv = functools.partial(nn.Conv2d, kernel_size=3, padding=1)
        self.which_linear = nn.Linear
        bn_linear = (functools.partial(self.which_linear, bias=False) if self.G_shared else nn.Embedding)
        self.which_bn = functools.partial(ccbn, which_linear=bn_linear, cross_replica=self.cross_replica,
                                          mybn=self.mybn,
                                          input_size=(self.shared_dim + self.z_chunk_size if self.G_shared
                                                      else self.n_classes),
                                          norm_style=self.norm_style, eps=1e-5)
        self.shared = (nn.Embedding(n_classes, self.shared_dim) if G_shared else identity())
        self.linear = self.which_linear(self.dim_z // self.num_slots,
                                        self.arch["in_channels"][0] * (self.bottom_width ** 2))
        self.blocks = []
        for index in range(len(self.arch["out_channels"])):
            self.blocks += [[GBlock(in_channels=self.arch["in_channels"][index],
                                    out_channels=self.arch["out_channels"][index], which_conv=self.which_conv,
                                    which_bn=self.which_bn, activation=self.activation,
                                    upsample=(functools.partial(F.interpolate, scale_factor=2)
                                              if self.arch["upsample"][index] else None))]]
            if self.arch["attention"][self.arch["resolution"][index]]:
                self.blocks[-1] += [Attention(self.arch["out_channels"][index], self.which_conv)]
        self.blocks = nn.ModuleList([nn.ModuleList(block) for block in self.blocks])
        self.output_layer = nn.Sequential(bn(self.arch["out_channels"][-1], cross_replica=self.cross_replica,
                                             mybn=self.mybn),
                                          self.activation, self.which_conv(self.arch["out_channels"][-1], 3))

    def forward(self, z, y):
        if self.hier:
            zs = torch.split(z, self.z_chunk_size, 1)
            z = zs[0]
            ys = [torch.cat([y, item], 1) for item in zs[1:]]
        else:
            ys = [y] * len(self.blocks)
        h = self.linear(z)
        h = h.view(h.size(0), -1, self.bottom_width, self.bottom_width)
        for index, blocklist in enumerate(self.blocks):
            for block in blocklist:
                h = block(h, ys[index])
        return torch.tanh(self.output_layer(h))


class G_D_sample(nn.Module):
    """The sample() of BigGAN's utils: truncated z given, class embedding by G.shared."""
    def __init__(self, G):
        super().__init__()
        self.G = G

    def forward(self, z_, y_):
        with torch.no_grad():
            G_z = self.G(z_, self.G.shared(y_))
        return G_z, y_


torch.manual_seed(0)
G = Generator()
for module in G.modules():
    if isinstance(module, Attention):
        module.gamma.data.fill_(0.5)
model = G_D_sample(G).eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    z = torch.fmod(torch.randn(2, 24, generator=g), 2.0) * 0.5
    y = torch.tensor([3, 7])
    return (z, y)
