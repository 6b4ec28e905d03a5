"""SSD300 training as ssd.pytorch writes it, scaled down: PriorBox
generating default boxes in `__init__` by `itertools.product` and
`math.sqrt` (clamped), an `L2Norm` layer with a learned per-channel scale,
loc/conf heads whose outputs are `permute(0, 2, 3, 1).contiguous()`d and
concatenated from `o.view(o.size(0), -1)`, and MultiBoxLoss: per-image
`match` by a jaccard overlap of broadcast `intersect`, the best prior per
truth forced by `index_fill_(0, best_prior_idx, 2)` and a Python loop
writing `best_truth_idx[best_prior_idx[j]] = j`, background set by a
boolean index, `encode` with variances and `torch.log`, positives picked by
an expanded boolean mask (`loc_data[pos_idx].view(-1, 4)`), hard negative
mining by `log_sum_exp` minus `gather` and the double sort
(`loss_idx.sort`, then `idx_rank` by sorting the indices) against
`negpos_ratio * num_pos` clamped, and both losses divided by
`num_pos.data.sum()`."""
import itertools
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def point_form(boxes):
    return torch.cat((boxes[:, :2] - boxes[:, 2:] / 2, boxes[:, :2] + boxes[:, 2:] / 2), 1)


def intersect(box_a, box_b):
    A, B = box_a.size(0), box_b.size(0)
    max_xy = torch.min(box_a[:, 2:].unsqueeze(1).expand(A, B, 2), box_b[:, 2:].unsqueeze(0).expand(A, B, 2))
    min_xy = torch.max(box_a[:, :2].unsqueeze(1).expand(A, B, 2), box_b[:, :2].unsqueeze(0).expand(A, B, 2))
    inter = torch.clamp((max_xy - min_xy), min=0)
    return inter[:, :, 0] * inter[:, :, 1]


def jaccard(box_a, box_b):
    inter = intersect(box_a, box_b)
    area_a = ((box_a[:, 2] - box_a[:, 0]) * (box_a[:, 3] - box_a[:, 1])).unsqueeze(1).expand_as(inter)
    area_b = ((box_b[:, 2] - box_b[:, 0]) * (box_b[:, 3] - box_b[:, 1])).unsqueeze(0).expand_as(inter)
    return inter / (area_a + area_b - inter)


def encode(matched, priors, variances):
    g_cxcy = (matched[:, :2] + matched[:, 2:]) / 2 - priors[:, :2]
    g_cxcy /= (variances[0] * priors[:, 2:])
    g_wh = (matched[:, 2:] - matched[:, :2]) / priors[:, 2:]
    g_wh = torch.log(g_wh) / variances[1]
    return torch.cat([g_cxcy, g_wh], 1)


def match(threshold, truths, priors, variances, labels, loc_t, conf_t, idx):
    overlaps = jaccard(truths, point_form(priors))
    best_prior_overlap, best_prior_idx = overlaps.max(1, keepdim=True)
    best_truth_overlap, best_truth_idx = overlaps.max(0, keepdim=True)
    best_truth_idx.squeeze_(0)
    best_truth_overlap.squeeze_(0)
    best_prior_idx.squeeze_(1)
    best_prior_overlap.squeeze_(1)
    best_truth_overlap.index_fill_(0, best_prior_idx, 2)
    for j in range(best_prior_idx.size(0)):
        best_truth_idx[best_prior_idx[j]] = j
    matches = truths[best_truth_idx]
    conf = labels[best_truth_idx] + 1
    conf[best_truth_overlap < threshold] = 0
    loc = encode(matches, priors, variances)
    loc_t[idx] = loc
    conf_t[idx] = conf


def log_sum_exp(x):
    x_max = x.data.max()
    return torch.log(torch.sum(torch.exp(x - x_max), 1, keepdim=True)) + x_max


class PriorBox:
    def __init__(self, image_size=64, feature_maps=(8, 4), steps=(8, 16), min_sizes=(12, 28),
                 max_sizes=(28, 48), aspect_ratios=((2,), (2, 3))):
        self.image_size, self.feature_maps, self.steps = image_size, feature_maps, steps
        self.min_sizes, self.max_sizes, self.aspect_ratios = min_sizes, max_sizes, aspect_ratios

    def forward(self):
        mean = []
        for k, f in enumerate(self.feature_maps):
            for i, j in itertools.product(range(f), repeat=2):
                f_k = self.image_size / self.steps[k]
                cx, cy = (j + 0.5) / f_k, (i + 0.5) / f_k
                s_k = self.min_sizes[k] / self.image_size
                mean += [cx, cy, s_k, s_k]
                s_k_prime = math.sqrt(s_k * (self.max_sizes[k] / self.image_size))
                mean += [cx, cy, s_k_prime, s_k_prime]
                for ar in self.aspect_ratios[k]:
                    mean += [cx, cy, s_k * math.sqrt(ar), s_k / math.sqrt(ar)]
                    mean += [cx, cy, s_k / math.sqrt(ar), s_k * math.sqrt(ar)]
        output = torch.Tensor(mean).view(-1, 4)
        output.clamp_(max=1, min=0)
        return output


