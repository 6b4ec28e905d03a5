"""LightGCN as LightGCN-PyTorch writes it: a config dict read with keys,
the normalised bipartite adjacency D^-1/2 A D^-1/2 built once from the
interaction matrix (`dataset.getSparseGraph()`, here in torch: the user-item
block placed into an (n_users + n_items) square matrix, degrees by `sum`,
`pow(-0.5)` with infinities zeroed, `to_sparse().coalesce()`) and kept as a
plain sparse COO attribute `self.Graph`, graph dropout only in training,
`computer()` propagating `torch.sparse.mm(g, all_emb)` over the layers and
averaging the stacked layer outputs, `torch.split` back into users and items,
the BPR loss by `softplus(neg - pos)` with an L2 term over the ego
embeddings divided by `float(len(users))`, and `getUsersRating` through an
`nn.Sigmoid` held as `self.f`, top-k items with the training positives
excluded by `-(1 << 10)` writes at their indices under `torch.no_grad()`."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicDataset:
    def __init__(self, n_users, n_items, interactions):
        self.n_users = n_users
        self.m_items = n_items
        self.UserItemNet = interactions
        self.Graph = None

    def getSparseGraph(self):
        if self.Graph is None:
            n = self.n_users + self.m_items
            adj_mat = torch.zeros(n, n)
            R = self.UserItemNet.float()
            adj_mat[:self.n_users, self.n_users:] = R
            adj_mat[self.n_users:, :self.n_users] = R.t()
            rowsum = adj_mat.sum(dim=1)
            d_inv = rowsum.pow(-0.5)
            d_inv[torch.isinf(d_inv)] = 0.0
            d_mat = torch.diag(d_inv)
            norm_adj = d_mat @ adj_mat @ d_mat
            self.Graph = norm_adj.to_sparse().coalesce()
        return self.Graph


class LightGCN(nn.Module):
    def __init__(self, config, dataset):
        super().__init__()
        self.config = config
        self.dataset = dataset
        self.__init_weight()

    def __init_weight(self):
        self.num_users = self.dataset.n_users
        self.num_items = self.dataset.m_items
        self.latent_dim = self.config["latent_dim_rec"]
        self.n_layers = self.config["lightGCN_n_layers"]
        self.keep_prob = self.config["keep_prob"]
        self.A_split = self.config["A_split"]
        self.embedding_user = nn.Embedding(num_embeddings=self.num_users, embedding_dim=self.latent_dim)
        self.embedding_item = nn.Embedding(num_embeddings=self.num_items, embedding_dim=self.latent_dim)
        if self.config["pretrain"] == 0:
            nn.init.normal_(self.embedding_user.weight, std=0.1)
            nn.init.normal_(self.embedding_item.weight, std=0.1)
        self.f = nn.Sigmoid()
        self.Graph = self.dataset.getSparseGraph()

    def __dropout_x(self, x, keep_prob):
        size = x.size()
        index = x.indices().t()
        values = x.values()
        random_index = torch.rand(len(values)) + keep_prob
        random_index = random_index.int().bool()
        index = index[random_index]
        values = values[random_index] / keep_prob
        return torch.sparse_coo_tensor(index.t(), values, size)

    def computer(self):
        users_emb = self.embedding_user.weight
        items_emb = self.embedding_item.weight
        all_emb = torch.cat([users_emb, items_emb])
        embs = [all_emb]
        if self.config["dropout"] and self.training:
            g_droped = self.__dropout_x(self.Graph, self.keep_prob)
        else:
            g_droped = self.Graph
        for layer in range(self.n_layers):
            all_emb = torch.sparse.mm(g_droped, all_emb)
            embs.append(all_emb)
        embs = torch.stack(embs, dim=1)
        light_out = torch.mean(embs, dim=1)
        users, items = torch.split(light_out, [self.num_users, self.num_items])
        return users, items

    def getUsersRating(self, users, all_users, all_items):
        users_emb = all_users[users.long()]
        rating = self.f(torch.matmul(users_emb, all_items.t()))
        return rating

    def getEmbedding(self, all_users, all_items, users, pos_items, neg_items):
        users_emb = all_users[users]
        pos_emb = all_items[pos_items]
        neg_emb = all_items[neg_items]
        users_emb_ego = self.embedding_user(users)
        pos_emb_ego = self.embedding_item(pos_items)
        neg_emb_ego = self.embedding_item(neg_items)
        return users_emb, pos_emb, neg_emb, users_emb_ego, pos_emb_ego, neg_emb_ego

    def bpr_loss(self, all_users, all_items, users, pos, neg):
        (users_emb, pos_emb, neg_emb, userEmb0, posEmb0, negEmb0) = self.getEmbedding(
            all_users, all_items, users.long(), pos.long(), neg.long())
        reg_loss = (1 / 2) * (userEmb0.norm(2).pow(2) + posEmb0.norm(2).pow(2)
                              + negEmb0.norm(2).pow(2)) / float(len(users))
        pos_scores = torch.mul(users_emb, pos_emb)
        pos_scores = torch.sum(pos_scores, dim=1)
        neg_scores = torch.mul(users_emb, neg_emb)
        neg_scores = torch.sum(neg_scores, dim=1)
        loss = torch.mean(F.softplus(neg_scores - pos_scores))
        return loss, reg_loss

    def forward(self, users, pos, neg, test_users, exclude_index, exclude_items):
        all_users, all_items = self.computer()
        loss, reg_loss = self.bpr_loss(all_users, all_items, users, pos, neg)
        loss = loss + reg_loss * self.config["decay"]
        # evaluation as Procedure.Test runs it: no graph through the ratings
        with torch.no_grad():
            rating = self.getUsersRating(test_users, all_users, all_items)
            rating[exclude_index, exclude_items] = -(1 << 10)
            _, rating_K = torch.topk(rating, k=self.config["topks"][0])
        return loss, rating_K, rating


config = {"latent_dim_rec": 8, "lightGCN_n_layers": 3, "keep_prob": 0.6, "A_split": False, "pretrain": 0,
          "dropout": 0, "decay": 1e-4, "topks": [4]}
n_users, n_items = 7, 11
_g = torch.Generator().manual_seed(3)
_interactions = (torch.rand(n_users, n_items, generator=_g) < 0.3).long()
torch.manual_seed(0)
model = LightGCN(config, BasicDataset(n_users, n_items, _interactions)).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    users = torch.randint(0, n_users, (8,), generator=g)
    pos = torch.randint(0, n_items, (8,), generator=g)
    neg = torch.randint(0, n_items, (8,), generator=g)
    test_users = torch.tensor([0, 2, 5])
    seen = _interactions[test_users].nonzero()
    return users, pos, neg, test_users, seen[:, 0], seen[:, 1]
