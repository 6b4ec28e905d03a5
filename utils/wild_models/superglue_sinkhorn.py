"""SuperGlue-style feature matching as magicleap's SuperGluePretrainedNetwork
writes it: keypoints normalized by the image size read from a tensor's
`shape` (`one = kpts.new_tensor(1)`, `torch.stack([one * width, one *
height])`), a keypoint encoder MLP of Conv1d layers built from a list,
an attentional GNN alternating 'self' and 'cross' layers named by a list
of strings, multi-head attention by `torch.einsum('bdhn,bdhm->bhnm')`
on `view(batch, dim, heads, -1)` tensors, log-space optimal transport
with a learnable dustbin score `expand`ed into an extra row and column,
`log_sinkhorn_iterations` as a Python loop of `logsumexp`, and
mutual-nearest-neighbour matching by `max(2)`, `gather`, `arange`
comparisons and `torch.where` with `new_tensor(0)` and `new_tensor(-1)`;
the result a dict of matches and scores."""
import copy

import torch
import torch.nn as nn


def MLP(channels, do_bn=True):
    n = len(channels)
    layers = []
    for i in range(1, n):
        layers.append(nn.Conv1d(channels[i - 1], channels[i], kernel_size=1, bias=True))
        if i < (n - 1):
            if do_bn:
                layers.append(nn.BatchNorm1d(channels[i]))
            layers.append(nn.ReLU())
    return nn.Sequential(*layers)


def normalize_keypoints(kpts, image_shape):
    _, _, height, width = image_shape
    one = kpts.new_tensor(1)
    size = torch.stack([one * width, one * height])[None]
    center = size / 2
    scaling = size.max(1, keepdim=True).values * 0.7
    return (kpts - center[:, None, :]) / scaling[:, None, :]


class KeypointEncoder(nn.Module):
    def __init__(self, feature_dim, layers):
        super().__init__()
        self.encoder = MLP([3] + layers + [feature_dim])
        nn.init.constant_(self.encoder[-1].bias, 0.0)

    def forward(self, kpts, scores):
        inputs = [kpts.transpose(1, 2), scores.unsqueeze(1)]
        return self.encoder(torch.cat(inputs, dim=1))


def attention(query, key, value):
    dim = query.shape[1]
    scores = torch.einsum("bdhn,bdhm->bhnm", query, key) / dim ** 0.5
    prob = torch.nn.functional.softmax(scores, dim=-1)
    return torch.einsum("bhnm,bdhm->bdhn", prob, value), prob


class MultiHeadedAttention(nn.Module):
    def __init__(self, num_heads, d_model):
        super().__init__()
        assert d_model % num_heads == 0
        self.dim = d_model // num_heads
        self.num_heads = num_heads
        self.merge = nn.Conv1d(d_model, d_model, kernel_size=1)
        self.proj = nn.ModuleList([copy.deepcopy(self.merge) for _ in range(3)])

    def forward(self, query, key, value):
        batch_dim = query.size(0)
        query, key, value = [l(x).view(batch_dim, self.dim, self.num_heads, -1)
                             for l, x in zip(self.proj, (query, key, value))]
        x, _ = attention(query, key, value)
        return self.merge(x.contiguous().view(batch_dim, self.dim * self.num_heads, -1))


class AttentionalPropagation(nn.Module):
    def __init__(self, feature_dim, num_heads):
        super().__init__()
        self.attn = MultiHeadedAttention(num_heads, feature_dim)
        self.mlp = MLP([feature_dim * 2, feature_dim * 2, feature_dim])
        nn.init.constant_(self.mlp[-1].bias, 0.0)

    def forward(self, x, source):
        message = self.attn(x, source, source)
        return self.mlp(torch.cat([x, message], dim=1))


class AttentionalGNN(nn.Module):
    def __init__(self, feature_dim, layer_names):
        super().__init__()
        self.layers = nn.ModuleList([AttentionalPropagation(feature_dim, 4) for _ in range(len(layer_names))])
        self.names = layer_names

    def forward(self, desc0, desc1):
        for layer, name in zip(self.layers, self.names):
            if name == "cross":
                src0, src1 = desc1, desc0
            else:
                src0, src1 = desc0, desc1
            delta0, delta1 = layer(desc0, src0), layer(desc1, src1)
            desc0, desc1 = (desc0 + delta0), (desc1 + delta1)
        return desc0, desc1


def log_sinkhorn_iterations(Z, log_mu, log_nu, iters: int):
    u, v = torch.zeros_like(log_mu), torch.zeros_like(log_nu)
    for _ in range(iters):
        u = log_mu - torch.logsumexp(Z + v.unsqueeze(1), dim=2)
        v = log_nu - torch.logsumexp(Z + u.unsqueeze(2), dim=1)
    return Z + u.unsqueeze(2) + v.unsqueeze(1)


