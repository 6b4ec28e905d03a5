"""MaskGIT's iterative parallel decoding as its PyTorch ports (dome272's
MaskGIT-pytorch, the muse/Open-MUSE samplers) write it: a bidirectional
transformer over VQ token ids with a [MASK] id and a class token, a
`torch.full` canvas of mask ids, a loop over decoding steps with a cosine
mask schedule by `math.cos(math.pi / 2 * ratio)`, greedy token choice for
unknown positions by `torch.where`, confidences from `gather` of the
softmax with `+inf` for known tokens, the number to re-mask per image as
`torch.floor(seq_len * mask_ratio)` clamped between 1 and
`unknown.sum(-1) - 1` by `torch.maximum`/`torch.minimum`, the cut-off
confidence from `torch.sort` and `gather` at that count, re-masking by
`confidence < cut_off` and the last step's choices kept as the result
(every step keeps at least one position masked), the choice temperature annealed by `(1 - ratio)`
and skipped at 0, then the codebook lookup and a small VQGAN-style conv
decoder with nearest upsampling."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class BidirectionalTransformer(nn.Module):
    def __init__(self, num_codebook_vectors=32, num_classes=4, dim=32, heads=4, layers=2, seq_len=16):
        super().__init__()
        self.tok_emb = nn.Embedding(num_codebook_vectors + 1 + num_classes, dim)
        self.pos_emb = nn.Parameter(torch.zeros(1, seq_len + 1, dim).normal_(0, 1.0))
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, activation="gelu",
                                           batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_codebook_vectors)

    def forward(self, ids):
        h = self.tok_emb(ids) + self.pos_emb[:, :ids.shape[1]]
        return self.head(self.ln(self.encoder(h)))


class Decoder(nn.Module):
    def __init__(self, latent_dim=16, channels=(32, 16)):
        super().__init__()
        layers = [nn.Conv2d(latent_dim, channels[0], 3, 1, 1)]
        for cin, cout in zip(channels, channels[1:] + (channels[-1],)):
            layers += [nn.GroupNorm(8, cin), nn.SiLU(), nn.Upsample(scale_factor=2.0), nn.Conv2d(cin, cout, 3, 1, 1)]
        layers += [nn.GroupNorm(8, channels[-1]), nn.SiLU(), nn.Conv2d(channels[-1], 3, 3, 1, 1)]
        self.model = nn.Sequential(*layers)

    def forward(self, z):
        return self.model(z)


class MaskGIT(nn.Module):
    def __init__(self, num_codebook_vectors=32, num_classes=4, latent_dim=16, side=4, choice_temperature=0.0):
        super().__init__()
        self.num_codebook_vectors = num_codebook_vectors
        self.mask_token_id = num_codebook_vectors
        self.sos_offset = num_codebook_vectors + 1
        self.side = side
        self.choice_temperature = choice_temperature
        self.transformer = BidirectionalTransformer(num_codebook_vectors, num_classes, seq_len=side * side)
        self.codebook = nn.Embedding(num_codebook_vectors, latent_dim)
        self.decoder = Decoder(latent_dim)

    def gamma(self, r):
        return math.cos(r * math.pi / 2)

    @torch.no_grad()
    def sample_good(self, labels, T=6):
        B = labels.shape[0]
        seq_len = self.side * self.side
        ids = torch.full((B, seq_len), self.mask_token_id, dtype=torch.long)
        sos = (labels + self.sos_offset).unsqueeze(1)
        for t in range(T):
            logits = self.transformer(torch.cat([sos, ids], dim=1))[:, 1:]
            unknown = ids == self.mask_token_id
            sampled = torch.where(unknown, logits.argmax(dim=-1), ids)
            ratio = 1.0 * (t + 1) / T
            mask_ratio = self.gamma(ratio)
            probs = F.softmax(logits, dim=-1)
            selected_probs = torch.gather(probs, -1, sampled.unsqueeze(-1)).squeeze(-1)
            selected_probs = torch.where(unknown, selected_probs, torch.full_like(selected_probs, float("inf")))
            mask_len = torch.floor(torch.tensor(seq_len * mask_ratio)).unsqueeze(0).unsqueeze(1)
            mask_len = torch.maximum(torch.ones_like(mask_len),
                                     torch.minimum(torch.sum(unknown, dim=-1, keepdim=True) - 1, mask_len))
            confidence = torch.log(selected_probs)
            if self.choice_temperature > 0:
                gumbel = -torch.log(-torch.log(torch.rand_like(confidence)))
                confidence = confidence + self.choice_temperature * (1.0 - ratio) * gumbel
            sorted_confidence = torch.sort(confidence, dim=-1).values
            cut_off = torch.gather(sorted_confidence, 1, mask_len.long())
            masking = confidence < cut_off
            ids = torch.where(masking, self.mask_token_id, sampled)
            final_ids = sampled
        return final_ids

    def forward(self, labels):
        ids = self.sample_good(labels)
        z = self.codebook(ids).view(ids.shape[0], self.side, self.side, -1).permute(0, 3, 1, 2)
        return ids, self.decoder(z)


torch.manual_seed(0)
model = MaskGIT().eval()


def example_inputs():
    return torch.tensor([0, 3, 1])
