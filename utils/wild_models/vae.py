"""The VAE of the PyTorch examples: fc encoder to mu and logvar,
reparameterize with randn_like in training and the mean in eval (as many
forks write it), a sigmoid decoder, `x.view(-1, 784)`, and the loss as
F.binary_cross_entropy(reduction='sum') plus the KL divergence written out
with logvar.exp(), returned with the reconstruction."""
import torch
from torch import nn
from torch.nn import functional as F


class VAE(nn.Module):
    def __init__(self, hidden=64, latent=8):
        super().__init__()
        self.fc1 = nn.Linear(784, hidden)
        self.fc21 = nn.Linear(hidden, latent)
        self.fc22 = nn.Linear(hidden, latent)
        self.fc3 = nn.Linear(latent, hidden)
        self.fc4 = nn.Linear(hidden, 784)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        if self.training:
            std = torch.exp(0.5 * logvar)
            eps = torch.randn_like(std)
            return mu + eps * std
        return mu

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        recon_x = self.decode(z)
        return recon_x, mu, logvar, loss_function(recon_x, x, mu, logvar)


def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, 784), reduction="sum")
    # KL divergence: 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


torch.manual_seed(0)
model = VAE().eval()
check_gradients = True


def example_inputs():
    return (torch.rand(4, 1, 28, 28, generator=torch.Generator().manual_seed(1)),)
