"""Face recognition heads as insightface's arcface_torch and
facenet-pytorch write them: an `ArcMarginProduct` with `math.cos`/`math.sin`
of the margin precomputed as Python floats, cosine logits by
`F.linear(F.normalize(input), F.normalize(self.weight))`, the sine by
`torch.sqrt((1.0 - cosine.pow(2)).clamp(0, 1))`, `phi` replaced by
`torch.where(cosine > self.th, phi, cosine - self.mm)` (the `easy_margin`
flag read from the module), one-hot labels by `scatter_(1, label.view(-1, 1).long(), 1)`
into `torch.zeros(cosine.size(), device=...)`, scaled logits and their
cross-entropy; plus a triplet term on L2-normalized embeddings by
`F.triplet_margin_loss` and `F.pairwise_distance` for the positive and
negative gaps."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class ArcMarginProduct(nn.Module):
    def __init__(self, in_features, out_features, s=30.0, m=0.50, easy_margin=False):
        super().__init__()
        self.s = s
        self.m = m
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        nn.init.xavier_uniform_(self.weight)
        self.easy_margin = easy_margin
        self.cos_m = math.cos(m)
        self.sin_m = math.sin(m)
        self.th = math.cos(math.pi - m)
        self.mm = math.sin(math.pi - m) * m

    def forward(self, input, label):
        cosine = F.linear(F.normalize(input), F.normalize(self.weight))
        sine = torch.sqrt((1.0 - torch.pow(cosine, 2)).clamp(0, 1))
        phi = cosine * self.cos_m - sine * self.sin_m
        if self.easy_margin:
            phi = torch.where(cosine > 0, phi, cosine)
        else:
            phi = torch.where(cosine > self.th, phi, cosine - self.mm)
        one_hot = torch.zeros(cosine.size(), device=input.device)
        one_hot.scatter_(1, label.view(-1, 1).long(), 1)
        output = (one_hot * phi) + ((1.0 - one_hot) * cosine)
        output *= self.s
        return output


class Backbone(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.PReLU(16),
            nn.Conv2d(16, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.PReLU(32))
        self.bn = nn.BatchNorm2d(32)
        self.dropout = nn.Dropout(p=0.4)
        self.fc = nn.Linear(32 * 4 * 4, dim)
        self.features = nn.BatchNorm1d(dim, eps=1e-05)

    def forward(self, x):
        x = self.bn(self.body(x))
        x = torch.flatten(x, 1)
        x = self.dropout(x)
        return self.features(self.fc(x))


class FaceModel(nn.Module):
    def __init__(self, classes=12, margin=0.2):
        super().__init__()
        self.backbone = Backbone()
        self.head = ArcMarginProduct(32, classes)
        self.margin = margin

    def forward(self, anchor, positive, negative, labels):
        emb = self.backbone(torch.cat([anchor, positive, negative]))
        a, p, n = emb.chunk(3)
        logits = self.head(a, labels)
        id_loss = F.cross_entropy(logits, labels)
        a, p, n = (F.normalize(e, p=2, dim=1) for e in (a, p, n))
        trip = F.triplet_margin_loss(a, p, n, margin=self.margin, p=2)
        gap = F.pairwise_distance(a, n) - F.pairwise_distance(a, p)
        return logits, id_loss + trip, gap


torch.manual_seed(0)
model = FaceModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(4, 3, 16, 16, generator=g), torch.randn(4, 3, 16, 16, generator=g),
            torch.randn(4, 3, 16, 16, generator=g), torch.randint(0, 12, (4,), generator=g))
