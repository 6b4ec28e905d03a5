"""Graph convolutions with a sparse adjacency, as Kipf's pygcn and the
GCN code built on it write them: the adjacency passed in as a
torch.sparse_coo_tensor (built by the data loader from an edge list, row-
normalized with self loops), GraphConvolution layers with a
reset_parameters using 1 / math.sqrt(out_features) and uniform_,
`support = torch.mm(input, self.weight)` then `torch.spmm(adj, support)`,
__repr__ overridden, ReLU, dropout gated by self.training through
F.dropout(training=self.training), and log_softmax; beside it a
GraphSAGE-style mean aggregator over the same adjacency with
torch.sparse.mm."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.modules.module import Module
from torch.nn.parameter import Parameter


class GraphConvolution(Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(torch.FloatTensor(in_features, out_features))
        if bias:
            self.bias = Parameter(torch.FloatTensor(out_features))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        output = torch.spmm(adj, support)
        if self.bias is not None:
            return output + self.bias
        return output

    def __repr__(self):
        return self.__class__.__name__ + " (" + str(self.in_features) + " -> " + str(self.out_features) + ")"


class SAGEMean(Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.lin_self = nn.Linear(in_features, out_features)
        self.lin_neigh = nn.Linear(in_features, out_features, bias=False)

    def forward(self, x, adj):
        neigh = torch.sparse.mm(adj, x)
        return F.normalize(self.lin_self(x) + self.lin_neigh(neigh), p=2, dim=-1)


class GCN(nn.Module):
    def __init__(self, nfeat=6, nhid=16, nclass=4, dropout=0.5):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.sage = SAGEMean(nfeat, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        h = F.relu(self.gc1(x, adj))
        h = F.dropout(h, self.dropout, training=self.training)
        h = self.gc2(h, adj)
        return F.log_softmax(h, dim=1), self.sage(x, adj)


def normalize(mx):
    rowsum = np.array(mx.sum(1))
    r_inv = np.power(rowsum, -1).flatten()
    r_inv[np.isinf(r_inv)] = 0.0
    return np.diag(r_inv).dot(mx)


def sparse_adjacency(n, edges):
    adj = np.zeros((n, n), dtype=np.float32)
    for a, b in edges:
        adj[a, b] = adj[b, a] = 1.0
    adj = normalize(adj + np.eye(n, dtype=np.float32))
    rows, cols = np.nonzero(adj)
    indices = torch.from_numpy(np.vstack((rows, cols)).astype(np.int64))
    values = torch.from_numpy(adj[rows, cols].astype(np.float32))
    return torch.sparse_coo_tensor(indices, values, torch.Size((n, n)))


torch.manual_seed(0)
model = GCN().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    edges = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (5, 6), (6, 7), (2, 6)]
    return torch.randn(8, 6, generator=g), sparse_adjacency(8, edges)
