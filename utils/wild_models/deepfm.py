"""DeepFM / wide & deep as CTR-prediction code bases (DeepCTR-Torch,
pytorch-fm) write them: single-valued sparse fields share one nn.Embedding
through a field-offsets array, a multi-hot field (a bag of tag ids) goes
through nn.EmbeddingBag with flat indices, offsets and mode="mean", a wide
part of per-field scalar weights (another EmbeddingBag, mode="sum", with
per_sample_weights), the FM second-order term as 0.5 * ((sum v)^2 -
sum v^2), a deep MLP with BatchNorm1d over the flattened embeddings, and a
sigmoid on the sum."""
import numpy as np
import torch
import torch.nn as nn


class FeaturesLinear(nn.Module):
    def __init__(self, field_dims):
        super().__init__()
        self.fc = nn.Embedding(sum(field_dims), 1)
        self.bias = nn.Parameter(torch.zeros((1,)))
        self.offsets = np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)

    def forward(self, x):
        x = x + x.new_tensor(self.offsets).unsqueeze(0)
        return torch.sum(self.fc(x), dim=1) + self.bias


class FeaturesEmbedding(nn.Module):
    def __init__(self, field_dims, embed_dim):
        super().__init__()
        self.embedding = nn.Embedding(sum(field_dims), embed_dim)
        self.offsets = np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)
        nn.init.xavier_uniform_(self.embedding.weight.data)

    def forward(self, x):
        x = x + x.new_tensor(self.offsets).unsqueeze(0)
        return self.embedding(x)


class FactorizationMachine(nn.Module):
    def __init__(self, reduce_sum=True):
        super().__init__()
        self.reduce_sum = reduce_sum

    def forward(self, x):
        square_of_sum = torch.sum(x, dim=1) ** 2
        sum_of_square = torch.sum(x ** 2, dim=1)
        ix = square_of_sum - sum_of_square
        if self.reduce_sum:
            ix = torch.sum(ix, dim=1, keepdim=True)
        return 0.5 * ix


class MultiLayerPerceptron(nn.Module):
    def __init__(self, input_dim, embed_dims, dropout, output_layer=True):
        super().__init__()
        layers = list()
        for embed_dim in embed_dims:
            layers.append(nn.Linear(input_dim, embed_dim))
            layers.append(nn.BatchNorm1d(embed_dim))
            layers.append(nn.ReLU())
            layers.append(nn.Dropout(p=dropout))
            input_dim = embed_dim
        if output_layer:
            layers.append(nn.Linear(input_dim, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, x):
        return self.mlp(x)


class DeepFM(nn.Module):
    def __init__(self, field_dims=(10, 7, 5, 12), tag_vocab=20, embed_dim=8,
                 mlp_dims=(32, 16), dropout=0.2):
        super().__init__()
        self.linear = FeaturesLinear(field_dims)
        self.tag_linear = nn.EmbeddingBag(tag_vocab, 1, mode="sum")
        self.fm = FactorizationMachine(reduce_sum=True)
        self.embedding = FeaturesEmbedding(field_dims, embed_dim)
        self.tag_embedding = nn.EmbeddingBag(tag_vocab, embed_dim, mode="mean")
        self.embed_output_dim = (len(field_dims) + 1) * embed_dim
        self.mlp = MultiLayerPerceptron(self.embed_output_dim, mlp_dims, dropout)

    def forward(self, x, tags, tag_offsets, tag_weights):
        """x: (batch, num_fields) ids; tags/tag_offsets: a flat multi-hot bag per row."""
        embed_x = self.embedding(x)
        tag_x = self.tag_embedding(tags, tag_offsets).unsqueeze(1)
        embed_x = torch.cat([embed_x, tag_x], dim=1)
        wide = self.linear(x) + self.tag_linear(tags, tag_offsets, per_sample_weights=tag_weights)
        x = wide + self.fm(embed_x) + self.mlp(embed_x.view(-1, self.embed_output_dim))
        return torch.sigmoid(x.squeeze(1))


torch.manual_seed(0)
model = DeepFM()
with torch.no_grad():
    for m in model.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.running_mean.uniform_(-0.1, 0.1)
            m.running_var.uniform_(0.5, 1.5)
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    x = torch.stack([torch.randint(0, n, (4,), generator=g) for n in (10, 7, 5, 12)], dim=1)
    tags = torch.randint(0, 20, (9,), generator=g)
    offsets = torch.tensor([0, 3, 4, 7])
    weights = torch.rand(9, generator=g)
    return x, tags, offsets, weights
