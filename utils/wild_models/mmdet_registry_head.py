"""An anchor-based dense head written the way mmdetection writes one:
a `Registry` whose `register_module()` decorator fills a name -> class
dict, `build_from_cfg(cfg, registry, default_args)` popping `type` from a
copied config dict; `ConvModule` built from `conv_cfg`/`norm_cfg`/`act_cfg`
dicts (GN by `dict(type='GN', num_groups=..)`, the activation looked up
in its own registry); an `AnchorGenerator` with `strides`, `ratios`,
`scales` (from `octave_base_scale` and `scales_per_octave`),
`gen_base_anchors` per level, `_meshgrid` by repeat/view and
`grid_priors(featmap_sizes)`; a `DeltaXYWHBBoxCoder` whose `decode` adds
means/stds, clamps dw/dh by `wh_ratio_clip` (np.abs(np.log(...))) and
clips to `max_shape`; a RetinaHead-like `forward_single` mapped over the
FPN levels by `multi_apply(func, *args)` (map + zip), `get_bboxes` with
per-level `nms_pre` topk (torch.onnx-free), sigmoid scores and
`torch.cat` of the levels; `test_cfg` a ConfigDict-like attribute dict."""
import math
from functools import partial

import numpy as np
import torch
import torch.nn as nn


class ConfigDict(dict):
    def __getattr__(self, name):
        try:
            value = self[name]
        except KeyError:
            raise AttributeError(name)
        return ConfigDict(value) if isinstance(value, dict) else value


class Registry:
    def __init__(self, name):
        self._name = name
        self._module_dict = dict()

    def get(self, key):
        return self._module_dict.get(key, None)

    def _register_module(self, module_class, module_name=None, force=False):
        if module_name is None:
            module_name = module_class.__name__
        if isinstance(module_name, str):
            module_name = [module_name]
        for name in module_name:
            if not force and name in self._module_dict:
                raise KeyError(f"{name} is already registered in {self._name}")
            self._module_dict[name] = module_class

    def register_module(self, name=None, force=False, module=None):
        if module is not None:
            self._register_module(module_class=module, module_name=name, force=force)
            return module

        def _register(cls):
            self._register_module(module_class=cls, module_name=name, force=force)
            return cls
        return _register


def build_from_cfg(cfg, registry, default_args=None):
    args = cfg.copy()
    if default_args is not None:
        for name, value in default_args.items():
            args.setdefault(name, value)
    obj_type = args.pop("type")
    if isinstance(obj_type, str):
        obj_cls = registry.get(obj_type)
        if obj_cls is None:
            raise KeyError(f"{obj_type} is not in the {registry._name} registry")
    else:
        obj_cls = obj_type
    return obj_cls(**args)


HEADS = Registry("head")
BBOX_CODERS = Registry("bbox_coder")
PRIOR_GENERATORS = Registry("prior_generator")
ACTIVATION_LAYERS = Registry("activation layer")
for module in [nn.ReLU, nn.LeakyReLU, nn.SiLU, nn.GELU]:
    ACTIVATION_LAYERS.register_module(module=module)


def build_norm_layer(cfg, num_features):
    cfg_ = cfg.copy()
    layer_type = cfg_.pop("type")
    requires_grad = cfg_.pop("requires_grad", True)
    if layer_type == "GN":
        assert "num_groups" in cfg_
        layer = nn.GroupNorm(num_channels=num_features, **cfg_)
        abbr = "gn"
    elif layer_type == "BN":
        cfg_.setdefault("eps", 1e-5)
        layer = nn.BatchNorm2d(num_features, **cfg_)
        abbr = "bn"
    else:
        raise KeyError(f"Unrecognized norm type {layer_type}")
    for param in layer.parameters():
        param.requires_grad = requires_grad
    return abbr, layer


class ConvModule(nn.Module):
    _abbr_ = "conv_block"

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, bias="auto", conv_cfg=None,
                 norm_cfg=None, act_cfg=dict(type="ReLU"), order=("conv", "norm", "act")):
        super().__init__()
        assert conv_cfg is None or isinstance(conv_cfg, dict)
        self.order = order
        self.with_norm = norm_cfg is not None
        self.with_activation = act_cfg is not None
        if bias == "auto":
            bias = not self.with_norm
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding, bias=bias)
        if self.with_norm:
            self.norm_name, norm = build_norm_layer(norm_cfg, out_channels)
            self.add_module(self.norm_name, norm)
        else:
            self.norm_name = None
        if self.with_activation:
            act_cfg_ = act_cfg.copy()
            if act_cfg_["type"] not in ["Tanh", "PReLU", "Sigmoid", "HSigmoid", "Swish", "GELU"]:
                act_cfg_.setdefault("inplace", True)
            self.activate = build_from_cfg(act_cfg_, ACTIVATION_LAYERS)

    @property
    def norm(self):
        return getattr(self, self.norm_name) if self.norm_name else None

    def forward(self, x, activate=True, norm=True):
        for layer in self.order:
            if layer == "conv":
                x = self.conv(x)
            elif layer == "norm" and norm and self.with_norm:
                x = self.norm(x)
            elif layer == "act" and activate and self.with_activation:
                x = self.activate(x)
        return x


