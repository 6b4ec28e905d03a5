"""Progressive Layered Extraction (and MMoE) as the Multitask-Recommendation
library (MTReclib) writes it: field offsets in a numpy array from
`np.cumsum(field_dims)[:-1]` added by `x.new_tensor(self.offsets)`, one
embedding table for every field, numerical features by a Linear, an
`EmbeddingLayer`/`MultiLayerPerceptron` pair of helpers with
`output_layer=False`, PLE levels of shared and task-specific experts in
nested ModuleLists, gates of softmaxed Linears whose inputs and expert
sets differ per level (`torch.cat` of expert outputs, `torch.bmm(gate.
unsqueeze(1), experts)`), the last level without the shared gate, towers
ending in `torch.sigmoid(...).squeeze(1)`, a list of results, and the
training loss of the multi-task recipe: BCE per task summed with
uncertainty weights `exp(-log_var) * loss + log_var` (Kendall et al.)
held in a Parameter."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class EmbeddingLayer(nn.Module):
    def __init__(self, field_dims, embed_dim):
        super().__init__()
        self.embedding = nn.Embedding(sum(field_dims), embed_dim)
        self.offsets = np.array((0, *np.cumsum(field_dims)[:-1]), dtype=np.int64)
        nn.init.xavier_uniform_(self.embedding.weight.data)

    def forward(self, x):
        x = x + x.new_tensor(self.offsets).unsqueeze(0)
        return self.embedding(x)


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


class PLEModel(nn.Module):
    def __init__(self, categorical_field_dims, numerical_num, embed_dim, bottom_mlp_dims, tower_mlp_dims,
                 task_num, shared_expert_num, specific_expert_num, dropout):
        super().__init__()
        self.embedding = EmbeddingLayer(categorical_field_dims, embed_dim)
        self.numerical_layer = nn.Linear(numerical_num, embed_dim)
        self.embed_output_dim = (len(categorical_field_dims) + 1) * embed_dim
        self.task_num = task_num
        self.shared_expert_num = shared_expert_num
        self.specific_expert_num = specific_expert_num
        self.layers_num = len(bottom_mlp_dims)

        self.task_experts = [[0] * self.task_num for _ in range(self.layers_num)]
        self.task_gates = [[0] * self.task_num for _ in range(self.layers_num)]
        self.share_experts = [0] * self.layers_num
        self.share_gates = [0] * self.layers_num
        for i in range(self.layers_num):
            input_dim = self.embed_output_dim if 0 == i else bottom_mlp_dims[i - 1]
            self.share_experts[i] = nn.ModuleList([
                MultiLayerPerceptron(input_dim, [bottom_mlp_dims[i]], dropout, output_layer=False)
                for _ in range(self.shared_expert_num)])
            self.share_gates[i] = nn.Sequential(
                nn.Linear(input_dim, shared_expert_num + task_num * specific_expert_num), nn.Softmax(dim=1))
            for j in range(task_num):
                self.task_experts[i][j] = nn.ModuleList([
                    MultiLayerPerceptron(input_dim, [bottom_mlp_dims[i]], dropout, output_layer=False)
                    for _ in range(self.specific_expert_num)])
                self.task_gates[i][j] = nn.Sequential(
                    nn.Linear(input_dim, shared_expert_num + specific_expert_num), nn.Softmax(dim=1))
            self.task_experts[i] = nn.ModuleList(self.task_experts[i])
            self.task_gates[i] = nn.ModuleList(self.task_gates[i])
        self.task_experts = nn.ModuleList(self.task_experts)
        self.task_gates = nn.ModuleList(self.task_gates)
        self.share_experts = nn.ModuleList(self.share_experts)
        self.share_gates = nn.ModuleList(self.share_gates)
        self.tower = nn.ModuleList([MultiLayerPerceptron(bottom_mlp_dims[-1], tower_mlp_dims, dropout)
                                    for _ in range(task_num)])
        self.log_vars = nn.Parameter(torch.zeros(task_num))

    def forward(self, categorical_x, numerical_x, labels):
        categorical_emb = self.embedding(categorical_x)
        numerical_emb = self.numerical_layer(numerical_x).unsqueeze(1)
        emb = torch.cat([categorical_emb, numerical_emb], 1).view(-1, self.embed_output_dim)

        task_fea = [emb for _ in range(self.task_num + 1)]
        for i in range(self.layers_num):
            for j in range(self.task_num):
                task_fea_list = [expert(task_fea[j]).unsqueeze(1) for expert in self.task_experts[i][j]]
                share_fea_list = [expert(task_fea[-1]).unsqueeze(1) for expert in self.share_experts[i]]
                fea = torch.cat(task_fea_list + share_fea_list, dim=1)
                gate_value = self.task_gates[i][j](task_fea[j]).unsqueeze(1)
                task_fea[j] = torch.bmm(gate_value, fea).squeeze(1)
            if i != self.layers_num - 1:
                # the shared branch's gate sees every expert of the level
                task_fea_list = [expert(task_fea[-1]).unsqueeze(1)
                                 for j in range(self.task_num) for expert in self.task_experts[i][j]]
                share_fea_list = [expert(task_fea[-1]).unsqueeze(1) for expert in self.share_experts[i]]
                fea = torch.cat(task_fea_list + share_fea_list, dim=1)
                gate_value = self.share_gates[i](task_fea[-1]).unsqueeze(1)
                task_fea[-1] = torch.bmm(gate_value, fea).squeeze(1)

        results = [torch.sigmoid(self.tower[i](task_fea[i]).squeeze(1)) for i in range(self.task_num)]
        loss = 0
        for i in range(self.task_num):
            task_loss = F.binary_cross_entropy(results[i], labels[:, i].float())
            precision = torch.exp(-self.log_vars[i])
            loss = loss + precision * task_loss + self.log_vars[i]
        return results, loss


torch.manual_seed(0)
model = PLEModel(categorical_field_dims=[5, 7, 3, 9], numerical_num=4, embed_dim=6, bottom_mlp_dims=(16, 12),
                 tower_mlp_dims=(8,), task_num=2, shared_expert_num=2, specific_expert_num=1,
                 dropout=0.2).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    B = 6
    categorical_x = torch.stack([torch.randint(0, d, (B,), generator=g) for d in (5, 7, 3, 9)], 1)
    numerical_x = torch.randn(B, 4, generator=g)
    labels = torch.randint(0, 2, (B, 2), generator=g)
    return categorical_x, numerical_x, labels
