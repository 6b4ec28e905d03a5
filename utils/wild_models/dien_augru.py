"""DIEN (Deep Interest Evolution Network) as DeepCTR-Torch writes it: the
behaviour sequence embedded and packed with `pack_padded_sequence(...,
batch_first=True, enforce_sorted=False)`, an interest extractor `nn.GRU`
over the packed sequence, the auxiliary loss with negative samples masked
by `torch.arange(...) < lengths`, the target attention scores from a
local activation unit (`torch.cat([q, k, q - k, q * k], dim=-1)` into an
MLP) masked with `-2 ** 32 + 1` paddings before softmax, and the interest
evolution layer's AUGRU: a custom cell (`F.linear` over packed input and
hidden, `chunk(3, 1)`, the update gate scaled by the attention score),
run by DeepCTR's `DynamicGRU` over a `PackedSequence`'s `batch_sizes` with
`hx[0:batch]` slices, the final states gathered by `pad_packed_sequence`
and the lengths, and a sigmoid CTR output with BCE loss."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence


class AUGRUCell(nn.Module):
    def __init__(self, input_size, hidden_size, bias=True):
        super(AUGRUCell, self).__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = nn.Parameter(torch.Tensor(3 * hidden_size, input_size))
        self.register_parameter("weight_ih", self.weight_ih)
        self.weight_hh = nn.Parameter(torch.Tensor(3 * hidden_size, hidden_size))
        self.register_parameter("weight_hh", self.weight_hh)
        if bias:
            self.bias_ih = nn.Parameter(torch.Tensor(3 * hidden_size))
            self.register_parameter("bias_ih", self.bias_ih)
            self.bias_hh = nn.Parameter(torch.Tensor(3 * hidden_size))
            self.register_parameter("bias_hh", self.bias_hh)
            for tensor in [self.bias_ih, self.bias_hh]:
                nn.init.zeros_(tensor)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        for tensor in [self.weight_ih, self.weight_hh]:
            nn.init.xavier_uniform_(tensor)

    def forward(self, inputs, hx, att_score):
        gi = F.linear(inputs, self.weight_ih, self.bias_ih)
        gh = F.linear(hx, self.weight_hh, self.bias_hh)
        i_r, i_z, i_n = gi.chunk(3, 1)
        h_r, h_z, h_n = gh.chunk(3, 1)
        reset_gate = torch.sigmoid(i_r + h_r)
        update_gate = torch.sigmoid(i_z + h_z)
        new_state = torch.tanh(i_n + reset_gate * h_n)
        att_score = att_score.view(-1, 1)
        update_gate = att_score * update_gate
        hy = (1. - update_gate) * hx + update_gate * new_state
        return hy


class DynamicGRU(nn.Module):
    def __init__(self, input_size, hidden_size, bias=True, gru_type="AUGRU"):
        super(DynamicGRU, self).__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        if gru_type == "AUGRU":
            self.rnn = AUGRUCell(input_size, hidden_size, bias)

    def forward(self, inputs, att_scores=None, hx=None):
        if not isinstance(inputs, PackedSequence) or not isinstance(att_scores, PackedSequence):
            raise NotImplementedError("DynamicGRU only supports packed input and att_scores")
        inputs, batch_sizes, sorted_indices, unsorted_indices = inputs
        att_scores, _, _, _ = att_scores
        max_batch_size = int(batch_sizes[0])
        if hx is None:
            hx = torch.zeros(max_batch_size, self.hidden_size, dtype=inputs.dtype, device=inputs.device)
        outputs = torch.zeros(inputs.size(0), self.hidden_size, dtype=inputs.dtype, device=inputs.device)
        begin = 0
        for batch in batch_sizes:
            new_hx = self.rnn(inputs[begin:begin + batch], hx[0:batch], att_scores[begin:begin + batch])
            outputs[begin:begin + batch] = new_hx
            hx = new_hx
            begin += batch
        return PackedSequence(outputs, batch_sizes, sorted_indices, unsorted_indices)


class LocalActivationUnit(nn.Module):
    def __init__(self, hidden_units=(32, 16), embedding_dim=8):
        super(LocalActivationUnit, self).__init__()
        layers = []
        dims = [4 * embedding_dim] + list(hidden_units)
        for i in range(len(hidden_units)):
            layers += [nn.Linear(dims[i], dims[i + 1]), nn.Sigmoid()]
        self.dnn = nn.Sequential(*layers)
        self.dense = nn.Linear(hidden_units[-1], 1)

    def forward(self, query, user_behavior):
        user_behavior_len = user_behavior.size(1)
        queries = query.expand(-1, user_behavior_len, -1)
        attention_input = torch.cat([queries, user_behavior, queries - user_behavior, queries * user_behavior],
                                    dim=-1)
        attention_output = self.dnn(attention_input)
        attention_score = self.dense(attention_output)
        return attention_score


class DIEN(nn.Module):
    def __init__(self, n_items=50, n_cates=10, embedding_dim=4, gru_hidden=8, alpha=1.0):
        super().__init__()
        self.item_embedding = nn.Embedding(n_items, embedding_dim, padding_idx=0)
        self.cate_embedding = nn.Embedding(n_cates, embedding_dim, padding_idx=0)
        dim = 2 * embedding_dim
        self.interest_extractor = nn.GRU(input_size=dim, hidden_size=dim, batch_first=True, bidirectional=False)
        self.auxiliary_net = nn.Sequential(nn.Linear(2 * dim, 16), nn.Sigmoid(), nn.Linear(16, 1), nn.Sigmoid())
        self.attention = LocalActivationUnit(embedding_dim=dim)
        self.interest_evolution = DynamicGRU(input_size=dim, hidden_size=dim, gru_type="AUGRU")
        self.dnn = nn.Sequential(nn.Linear(3 * dim, 32), nn.ReLU(), nn.Linear(32, 1))
        self.alpha = alpha

    def embed(self, items, cates):
        return torch.cat([self.item_embedding(items), self.cate_embedding(cates)], dim=-1)

    def _cal_auxiliary_loss(self, states, click_seq, noclick_seq, keys_length):
        batch_size, max_length, embedding_size = states.size()
        mask_shape = torch.arange(max_length - 1, device=states.device).repeat(batch_size, 1)
        mask = (mask_shape < (keys_length.view(-1, 1) - 1)).float()
        click_input = torch.cat([states[:, :-1, :], click_seq[:, 1:, :]], dim=-1)
        noclick_input = torch.cat([states[:, :-1, :], noclick_seq[:, 1:, :]], dim=-1)
        click_p = self.auxiliary_net(click_input).squeeze(-1)
        noclick_p = self.auxiliary_net(noclick_input).squeeze(-1)
        click_loss = F.binary_cross_entropy(click_p, torch.ones_like(click_p), weight=mask, reduction="sum")
        noclick_loss = F.binary_cross_entropy(noclick_p, torch.zeros_like(noclick_p), weight=mask, reduction="sum")
        return (click_loss + noclick_loss) / mask.sum()

    def forward(self, target_item, target_cate, hist_items, hist_cates, neg_items, neg_cates, keys_length, label):
        query = self.embed(target_item, target_cate).unsqueeze(1)
        keys = self.embed(hist_items, hist_cates)
        neg_keys = self.embed(neg_items, neg_cates)
        max_length = keys.size(1)
        packed_keys = pack_padded_sequence(keys, lengths=keys_length.cpu(), batch_first=True, enforce_sorted=False)
        packed_interests, _ = self.interest_extractor(packed_keys)
        interests, _ = pad_packed_sequence(packed_interests, batch_first=True, padding_value=0.0,
                                           total_length=max_length)
        aux_loss = self._cal_auxiliary_loss(interests, keys, neg_keys, keys_length)
        scores = self.attention(query, interests).transpose(1, 2)  # [B, 1, T]
        key_masks = torch.arange(max_length, device=keys.device).repeat(keys.size(0), 1)
        key_masks = key_masks < keys_length.view(-1, 1)
        paddings = torch.ones_like(scores) * (-2 ** 32 + 1)
        scores = torch.where(key_masks.unsqueeze(1), scores, paddings)
        scores = F.softmax(scores, dim=-1).squeeze(1)
        packed_interests = pack_padded_sequence(interests, lengths=keys_length.cpu(), batch_first=True,
                                                enforce_sorted=False)
        packed_scores = pack_padded_sequence(scores, lengths=keys_length.cpu(), batch_first=True,
                                             enforce_sorted=False)
        outputs = self.interest_evolution(packed_interests, packed_scores)
        outputs, _ = pad_packed_sequence(outputs, batch_first=True, padding_value=0.0, total_length=max_length)
        final = outputs[torch.arange(outputs.size(0)), keys_length - 1]
        logit = self.dnn(torch.cat([query.squeeze(1), final, keys.mean(1)], dim=-1)).squeeze(-1)
        y_pred = torch.sigmoid(logit)
        loss = F.binary_cross_entropy(y_pred, label) + self.alpha * aux_loss
        return y_pred, loss


torch.manual_seed(0)
model = DIEN().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    batch, length = 4, 6
    keys_length = torch.tensor([6, 3, 5, 2])
    pad = torch.arange(length).expand(batch, length) < keys_length.view(-1, 1)
    hist_items = torch.randint(1, 50, (batch, length), generator=g) * pad
    hist_cates = torch.randint(1, 10, (batch, length), generator=g) * pad
    neg_items = torch.randint(1, 50, (batch, length), generator=g) * pad
    neg_cates = torch.randint(1, 10, (batch, length), generator=g) * pad
    return (torch.randint(1, 50, (batch,), generator=g), torch.randint(1, 10, (batch,), generator=g),
            hist_items, hist_cates, neg_items, neg_cates, keys_length,
            torch.randint(0, 2, (batch,), generator=g).float())
