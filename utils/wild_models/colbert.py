"""ColBERT late interaction in the style of the ColBERT repository's
modeling code: queries padded with [MASK] tokens (query augmentation), a
linear projection to a small dimension, `torch.nn.functional.normalize`
per token, documents masked by a punctuation skiplist built from
`input_ids.cpu().tolist()` with a Python list comprehension, and the
MaxSim score `(Q @ D.permute(0, 2, 1)).max(2).values.sum(1)` trained with
a pairwise cross-entropy over (positive, negative) documents."""
import torch
import torch.nn as nn
import torch.nn.functional as F

MASK_ID, PAD_ID = 3, 0
SKIPLIST = {5, 6, 7}


class TinyBert(nn.Module):
    def __init__(self, vocab=64, hidden=32, heads=4, layers=2):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, hidden, padding_idx=PAD_ID)
        self.pos = nn.Embedding(32, hidden)
        layer = nn.TransformerEncoderLayer(hidden, heads, 2 * hidden, dropout=0.1, batch_first=True,
                                           activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, input_ids, attention_mask):
        pos = torch.arange(input_ids.size(1), device=input_ids.device)
        x = self.embeddings(input_ids) + self.pos(pos)[None]
        return self.encoder(x, src_key_padding_mask=attention_mask == 0)


class ColBERT(nn.Module):
    def __init__(self, dim=16, hidden=32):
        super().__init__()
        self.bert = TinyBert(hidden=hidden)
        self.linear = nn.Linear(hidden, dim, bias=False)
        self.skiplist = {w: True for w in SKIPLIST}
        self.pad_token = PAD_ID

    @property
    def device(self):
        return self.linear.weight.device

    def query(self, input_ids, attention_mask):
        input_ids, attention_mask = input_ids.to(self.device), attention_mask.to(self.device)
        Q = self.bert(input_ids, attention_mask=attention_mask)
        Q = self.linear(Q)
        mask = torch.tensor(self.mask(input_ids, skiplist=[]), device=self.device).unsqueeze(2).float()
        Q = Q * mask
        return torch.nn.functional.normalize(Q, p=2, dim=2)

    def doc(self, input_ids, attention_mask):
        input_ids, attention_mask = input_ids.to(self.device), attention_mask.to(self.device)
        D = self.bert(input_ids, attention_mask=attention_mask)
        D = self.linear(D)
        mask = torch.tensor(self.mask(input_ids, skiplist=self.skiplist), device=self.device).unsqueeze(2).float()
        D = D * mask
        return torch.nn.functional.normalize(D, p=2, dim=2)

    def mask(self, input_ids, skiplist):
        return [[(x not in skiplist) and (x != self.pad_token) for x in d] for d in input_ids.cpu().tolist()]

    def score(self, Q, D_padded):
        return (Q @ D_padded.permute(0, 2, 1)).max(2).values.sum(1)

    def forward(self, Q, D):
        Q = self.query(*Q)
        D, D_mask = D
        D = self.doc(D, D_mask)
        nway = D.size(0) // Q.size(0)
        Q_duplicated = Q.repeat_interleave(nway, dim=0).contiguous()
        scores = self.score(Q_duplicated, D)
        scores = scores.view(-1, nway)
        labels = torch.zeros(scores.size(0), dtype=torch.long, device=scores.device)
        return F.cross_entropy(scores, labels), scores


def tensorize_queries(ids, query_maxlen):
    ids = F.pad(ids, (0, query_maxlen - ids.size(1)), value=PAD_ID)
    mask = torch.ones_like(ids)
    ids[ids == PAD_ID] = MASK_ID
    return ids, mask


torch.manual_seed(0)
model = ColBERT().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    q = tensorize_queries(torch.randint(8, 64, (2, 5), generator=g), 8)
    d = torch.randint(4, 64, (4, 10), generator=g)
    d[1, 7:] = PAD_ID
    d_mask = (d != PAD_ID).long()
    return q, (d, d_mask)
