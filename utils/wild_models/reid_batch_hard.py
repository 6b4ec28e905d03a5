"""Person re-identification training as reid-strong-baseline writes it:
a ResNet-like backbone with a BNNeck (`bias.requires_grad_(False)` on the
neck's BatchNorm1d), `euclidean_dist` by `addmm_(x, y.t(), beta=1,
alpha=-2)` and `clamp(min=1e-12).sqrt()`, `hard_example_mining` with
`is_pos = labels.expand(N, N).eq(labels.expand(N, N).t())` and the
hardest positive and negative by `torch.max(dist_mat[is_pos].contiguous().view(N, -1), 1)`
on a P x K batch (boolean-mask rows viewed back to N rows),
`nn.MarginRankingLoss` with `y = dist_an.new().resize_as_(dist_an).fill_(1)`,
`CrossEntropyLabelSmooth` building targets by `torch.zeros(...).scatter_`,
and `CenterLoss` with a centers Parameter, `distmat.addmm_` and a
class-equality mask."""
import torch
import torch.nn.functional as F
from torch import nn


def normalize(x, axis=-1):
    return 1.0 * x / (torch.norm(x, 2, axis, keepdim=True).expand_as(x) + 1e-12)


def euclidean_dist(x, y):
    m, n = x.size(0), y.size(0)
    xx = torch.pow(x, 2).sum(1, keepdim=True).expand(m, n)
    yy = torch.pow(y, 2).sum(1, keepdim=True).expand(n, m).t()
    dist = xx + yy
    dist = dist.addmm(x, y.t(), beta=1, alpha=-2)
    dist = dist.clamp(min=1e-12).sqrt()
    return dist


def hard_example_mining(dist_mat, labels, return_inds=False):
    assert len(dist_mat.size()) == 2
    assert dist_mat.size(0) == dist_mat.size(1)
    N = dist_mat.size(0)
    is_pos = labels.expand(N, N).eq(labels.expand(N, N).t())
    is_neg = labels.expand(N, N).ne(labels.expand(N, N).t())
    dist_ap, relative_p_inds = torch.max(dist_mat[is_pos].contiguous().view(N, -1), 1, keepdim=True)
    dist_an, relative_n_inds = torch.min(dist_mat[is_neg].contiguous().view(N, -1), 1, keepdim=True)
    dist_ap = dist_ap.squeeze(1)
    dist_an = dist_an.squeeze(1)
    if return_inds:
        ind = labels.new().resize_as_(labels).copy_(torch.arange(0, N).long()).unsqueeze(0).expand(N, N)
        p_inds = torch.gather(ind[is_pos].contiguous().view(N, -1), 1, relative_p_inds.data)
        n_inds = torch.gather(ind[is_neg].contiguous().view(N, -1), 1, relative_n_inds.data)
        return dist_ap, dist_an, p_inds.squeeze(1), n_inds.squeeze(1)
    return dist_ap, dist_an


class TripletLoss:
    def __init__(self, margin=None):
        self.margin = margin
        if margin is not None:
            self.ranking_loss = nn.MarginRankingLoss(margin=margin)
        else:
            self.ranking_loss = nn.SoftMarginLoss()

    def __call__(self, global_feat, labels, normalize_feature=False):
        if normalize_feature:
            global_feat = normalize(global_feat, axis=-1)
        dist_mat = euclidean_dist(global_feat, global_feat)
        dist_ap, dist_an, p_inds, n_inds = hard_example_mining(dist_mat, labels, return_inds=True)
        y = dist_an.new().resize_as_(dist_an).fill_(1)
        if self.margin is not None:
            loss = self.ranking_loss(dist_an, dist_ap, y)
        else:
            loss = self.ranking_loss(dist_an - dist_ap, y)
        return loss, dist_ap, dist_an, p_inds, n_inds


class CrossEntropyLabelSmooth(nn.Module):
    def __init__(self, num_classes, epsilon=0.1):
        super().__init__()
        self.num_classes = num_classes
        self.epsilon = epsilon
        self.logsoftmax = nn.LogSoftmax(dim=1)

    def forward(self, inputs, targets):
        log_probs = self.logsoftmax(inputs)
        targets = torch.zeros(log_probs.size()).scatter_(1, targets.unsqueeze(1).data.cpu(), 1)
        targets = targets.to(inputs.device)
        targets = (1 - self.epsilon) * targets + self.epsilon / self.num_classes
        return (-targets * log_probs).mean(0).sum()


class CenterLoss(nn.Module):
    def __init__(self, num_classes, feat_dim):
        super().__init__()
        self.num_classes = num_classes
        self.centers = nn.Parameter(torch.randn(num_classes, feat_dim))

    def forward(self, x, labels):
        batch_size = x.size(0)
        distmat = torch.pow(x, 2).sum(dim=1, keepdim=True).expand(batch_size, self.num_classes) + \
            torch.pow(self.centers, 2).sum(dim=1, keepdim=True).expand(self.num_classes, batch_size).t()
        distmat = distmat.addmm(x, self.centers.t(), beta=1, alpha=-2)
        classes = torch.arange(self.num_classes).long().to(x.device)
        labels = labels.unsqueeze(1).expand(batch_size, self.num_classes)
        mask = labels.eq(classes.expand(batch_size, self.num_classes))
        dist = distmat * mask.float()
        return dist.clamp(min=1e-12, max=1e12).sum() / batch_size


class Baseline(nn.Module):
    def __init__(self, num_classes=6, dim=32, margin=0.3, center_weight=0.0005):
        super().__init__()
        self.base = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1, bias=False), nn.BatchNorm2d(16), nn.ReLU(),
                                  nn.Conv2d(16, dim, 3, 2, 1, bias=False), nn.BatchNorm2d(dim), nn.ReLU())
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.bottleneck = nn.BatchNorm1d(dim)
        self.bottleneck.bias.requires_grad_(False)
        self.classifier = nn.Linear(dim, num_classes, bias=False)
        self.triplet = TripletLoss(margin)
        self.soft_triplet = TripletLoss(None)
        self.xent = CrossEntropyLabelSmooth(num_classes)
        self.center = CenterLoss(num_classes, dim)
        self.center_weight = center_weight

    def forward(self, x, pids):
        global_feat = self.gap(self.base(x)).view(x.shape[0], -1)
        feat = self.bottleneck(global_feat)
        cls_score = self.classifier(feat)
        tri, dist_ap, dist_an, p_inds, n_inds = self.triplet(global_feat, pids)
        soft_tri = self.soft_triplet(global_feat, pids, normalize_feature=True)[0]
        loss = self.xent(cls_score, pids) + tri + self.center_weight * self.center(global_feat, pids)
        acc = (cls_score.max(1)[1] == pids).float().mean()
        return loss, soft_tri, dist_ap, dist_an, p_inds, n_inds, acc


torch.manual_seed(0)
model = Baseline().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    pids = torch.tensor([0, 0, 0, 3, 3, 3, 5, 5, 5, 1, 1, 1])  # P = 4 identities, K = 3 images each
    return torch.randn(12, 3, 16, 8, generator=g), pids
