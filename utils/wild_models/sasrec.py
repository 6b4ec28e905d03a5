"""SASRec as its widely used PyTorch port (pmixer/SASRec.pytorch) writes it:
item embeddings scaled by sqrt(d), learned positions from an arange tiled
over the batch (positions of padding zeroed by multiplying with the
nonzero mask), a timeline mask `~(log_seqs == 0)` multiplied in after every
block, a causal attention mask from torch.tril of ones on the fly,
nn.MultiheadAttention in its (length, batch, dim) layout with the query
layer-normed, point-wise Conv1d feed-forward by transposes, and logits as
the dot product of the final features with positive and negative item
embeddings."""
import numpy as np
import torch
import torch.nn as nn


class PointWiseFeedForward(nn.Module):
    def __init__(self, hidden_units, dropout_rate):
        super().__init__()
        self.conv1 = nn.Conv1d(hidden_units, hidden_units, kernel_size=1)
        self.dropout1 = nn.Dropout(p=dropout_rate)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv1d(hidden_units, hidden_units, kernel_size=1)
        self.dropout2 = nn.Dropout(p=dropout_rate)

    def forward(self, inputs):
        outputs = self.dropout2(self.conv2(self.relu(self.dropout1(self.conv1(inputs.transpose(-1, -2))))))
        outputs = outputs.transpose(-1, -2)
        outputs += inputs
        return outputs


class SASRec(nn.Module):
    def __init__(self, item_num=40, maxlen=8, hidden_units=16, num_blocks=2, num_heads=2,
                 dropout_rate=0.2):
        super().__init__()
        self.item_num = item_num
        self.item_emb = nn.Embedding(item_num + 1, hidden_units, padding_idx=0)
        self.pos_emb = nn.Embedding(maxlen + 1, hidden_units, padding_idx=0)
        self.emb_dropout = nn.Dropout(p=dropout_rate)
        self.attention_layernorms = nn.ModuleList()
        self.attention_layers = nn.ModuleList()
        self.forward_layernorms = nn.ModuleList()
        self.forward_layers = nn.ModuleList()
        self.last_layernorm = nn.LayerNorm(hidden_units, eps=1e-8)
        for _ in range(num_blocks):
            self.attention_layernorms.append(nn.LayerNorm(hidden_units, eps=1e-8))
            self.attention_layers.append(nn.MultiheadAttention(hidden_units, num_heads, dropout_rate))
            self.forward_layernorms.append(nn.LayerNorm(hidden_units, eps=1e-8))
            self.forward_layers.append(PointWiseFeedForward(hidden_units, dropout_rate))

    def log2feats(self, log_seqs):
        seqs = self.item_emb(log_seqs)
        seqs *= self.item_emb.embedding_dim ** 0.5
        poss = torch.arange(1, log_seqs.shape[1] + 1, device=log_seqs.device).unsqueeze(0)
        poss = poss.repeat(log_seqs.shape[0], 1)
        poss = poss * (log_seqs != 0)
        seqs += self.pos_emb(poss)
        seqs = self.emb_dropout(seqs)

        tl = seqs.shape[1]
        attention_mask = ~torch.tril(torch.ones((tl, tl), dtype=torch.bool, device=seqs.device))
        timeline_mask = ~(log_seqs == 0)
        for i in range(len(self.attention_layers)):
            seqs = torch.transpose(seqs, 0, 1)
            Q = self.attention_layernorms[i](seqs)
            mha_outputs, _ = self.attention_layers[i](Q, seqs, seqs, attn_mask=attention_mask)
            seqs = Q + mha_outputs
            seqs = torch.transpose(seqs, 0, 1)
            seqs = self.forward_layernorms[i](seqs)
            seqs = self.forward_layers[i](seqs)
            seqs *= timeline_mask.unsqueeze(-1)
        return self.last_layernorm(seqs)

    def forward(self, log_seqs, pos_seqs, neg_seqs):
        log_feats = self.log2feats(log_seqs)
        pos_embs = self.item_emb(pos_seqs)
        neg_embs = self.item_emb(neg_seqs)
        pos_logits = (log_feats * pos_embs).sum(dim=-1)
        neg_logits = (log_feats * neg_embs).sum(dim=-1)
        return pos_logits, neg_logits


torch.manual_seed(0)
model = SASRec().eval()
check_gradients = True


def example_inputs():
    rng = np.random.default_rng(1)
    seqs = rng.integers(1, 41, size=(3, 8))
    seqs[0, :3] = 0  # left-padded histories
    seqs[2, :5] = 0
    log_seqs = torch.from_numpy(seqs)
    pos = torch.from_numpy(rng.integers(1, 41, size=(3, 8)))
    neg = torch.from_numpy(rng.integers(1, 41, size=(3, 8)))
    return log_seqs, pos, neg