class L2Norm(nn.Module):
    def __init__(self, n_channels, scale):
        super().__init__()
        self.weight = nn.Parameter(torch.Tensor(n_channels))
        self.eps = 1e-10
        nn.init.constant_(self.weight, scale)

    def forward(self, x):
        norm = x.pow(2).sum(dim=1, keepdim=True).sqrt() + self.eps
        x = torch.div(x, norm)
        return self.weight.unsqueeze(0).unsqueeze(2).unsqueeze(3).expand_as(x) * x


class MultiBoxLoss(nn.Module):
    def __init__(self, num_classes, overlap_thresh=0.5, neg_pos=3):
        super().__init__()
        self.num_classes, self.threshold, self.negpos_ratio = num_classes, overlap_thresh, neg_pos
        self.variance = [0.1, 0.2]

    def forward(self, predictions, targets):
        loc_data, conf_data, priors = predictions
        num = loc_data.size(0)
        priors = priors[:loc_data.size(1), :]
        num_priors = priors.size(0)
        loc_t = torch.Tensor(num, num_priors, 4)
        conf_t = torch.LongTensor(num, num_priors)
        for idx in range(num):
            truths = targets[idx][:, :-1].data
            labels = targets[idx][:, -1].data
            match(self.threshold, truths, priors.data, self.variance, labels, loc_t, conf_t, idx)
        pos = conf_t > 0
        num_pos = pos.sum(dim=1, keepdim=True)
        pos_idx = pos.unsqueeze(pos.dim()).expand_as(loc_data)
        loc_p = loc_data[pos_idx].view(-1, 4)
        loc_t = loc_t[pos_idx].view(-1, 4)
        loss_l = F.smooth_l1_loss(loc_p, loc_t, reduction="sum")
        batch_conf = conf_data.view(-1, self.num_classes)
        loss_c = log_sum_exp(batch_conf) - batch_conf.gather(1, conf_t.view(-1, 1))
        loss_c = loss_c.view(num, -1)
        loss_c[pos] = 0
        _, loss_idx = loss_c.sort(1, descending=True)
        _, idx_rank = loss_idx.sort(1)
        num_neg = torch.clamp(self.negpos_ratio * num_pos, max=pos.size(1) - 1)
        neg = idx_rank < num_neg.expand_as(idx_rank)
        pos_idx = pos.unsqueeze(2).expand_as(conf_data)
        neg_idx = neg.unsqueeze(2).expand_as(conf_data)
        conf_p = conf_data[(pos_idx + neg_idx).gt(0)].view(-1, self.num_classes)
        targets_weighted = conf_t[(pos + neg).gt(0)]
        loss_c = F.cross_entropy(conf_p, targets_weighted, reduction="sum")
        N = num_pos.data.sum()
        loss_l /= N
        loss_c /= N
        return loss_l, loss_c


class SSD(nn.Module):
    def __init__(self, num_classes=4):
        super().__init__()
        self.num_classes = num_classes
        self.priors = PriorBox().forward()
        self.vgg = nn.ModuleList([nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(2, 2), nn.Conv2d(16, 24, 3, padding=1), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(2, 2), nn.Conv2d(24, 32, 3, padding=1), nn.ReLU(inplace=True),
                                  nn.MaxPool2d(2, 2, ceil_mode=True)])
        self.L2Norm = L2Norm(32, 20)
        self.extras = nn.ModuleList([nn.Conv2d(32, 16, 1), nn.Conv2d(16, 32, 3, stride=2, padding=1)])
        mbox = [4, 6]
        self.loc = nn.ModuleList([nn.Conv2d(32, mbox[0] * 4, 3, padding=1), nn.Conv2d(32, mbox[1] * 4, 3, padding=1)])
        self.conf = nn.ModuleList([nn.Conv2d(32, mbox[0] * num_classes, 3, padding=1),
                                   nn.Conv2d(32, mbox[1] * num_classes, 3, padding=1)])
        self.criterion = MultiBoxLoss(num_classes)

    def forward(self, x, targets):
        sources, loc, conf = [], [], []
        for k in range(len(self.vgg)):
            x = self.vgg[k](x)
        sources.append(self.L2Norm(x))
        for k, v in enumerate(self.extras):
            x = F.relu(v(x), inplace=True)
            if k % 2 == 1:
                sources.append(x)
        for (x, l, c) in zip(sources, self.loc, self.conf):
            loc.append(l(x).permute(0, 2, 3, 1).contiguous())
            conf.append(c(x).permute(0, 2, 3, 1).contiguous())
        loc = torch.cat([o.view(o.size(0), -1) for o in loc], 1)
        conf = torch.cat([o.view(o.size(0), -1) for o in conf], 1)
        output = (loc.view(loc.size(0), -1, 4), conf.view(conf.size(0), -1, self.num_classes), self.priors)
        loss_l, loss_c = self.criterion(output, targets)
        return loss_l + loss_c, loss_l, loss_c, output[0], output[1]


torch.manual_seed(0)
model = SSD().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    images = torch.randn(2, 3, 64, 64, generator=g)
    targets = [torch.tensor([[0.10, 0.15, 0.45, 0.50, 0.0], [0.55, 0.40, 0.95, 0.90, 2.0]]),
               torch.tensor([[0.20, 0.20, 0.70, 0.65, 1.0]])]
    return images, targets
