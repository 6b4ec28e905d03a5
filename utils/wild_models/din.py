"""Deep Interest Network target attention as DeepCTR-Torch and the DIN
reference ports write it: the behaviour sequence's item and category
embeddings concatenated, the target item repeated along the sequence by
`expand`, attention scores from an MLP over `[q, k, q - k, q * k]`, the
padding mask from `torch.arange(max_len) < lengths.unsqueeze(1)`, masked
scores replaced by `torch.where` with a big negative scalar (or zeros when
softmax is off, the original's choice), Dice activation with a running-mean
BatchNorm in eval and `torch.sigmoid` gating, and the interest summed by
`torch.matmul`."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Dice(nn.Module):
    def __init__(self, emb_size, dim=2, epsilon=1e-8):
        super().__init__()
        assert dim == 2 or dim == 3
        self.bn = nn.BatchNorm1d(emb_size, eps=epsilon)
        self.sigmoid = nn.Sigmoid()
        self.dim = dim
        self.alpha = nn.Parameter(torch.zeros((emb_size,)) if dim == 2 else torch.zeros((emb_size, 1)))

    def forward(self, x):
        assert x.dim() == self.dim
        if self.dim == 2:
            x_p = self.sigmoid(self.bn(x))
            out = self.alpha * (1 - x_p) * x + x_p * x
        else:
            x = torch.transpose(x, 1, 2)
            x_p = self.sigmoid(self.bn(x))
            out = self.alpha * (1 - x_p) * x + x_p * x
            out = torch.transpose(out, 1, 2)
        return out


class LocalActivationUnit(nn.Module):
    def __init__(self, hidden_units=(16, 8), embedding_dim=8):
        super().__init__()
        layers, in_dim = [], 4 * embedding_dim
        for h in hidden_units:
            layers += [nn.Linear(in_dim, h), Dice(h, dim=3)]
            in_dim = h
        self.dnn = nn.Sequential(*layers)
        self.dense = nn.Linear(hidden_units[-1], 1)

    def forward(self, query, user_behavior):
        user_behavior_len = user_behavior.size(1)
        queries = query.expand(-1, user_behavior_len, -1)
        attention_input = torch.cat([queries, user_behavior, queries - user_behavior,
                                     queries * user_behavior], dim=-1)
        return self.dense(self.dnn(attention_input))


class AttentionSequencePoolingLayer(nn.Module):
    def __init__(self, embedding_dim=8, weight_normalization=False, return_score=False):
        super().__init__()
        self.return_score = return_score
        self.weight_normalization = weight_normalization
        self.local_att = LocalActivationUnit(embedding_dim=embedding_dim)

    def forward(self, query, keys, keys_length):
        batch_size, max_length, _ = keys.size()
        keys_masks = torch.arange(max_length, device=keys_length.device, dtype=keys_length.dtype).repeat(
            batch_size, 1)
        keys_masks = keys_masks < keys_length.view(-1, 1)
        keys_masks = keys_masks.unsqueeze(1)  # (B, 1, T)
        attention_score = self.local_att(query, keys).transpose(1, 2)  # (B, 1, T)
        if self.weight_normalization:
            paddings = torch.ones_like(attention_score) * (-2 ** 32 + 1)
        else:
            paddings = torch.zeros_like(attention_score)
        outputs = torch.where(keys_masks, attention_score, paddings)
        if self.weight_normalization:
            outputs = F.softmax(outputs, dim=-1)
        if not self.return_score:
            outputs = torch.matmul(outputs, keys)  # (B, 1, E)
        return outputs


class DIN(nn.Module):
    def __init__(self, n_items=60, n_cates=12, dim=4):
        super().__init__()
        self.item_emb = nn.Embedding(n_items, dim, padding_idx=0)
        self.cate_emb = nn.Embedding(n_cates, dim, padding_idx=0)
        self.attention = AttentionSequencePoolingLayer(embedding_dim=2 * dim, weight_normalization=True)
        self.dnn = nn.Sequential(nn.Linear(4 * dim + 3, 32), Dice(32), nn.Linear(32, 16), Dice(16))
        self.out = nn.Linear(16, 1, bias=False)

    def forward(self, target_item, target_cate, hist_items, hist_cates, hist_len, dense):
        query = torch.cat([self.item_emb(target_item), self.cate_emb(target_cate)], dim=-1).unsqueeze(1)
        keys = torch.cat([self.item_emb(hist_items), self.cate_emb(hist_cates)], dim=-1)
        hist = self.attention(query, keys, hist_len)  # (B, 1, 2 * dim)
        deep_input = torch.cat([hist.squeeze(1), query.squeeze(1), dense], dim=-1)
        return torch.sigmoid(self.out(self.dnn(deep_input))).squeeze(-1)


torch.manual_seed(0)
model = DIN().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    B, T = 4, 6
    hist_len = torch.tensor([6, 3, 1, 4])
    hist_items = torch.randint(1, 60, (B, T), generator=g)
    hist_cates = torch.randint(1, 12, (B, T), generator=g)
    pad = torch.arange(T)[None] >= hist_len[:, None]
    hist_items[pad] = 0
    hist_cates[pad] = 0
    return (torch.randint(1, 60, (B,), generator=g), torch.randint(1, 12, (B,), generator=g),
            hist_items, hist_cates, hist_len, torch.randn(B, 3, generator=g))