def multi_apply(func, *args, **kwargs):
    pfunc = partial(func, **kwargs) if kwargs else func
    map_results = map(pfunc, *args)
    return tuple(map(list, zip(*map_results)))


@PRIOR_GENERATORS.register_module()
class AnchorGenerator:
    def __init__(self, strides, ratios, scales=None, base_sizes=None, scale_major=True, octave_base_scale=None,
                 scales_per_octave=None, center_offset=0.):
        self.strides = [(s, s) if isinstance(s, int) else tuple(s) for s in strides]
        self.base_sizes = [min(stride) for stride in self.strides] if base_sizes is None else base_sizes
        if scales is not None:
            self.scales = torch.Tensor(scales)
        elif octave_base_scale is not None and scales_per_octave is not None:
            octave_scales = np.array([2 ** (i / scales_per_octave) for i in range(scales_per_octave)])
            self.scales = torch.Tensor(octave_scales * octave_base_scale)
        else:
            raise ValueError("Either scales or octave_base_scale with scales_per_octave should be set")
        self.octave_base_scale = octave_base_scale
        self.scales_per_octave = scales_per_octave
        self.ratios = torch.Tensor(ratios)
        self.scale_major = scale_major
        self.center_offset = center_offset
        self.base_anchors = self.gen_base_anchors()

    @property
    def num_base_priors(self):
        return [base_anchors.size(0) for base_anchors in self.base_anchors]

    @property
    def num_levels(self):
        return len(self.strides)

    def gen_base_anchors(self):
        multi_level_base_anchors = []
        for i, base_size in enumerate(self.base_sizes):
            multi_level_base_anchors.append(
                self.gen_single_level_base_anchors(base_size, scales=self.scales, ratios=self.ratios))
        return multi_level_base_anchors

    def gen_single_level_base_anchors(self, base_size, scales, ratios, center=None):
        w = base_size
        h = base_size
        if center is None:
            x_center = self.center_offset * w
            y_center = self.center_offset * h
        else:
            x_center, y_center = center
        h_ratios = torch.sqrt(ratios)
        w_ratios = 1 / h_ratios
        if self.scale_major:
            ws = (w * w_ratios[:, None] * scales[None, :]).view(-1)
            hs = (h * h_ratios[:, None] * scales[None, :]).view(-1)
        else:
            ws = (w * scales[:, None] * w_ratios[None, :]).view(-1)
            hs = (h * scales[:, None] * h_ratios[None, :]).view(-1)
        base_anchors = [x_center - 0.5 * ws, y_center - 0.5 * hs, x_center + 0.5 * ws, y_center + 0.5 * hs]
        return torch.stack(base_anchors, dim=-1)

    def _meshgrid(self, x, y, row_major=True):
        xx = x.repeat(y.shape[0])
        yy = y.view(-1, 1).repeat(1, x.shape[0]).view(-1)
        if row_major:
            return xx, yy
        return yy, xx

    def grid_priors(self, featmap_sizes, dtype=torch.float32, device="cpu"):
        assert self.num_levels == len(featmap_sizes)
        multi_level_anchors = []
        for i in range(self.num_levels):
            anchors = self.single_level_grid_priors(featmap_sizes[i], level_idx=i, dtype=dtype, device=device)
            multi_level_anchors.append(anchors)
        return multi_level_anchors

    def single_level_grid_priors(self, featmap_size, level_idx, dtype=torch.float32, device="cpu"):
        base_anchors = self.base_anchors[level_idx].to(device).to(dtype)
        feat_h, feat_w = featmap_size
        stride_w, stride_h = self.strides[level_idx]
        shift_x = torch.arange(0, feat_w, device=device).to(dtype) * stride_w
        shift_y = torch.arange(0, feat_h, device=device).to(dtype) * stride_h
        shift_xx, shift_yy = self._meshgrid(shift_x, shift_y)
        shifts = torch.stack([shift_xx, shift_yy, shift_xx, shift_yy], dim=-1)
        all_anchors = base_anchors[None, :, :] + shifts[:, None, :]
        return all_anchors.view(-1, 4)


