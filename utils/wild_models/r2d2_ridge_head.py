"""A few-shot classifier with a differentiable closed-form ridge-regression
head, as R2D2 ("Meta-learning with differentiable closed-form solvers")
and MetaOptNet's ridge variant write it: a small conv embedding of the
support and query images of each episode, the support labels turned into
one-hot targets by `F.one_hot`, the ridge weights solved per episode in
the dual form `W = X^T (X X^T + lambda I)^{-1} Y` with
`torch.linalg.solve` on a batch of kernel matrices (`torch.eye` expanded
to the episodes), the query logits `Q W` scaled and shifted by learned
scalars, as the paper's "adjust" layer does."""
import torch
import torch.nn.functional as F
from torch import nn


def conv_block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.LeakyReLU(0.1), nn.MaxPool2d(2)
    )


class RidgeHead(nn.Module):
    def __init__(self, n_way, init_lambda=1.0):
        super().__init__()
        self.n_way = n_way
        self.log_lambda = nn.Parameter(torch.tensor(float(init_lambda)).log())
        self.scale = nn.Parameter(torch.tensor(1e-1))
        self.bias = nn.Parameter(torch.tensor(0.0))

    def forward(self, support, support_labels, query):
        # support: [episodes, n_support, d]; query: [episodes, n_query, d]
        episodes, n_support, _ = support.shape
        targets = F.one_hot(support_labels, self.n_way).to(support.dtype)
        kernel = support @ support.transpose(1, 2)
        eye = torch.eye(n_support, dtype=support.dtype, device=support.device)
        ridge = kernel + self.log_lambda.exp() * eye.expand(episodes, n_support, n_support)
        alpha = torch.linalg.solve(ridge, targets)
        weights = support.transpose(1, 2) @ alpha
        logits = query @ weights
        return self.scale * logits + self.bias


class R2D2(nn.Module):
    def __init__(self, n_way=3, width=8):
        super().__init__()
        self.encoder = nn.Sequential(conv_block(3, width), conv_block(width, width * 2))
        self.head = RidgeHead(n_way)

    def embed(self, images):
        episodes, n = images.shape[:2]
        flat = self.encoder(images.flatten(0, 1))
        return flat.reshape(episodes, n, -1)

    def forward(self, support_images, support_labels, query_images):
        support = self.embed(support_images)
        query = self.embed(query_images)
        return self.head(support, support_labels, query)


torch.manual_seed(0)
model = R2D2().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    episodes, n_way, shots, queries = 2, 3, 2, 4
    support = torch.randn(episodes, n_way * shots, 3, 8, 8, generator=g)
    labels = torch.arange(n_way).repeat_interleave(shots).expand(episodes, -1).contiguous()
    query = torch.randn(episodes, queries, 3, 8, 8, generator=g)
    return support, labels, query
