"""Contrastive objectives as the SimCLR, SupContrast and SimSiam training
repositories write them, on one encoder with a projection head: SupCon
(`SupConLoss` with `contrast_mode` 'all'/'one', features
`[bsz, n_views, dim]` unbound and concatenated, a label-equality mask from
`torch.eq(labels, labels.T)`, the self-contrast mask by `torch.scatter`
of zeros on `arange` indices, `logits - logits_max.detach()`, positives
averaged with a `torch.where` guard against zero), SimCLR NT-Xent by
`F.cosine_similarity` of broadcast views, the diagonal removed with
`masked_fill` of `-9e15` and positives at `(i + N) % 2N` for
cross-entropy with temperature, and SimSiam's negative cosine with the
stop-gradient `z.detach()` on the target branch."""
import torch
import torch.nn.functional as F
from torch import nn


class SupConLoss(nn.Module):
    def __init__(self, temperature=0.07, contrast_mode="all", base_temperature=0.07):
        super().__init__()
        self.temperature = temperature
        self.contrast_mode = contrast_mode
        self.base_temperature = base_temperature

    def forward(self, features, labels=None, mask=None):
        device = features.device
        if len(features.shape) < 3:
            raise ValueError("`features` needs to be [bsz, n_views, ...]")
        if len(features.shape) > 3:
            features = features.view(features.shape[0], features.shape[1], -1)
        batch_size = features.shape[0]
        if labels is not None and mask is not None:
            raise ValueError("Cannot define both `labels` and `mask`")
        elif labels is None and mask is None:
            mask = torch.eye(batch_size, dtype=torch.float32).to(device)
        elif labels is not None:
            labels = labels.contiguous().view(-1, 1)
            if labels.shape[0] != batch_size:
                raise ValueError("Num of labels does not match num of features")
            mask = torch.eq(labels, labels.T).float().to(device)
        else:
            mask = mask.float().to(device)
        contrast_count = features.shape[1]
        contrast_feature = torch.cat(torch.unbind(features, dim=1), dim=0)
        if self.contrast_mode == "one":
            anchor_feature = features[:, 0]
            anchor_count = 1
        elif self.contrast_mode == "all":
            anchor_feature = contrast_feature
            anchor_count = contrast_count
        else:
            raise ValueError(f"Unknown mode: {self.contrast_mode}")
        anchor_dot_contrast = torch.div(torch.matmul(anchor_feature, contrast_feature.T), self.temperature)
        logits_max, _ = torch.max(anchor_dot_contrast, dim=1, keepdim=True)
        logits = anchor_dot_contrast - logits_max.detach()
        mask = mask.repeat(anchor_count, contrast_count)
        logits_mask = torch.scatter(torch.ones_like(mask), 1,
                                    torch.arange(batch_size * anchor_count).view(-1, 1).to(device), 0)
        mask = mask * logits_mask
        exp_logits = torch.exp(logits) * logits_mask
        log_prob = logits - torch.log(exp_logits.sum(1, keepdim=True))
        mask_pos_pairs = mask.sum(1)
        mask_pos_pairs = torch.where(mask_pos_pairs < 1e-6, 1, mask_pos_pairs)
        mean_log_prob_pos = (mask * log_prob).sum(1) / mask_pos_pairs
        loss = -(self.temperature / self.base_temperature) * mean_log_prob_pos
        return loss.view(anchor_count, batch_size).mean()


def nt_xent(z_i, z_j, temperature=0.5):
    n = z_i.size(0)
    z = torch.cat((z_i, z_j), dim=0)
    sim = F.cosine_similarity(z.unsqueeze(1), z.unsqueeze(0), dim=2) / temperature
    sim = sim.masked_fill(torch.eye(2 * n, dtype=torch.bool, device=z.device), -9e15)
    targets = (torch.arange(2 * n, device=z.device) + n) % (2 * n)
    return F.cross_entropy(sim, targets)


def negative_cosine(p, z):
    z = z.detach()
    return -(F.normalize(p, dim=1) * F.normalize(z, dim=1)).sum(dim=1).mean()


class ContrastiveModel(nn.Module):
    def __init__(self, in_ch=3, dim=32, proj=16):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(in_ch, dim, 3, 2, 1), nn.BatchNorm2d(dim), nn.ReLU(),
                                     nn.Conv2d(dim, dim, 3, 2, 1), nn.BatchNorm2d(dim), nn.ReLU(),
                                     nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(inplace=True), nn.Linear(dim, proj))
        self.predictor = nn.Sequential(nn.Linear(proj, proj), nn.ReLU(), nn.Linear(proj, proj))
        self.supcon = SupConLoss(temperature=0.1)
        self.supcon_one = SupConLoss(temperature=0.1, contrast_mode="one")

    def forward(self, images, labels):
        bsz = labels.shape[0]
        feats = F.normalize(self.head(self.encoder(images)), dim=1)
        f1, f2 = torch.split(feats, [bsz, bsz], dim=0)
        features = torch.cat([f1.unsqueeze(1), f2.unsqueeze(1)], dim=1)
        loss_sup = self.supcon(features, labels)
        loss_simclr = self.supcon(features)
        loss_one = self.supcon_one(features, labels)
        loss_ntx = nt_xent(f1, f2)
        p1, p2 = self.predictor(f1), self.predictor(f2)
        loss_siam = negative_cosine(p1, f2) / 2 + negative_cosine(p2, f1) / 2
        return {"supcon": loss_sup, "simclr": loss_simclr, "supcon_one": loss_one, "nt_xent": loss_ntx,
                "simsiam": loss_siam}


torch.manual_seed(0)
model = ContrastiveModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    images = torch.randn(12, 3, 16, 16, generator=g)
    labels = torch.tensor([0, 1, 2, 0, 1, 2])
    return images, labels
