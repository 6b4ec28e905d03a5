"""A VQ-VAE quantizer as its popular ports write it: squared distances to
a codebook by the expanded (a - b)^2 identity, argmin, one-hot encodings by
scatter_ on zeros, quantized vectors by matmul with the codebook, the
commitment loss, the straight-through estimator z + (q - z).detach(), and
the codebook perplexity."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VectorQuantizer(nn.Module):
    def __init__(self, num_embeddings=16, embedding_dim=8, commitment_cost=0.25):
        super().__init__()
        self._embedding_dim, self._num_embeddings = embedding_dim, num_embeddings
        self._embedding = nn.Embedding(num_embeddings, embedding_dim)
        self._embedding.weight.data.uniform_(-1 / num_embeddings, 1 / num_embeddings)
        self._commitment_cost = commitment_cost

    def forward(self, inputs):
        inputs = inputs.permute(0, 2, 3, 1).contiguous()
        input_shape = inputs.shape
        flat_input = inputs.view(-1, self._embedding_dim)
        distances = (torch.sum(flat_input ** 2, dim=1, keepdim=True)
                     + torch.sum(self._embedding.weight ** 2, dim=1)
                     - 2 * torch.matmul(flat_input, self._embedding.weight.t()))
        encoding_indices = torch.argmin(distances, dim=1).unsqueeze(1)
        encodings = torch.zeros(encoding_indices.shape[0], self._num_embeddings, device=inputs.device)
        encodings.scatter_(1, encoding_indices, 1)
        quantized = torch.matmul(encodings, self._embedding.weight).view(input_shape)
        e_latent_loss = F.mse_loss(quantized.detach(), inputs)
        q_latent_loss = F.mse_loss(quantized, inputs.detach())
        loss = q_latent_loss + self._commitment_cost * e_latent_loss
        quantized = inputs + (quantized - inputs).detach()
        avg_probs = torch.mean(encodings, dim=0)
        perplexity = torch.exp(-torch.sum(avg_probs * torch.log(avg_probs + 1e-10)))
        return loss, quantized.permute(0, 3, 1, 2).contiguous(), perplexity, encodings


class VQVAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, 16, 4, 2, 1), nn.ReLU(), nn.Conv2d(16, 8, 3, 1, 1))
        self.vq = VectorQuantizer()
        self.decoder = nn.Sequential(nn.ConvTranspose2d(8, 16, 4, 2, 1), nn.ReLU(), nn.Conv2d(16, 3, 3, 1, 1))

    def forward(self, x):
        loss, quantized, perplexity, _ = self.vq(self.encoder(x))
        return loss, self.decoder(quantized), perplexity


torch.manual_seed(0)
model = VQVAE().eval()
check_gradients = True


def example_inputs():
    return (torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(1)),)
