"""Mask2Former's pixel decoder and masked-attention decoder as the
reference (on detectron2) writes them, with detectron2's helpers written
out: a ShapeSpec namedtuple per input feature and the features sorted by
stride from a dict, a @configurable decorator that builds __init__'s
arguments from a from_config classmethod, detectron2's Conv2d subclass
taking norm and activation keyword arguments (with its
`torch.jit.is_scripting()` / warnings.catch_warnings guard for empty
inputs in training), c2_xavier_fill (kaiming_uniform_ with a=1), an FPN
pixel decoder (lateral and output convs in reversed order, nearest
F.interpolate(size=...)), mask features, then a transformer decoder
whose queries attend to one level at a time with a mask from the
previous prediction: masks by einsum("bqc,bchw->bqhw"), resized by
bilinear F.interpolate, turned into a boolean attention mask by
`sigmoid().flatten(2).unsqueeze(1).repeat(1, nheads, 1, 1).flatten(0, 1)
< 0.5`, rows that mask everything re-opened with
`attn_mask[torch.where(attn_mask.sum(-1) == attn_mask.shape[-1])] = False`,
detached, and passed to nn.MultiheadAttention; the auxiliary predictions
collected as a list of dicts."""
import functools
import inspect
import warnings
from collections import namedtuple

import torch
from torch import nn
from torch.nn import functional as F


class ShapeSpec(namedtuple("_ShapeSpec", ["channels", "height", "width", "stride"])):
    def __new__(cls, channels=None, height=None, width=None, stride=None):
        return super().__new__(cls, channels, height, width, stride)


def configurable(init_func):
    assert inspect.isfunction(init_func) and init_func.__name__ == "__init__"

    @functools.wraps(init_func)
    def wrapped(self, *args, **kwargs):
        if args and isinstance(args[0], dict) and "cfg" in args[0]:
            from_config_func = type(self).from_config
            explicit_args = from_config_func(*args, **kwargs)
            init_func(self, **explicit_args)
        else:
            init_func(self, *args, **kwargs)
    return wrapped


def c2_xavier_fill(module: nn.Module) -> None:
    nn.init.kaiming_uniform_(module.weight, a=1)
    if module.bias is not None:
        nn.init.constant_(module.bias, 0)


class Conv2d(torch.nn.Conv2d):
    def __init__(self, *args, **kwargs):
        norm = kwargs.pop("norm", None)
        activation = kwargs.pop("activation", None)
        super().__init__(*args, **kwargs)
        self.norm = norm
        self.activation = activation

    def forward(self, x):
        if not torch.jit.is_scripting():
            with warnings.catch_warnings(record=True):
                if x.numel() == 0 and self.training:
                    assert not isinstance(self.norm, torch.nn.SyncBatchNorm), \
                        "SyncBatchNorm does not support empty inputs!"
        x = F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)
        if self.norm is not None:
            x = self.norm(x)
        if self.activation is not None:
            x = self.activation(x)
        return x


