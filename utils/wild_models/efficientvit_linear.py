"""EfficientViT (MIT Han Lab) as `efficientvit/models/nn` writes it:
`ConvLayer`s built from `val2tuple`/`get_same_padding` helpers with an
activation looked up by name in a `REGISTERED_ACT_DICT`, `DSConv` and
`MBConv` with inverted bottlenecks, `LiteMLA` multi-scale ReLU linear
attention (aggregating q/k/v with depthwise 5x5 grouped convs, heads by
`reshape` and `transpose`, the value padded with ones by `F.pad(v, (0, 1),
value=1)` so one matmul gives numerator and denominator, division
with an `eps`, computed in float32 under `autocast(enabled=False)`),
`EfficientViTBlock` as context + local modules wrapped in `ResidualBlock`
with `IdentityLayer` shortcuts, and an `OpSequential` that skips `None`s."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda.amp import autocast


def val2list(x, repeat_time=1):
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x for _ in range(repeat_time)]


def val2tuple(x, min_len=1, idx_repeat=-1):
    x = val2list(x)
    if len(x) > 0:
        x[idx_repeat:idx_repeat] = [x[idx_repeat] for _ in range(min_len - len(x))]
    return tuple(x)


def get_same_padding(kernel_size):
    if isinstance(kernel_size, tuple):
        return tuple([get_same_padding(ks) for ks in kernel_size])
    assert kernel_size % 2 > 0, "kernel size should be odd number"
    return kernel_size // 2


REGISTERED_ACT_DICT = {"relu": nn.ReLU, "relu6": nn.ReLU6, "hswish": nn.Hardswish, "silu": nn.SiLU}
REGISTERED_NORM_DICT = {"bn2d": nn.BatchNorm2d, "ln": nn.LayerNorm}


def build_act(name, **kwargs):
    if name in REGISTERED_ACT_DICT:
        return REGISTERED_ACT_DICT[name](**kwargs)
    return None


def build_norm(name="bn2d", num_features=None, **kwargs):
    if name in REGISTERED_NORM_DICT:
        return REGISTERED_NORM_DICT[name](num_features, **kwargs)
    return None


class ConvLayer(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, dilation=1, groups=1,
                 use_bias=False, dropout=0, norm="bn2d", act_func="relu"):
        super().__init__()
        padding = get_same_padding(kernel_size)
        padding *= dilation
        self.dropout = nn.Dropout2d(dropout, inplace=False) if dropout > 0 else None
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size=(kernel_size, kernel_size),
                              stride=(stride, stride), padding=padding, dilation=(dilation, dilation),
                              groups=groups, bias=use_bias)
        self.norm = build_norm(norm, num_features=out_channels)
        self.act = build_act(act_func)

    def forward(self, x):
        if self.dropout is not None:
            x = self.dropout(x)
        x = self.conv(x)
        if self.norm:
            x = self.norm(x)
        if self.act:
            x = self.act(x)
        return x


class DSConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, use_bias=False,
                 norm=("bn2d", "bn2d"), act_func=("relu6", None)):
        super().__init__()
        use_bias = val2tuple(use_bias, 2)
        norm = val2tuple(norm, 2)
        act_func = val2tuple(act_func, 2)
        self.depth_conv = ConvLayer(in_channels, in_channels, kernel_size, stride, groups=in_channels,
                                    norm=norm[0], act_func=act_func[0], use_bias=use_bias[0])
        self.point_conv = ConvLayer(in_channels, out_channels, 1, norm=norm[1], act_func=act_func[1],
                                    use_bias=use_bias[1])

    def forward(self, x):
        return self.point_conv(self.depth_conv(x))


class MBConv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, stride=1, mid_channels=None, expand_ratio=4,
                 use_bias=False, norm=("bn2d", "bn2d", "bn2d"), act_func=("relu6", "relu6", None)):
        super().__init__()
        use_bias = val2tuple(use_bias, 3)
        norm = val2tuple(norm, 3)
        act_func = val2tuple(act_func, 3)
        mid_channels = mid_channels or round(in_channels * expand_ratio)
        self.inverted_conv = ConvLayer(in_channels, mid_channels, 1, stride=1, norm=norm[0], act_func=act_func[0],
                                       use_bias=use_bias[0])
        self.depth_conv = ConvLayer(mid_channels, mid_channels, kernel_size, stride=stride, groups=mid_channels,
                                    norm=norm[1], act_func=act_func[1], use_bias=use_bias[1])
        self.point_conv = ConvLayer(mid_channels, out_channels, 1, norm=norm[2], act_func=act_func[2],
                                    use_bias=use_bias[2])

    def forward(self, x):
        return self.point_conv(self.depth_conv(self.inverted_conv(x)))


class LiteMLA(nn.Module):
    def __init__(self, in_channels, out_channels, heads=None, heads_ratio=1.0, dim=8, use_bias=False,
                 norm=(None, "bn2d"), act_func=(None, None), kernel_func="relu", scales=(5,), eps=1.0e-15):
        super().__init__()
        self.eps = eps
        heads = int(in_channels // dim * heads_ratio) if heads is None else heads
        total_dim = heads * dim
        use_bias = val2tuple(use_bias, 2)
        norm = val2tuple(norm, 2)
        act_func = val2tuple(act_func, 2)
        self.dim = dim
        self.qkv = ConvLayer(in_channels, 3 * total_dim, 1, use_bias=use_bias[0], norm=norm[0], act_func=act_func[0])
        self.aggreg = nn.ModuleList([
            nn.Sequential(
                nn.Conv2d(3 * total_dim, 3 * total_dim, scale, padding=get_same_padding(scale),
                          groups=3 * total_dim, bias=use_bias[0]),
                nn.Conv2d(3 * total_dim, 3 * total_dim, 1, groups=3 * heads, bias=use_bias[0]),
            )
            for scale in scales
        ])
        self.kernel_func = build_act(kernel_func, inplace=False)
        self.proj = ConvLayer(total_dim * (1 + len(scales)), out_channels, 1, use_bias=use_bias[1],
                              norm=norm[1], act_func=act_func[1])

    @autocast(enabled=False)
    def relu_linear_att(self, qkv):
        B, _, H, W = list(qkv.size())
        if qkv.dtype == torch.float16:
            qkv = qkv.float()
        qkv = torch.reshape(qkv, (B, -1, 3 * self.dim, H * W))
        qkv = torch.transpose(qkv, -1, -2)
        q, k, v = (qkv[..., 0: self.dim], qkv[..., self.dim: 2 * self.dim], qkv[..., 2 * self.dim:])
        q = self.kernel_func(q)
        k = self.kernel_func(k)
        trans_k = k.transpose(-1, -2)
        v = F.pad(v, (0, 1), mode="constant", value=1)
        kv = torch.matmul(trans_k, v)
        out = torch.matmul(q, kv)
        out = out[..., :-1] / (out[..., -1:] + self.eps)
        out = torch.transpose(out, -1, -2)
        out = torch.reshape(out, (B, -1, H, W))
        return out

    def forward(self, x):
        qkv = self.qkv(x)
        multi_scale_qkv = [qkv]
        for op in self.aggreg:
            multi_scale_qkv.append(op(qkv))
        multi_scale_qkv = torch.cat(multi_scale_qkv, dim=1)
        out = self.relu_linear_att(multi_scale_qkv)
        return self.proj(out)


class IdentityLayer(nn.Module):
    def forward(self, x):
        return x


class ResidualBlock(nn.Module):
    def __init__(self, main, shortcut, post_act=None, pre_norm=None):
        super().__init__()
        self.pre_norm = pre_norm
        self.main = main
        self.shortcut = shortcut
        self.post_act = build_act(post_act)

    def forward_main(self, x):
        if self.pre_norm is None:
            return self.main(x)
        return self.main(self.pre_norm(x))

    def forward(self, x):
        if self.main is None:
            res = x
        elif self.shortcut is None:
            res = self.forward_main(x)
        else:
            res = self.forward_main(x) + self.shortcut(x)
            if self.post_act:
                res = self.post_act(res)
        return res


class EfficientViTBlock(nn.Module):
    def __init__(self, in_channels, heads_ratio=1.0, dim=8, expand_ratio=4, norm="bn2d", act_func="hswish"):
        super().__init__()
        self.context_module = ResidualBlock(
            LiteMLA(in_channels=in_channels, out_channels=in_channels, heads_ratio=heads_ratio, dim=dim,
                    norm=(None, norm)), IdentityLayer())
        local_module = MBConv(in_channels=in_channels, out_channels=in_channels, expand_ratio=expand_ratio,
                              use_bias=(True, True, False), norm=(None, None, norm), act_func=(act_func, act_func, None))
        self.local_module = ResidualBlock(local_module, IdentityLayer())

    def forward(self, x):
        return self.local_module(self.context_module(x))


class OpSequential(nn.Module):
    def __init__(self, op_list):
        super().__init__()
        valid_op_list = []
        for op in op_list:
            if op is not None:
                valid_op_list.append(op)
        self.op_list = nn.ModuleList(valid_op_list)

    def forward(self, x):
        for op in self.op_list:
            x = op(x)
        return x


class EfficientViTBackbone(nn.Module):
    def __init__(self, width_list=(8, 16, 32), depth_list=(1, 1, 2), in_channels=3, dim=8, expand_ratio=4,
                 norm="bn2d", act_func="hswish", n_classes=10):
        super().__init__()
        self.input_stem = OpSequential([
            ConvLayer(in_channels, width_list[0], stride=2, norm=norm, act_func=act_func),
            ResidualBlock(DSConv(width_list[0], width_list[0], norm=norm, act_func=(act_func, None)), IdentityLayer()),
            None,
        ])
        in_channels = width_list[0]
        self.stages = nn.ModuleList()
        for w, d in zip(width_list[1:2], depth_list[1:2]):
            stage = []
            for i in range(d):
                stride = 2 if i == 0 else 1
                block = MBConv(in_channels, w, stride=stride, expand_ratio=expand_ratio, norm=norm,
                               act_func=(act_func, act_func, None))
                stage.append(ResidualBlock(block, IdentityLayer() if stride == 1 else None))
                in_channels = w
            self.stages.append(OpSequential(stage))
        for w, d in zip(width_list[2:], depth_list[2:]):
            stage = [ResidualBlock(MBConv(in_channels, w, stride=2, expand_ratio=expand_ratio, norm=norm,
                                          act_func=(act_func, act_func, None)), None)]
            in_channels = w
            for _ in range(d):
                stage.append(EfficientViTBlock(in_channels, dim=dim, expand_ratio=expand_ratio, norm=norm,
                                               act_func=act_func))
            self.stages.append(OpSequential(stage))
        self.head = nn.Linear(in_channels, n_classes)

    def forward(self, x):
        output_dict = {"input": x}
        output_dict["stage0"] = x = self.input_stem(x)
        for stage_id, stage in enumerate(self.stages, 1):
            output_dict["stage%d" % stage_id] = x = stage(x)
        output_dict["stage_final"] = x
        output_dict["logits"] = self.head(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))
        return output_dict


torch.manual_seed(0)
model = EfficientViTBackbone().eval()
check_gradients = True


def example_inputs():
    return (torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1)),)
