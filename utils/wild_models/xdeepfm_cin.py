"""xDeepFM as DeepCTR-Torch writes it: one flat input tensor whose columns
are looked up through a `feature_index` OrderedDict of (start, end)
slices, sparse features embedded by an `nn.ModuleDict` of `nn.Embedding`s
after `.long()`, dense features concatenated as values, a linear part with
its own one-dimensional embeddings summed over fields, the Compressed
Interaction Network (`torch.einsum('bhd,bmd->bhmd')`, reshape, a kernel-1
Conv1d, `split_half` by `torch.split(x, 2 * [size // 2], 1)`), a DNN tower,
and the sigmoid output with a BCE loss and L2 regularization summed over
embedding weights."""
from collections import OrderedDict, namedtuple

import torch
import torch.nn as nn
import torch.nn.functional as F

SparseFeat = namedtuple("SparseFeat", ["name", "vocabulary_size", "embedding_dim"])
DenseFeat = namedtuple("DenseFeat", ["name", "dimension"])


def build_input_features(feature_columns):
    features = OrderedDict()
    start = 0
    for feat in feature_columns:
        feat_name = feat.name
        if feat_name in features:
            continue
        if isinstance(feat, SparseFeat):
            features[feat_name] = (start, start + 1)
            start += 1
        elif isinstance(feat, DenseFeat):
            features[feat_name] = (start, start + feat.dimension)
            start += feat.dimension
    return features


def create_embedding_matrix(feature_columns, init_std=0.0001, linear=False):
    sparse_feature_columns = [x for x in feature_columns if isinstance(x, SparseFeat)]
    embedding_dict = nn.ModuleDict({feat.name: nn.Embedding(feat.vocabulary_size,
                                                            feat.embedding_dim if not linear else 1)
                                    for feat in sparse_feature_columns})
    for tensor in embedding_dict.values():
        nn.init.normal_(tensor.weight, mean=0, std=init_std)
    return embedding_dict


class Linear(nn.Module):
    def __init__(self, feature_columns, feature_index, init_std=0.0001):
        super().__init__()
        self.feature_index = feature_index
        self.sparse_feature_columns = [x for x in feature_columns if isinstance(x, SparseFeat)]
        self.dense_feature_columns = [x for x in feature_columns if isinstance(x, DenseFeat)]
        self.embedding_dict = create_embedding_matrix(feature_columns, init_std, linear=True)
        self.weight = nn.Parameter(torch.Tensor(sum(fc.dimension for fc in self.dense_feature_columns), 1))
        torch.nn.init.normal_(self.weight, mean=0, std=init_std)

    def forward(self, X):
        sparse_embedding_list = [self.embedding_dict[feat.name](
            X[:, self.feature_index[feat.name][0]:self.feature_index[feat.name][1]].long())
            for feat in self.sparse_feature_columns]
        dense_value_list = [X[:, self.feature_index[feat.name][0]:self.feature_index[feat.name][1]]
                            for feat in self.dense_feature_columns]
        linear_logit = torch.zeros([X.shape[0], 1]).to(X.device)
        if len(sparse_embedding_list) > 0:
            sparse_embedding_cat = torch.cat(sparse_embedding_list, dim=-1)
            sparse_feat_logit = torch.sum(sparse_embedding_cat, dim=-1, keepdim=False)
            linear_logit += sparse_feat_logit
        if len(dense_value_list) > 0:
            dense_value_logit = torch.cat(dense_value_list, dim=-1).matmul(self.weight)
            linear_logit += dense_value_logit
        return linear_logit