class BasePixelDecoder(nn.Module):
    @configurable
    def __init__(self, input_shape, *, conv_dim, mask_dim, norm=None):
        super().__init__()
        input_shape = sorted(input_shape.items(), key=lambda x: x[1].stride)
        self.in_features = [k for k, v in input_shape]
        feature_channels = [v.channels for k, v in input_shape]
        lateral_convs, output_convs = [], []
        use_bias = norm == ""
        for idx, in_channels in enumerate(feature_channels):
            if idx == len(self.in_features) - 1:
                output_norm = nn.GroupNorm(8, conv_dim)
                output_conv = Conv2d(in_channels, conv_dim, kernel_size=3, stride=1, padding=1, bias=use_bias,
                                     norm=output_norm, activation=F.relu)
                c2_xavier_fill(output_conv)
                self.add_module("layer_{}".format(idx + 1), output_conv)
                lateral_convs.append(None)
                output_convs.append(output_conv)
            else:
                lateral_norm = nn.GroupNorm(8, conv_dim)
                output_norm = nn.GroupNorm(8, conv_dim)
                lateral_conv = Conv2d(in_channels, conv_dim, kernel_size=1, bias=use_bias, norm=lateral_norm)
                output_conv = Conv2d(conv_dim, conv_dim, kernel_size=3, stride=1, padding=1, bias=use_bias,
                                     norm=output_norm, activation=F.relu)
                c2_xavier_fill(lateral_conv)
                c2_xavier_fill(output_conv)
                self.add_module("adapter_{}".format(idx + 1), lateral_conv)
                self.add_module("layer_{}".format(idx + 1), output_conv)
                lateral_convs.append(lateral_conv)
                output_convs.append(output_conv)
        self.lateral_convs = lateral_convs[::-1]
        self.output_convs = output_convs[::-1]
        self.mask_dim = mask_dim
        self.mask_features = Conv2d(conv_dim, mask_dim, kernel_size=3, stride=1, padding=1)
        c2_xavier_fill(self.mask_features)
        self.maskformer_num_feature_levels = 3

    @classmethod
    def from_config(cls, cfg, input_shape):
        ret = {}
        ret["input_shape"] = {k: v for k, v in input_shape.items() if k in cfg["cfg"]["IN_FEATURES"]}
        ret["conv_dim"] = cfg["cfg"]["CONVS_DIM"]
        ret["mask_dim"] = cfg["cfg"]["MASK_DIM"]
        ret["norm"] = cfg["cfg"]["NORM"]
        return ret

    def forward_features(self, features):
        multi_scale_features = []
        num_cur_levels = 0
        for idx, f in enumerate(self.in_features[::-1]):
            x = features[f]
            lateral_conv = self.lateral_convs[idx]
            output_conv = self.output_convs[idx]
            if lateral_conv is None:
                y = output_conv(x)
            else:
                cur_fpn = lateral_conv(x)
                y = cur_fpn + F.interpolate(y, size=cur_fpn.shape[-2:], mode="nearest")
                y = output_conv(y)
            if num_cur_levels < self.maskformer_num_feature_levels:
                multi_scale_features.append(y)
                num_cur_levels += 1
        return self.mask_features(y), None, multi_scale_features