@BBOX_CODERS.register_module()
class DeltaXYWHBBoxCoder:
    def __init__(self, target_means=(0., 0., 0., 0.), target_stds=(1., 1., 1., 1.), clip_border=True,
                 add_ctr_clamp=False, ctr_clamp=32):
        self.means = target_means
        self.stds = target_stds
        self.clip_border = clip_border
        self.add_ctr_clamp = add_ctr_clamp
        self.ctr_clamp = ctr_clamp

    def decode(self, bboxes, pred_bboxes, max_shape=None, wh_ratio_clip=16 / 1000):
        assert pred_bboxes.size(0) == bboxes.size(0)
        return delta2bbox(bboxes, pred_bboxes, self.means, self.stds, max_shape, wh_ratio_clip,
                          self.clip_border, self.add_ctr_clamp, self.ctr_clamp)


def delta2bbox(rois, deltas, means=(0., 0., 0., 0.), stds=(1., 1., 1., 1.), max_shape=None,
               wh_ratio_clip=16 / 1000, clip_border=True, add_ctr_clamp=False, ctr_clamp=32):
    num_bboxes, num_classes = deltas.size(0), deltas.size(1) // 4
    if num_bboxes == 0:
        return deltas
    deltas = deltas.reshape(-1, 4)
    means = deltas.new_tensor(means).view(1, -1)
    stds = deltas.new_tensor(stds).view(1, -1)
    denorm_deltas = deltas * stds + means
    dxy = denorm_deltas[:, :2]
    dwh = denorm_deltas[:, 2:]
    rois_ = rois.repeat(1, num_classes).reshape(-1, 4)
    pxy = ((rois_[:, :2] + rois_[:, 2:]) * 0.5)
    pwh = (rois_[:, 2:] - rois_[:, :2])
    dxy_wh = pwh * dxy
    max_ratio = np.abs(np.log(wh_ratio_clip))
    if add_ctr_clamp:
        dxy_wh = torch.clamp(dxy_wh, max=ctr_clamp, min=-ctr_clamp)
        dwh = torch.clamp(dwh, max=max_ratio)
    else:
        dwh = dwh.clamp(min=-max_ratio, max=max_ratio)
    gxy = pxy + dxy_wh
    gwh = pwh * dwh.exp()
    x1y1 = gxy - (gwh * 0.5)
    x2y2 = gxy + (gwh * 0.5)
    bboxes = torch.cat([x1y1, x2y2], dim=-1)
    if clip_border and max_shape is not None:
        bboxes[..., 0::2].clamp_(min=0, max=max_shape[1])
        bboxes[..., 1::2].clamp_(min=0, max=max_shape[0])
    return bboxes.reshape(num_bboxes, -1)


