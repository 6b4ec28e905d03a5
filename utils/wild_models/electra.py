"""ELECTRA replaced-token-detection pretraining as the ELECTRA PyTorch
ports write it: a small generator and a discriminator sharing the token
embeddings, the generator's MLM loss over masked positions selected by
boolean indexing, tokens sampled from its logits by the Gumbel-max trick
on uniform noise passed in (`-torch.log(-torch.log(u))`), the sampled
tokens `detach`ed and put back with `torch.where`, the discriminator's
labels `(disc_input != input_ids).float()`, and
`F.binary_cross_entropy_with_logits` over the non-padding positions,
the two losses weighted and summed."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, embeddings, hidden, heads, layers, emb_dim):
        super().__init__()
        self.embeddings = embeddings
        self.embeddings_project = nn.Linear(emb_dim, hidden) if emb_dim != hidden else nn.Identity()
        self.pos = nn.Embedding(32, hidden)
        self.ln = nn.LayerNorm(hidden)
        layer = nn.TransformerEncoderLayer(hidden, heads, 4 * hidden, dropout=0.0, batch_first=True,
                                           activation="gelu")
        self.layers = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, input_ids, attention_mask):
        pos = torch.arange(input_ids.shape[1], device=input_ids.device)
        x = self.ln(self.embeddings_project(self.embeddings(input_ids)) + self.pos(pos))
        return self.layers(x, src_key_padding_mask=~attention_mask.bool())


class ElectraGenerator(nn.Module):
    def __init__(self, embeddings, vocab, emb_dim, hidden=16):
        super().__init__()
        self.electra = Encoder(embeddings, hidden, 2, 1, emb_dim)
        self.generator_predictions = nn.Sequential(nn.Linear(hidden, emb_dim), nn.GELU(), nn.LayerNorm(emb_dim))
        self.generator_lm_head_bias = nn.Parameter(torch.zeros(vocab))

    def forward(self, input_ids, attention_mask):
        h = self.generator_predictions(self.electra(input_ids, attention_mask))
        return F.linear(h, self.electra.embeddings.weight, self.generator_lm_head_bias)


class ElectraDiscriminator(nn.Module):
    def __init__(self, embeddings, emb_dim, hidden=32):
        super().__init__()
        self.electra = Encoder(embeddings, hidden, 4, 2, emb_dim)
        self.dense = nn.Linear(hidden, hidden)
        self.dense_prediction = nn.Linear(hidden, 1)

    def forward(self, input_ids, attention_mask):
        h = self.electra(input_ids, attention_mask)
        return self.dense_prediction(F.gelu(self.dense(h))).squeeze(-1)


class ELECTRAModel(nn.Module):
    def __init__(self, vocab=64, emb_dim=32, gen_weight=1.0, disc_weight=50.0, temperature=1.0):
        super().__init__()
        embeddings = nn.Embedding(vocab, emb_dim, padding_idx=0)
        self.generator = ElectraGenerator(embeddings, vocab, emb_dim)
        self.discriminator = ElectraDiscriminator(embeddings, emb_dim)
        self.gen_weight, self.disc_weight, self.temperature = gen_weight, disc_weight, temperature

    def sample(self, logits, uniform):
        gumbel = -torch.log(-torch.log(uniform + 1e-9) + 1e-9)
        return (logits.float() / self.temperature + gumbel).argmax(dim=-1)

    def forward(self, masked_inputs, is_mlm_applied, labels, attention_mask, uniform):
        gen_logits = self.generator(masked_inputs, attention_mask)
        mlm_gen_logits = gen_logits[is_mlm_applied, :]
        with torch.no_grad():
            pred_toks = self.sample(mlm_gen_logits, uniform[is_mlm_applied])
            generated = masked_inputs.clone()
            generated[is_mlm_applied] = pred_toks
            is_replaced = is_mlm_applied.clone()
            is_replaced[is_mlm_applied] = (pred_toks != labels[is_mlm_applied])
        disc_logits = self.discriminator(generated, attention_mask)
        gen_loss = F.cross_entropy(mlm_gen_logits.float(), labels[is_mlm_applied])
        non_pad = attention_mask.bool()
        disc_loss = F.binary_cross_entropy_with_logits(disc_logits[non_pad].float(),
                                                       is_replaced[non_pad].float())
        return gen_loss * self.gen_weight + disc_loss * self.disc_weight, disc_logits, generated


torch.manual_seed(0)
model = ELECTRAModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    labels = torch.randint(4, 64, (2, 10), generator=g)
    attention_mask = torch.ones(2, 10, dtype=torch.long)
    attention_mask[1, 8:] = 0
    labels = labels * attention_mask
    is_mlm = (torch.rand(2, 10, generator=g) < 0.3) & attention_mask.bool()
    is_mlm[0, 2] = True
    masked = torch.where(is_mlm, torch.full_like(labels, 3), labels)
    uniform = torch.rand(2, 10, 64, generator=g)
    return masked, is_mlm, labels, attention_mask, uniform
