"""A DLRM-style recommender as its reference implementation writes it:
sparse features through nn.EmbeddingBag(mode="sum") with flat indices and
offsets, a bottom MLP over dense features, pairwise dot-product
interactions by bmm of the stacked vectors, the strictly lower triangle
gathered with tril_indices-built index tensors, and a top MLP with a
sigmoid."""
import torch
import torch.nn as nn


def mlp(sizes, sigmoid_last=False):
    layers = []
    for i in range(len(sizes) - 1):
        layers.append(nn.Linear(sizes[i], sizes[i + 1]))
        layers.append(nn.Sigmoid() if sigmoid_last and i == len(sizes) - 2 else nn.ReLU())
    return nn.Sequential(*layers)


class DLRM(nn.Module):
    def __init__(self, dense_dim=13, emb_dim=16, table_sizes=(50, 30, 20)):
        super().__init__()
        self.emb_l = nn.ModuleList([nn.EmbeddingBag(n, emb_dim, mode="sum") for n in table_sizes])
        self.bot_l = mlp([dense_dim, 32, emb_dim])
        num_features = len(table_sizes) + 1
        num_int = num_features * (num_features - 1) // 2 + emb_dim
        self.top_l = mlp([num_int, 32, 1], sigmoid_last=True)

    def interact_features(self, x, ly):
        batch_size, d = x.shape
        T = torch.cat([x] + ly, dim=1).view((batch_size, -1, d))
        Z = torch.bmm(T, torch.transpose(T, 1, 2))
        _, ni, nj = Z.shape
        li = torch.tensor([i for i in range(ni) for j in range(i)])
        lj = torch.tensor([j for i in range(nj) for j in range(i)])
        Zflat = Z[:, li, lj]
        return torch.cat([x] + [Zflat], dim=1)

    def forward(self, dense_x, lS_o, lS_i):
        x = self.bot_l(dense_x)
        ly = [emb(lS_i[k], lS_o[k]) for k, emb in enumerate(self.emb_l)]
        z = self.interact_features(x, ly)
        return self.top_l(z)


torch.manual_seed(0)
model = DLRM().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    dense = torch.randn(4, 13, generator=g)
    offsets = torch.stack([torch.tensor([0, 2, 3, 5]), torch.tensor([0, 1, 2, 3]), torch.tensor([0, 3, 4, 6])])
    indices = [torch.randint(0, 50, (6,), generator=g), torch.randint(0, 30, (4,), generator=g),
               torch.randint(0, 20, (7,), generator=g)]
    return dense, offsets, indices