@HEADS.register_module()
class RetinaHead(nn.Module):
    def __init__(self, num_classes, in_channels, stacked_convs=2, feat_channels=16, conv_cfg=None,
                 norm_cfg=None, anchor_generator=None, bbox_coder=None, test_cfg=None, init_cfg=None):
        super().__init__()
        self.num_classes = num_classes
        self.cls_out_channels = num_classes
        self.in_channels = in_channels
        self.stacked_convs = stacked_convs
        self.feat_channels = feat_channels
        self.conv_cfg = conv_cfg
        self.norm_cfg = norm_cfg
        self.prior_generator = build_from_cfg(anchor_generator, PRIOR_GENERATORS)
        self.bbox_coder = build_from_cfg(bbox_coder, BBOX_CODERS)
        self.num_base_priors = self.prior_generator.num_base_priors[0]
        self.test_cfg = ConfigDict(test_cfg)
        self._init_layers()

    def _init_layers(self):
        self.relu = nn.ReLU(inplace=True)
        self.cls_convs = nn.ModuleList()
        self.reg_convs = nn.ModuleList()
        for i in range(self.stacked_convs):
            chn = self.in_channels if i == 0 else self.feat_channels
            self.cls_convs.append(ConvModule(chn, self.feat_channels, 3, stride=1, padding=1,
                                             conv_cfg=self.conv_cfg, norm_cfg=self.norm_cfg))
            self.reg_convs.append(ConvModule(chn, self.feat_channels, 3, stride=1, padding=1,
                                             conv_cfg=self.conv_cfg, norm_cfg=self.norm_cfg))
        self.retina_cls = nn.Conv2d(self.feat_channels, self.num_base_priors * self.cls_out_channels, 3,
                                    padding=1)
        self.retina_reg = nn.Conv2d(self.feat_channels, self.num_base_priors * 4, 3, padding=1)
        prior_prob = 0.01
        nn.init.constant_(self.retina_cls.bias, float(-np.log((1 - prior_prob) / prior_prob)))

    def forward_single(self, x):
        cls_feat = x
        reg_feat = x
        for cls_conv in self.cls_convs:
            cls_feat = cls_conv(cls_feat)
        for reg_conv in self.reg_convs:
            reg_feat = reg_conv(reg_feat)
        cls_score = self.retina_cls(cls_feat)
        bbox_pred = self.retina_reg(reg_feat)
        return cls_score, bbox_pred

    def forward(self, feats, img_shape):
        cls_scores, bbox_preds = multi_apply(self.forward_single, feats)
        return self.get_bboxes(cls_scores, bbox_preds, img_shape)

    def get_bboxes(self, cls_scores, bbox_preds, img_shape):
        assert len(cls_scores) == len(bbox_preds)
        num_levels = len(cls_scores)
        featmap_sizes = [cls_scores[i].shape[-2:] for i in range(num_levels)]
        mlvl_priors = self.prior_generator.grid_priors(featmap_sizes, dtype=cls_scores[0].dtype,
                                                       device=cls_scores[0].device)
        result_list = []
        for img_id in range(cls_scores[0].shape[0]):
            cls_score_list = [cls_scores[i][img_id].detach() for i in range(num_levels)]
            bbox_pred_list = [bbox_preds[i][img_id].detach() for i in range(num_levels)]
            result_list.append(self._get_bboxes_single(cls_score_list, bbox_pred_list, mlvl_priors, img_shape))
        return result_list

    def _get_bboxes_single(self, cls_score_list, bbox_pred_list, mlvl_priors, img_shape):
        cfg = self.test_cfg
        nms_pre = cfg.get("nms_pre", -1)
        mlvl_bboxes = []
        mlvl_scores = []
        mlvl_labels = []
        for level_idx, (cls_score, bbox_pred, priors) in enumerate(zip(cls_score_list, bbox_pred_list,
                                                                       mlvl_priors)):
            assert cls_score.size()[-2:] == bbox_pred.size()[-2:]
            bbox_pred = bbox_pred.permute(1, 2, 0).reshape(-1, 4)
            cls_score = cls_score.permute(1, 2, 0).reshape(-1, self.cls_out_channels)
            scores = cls_score.sigmoid()
            max_scores, labels = scores.max(dim=1)
            if 0 < nms_pre < max_scores.shape[0]:
                _, topk_inds = max_scores.topk(nms_pre)
                priors = priors[topk_inds, :]
                bbox_pred = bbox_pred[topk_inds, :]
                max_scores = max_scores[topk_inds]
                labels = labels[topk_inds]
            bboxes = self.bbox_coder.decode(priors, bbox_pred, max_shape=img_shape)
            mlvl_bboxes.append(bboxes)
            mlvl_scores.append(max_scores)
            mlvl_labels.append(labels)
        bboxes = torch.cat(mlvl_bboxes)
        scores = torch.cat(mlvl_scores)
        labels = torch.cat(mlvl_labels)
        keep = scores > cfg.score_thr
        order = scores.argsort(descending=True)
        return dict(bboxes=bboxes[order], scores=scores[order], labels=labels[order], keep=keep[order])


head_cfg = dict(
    type="RetinaHead", num_classes=5, in_channels=8, stacked_convs=2, feat_channels=16,
    norm_cfg=dict(type="GN", num_groups=4, requires_grad=True),
    anchor_generator=dict(type="AnchorGenerator", octave_base_scale=4, scales_per_octave=3,
                          ratios=[0.5, 1.0, 2.0], strides=[8, 16, 32]),
    bbox_coder=dict(type="DeltaXYWHBBoxCoder", target_means=[.0, .0, .0, .0], target_stds=[0.1, 0.1, 0.2, 0.2]),
    test_cfg=dict(nms_pre=50, min_bbox_size=0, score_thr=0.02, nms=dict(type="nms", iou_threshold=0.5)))

torch.manual_seed(0)
model = build_from_cfg(head_cfg, HEADS).eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    feats = [torch.randn(2, 8, 64 // s, 64 // s, generator=g) for s in (8, 16, 32)]
    return (feats, (64, 64))
