"""Product-based Neural Network (PNN) and AutoInt-style CTR models as the
recommender-system libraries (DeepCTR-Torch, FuxiCTR) write them: sparse
field ids offset into one shared `nn.Embedding` by a `field_offsets`
buffer built with `np.cumsum` at construction, the inner-product layer
pairing fields with `row, col = torch.triu_indices(num_fields,
num_fields, offset=1)` and `(emb[:, row] * emb[:, col]).sum(-1)`, the
outer-product kernel as `torch.einsum('bpi,pij,bpj->bp', ...)` over the
same pairs, dense features through `nn.BatchNorm1d`, an AutoInt
multi-head self-interaction layer with `torch.split(..., dim=2)` into
heads stacked with `torch.stack(..., dim=0)`, and a logit through
`torch.sigmoid` with the BCE loss against click labels."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class InnerProductLayer(nn.Module):
    def __init__(self, num_fields):
        super().__init__()
        row, col = torch.triu_indices(num_fields, num_fields, offset=1)
        self.register_buffer("row", row, persistent=False)
        self.register_buffer("col", col, persistent=False)

    def forward(self, emb):
        return (emb[:, self.row] * emb[:, self.col]).sum(-1)


class OuterProductLayer(nn.Module):
    def __init__(self, num_fields, dim):
        super().__init__()
        self.num_fields = num_fields
        num_pairs = num_fields * (num_fields - 1) // 2
        self.kernel = nn.Parameter(torch.randn(num_pairs, dim, dim) * 0.1)

    def forward(self, emb):
        row, col = torch.triu_indices(self.num_fields, self.num_fields, offset=1, device=emb.device)
        p, q = emb[:, row], emb[:, col]
        return torch.einsum("bpi,pij,bpj->bp", p, self.kernel, q)


class InteractingLayer(nn.Module):
    def __init__(self, embedding_size, head_num=2, use_res=True, scaling=True):
        super().__init__()
        self.att_embedding_size = embedding_size // head_num
        self.head_num = head_num
        self.use_res = use_res
        self.scaling = scaling
        self.W_Query = nn.Parameter(torch.randn(embedding_size, embedding_size) * 0.05)
        self.W_key = nn.Parameter(torch.randn(embedding_size, embedding_size) * 0.05)
        self.W_Value = nn.Parameter(torch.randn(embedding_size, embedding_size) * 0.05)
        if self.use_res:
            self.W_Res = nn.Parameter(torch.randn(embedding_size, embedding_size) * 0.05)

    def forward(self, inputs):
        querys = torch.tensordot(inputs, self.W_Query, dims=([-1], [0]))
        keys = torch.tensordot(inputs, self.W_key, dims=([-1], [0]))
        values = torch.tensordot(inputs, self.W_Value, dims=([-1], [0]))
        querys = torch.stack(torch.split(querys, self.att_embedding_size, dim=2))
        keys = torch.stack(torch.split(keys, self.att_embedding_size, dim=2))
        values = torch.stack(torch.split(values, self.att_embedding_size, dim=2))
        inner_product = torch.einsum("bnik,bnjk->bnij", querys, keys)
        if self.scaling:
            inner_product /= self.att_embedding_size ** 0.5
        normalized_att_scores = F.softmax(inner_product, dim=-1)
        result = torch.matmul(normalized_att_scores, values)
        result = torch.cat(torch.split(result, 1, ), dim=-1)
        result = torch.squeeze(result, dim=0)
        if self.use_res:
            result += torch.tensordot(inputs, self.W_Res, dims=([-1], [0]))
        return F.relu(result)


class PNNAutoInt(nn.Module):
    def __init__(self, field_dims=(7, 5, 11, 3, 9), num_dense=3, dim=8):
        super().__init__()
        num_fields = len(field_dims)
        self.embedding = nn.Embedding(int(sum(field_dims)), dim)
        self.register_buffer("field_offsets", torch.tensor(np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)))
        self.dense_bn = nn.BatchNorm1d(num_dense)
        self.inner = InnerProductLayer(num_fields)
        self.outer = OuterProductLayer(num_fields, dim)
        self.interacting = InteractingLayer(dim)
        num_pairs = num_fields * (num_fields - 1) // 2
        d = num_fields * dim + 2 * num_pairs + num_dense + num_fields * dim
        self.dnn = nn.Sequential(nn.Linear(d, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 1))
        self.loss_fn = nn.BCELoss()

    def forward(self, sparse, dense, label=None):
        emb = self.embedding(sparse + self.field_offsets.unsqueeze(0))
        ip = self.inner(emb)
        op = self.outer(emb)
        att = self.interacting(emb)
        x = torch.cat([emb.flatten(1), ip, op, self.dense_bn(dense), att.flatten(1)], dim=1)
        y_pred = torch.sigmoid(self.dnn(x)).squeeze(-1)
        if label is None:
            return y_pred
        return y_pred, self.loss_fn(y_pred, label.float())


torch.manual_seed(0)
model = PNNAutoInt()
with torch.no_grad():
    model.dense_bn.running_mean.normal_(0, 0.1)
    model.dense_bn.running_var.uniform_(0.5, 1.5)
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    dims = torch.tensor([7, 5, 11, 3, 9])
    sparse = (torch.rand(4, 5, generator=g) * dims).long()
    dense = torch.randn(4, 3, generator=g)
    label = torch.tensor([1, 0, 0, 1])
    return sparse, dense, label
