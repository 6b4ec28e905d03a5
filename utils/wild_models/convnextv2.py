"""ConvNeXt-V2 in the style of timm: a model registry filled by a
@register_model decorator, norm layers passed as functools.partial, a
LayerNorm2d subclass of nn.LayerNorm that permutes around F.layer_norm,
Global Response Normalization (GRN) with the spatial L2 norm by
torch.norm(p=2, dim=(1, 2), keepdim=True) divided by its channel mean,
DropPath that is nn.Identity at rate 0, a `torch.jit.is_scripting()`
check around gradient checkpointing, weights initialized by named_apply
with trunc_normal_, and a head with global pooling and a flatten."""
import math
from functools import partial

import torch
import torch.nn as nn
import torch.nn.functional as F

_model_entrypoints = {}


def register_model(fn):
    _model_entrypoints[fn.__name__] = fn
    return fn


def create_model(name, **kwargs):
    return _model_entrypoints[name](**kwargs)


def drop_path(x, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True):
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep:
        random_tensor.div_(keep_prob)
    return x * random_tensor


class DropPath(nn.Module):
    def __init__(self, drop_prob: float = 0.0, scale_by_keep: bool = True):
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an NCHW tensor."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        x = x.permute(0, 3, 1, 2)
        return x


class GlobalResponseNorm(nn.Module):
    def __init__(self, dim, eps=1e-6, channels_last=True):
        super().__init__()
        self.eps = eps
        if channels_last:
            self.spatial_dim = (1, 2)
            self.channel_dim = -1
            self.wb_shape = (1, 1, 1, -1)
        else:
            self.spatial_dim = (2, 3)
            self.channel_dim = 1
            self.wb_shape = (1, -1, 1, 1)
        self.weight = nn.Parameter(torch.zeros(dim))
        self.bias = nn.Parameter(torch.zeros(dim))

    def forward(self, x):
        x_g = x.norm(p=2, dim=self.spatial_dim, keepdim=True)
        x_n = x_g / (x_g.mean(dim=self.channel_dim, keepdim=True) + self.eps)
        return x + torch.addcmul(self.bias.view(self.wb_shape), self.weight.view(self.wb_shape), x * x_n)


class GlobalResponseNormMlp(nn.Module):
    def __init__(self, in_features, hidden_features=None, out_features=None, act_layer=nn.GELU,
                 bias=True, drop=0.0, use_conv=False):
        super().__init__()
        out_features = out_features or in_features
        hidden_features = hidden_features or in_features
        linear_layer = partial(nn.Conv2d, kernel_size=1) if use_conv else nn.Linear
        self.fc1 = linear_layer(in_features, hidden_features, bias=bias)
        self.act = act_layer()
        self.drop1 = nn.Dropout(drop)
        self.grn = GlobalResponseNorm(hidden_features, channels_last=not use_conv)
        self.fc2 = linear_layer(hidden_features, out_features, bias=bias)
        self.drop2 = nn.Dropout(drop)

    def forward(self, x):
        x = self.fc1(x)
        x = self.act(x)
        x = self.drop1(x)
        x = self.grn(x)
        x = self.fc2(x)
        x = self.drop2(x)
        return x


