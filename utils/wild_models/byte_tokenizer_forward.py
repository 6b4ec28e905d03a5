"""A text classifier served with its tokenizer inside forward, as
ByT5/CANINE-style byte models and small deployment wrappers do: the input
is a Python list of strings; each is normalized in Python (`str.strip`,
`lower`, `" ".join(s.split())`, `unicodedata.normalize("NFKC", ...)`),
encoded by `s.encode("utf-8")` into byte ids offset by the special
tokens, truncated to `max_len - 1`, an EOS appended, and padded into a
tensor by `torch.tensor(list_of_lists)`; the attention mask is `ids !=
PAD`; a byte-embedding encoder with strided downsampling (CANINE's
`Conv1d` over characters) and masked mean pooling feeds a classifier; the
result is a list of dicts with the label name from a tuple and a float
score by `.tolist()` per text, plus the probability tensor."""
import unicodedata

import torch
import torch.nn as nn
import torch.nn.functional as F

PAD, EOS, UNK = 0, 1, 2
OFFSET = 3


def normalize(text):
    text = unicodedata.normalize("NFKC", text)
    return " ".join(text.strip().lower().split())


class ByteClassifier(nn.Module):
    labels = ("negative", "neutral", "positive")

    def __init__(self, d=48, max_len=40, rate=4):
        super().__init__()
        self.max_len, self.rate = max_len, rate
        self.embed = nn.Embedding(256 + OFFSET, d, padding_idx=PAD)
        self.down = nn.Conv1d(d, d, rate, stride=rate)
        layer = nn.TransformerEncoderLayer(d, 4, 2 * d, dropout=0.0, batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(d, len(self.labels))

    def tokenize(self, texts):
        rows = []
        for text in texts:
            ids = [b + OFFSET for b in normalize(text).encode("utf-8")][: self.max_len - 1] + [EOS]
            rows.append(ids)
        longest = max(len(r) for r in rows)
        longest = -(-longest // self.rate) * self.rate  # a multiple of the downsampling rate
        return torch.tensor([r + [PAD] * (longest - len(r)) for r in rows], dtype=torch.long)

    def forward(self, texts):
        if isinstance(texts, str):
            texts = [texts]
        ids = self.tokenize(texts)
        mask = ids != PAD
        x = self.embed(ids)
        x = self.down(x.transpose(1, 2)).transpose(1, 2)
        pooled_mask = mask.view(mask.shape[0], -1, self.rate).any(-1)
        x = self.encoder(x, src_key_padding_mask=~pooled_mask)
        m = pooled_mask.unsqueeze(-1).float()
        probs = F.softmax(self.head((x * m).sum(1) / m.sum(1)), dim=-1)
        scores, best = probs.max(-1)
        results = [{"label": self.labels[i], "score": round(s, 4)}
                   for i, s in zip(best.tolist(), scores.tolist())]
        return results, probs


torch.manual_seed(0)
model = ByteClassifier().eval()


def example_inputs():
    return (["  The café was GREAT!  ", "meh.", "Ｔｅｒｒｉｂｌｅ service, would not return"],)
