"""CornerNet corner pooling and decoding in plain torch, as mmcv's
CornerPool falls back to (`torch.cummax` on a flipped tensor for top and
left pooling, plain `cummax` for bottom and right) and as CornerNet-Lite's
`_decode` post-processes: pool modules chosen by a `pool_type` string from
a dict of (dim, flip) pairs, top-left and bottom-right corner pooling
branches summed with a 1x1 skip, heatmaps with `_nms` by a 3x3 max pool
equality, `_topk` over the flattened (class, y, x) scores with integer
division and modulo to recover class and position, `_tranpose_and_gather_feat`
for embeddings and offsets, every top-left paired with every bottom-right
by `expand`, boxes rejected where classes differ, the embedding distance
exceeds a threshold or br < tl, by setting their scores to -1, and a final
topk over the pairs."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class CornerPool(nn.Module):
    pool_functions = {
        "bottom": (2, False),
        "left": (3, True),
        "right": (3, False),
        "top": (2, True),
    }

    def __init__(self, mode):
        super().__init__()
        assert mode in self.pool_functions
        self.mode = mode

    def forward(self, x):
        dim, flip = self.pool_functions[self.mode]
        if flip:
            x = x.flip(dim)
        pool_tensor, _ = torch.cummax(x, dim=dim)
        if flip:
            pool_tensor = pool_tensor.flip(dim)
        return pool_tensor


def conv_bn_relu(cin, cout, k=3, relu=True):
    layers = [nn.Conv2d(cin, cout, k, padding=k // 2, bias=False), nn.BatchNorm2d(cout)]
    if relu:
        layers.append(nn.ReLU(inplace=True))
    return nn.Sequential(*layers)


class CornerPoolBranch(nn.Module):
    def __init__(self, dim, pool1, pool2):
        super().__init__()
        self.p1_conv1 = conv_bn_relu(dim, 32)
        self.p2_conv1 = conv_bn_relu(dim, 32)
        self.p_conv1 = nn.Conv2d(32, dim, 3, padding=1, bias=False)
        self.p_bn1 = nn.BatchNorm2d(dim)
        self.conv1 = nn.Conv2d(dim, dim, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(dim)
        self.conv2 = conv_bn_relu(dim, dim)
        self.pool1 = CornerPool(pool1)
        self.pool2 = CornerPool(pool2)

    def forward(self, x):
        pool1 = self.pool1(self.p1_conv1(x))
        pool2 = self.pool2(self.p2_conv1(x))
        p_bn1 = self.p_bn1(self.p_conv1(pool1 + pool2))
        bn1 = self.bn1(self.conv1(x))
        return self.conv2(F.relu(p_bn1 + bn1, inplace=True))


def make_head(dim, out):
    return nn.Sequential(conv_bn_relu(dim, dim, relu=True), nn.Conv2d(dim, out, 1))


def _nms(heat, kernel=3):
    pad = (kernel - 1) // 2
    hmax = F.max_pool2d(heat, (kernel, kernel), stride=1, padding=pad)
    keep = (hmax == heat).float()
    return heat * keep


def _gather_feat(feat, ind):
    dim = feat.size(2)
    ind = ind.unsqueeze(2).expand(ind.size(0), ind.size(1), dim)
    return feat.gather(1, ind)


def _tranpose_and_gather_feat(feat, ind):
    feat = feat.permute(0, 2, 3, 1).contiguous()
    feat = feat.view(feat.size(0), -1, feat.size(3))
    return _gather_feat(feat, ind)


def _topk(scores, K=20):
    batch, cat, height, width = scores.size()
    topk_scores, topk_inds = torch.topk(scores.view(batch, -1), K)
    topk_clses = (topk_inds // (height * width)).int()
    topk_inds = topk_inds % (height * width)
    topk_ys = (topk_inds // width).int().float()
    topk_xs = (topk_inds % width).int().float()
    return topk_scores, topk_inds, topk_clses, topk_ys, topk_xs


def _decode(tl_heat, br_heat, tl_tag, br_tag, tl_regr, br_regr, K=8, kernel=3, ae_threshold=1, num_dets=16):
    batch, cat, height, width = tl_heat.size()
    tl_heat = torch.sigmoid(tl_heat)
    br_heat = torch.sigmoid(br_heat)

    tl_heat = _nms(tl_heat, kernel=kernel)
    br_heat = _nms(br_heat, kernel=kernel)

    tl_scores, tl_inds, tl_clses, tl_ys, tl_xs = _topk(tl_heat, K=K)
    br_scores, br_inds, br_clses, br_ys, br_xs = _topk(br_heat, K=K)

    tl_ys = tl_ys.view(batch, K, 1).expand(batch, K, K)
    tl_xs = tl_xs.view(batch, K, 1).expand(batch, K, K)
    br_ys = br_ys.view(batch, 1, K).expand(batch, K, K)
    br_xs = br_xs.view(batch, 1, K).expand(batch, K, K)

    if tl_regr is not None and br_regr is not None:
        tl_regr = _tranpose_and_gather_feat(tl_regr, tl_inds)
        tl_regr = tl_regr.view(batch, K, 1, 2)
        br_regr = _tranpose_and_gather_feat(br_regr, br_inds)
        br_regr = br_regr.view(batch, 1, K, 2)

        tl_xs = tl_xs + tl_regr[..., 0]
        tl_ys = tl_ys + tl_regr[..., 1]
        br_xs = br_xs + br_regr[..., 0]
        br_ys = br_ys + br_regr[..., 1]

    # all possible boxes based on top k corners (ignoring class)
    bboxes = torch.stack((tl_xs, tl_ys, br_xs, br_ys), dim=3)

    tl_tag = _tranpose_and_gather_feat(tl_tag, tl_inds)
    tl_tag = tl_tag.view(batch, K, 1)
    br_tag = _tranpose_and_gather_feat(br_tag, br_inds)
    br_tag = br_tag.view(batch, 1, K)
    dists = torch.abs(tl_tag - br_tag)

    tl_scores = tl_scores.view(batch, K, 1).expand(batch, K, K)
    br_scores = br_scores.view(batch, 1, K).expand(batch, K, K)
    scores = (tl_scores + br_scores) / 2

    # reject boxes based on classes
    tl_clses = tl_clses.view(batch, K, 1).expand(batch, K, K)
    br_clses = br_clses.view(batch, 1, K).expand(batch, K, K)
    cls_inds = tl_clses != br_clses

    # reject boxes based on distances
    dist_inds = dists > ae_threshold

    # reject boxes based on widths and heights
    width_inds = br_xs < tl_xs
    height_inds = br_ys < tl_ys

    scores[cls_inds] = -1
    scores[dist_inds] = -1
    scores[width_inds] = -1
    scores[height_inds] = -1

    scores = scores.view(batch, -1)
    scores, inds = torch.topk(scores, num_dets)
    scores = scores.unsqueeze(2)

    bboxes = bboxes.view(batch, -1, 4)
    bboxes = _gather_feat(bboxes, inds)

    clses = tl_clses.contiguous().view(batch, -1, 1)
    clses = _gather_feat(clses, inds).float()

    tl_scores = tl_scores.contiguous().view(batch, -1, 1)
    tl_scores = _gather_feat(tl_scores, inds).float()
    br_scores = br_scores.contiguous().view(batch, -1, 1)
    br_scores = _gather_feat(br_scores, inds).float()

    return torch.cat([bboxes, scores, tl_scores, br_scores, clses], dim=2)


class CornerNetHead(nn.Module):
    def __init__(self, num_classes=3, dim=32):
        super().__init__()
        self.backbone = nn.Sequential(conv_bn_relu(3, dim), nn.MaxPool2d(2), conv_bn_relu(dim, dim))
        self.tl_pool = CornerPoolBranch(dim, "top", "left")
        self.br_pool = CornerPoolBranch(dim, "bottom", "right")
        self.tl_heat = make_head(dim, num_classes)
        self.br_heat = make_head(dim, num_classes)
        self.tl_tag = make_head(dim, 1)
        self.br_tag = make_head(dim, 1)
        self.tl_regr = make_head(dim, 2)
        self.br_regr = make_head(dim, 2)
        for heat in (self.tl_heat, self.br_heat):
            heat[-1].bias.data.fill_(-2.19)

    def forward(self, image):
        x = self.backbone(image)
        tl_cnv, br_cnv = self.tl_pool(x), self.br_pool(x)
        outs = [self.tl_heat(tl_cnv), self.br_heat(br_cnv), self.tl_tag(tl_cnv), self.br_tag(br_cnv),
                self.tl_regr(tl_cnv), self.br_regr(br_cnv)]
        detections = _decode(*outs)
        return detections, outs[0], outs[1]


torch.manual_seed(0)
model = CornerNetHead().eval()
check_gradients = True


def example_inputs():
    return (torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1)),)
