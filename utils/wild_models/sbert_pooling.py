"""A sentence-transformers bi-encoder trained with
MultipleNegativesRankingLoss: a small BERT whose extended attention mask
is `(1.0 - mask[:, None, None, :]) * torch.finfo(dtype).min`, the
`features` dict passed from module to module (`features.update(...)`),
mean pooling with `attention_mask.unsqueeze(-1).expand(token_embeddings
.size()).float()` and `torch.clamp(sum_mask, min=1e-9)`, a Normalize
module (`F.normalize(p=2, dim=1)`), cosine similarity by `torch.mm` of
normalized embeddings times a scale, and cross entropy against
`torch.arange(len(scores))` labels."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class BertSelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.num_attention_heads = heads
        self.attention_head_size = hidden // heads
        self.all_head_size = hidden
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask):
        q = self.transpose_for_scores(self.query(hidden_states))
        k = self.transpose_for_scores(self.key(hidden_states))
        v = self.transpose_for_scores(self.value(hidden_states))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.attention_head_size)
        scores = scores + attention_mask
        probs = nn.functional.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        return ctx.view(ctx.size()[:-2] + (self.all_head_size,))


class BertLayer(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.attention = BertSelfAttention(hidden, heads)
        self.attn_out = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, 4 * hidden)
        self.output = nn.Linear(4 * hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, h, mask):
        h = self.ln1(h + self.attn_out(self.attention(h, mask)))
        return self.ln2(h + self.output(F.gelu(self.intermediate(h))))


class Transformer(nn.Module):
    """The word-embedding module of a SentenceTransformer: features in, features out."""

    def __init__(self, vocab=64, hidden=32, heads=4, layers=2, max_pos=32):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden, padding_idx=0)
        self.position_embeddings = nn.Embedding(max_pos, hidden)
        self.token_type_embeddings = nn.Embedding(2, hidden)
        self.LayerNorm = nn.LayerNorm(hidden, eps=1e-12)
        self.layer = nn.ModuleList([BertLayer(hidden, heads) for _ in range(layers)])

    def forward(self, features):
        input_ids, attention_mask = features["input_ids"], features["attention_mask"]
        token_type_ids = features.get("token_type_ids")
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long, device=input_ids.device).unsqueeze(0)
        h = self.word_embeddings(input_ids) + self.position_embeddings(position_ids) \
            + self.token_type_embeddings(token_type_ids)
        h = self.LayerNorm(h)
        dtype = h.dtype
        extended = attention_mask[:, None, None, :].to(dtype=dtype)
        extended = (1.0 - extended) * torch.finfo(dtype).min
        for layer in self.layer:
            h = layer(h, extended)
        features.update({"token_embeddings": h, "attention_mask": attention_mask})
        return features


class Pooling(nn.Module):
    def __init__(self, word_embedding_dimension, pooling_mode_mean_tokens=True, pooling_mode_cls_token=False):
        super().__init__()
        self.word_embedding_dimension = word_embedding_dimension
        self.pooling_mode_mean_tokens = pooling_mode_mean_tokens
        self.pooling_mode_cls_token = pooling_mode_cls_token

    def forward(self, features):
        token_embeddings = features["token_embeddings"]
        attention_mask = features["attention_mask"]
        output_vectors = []
        if self.pooling_mode_cls_token:
            output_vectors.append(features.get("cls_token_embeddings", token_embeddings[:, 0]))
        if self.pooling_mode_mean_tokens:
            input_mask_expanded = attention_mask.unsqueeze(-1).expand(token_embeddings.size()).float()
            sum_embeddings = torch.sum(token_embeddings * input_mask_expanded, 1)
            if "token_weights_sum" in features:
                sum_mask = features["token_weights_sum"].unsqueeze(-1).expand(sum_embeddings.size())
            else:
                sum_mask = input_mask_expanded.sum(1)
            sum_mask = torch.clamp(sum_mask, min=1e-9)
            output_vectors.append(sum_embeddings / sum_mask)
        output_vector = torch.cat(output_vectors, 1)
        features.update({"sentence_embedding": output_vector})
        return features


class Normalize(nn.Module):
    def forward(self, features):
        features.update({"sentence_embedding": F.normalize(features["sentence_embedding"], p=2, dim=1)})
        return features


def cos_sim(a, b):
    if not isinstance(a, torch.Tensor):
        a = torch.tensor(a)
    if not isinstance(b, torch.Tensor):
        b = torch.tensor(b)
    if len(a.shape) == 1:
        a = a.unsqueeze(0)
    if len(b.shape) == 1:
        b = b.unsqueeze(0)
    a_norm = torch.nn.functional.normalize(a, p=2, dim=1)
    b_norm = torch.nn.functional.normalize(b, p=2, dim=1)
    return torch.mm(a_norm, b_norm.transpose(0, 1))


class BiEncoderWithMNRL(nn.Module):
    def __init__(self, scale=20.0):
        super().__init__()
        self.encoder = nn.Sequential(Transformer(), Pooling(32, pooling_mode_cls_token=True), Normalize())
        self.scale = scale
        self.similarity_fct = cos_sim
        self.cross_entropy_loss = nn.CrossEntropyLoss()

    def forward(self, anchor_ids, anchor_mask, positive_ids, positive_mask):
        sentence_features = [{"input_ids": anchor_ids, "attention_mask": anchor_mask},
                             {"input_ids": positive_ids, "attention_mask": positive_mask}]
        reps = [self.encoder(sentence_feature)["sentence_embedding"] for sentence_feature in sentence_features]
        embeddings_a = reps[0]
        embeddings_b = torch.cat(reps[1:])
        scores = self.similarity_fct(embeddings_a, embeddings_b) * self.scale
        range_labels = torch.arange(0, scores.size(0), device=scores.device)
        return self.cross_entropy_loss(scores, range_labels), embeddings_a


torch.manual_seed(0)
model = BiEncoderWithMNRL().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    a = torch.randint(1, 64, (3, 7), generator=g)
    am = torch.ones(3, 7, dtype=torch.long)
    am[0, 5:] = 0
    a[0, 5:] = 0
    p = torch.randint(1, 64, (3, 9), generator=g)
    pm = torch.ones(3, 9, dtype=torch.long)
    pm[2, 4:] = 0
    p[2, 4:] = 0
    return a, am, p, pm
