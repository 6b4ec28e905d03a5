"""Object-centric Slot Attention autoencoder as the official reference and
its PyTorch ports write it, with the learned-query initialisation of
BO-QSA (Jia et al.) so evaluation needs no noise: a CNN encoder with a soft
position embedding from a numpy `build_grid` (linspace, meshgrid, concat
of the grid and 1 - grid) projected by a Linear and added, slots refined
for a fixed number of iterations (attention softmax over the slots, not
the inputs, `attn + eps` renormalised over inputs, weighted mean by
einsum, GRUCell on flattened slots, residual MLP), the last iteration run
on `slots.detach()` with the straight-through `init + (slots - init).detach()`
of implicit differentiation, and a spatial broadcast decoder: each slot
tiled onto an 8x8 grid by `reshape(...).repeat(...)`, decoded to RGB and an
alpha logit, alpha masks normalised by a softmax over the slots, the
reconstruction their weighted sum, and an MSE loss."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def build_grid(resolution):
    ranges = [np.linspace(0.0, 1.0, num=res) for res in resolution]
    grid = np.meshgrid(*ranges, sparse=False, indexing="ij")
    grid = np.stack(grid, axis=-1)
    grid = np.reshape(grid, [resolution[0], resolution[1], -1])
    grid = np.expand_dims(grid, axis=0)
    grid = grid.astype(np.float32)
    return torch.from_numpy(np.concatenate([grid, 1.0 - grid], axis=-1))


class SoftPositionEmbed(nn.Module):
    def __init__(self, hidden_size, resolution):
        super().__init__()
        self.embedding = nn.Linear(4, hidden_size, bias=True)
        self.register_buffer("grid", build_grid(resolution))

    def forward(self, inputs):
        return inputs + self.embedding(self.grid)


class SlotAttention(nn.Module):
    def __init__(self, num_slots, dim, iters=3, eps=1e-8, hidden_dim=64):
        super().__init__()
        self.num_slots, self.iters, self.eps = num_slots, iters, eps
        self.scale = dim ** -0.5
        self.slots_init = nn.Embedding(num_slots, dim)
        nn.init.xavier_uniform_(self.slots_init.weight)
        self.to_q = nn.Linear(dim, dim, bias=False)
        self.to_k = nn.Linear(dim, dim, bias=False)
        self.to_v = nn.Linear(dim, dim, bias=False)
        self.gru = nn.GRUCell(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden_dim), nn.ReLU(inplace=True), nn.Linear(hidden_dim, dim))
        self.norm_input = nn.LayerNorm(dim)
        self.norm_slots = nn.LayerNorm(dim)
        self.norm_pre_ff = nn.LayerNorm(dim)

    def step(self, slots, k, v):
        b, n, d = slots.shape
        slots_prev = slots
        q = self.to_q(self.norm_slots(slots))
        dots = torch.einsum("bid,bjd->bij", q, k) * self.scale
        attn = dots.softmax(dim=1) + self.eps
        attn = attn / attn.sum(dim=-1, keepdim=True)
        updates = torch.einsum("bjd,bij->bid", v, attn)
        slots = self.gru(updates.reshape(-1, d), slots_prev.reshape(-1, d))
        slots = slots.reshape(b, -1, d)
        slots = slots + self.mlp(self.norm_pre_ff(slots))
        return slots, attn

    def forward(self, inputs):
        b, n, d = inputs.shape
        init_slots = self.slots_init.weight.unsqueeze(0).expand(b, -1, -1)
        slots = init_slots
        inputs = self.norm_input(inputs)
        k, v = self.to_k(inputs), self.to_v(inputs)
        for _ in range(self.iters):
            slots, attn = self.step(slots, k, v)
        # implicit differentiation: one more step from a detached fixed point
        slots = slots.detach() + init_slots - init_slots.detach()
        slots, attn = self.step(slots, k, v)
        return slots, attn


def spatial_broadcast(slots, resolution):
    slots = slots.reshape((-1, slots.shape[-1]))[:, :, None, None]
    return slots.repeat((1, 1, resolution[0], resolution[1]))


class SlotAttentionAutoEncoder(nn.Module):
    def __init__(self, resolution=(16, 16), num_slots=4, num_iterations=2, hid_dim=32):
        super().__init__()
        self.resolution, self.num_slots, self.hid_dim = resolution, num_slots, hid_dim
        self.decoder_initial_size = (8, 8)
        self.encoder_cnn = nn.Sequential(
            nn.Conv2d(3, hid_dim, 5, padding=2), nn.ReLU(),
            nn.Conv2d(hid_dim, hid_dim, 5, padding=2), nn.ReLU())
        self.encoder_pos = SoftPositionEmbed(hid_dim, resolution)
        self.decoder_pos = SoftPositionEmbed(hid_dim, self.decoder_initial_size)
        self.fc1 = nn.Linear(hid_dim, hid_dim)
        self.fc2 = nn.Linear(hid_dim, hid_dim)
        self.slot_attention = SlotAttention(num_slots, hid_dim, iters=num_iterations, hidden_dim=64)
        self.decoder_cnn = nn.Sequential(
            nn.ConvTranspose2d(hid_dim, hid_dim, 5, stride=2, padding=2, output_padding=1), nn.ReLU(),
            nn.ConvTranspose2d(hid_dim, hid_dim, 3, stride=1, padding=1), nn.ReLU(),
            nn.ConvTranspose2d(hid_dim, 4, 3, stride=1, padding=1))

    def forward(self, image):
        x = self.encoder_cnn(image)
        x = x.permute(0, 2, 3, 1)
        x = self.encoder_pos(x)
        x = torch.flatten(x, 1, 2)
        x = self.fc2(F.relu(self.fc1(nn.LayerNorm(x.shape[1:], elementwise_affine=False)(x))))
        slots, attn = self.slot_attention(x)
        x = spatial_broadcast(slots, self.decoder_initial_size)
        x = x.permute(0, 2, 3, 1)
        x = self.decoder_pos(x)
        x = x.permute(0, 3, 1, 2)
        x = self.decoder_cnn(x)
        x = x.permute(0, 2, 3, 1)
        recons, masks = x.reshape(image.shape[0], -1, x.shape[1], x.shape[2], x.shape[3]).split([3, 1], dim=-1)
        masks = nn.Softmax(dim=1)(masks)
        recon_combined = torch.sum(recons * masks, dim=1)
        recon_combined = recon_combined.permute(0, 3, 1, 2)
        loss = F.mse_loss(recon_combined, image)
        attn_maps = attn.reshape(image.shape[0], self.num_slots, *self.resolution)
        return recon_combined, recons, masks, slots, attn_maps, loss


torch.manual_seed(0)
model = SlotAttentionAutoEncoder().eval()
check_gradients = True


def example_inputs():
    return (torch.rand(2, 3, 16, 16, generator=torch.Generator().manual_seed(1)) * 2 - 1,)
