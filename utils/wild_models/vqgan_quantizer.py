"""A VQGAN / Jukebox style vector quantizer as taming-transformers and its
ports write it: the codebook an `nn.Embedding` initialised uniformly in
`[-1/n, 1/n]`, the nearest code found by `torch.cdist` between the
flattened `b h w c` latents and the codebook weight and `argmin`, the
quantised latents gathered back with the embedding, the codebook and
commitment terms as `torch.mean((z_q.detach() - z) ** 2)`, the
straight-through estimator `z + (z_q - z).detach()`, the perplexity from a
one-hot `scatter_` of the indices, and a small conv encoder/decoder
around it."""
import torch
import torch.nn.functional as F
from torch import nn


class VectorQuantizer(nn.Module):
    def __init__(self, n_e, e_dim, beta=0.25):
        super().__init__()
        self.n_e = n_e
        self.e_dim = e_dim
        self.beta = beta
        self.embedding = nn.Embedding(self.n_e, self.e_dim)
        self.embedding.weight.data.uniform_(-1.0 / self.n_e, 1.0 / self.n_e)

    def forward(self, z):
        z = z.permute(0, 2, 3, 1).contiguous()
        z_flattened = z.view(-1, self.e_dim)
        d = torch.cdist(z_flattened, self.embedding.weight)
        min_encoding_indices = torch.argmin(d, dim=1).unsqueeze(1)
        min_encodings = torch.zeros(min_encoding_indices.shape[0], self.n_e, device=z.device)
        min_encodings.scatter_(1, min_encoding_indices, 1)
        z_q = torch.matmul(min_encodings, self.embedding.weight).view(z.shape)
        loss = torch.mean((z_q.detach() - z) ** 2) + self.beta * torch.mean((z_q - z.detach()) ** 2)
        z_q = z + (z_q - z).detach()
        e_mean = torch.mean(min_encodings, dim=0)
        perplexity = torch.exp(-torch.sum(e_mean * torch.log(e_mean + 1e-10)))
        z_q = z_q.permute(0, 3, 1, 2).contiguous()
        return z_q, loss, (perplexity, min_encodings, min_encoding_indices)


class VQModel(nn.Module):
    def __init__(self, ch=16, embed_dim=8, n_embed=32):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(3, ch, 4, 2, 1), nn.SiLU(), nn.Conv2d(ch, ch, 3, 1, 1), nn.SiLU()
        )
        self.quant_conv = nn.Conv2d(ch, embed_dim, 1)
        self.quantize = VectorQuantizer(n_embed, embed_dim, beta=0.25)
        self.post_quant_conv = nn.Conv2d(embed_dim, ch, 1)
        self.decoder = nn.Sequential(
            nn.Conv2d(ch, ch, 3, 1, 1), nn.SiLU(), nn.ConvTranspose2d(ch, 3, 4, 2, 1)
        )

    def encode(self, x):
        h = self.encoder(x)
        h = self.quant_conv(h)
        quant, emb_loss, info = self.quantize(h)
        return quant, emb_loss, info

    def decode(self, quant):
        return self.decoder(self.post_quant_conv(quant))

    def forward(self, input):
        quant, diff, (perplexity, _, indices) = self.encode(input)
        dec = self.decode(quant)
        rec_loss = torch.abs(input.contiguous() - dec.contiguous()).mean()
        return dec, rec_loss + diff, perplexity, indices.view(input.shape[0], -1)


torch.manual_seed(0)
model = VQModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(2, 3, 8, 8, generator=g),)