def log_optimal_transport(scores, alpha, iters: int):
    b, m, n = scores.shape
    one = scores.new_tensor(1)
    ms, ns = (m * one).to(scores), (n * one).to(scores)

    bins0 = alpha.expand(b, m, 1)
    bins1 = alpha.expand(b, 1, n)
    alpha = alpha.expand(b, 1, 1)

    couplings = torch.cat([torch.cat([scores, bins0], -1),
                           torch.cat([bins1, alpha], -1)], 1)

    norm = -(ms + ns).log()
    log_mu = torch.cat([norm.expand(m), ns.log()[None] + norm])
    log_nu = torch.cat([norm.expand(n), ms.log()[None] + norm])
    log_mu, log_nu = log_mu[None].expand(b, -1), log_nu[None].expand(b, -1)

    Z = log_sinkhorn_iterations(couplings, log_mu, log_nu, iters)
    return Z - norm


def arange_like(x, dim: int):
    return x.new_ones(x.shape[dim]).cumsum(0) - 1


class SuperGlue(nn.Module):
    default_config = {
        "descriptor_dim": 32,
        "keypoint_encoder": [16, 32],
        "GNN_layers": ["self", "cross"] * 2,
        "sinkhorn_iterations": 20,
        "match_threshold": 0.02,
    }

    def __init__(self, config=None):
        super().__init__()
        self.config = {**self.default_config, **(config or {})}
        self.kenc = KeypointEncoder(self.config["descriptor_dim"], self.config["keypoint_encoder"])
        self.gnn = AttentionalGNN(self.config["descriptor_dim"], self.config["GNN_layers"])
        self.final_proj = nn.Conv1d(self.config["descriptor_dim"], self.config["descriptor_dim"],
                                    kernel_size=1, bias=True)
        bin_score = torch.nn.Parameter(torch.tensor(1.0))
        self.register_parameter("bin_score", bin_score)

    def forward(self, data):
        desc0, desc1 = data["descriptors0"], data["descriptors1"]
        kpts0, kpts1 = data["keypoints0"], data["keypoints1"]

        kpts0 = normalize_keypoints(kpts0, data["image0"].shape)
        kpts1 = normalize_keypoints(kpts1, data["image1"].shape)

        desc0 = desc0 + self.kenc(kpts0, data["scores0"])
        desc1 = desc1 + self.kenc(kpts1, data["scores1"])

        desc0, desc1 = self.gnn(desc0, desc1)
        mdesc0, mdesc1 = self.final_proj(desc0), self.final_proj(desc1)

        scores = torch.einsum("bdn,bdm->bnm", mdesc0, mdesc1)
        scores = scores / self.config["descriptor_dim"] ** 0.5

        scores = log_optimal_transport(scores, self.bin_score, iters=self.config["sinkhorn_iterations"])

        max0, max1 = scores[:, :-1, :-1].max(2), scores[:, :-1, :-1].max(1)
        indices0, indices1 = max0.indices, max1.indices
        mutual0 = arange_like(indices0, 1)[None] == indices1.gather(1, indices0)
        mutual1 = arange_like(indices1, 1)[None] == indices0.gather(1, indices1)
        zero = scores.new_tensor(0)
        mscores0 = torch.where(mutual0, max0.values.exp(), zero)
        mscores1 = torch.where(mutual1, mscores0.gather(1, indices1), zero)
        valid0 = mutual0 & (mscores0 > self.config["match_threshold"])
        valid1 = mutual1 & valid0.gather(1, indices1)
        indices0 = torch.where(valid0, indices0, indices0.new_tensor(-1))
        indices1 = torch.where(valid1, indices1, indices1.new_tensor(-1))

        return {
            "matches0": indices0,
            "matches1": indices1,
            "matching_scores0": mscores0,
            "matching_scores1": mscores1,
            "log_assignment": scores,
        }


torch.manual_seed(0)
model = SuperGlue()
with torch.no_grad():
    for _m in model.modules():
        if isinstance(_m, nn.BatchNorm1d):
            _m.running_mean.normal_(0, 0.1)
            _m.running_var.uniform_(0.5, 1.5)
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    data = {
        "image0": torch.zeros(1, 1, 48, 64),
        "image1": torch.zeros(1, 1, 48, 64),
        "keypoints0": torch.rand(1, 20, 2, generator=g) * torch.tensor([64.0, 48.0]),
        "keypoints1": torch.rand(1, 18, 2, generator=g) * torch.tensor([64.0, 48.0]),
        "scores0": torch.rand(1, 20, generator=g),
        "scores1": torch.rand(1, 18, generator=g),
        "descriptors0": torch.nn.functional.normalize(torch.randn(1, 32, 20, generator=g), dim=1),
        "descriptors1": torch.nn.functional.normalize(torch.randn(1, 32, 18, generator=g), dim=1),
    }
    return (data,)