class MLP(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim, num_layers):
        super().__init__()
        self.num_layers = num_layers
        h = [hidden_dim] * (num_layers - 1)
        self.layers = nn.ModuleList(nn.Linear(n, k) for n, k in zip([input_dim] + h, h + [output_dim]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = F.relu(layer(x)) if i < self.num_layers - 1 else layer(x)
        return x


class MultiScaleMaskedTransformerDecoder(nn.Module):
    def __init__(self, in_channels=16, num_classes=5, hidden_dim=16, num_queries=6, nheads=2, dec_layers=3,
                 mask_dim=16):
        super().__init__()
        self.num_heads = nheads
        self.num_layers = dec_layers
        self.cross_attn = nn.ModuleList([nn.MultiheadAttention(hidden_dim, nheads) for _ in range(dec_layers)])
        self.self_attn = nn.ModuleList([nn.MultiheadAttention(hidden_dim, nheads) for _ in range(dec_layers)])
        self.ffn = nn.ModuleList([nn.Sequential(nn.Linear(hidden_dim, 32), nn.ReLU(), nn.Linear(32, hidden_dim))
                                  for _ in range(dec_layers)])
        self.norms = nn.ModuleList([nn.LayerNorm(hidden_dim) for _ in range(3 * dec_layers)])
        self.decoder_norm = nn.LayerNorm(hidden_dim)
        self.num_queries = num_queries
        self.query_feat = nn.Embedding(num_queries, hidden_dim)
        self.query_embed = nn.Embedding(num_queries, hidden_dim)
        self.num_feature_levels = 3
        self.level_embed = nn.Embedding(self.num_feature_levels, hidden_dim)
        self.input_proj = nn.ModuleList([nn.Sequential() for _ in range(self.num_feature_levels)])
        self.class_embed = nn.Linear(hidden_dim, num_classes + 1)
        self.mask_embed = MLP(hidden_dim, hidden_dim, mask_dim, 3)

    def forward(self, x, mask_features, mask=None):
        assert len(x) == self.num_feature_levels
        src, size_list = [], []
        for i in range(self.num_feature_levels):
            size_list.append(x[i].shape[-2:])
            src.append(self.input_proj[i](x[i]).flatten(2) + self.level_embed.weight[i][None, :, None])
            src[-1] = src[-1].permute(2, 0, 1)
        _, bs, _ = src[0].shape
        query_embed = self.query_embed.weight.unsqueeze(1).repeat(1, bs, 1)
        output = self.query_feat.weight.unsqueeze(1).repeat(1, bs, 1)
        predictions_class, predictions_mask = [], []
        outputs_class, outputs_mask, attn_mask = self.forward_prediction_heads(output, mask_features,
                                                                              attn_mask_target_size=size_list[0])
        predictions_class.append(outputs_class)
        predictions_mask.append(outputs_mask)
        for i in range(self.num_layers):
            level_index = i % self.num_feature_levels
            attn_mask[torch.where(attn_mask.sum(-1) == attn_mask.shape[-1])] = False
            q = output + query_embed
            output = output + self.cross_attn[i](q, src[level_index], src[level_index], attn_mask=attn_mask)[0]
            output = self.norms[3 * i](output)
            q = output + query_embed
            output = self.norms[3 * i + 1](output + self.self_attn[i](q, q, output)[0])
            output = self.norms[3 * i + 2](output + self.ffn[i](output))
            outputs_class, outputs_mask, attn_mask = self.forward_prediction_heads(
                output, mask_features, attn_mask_target_size=size_list[(i + 1) % self.num_feature_levels])
            predictions_class.append(outputs_class)
            predictions_mask.append(outputs_mask)
        out = {"pred_logits": predictions_class[-1], "pred_masks": predictions_mask[-1],
               "aux_outputs": self._set_aux_loss(predictions_class, predictions_mask)}
        return out

    def forward_prediction_heads(self, output, mask_features, attn_mask_target_size):
        decoder_output = self.decoder_norm(output)
        decoder_output = decoder_output.transpose(0, 1)
        outputs_class = self.class_embed(decoder_output)
        mask_embed = self.mask_embed(decoder_output)
        outputs_mask = torch.einsum("bqc,bchw->bqhw", mask_embed, mask_features)
        attn_mask = F.interpolate(outputs_mask, size=attn_mask_target_size, mode="bilinear", align_corners=False)
        attn_mask = (attn_mask.sigmoid().flatten(2).unsqueeze(1).repeat(1, self.num_heads, 1, 1).flatten(0, 1)
                     < 0.5).bool()
        attn_mask = attn_mask.detach()
        return outputs_class, outputs_mask, attn_mask

    @torch.jit.unused
    def _set_aux_loss(self, outputs_class, outputs_seg_masks):
        return [{"pred_logits": a, "pred_masks": b} for a, b in zip(outputs_class[:-1], outputs_seg_masks[:-1])]


class MaskFormerHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.ModuleDict({
            "res2": nn.Sequential(nn.Conv2d(3, 16, 3, 4, 1), nn.ReLU()),
            "res3": nn.Sequential(nn.Conv2d(16, 24, 3, 2, 1), nn.ReLU()),
            "res4": nn.Sequential(nn.Conv2d(24, 32, 3, 2, 1), nn.ReLU()),
            "res5": nn.Sequential(nn.Conv2d(32, 48, 3, 2, 1), nn.ReLU())})
        shapes = {"res2": ShapeSpec(16, stride=4), "res3": ShapeSpec(24, stride=8),
                  "res4": ShapeSpec(32, stride=16), "res5": ShapeSpec(48, stride=32)}
        cfg = {"cfg": {"IN_FEATURES": ["res2", "res3", "res4", "res5"], "CONVS_DIM": 16, "MASK_DIM": 16,
                       "NORM": "GN"}}
        self.pixel_decoder = BasePixelDecoder(cfg, shapes)
        self.predictor = MultiScaleMaskedTransformerDecoder()

    def forward(self, images):
        features = {}
        x = images
        for name, stage in self.backbone.items():
            x = stage(x)
            features[name] = x
        mask_features, _, multi_scale_features = self.pixel_decoder.forward_features(features)
        return self.predictor(multi_scale_features, mask_features)


torch.manual_seed(0)
model = MaskFormerHead().eval()
check_gradients = True


def example_inputs():
    return torch.randn(2, 3, 64, 64, generator=torch.Generator().manual_seed(1))