class ConvNeXtBlock(nn.Module):
    def __init__(self, in_chs, kernel_size=7, mlp_ratio=4, ls_init_value=None, drop_path=0.0,
                 norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        self.conv_dw = nn.Conv2d(in_chs, in_chs, kernel_size, padding=kernel_size // 2, groups=in_chs)
        self.norm = norm_layer(in_chs)
        self.mlp = GlobalResponseNormMlp(in_chs, int(mlp_ratio * in_chs), act_layer=nn.GELU)
        self.gamma = nn.Parameter(ls_init_value * torch.ones(in_chs)) if ls_init_value is not None else None
        self.drop_path = DropPath(drop_path) if drop_path > 0.0 else nn.Identity()

    def forward(self, x):
        shortcut = x
        x = self.conv_dw(x)
        x = x.permute(0, 2, 3, 1)
        x = self.norm(x)
        x = self.mlp(x)
        x = x.permute(0, 3, 1, 2)
        if self.gamma is not None:
            x = x.mul(self.gamma.reshape(1, -1, 1, 1))
        x = self.drop_path(x) + shortcut
        return x


class ConvNeXtStage(nn.Module):
    def __init__(self, in_chs, out_chs, stride=2, depth=2, drop_path_rates=None, norm_layer=None):
        super().__init__()
        self.grad_checkpointing = False
        if in_chs != out_chs or stride > 1:
            self.downsample = nn.Sequential(
                LayerNorm2d(in_chs, eps=1e-6),
                nn.Conv2d(in_chs, out_chs, kernel_size=stride, stride=stride))
            in_chs = out_chs
        else:
            self.downsample = nn.Identity()
        drop_path_rates = drop_path_rates or [0.0] * depth
        self.blocks = nn.Sequential(*[
            ConvNeXtBlock(in_chs=in_chs, drop_path=drop_path_rates[i], norm_layer=norm_layer)
            for i in range(depth)])

    def forward(self, x):
        x = self.downsample(x)
        if self.grad_checkpointing and not torch.jit.is_scripting():
            x = torch.utils.checkpoint.checkpoint_sequential(self.blocks, len(self.blocks), x)
        else:
            x = self.blocks(x)
        return x


def _init_weights(module, name=None, head_init_scale=1.0):
    if isinstance(module, nn.Conv2d):
        nn.init.trunc_normal_(module.weight, std=0.02)
        if module.bias is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.Linear):
        nn.init.trunc_normal_(module.weight, std=0.02)
        nn.init.zeros_(module.bias)
        if name and "head." in name:
            module.weight.data.mul_(head_init_scale)
            module.bias.data.mul_(head_init_scale)


def named_apply(fn, module, name="", depth_first=True, include_root=False):
    if not depth_first and include_root:
        fn(module=module, name=name)
    for child_name, child_module in module.named_children():
        child_name = ".".join((name, child_name)) if name else child_name
        named_apply(fn=fn, module=child_module, name=child_name, depth_first=depth_first, include_root=True)
    if depth_first and include_root:
        fn(module=module, name=name)
    return module


class ConvNeXt(nn.Module):
    def __init__(self, in_chans=3, num_classes=10, depths=(1, 1, 2), dims=(16, 32, 48),
                 drop_path_rate=0.1, head_init_scale=1.0):
        super().__init__()
        norm_layer = partial(nn.LayerNorm, eps=1e-6)
        self.stem = nn.Sequential(nn.Conv2d(in_chans, dims[0], kernel_size=4, stride=4),
                                  LayerNorm2d(dims[0], eps=1e-6))
        dp_rates = [x.tolist() for x in torch.linspace(0, drop_path_rate, sum(depths)).split(depths)]
        stages = []
        prev_chs = dims[0]
        for i in range(len(depths)):
            stages.append(ConvNeXtStage(prev_chs, dims[i], stride=2 if i > 0 else 1, depth=depths[i],
                                        drop_path_rates=dp_rates[i], norm_layer=norm_layer))
            prev_chs = dims[i]
        self.stages = nn.Sequential(*stages)
        self.num_features = prev_chs
        self.head = nn.ModuleDict(dict(
            global_pool=nn.AdaptiveAvgPool2d(1),
            norm=LayerNorm2d(self.num_features, eps=1e-6),
            flatten=nn.Flatten(1),
            drop=nn.Dropout(0.0),
            fc=nn.Linear(self.num_features, num_classes)))
        named_apply(partial(_init_weights, head_init_scale=head_init_scale), self)

    @torch.jit.ignore
    def set_grad_checkpointing(self, enable=True):
        for s in self.stages:
            s.grad_checkpointing = enable

    def forward_features(self, x):
        x = self.stem(x)
        x = self.stages(x)
        return x

    def forward_head(self, x, pre_logits: bool = False):
        x = self.head.global_pool(x)
        x = self.head.norm(x)
        x = self.head.flatten(x)
        x = self.head.drop(x)
        return x if pre_logits else self.head.fc(x)

    def forward(self, x):
        x = self.forward_features(x)
        x = self.forward_head(x)
        return x


@register_model
def convnextv2_tiny_test(**kwargs):
    return ConvNeXt(**kwargs)


torch.manual_seed(0)
model = create_model("convnextv2_tiny_test", head_init_scale=math.sqrt(2.0)).eval()
with torch.no_grad():
    for m in model.modules():
        if isinstance(m, GlobalResponseNorm):
            m.weight.normal_(0, 0.5)
            m.bias.normal_(0, 0.1)
check_gradients = True


def example_inputs():
    return torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