class CIN(nn.Module):
    def __init__(self, field_size, layer_size=(16, 16), activation="relu", split_half=True):
        super().__init__()
        self.layer_size = layer_size
        self.field_nums = [field_size]
        self.split_half = split_half
        self.activation = getattr(F, activation)
        self.conv1ds = nn.ModuleList()
        for i, size in enumerate(self.layer_size):
            self.conv1ds.append(nn.Conv1d(self.field_nums[-1] * self.field_nums[0], size, 1))
            if self.split_half:
                if i != len(self.layer_size) - 1 and size % 2 > 0:
                    raise ValueError("layer_size must be even number except for the last layer when split_half=True")
                self.field_nums.append(size // 2)
            else:
                self.field_nums.append(size)

    def forward(self, inputs):
        if len(inputs.shape) != 3:
            raise ValueError("Unexpected inputs dimensions %d, expect to be 3 dimensions" % (len(inputs.shape)))
        batch_size = inputs.shape[0]
        dim = inputs.shape[-1]
        hidden_nn_layers = [inputs]
        final_result = []
        for i, size in enumerate(self.layer_size):
            x = torch.einsum("bhd,bmd->bhmd", hidden_nn_layers[-1], hidden_nn_layers[0])
            x = x.reshape(batch_size, hidden_nn_layers[-1].shape[1] * hidden_nn_layers[0].shape[1], dim)
            x = self.conv1ds[i](x)
            curr_out = self.activation(x)
            if self.split_half:
                if i != len(self.layer_size) - 1:
                    next_hidden, direct_connect = torch.split(curr_out, 2 * [size // 2], 1)
                else:
                    direct_connect = curr_out
                    next_hidden = 0
            else:
                direct_connect = curr_out
                next_hidden = curr_out
            final_result.append(direct_connect)
            hidden_nn_layers.append(next_hidden)
        result = torch.cat(final_result, dim=1)
        result = torch.sum(result, -1)
        return result


class DNN(nn.Module):
    def __init__(self, inputs_dim, hidden_units, dropout_rate=0.0, use_bn=False):
        super().__init__()
        hidden_units = [inputs_dim] + list(hidden_units)
        self.linears = nn.ModuleList([nn.Linear(hidden_units[i], hidden_units[i + 1])
                                      for i in range(len(hidden_units) - 1)])
        self.activation_layers = nn.ModuleList([nn.ReLU(inplace=True) for _ in range(len(hidden_units) - 1)])
        self.dropout = nn.Dropout(dropout_rate)

    def forward(self, inputs):
        deep_input = inputs
        for i in range(len(self.linears)):
            fc = self.linears[i](deep_input)
            fc = self.activation_layers[i](fc)
            fc = self.dropout(fc)
            deep_input = fc
        return deep_input


class xDeepFM(nn.Module):
    def __init__(self, feature_columns, dnn_hidden_units=(32, 16), cin_layer_size=(16, 16), l2_reg_embedding=1e-5):
        super().__init__()
        self.feature_index = build_input_features(feature_columns)
        self.sparse_feature_columns = [x for x in feature_columns if isinstance(x, SparseFeat)]
        self.dense_feature_columns = [x for x in feature_columns if isinstance(x, DenseFeat)]
        self.embedding_dict = create_embedding_matrix(feature_columns, init_std=0.01)
        self.linear_model = Linear(feature_columns, self.feature_index)
        self.l2_reg_embedding = l2_reg_embedding
        embedding_size = self.sparse_feature_columns[0].embedding_dim
        dnn_in = len(self.sparse_feature_columns) * embedding_size + sum(
            f.dimension for f in self.dense_feature_columns)
        self.dnn = DNN(dnn_in, dnn_hidden_units)
        self.dnn_linear = nn.Linear(dnn_hidden_units[-1], 1, bias=False)
        field_num = len(self.embedding_dict)
        self.featuremap_num = sum(cin_layer_size[:-1]) // 2 + cin_layer_size[-1]
        self.cin = CIN(field_num, cin_layer_size)
        self.cin_linear = nn.Linear(self.featuremap_num, 1, bias=False)
        self.bias = nn.Parameter(torch.zeros((1,)))

    def input_from_feature_columns(self, X):
        sparse_embedding_list = [self.embedding_dict[feat.name](
            X[:, self.feature_index[feat.name][0]:self.feature_index[feat.name][1]].long())
            for feat in self.sparse_feature_columns]
        dense_value_list = [X[:, self.feature_index[feat.name][0]:self.feature_index[feat.name][1]]
                            for feat in self.dense_feature_columns]
        return sparse_embedding_list, dense_value_list

    def get_regularization_loss(self):
        total = torch.zeros((1,))
        for weight in self.embedding_dict.values():
            total = total + self.l2_reg_embedding * torch.sum(torch.square(weight.weight))
        return total

    def forward(self, X, y):
        sparse_embedding_list, dense_value_list = self.input_from_feature_columns(X)
        linear_logit = self.linear_model(X)
        cin_input = torch.cat(sparse_embedding_list, dim=1)
        cin_output = self.cin(cin_input)
        cin_logit = self.cin_linear(cin_output)
        dnn_input = torch.cat([torch.flatten(torch.cat(sparse_embedding_list, dim=-1), start_dim=1),
                               torch.flatten(torch.cat(dense_value_list, dim=-1), start_dim=1)], dim=-1)
        dnn_output = self.dnn(dnn_input)
        dnn_logit = self.dnn_linear(dnn_output)
        final_logit = linear_logit + dnn_logit + cin_logit + self.bias
        y_pred = torch.sigmoid(final_logit)
        loss = F.binary_cross_entropy(y_pred.squeeze(), y.squeeze(), reduction="sum")
        total_loss = loss + self.get_regularization_loss()
        return y_pred, total_loss


FEATURES = [SparseFeat("C1", 20, 8), SparseFeat("C2", 15, 8), SparseFeat("C3", 9, 8), SparseFeat("C4", 30, 8),
            DenseFeat("I1", 1), DenseFeat("I2", 1)]
torch.manual_seed(0)
model = xDeepFM(FEATURES).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    cols = [torch.randint(0, f.vocabulary_size, (6, 1), generator=g).float() for f in FEATURES[:4]]
    cols += [torch.rand(6, 1, generator=g), torch.rand(6, 1, generator=g)]
    return torch.cat(cols, 1), torch.randint(0, 2, (6,), generator=g).float()
