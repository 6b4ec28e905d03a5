"""OWL-ViT's detection heads in the style of transformers'
`modeling_owlvit.py`: a ViT image tower whose patch tokens are scaled by the
class token and layer-normed, the box bias computed once in `__init__`
(`torch.meshgrid(indexing="xy")` of patch corners divided in place,
`log(x) - log1p(-x)`, a `full_like` size bias) and kept as a plain tensor
attribute moved by `.to(device)` in forward, boxes by `sigmoid(box_head(feats) + box_bias)`,
class embeddings normalized by `torch.linalg.norm(...) + 1e-6`, logits by
`einsum("...pd,...qd->...pq")` with a learned shift and an `elu(...) + 1`
scale, and queries masked with `torch.where(mask == 0, finfo.min, ...)`."""
import torch
import torch.nn.functional as F
from torch import nn


class OwlViTConfig:
    image_size = 16
    patch_size = 4
    hidden_size = 32
    heads = 4
    layers = 2
    query_dim = 24


class VisionLayer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.layer_norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out_proj = nn.Linear(dim, dim)
        self.layer_norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(self.layer_norm1(x)).view(b, n, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        attn = F.scaled_dot_product_attention(q, k, v)
        x = x + self.out_proj(attn.transpose(1, 2).reshape(b, n, d))
        h = self.fc1(self.layer_norm2(x))
        return x + self.fc2(h * torch.sigmoid(1.702 * h))


class OwlViTBoxPredictionHead(nn.Module):
    def __init__(self, width, out_dim=4):
        super().__init__()
        self.dense0 = nn.Linear(width, width)
        self.dense1 = nn.Linear(width, width)
        self.gelu = nn.GELU()
        self.dense2 = nn.Linear(width, out_dim)

    def forward(self, image_features):
        output = self.dense0(image_features)
        output = self.gelu(output)
        output = self.dense1(output)
        output = self.gelu(output)
        return self.dense2(output)


class OwlViTClassPredictionHead(nn.Module):
    def __init__(self, width, query_dim):
        super().__init__()
        self.query_dim = query_dim
        self.dense0 = nn.Linear(width, query_dim)
        self.logit_shift = nn.Linear(width, 1)
        self.logit_scale = nn.Linear(width, 1)
        self.elu = nn.ELU()

    def forward(self, image_embeds, query_embeds=None, query_mask=None):
        image_class_embeds = self.dense0(image_embeds)
        if query_embeds is None:
            device = image_class_embeds.device
            batch_size, num_patches = image_class_embeds.shape[:2]
            pred_logits = torch.zeros((batch_size, num_patches, self.query_dim)).to(device)
            return (pred_logits, image_class_embeds)
        # Normalize image and text features
        image_class_embeds = image_class_embeds / (torch.linalg.norm(image_class_embeds, dim=-1, keepdim=True) + 1e-6)
        query_embeds = query_embeds / (torch.linalg.norm(query_embeds, dim=-1, keepdim=True) + 1e-6)
        # Get class predictions
        pred_logits = torch.einsum("...pd,...qd->...pq", image_class_embeds, query_embeds)
        # Apply a learnable shift and scale to logits
        logit_shift = self.logit_shift(image_embeds)
        logit_scale = self.logit_scale(image_embeds)
        logit_scale = self.elu(logit_scale) + 1
        pred_logits = (pred_logits + logit_shift) * logit_scale
        if query_mask is not None:
            if query_mask.ndim > 1:
                query_mask = torch.unsqueeze(query_mask, dim=-2)
            pred_logits = torch.where(query_mask == 0, torch.finfo(pred_logits.dtype).min, pred_logits)
            pred_logits = pred_logits.to(torch.float32)
        return (pred_logits, image_class_embeds)


class OwlViTForObjectDetection(nn.Module):
    def __init__(self, config=OwlViTConfig()):
        super().__init__()
        self.config = config
        d = config.hidden_size
        self.patch_embedding = nn.Conv2d(3, d, config.patch_size, config.patch_size, bias=False)
        self.num_patches_height = self.num_patches_width = config.image_size // config.patch_size
        self.class_embedding = nn.Parameter(torch.randn(d))
        self.position_embedding = nn.Parameter(torch.randn(self.num_patches_height ** 2 + 1, d) * 0.1)
        self.pre_layernorm = nn.LayerNorm(d)
        self.layers = nn.ModuleList([VisionLayer(d, config.heads) for _ in range(config.layers)])
        self.post_layernorm = nn.LayerNorm(d)
        self.class_head = OwlViTClassPredictionHead(d, config.query_dim)
        self.box_head = OwlViTBoxPredictionHead(d)
        self.layer_norm = nn.LayerNorm(d)
        self.sigmoid = nn.Sigmoid()
        self.box_bias = self.compute_box_bias(self.num_patches_height, self.num_patches_width)

    @staticmethod
    def normalize_grid_corner_coordinates(num_patches_height, num_patches_width):
        x_coordinates = torch.arange(1, num_patches_width + 1, dtype=torch.float32)
        y_coordinates = torch.arange(1, num_patches_height + 1, dtype=torch.float32)
        xx, yy = torch.meshgrid(x_coordinates, y_coordinates, indexing="xy")
        box_coordinates = torch.stack((xx, yy), dim=-1)
        box_coordinates[..., 0] /= num_patches_width
        box_coordinates[..., 1] /= num_patches_height
        return box_coordinates.view(-1, 2)

    def compute_box_bias(self, num_patches_height, num_patches_width):
        box_coordinates = self.normalize_grid_corner_coordinates(num_patches_height, num_patches_width)
        box_coordinates = torch.clip(box_coordinates, 0.0, 1.0)
        # Unnormalize xy
        box_coord_bias = torch.log(box_coordinates + 1e-4) - torch.log1p(-box_coordinates + 1e-4)
        # The box size is biased to the patch size
        box_size = torch.full_like(box_coord_bias, 1.0)
        box_size[..., 0] /= num_patches_width
        box_size[..., 1] /= num_patches_height
        box_size_bias = torch.log(box_size + 1e-4) - torch.log1p(-box_size + 1e-4)
        # Compute box bias
        return torch.cat([box_coord_bias, box_size_bias], dim=-1)

    def image_embedder(self, pixel_values):
        b = pixel_values.shape[0]
        x = self.patch_embedding(pixel_values).flatten(2).transpose(1, 2)
        x = torch.cat([self.class_embedding.expand(b, 1, -1), x], dim=1) + self.position_embedding
        x = self.pre_layernorm(x)
        for layer in self.layers:
            x = layer(x)
        last_hidden_state = self.post_layernorm(x)
        # Resize class token
        class_token_out = torch.broadcast_to(last_hidden_state[:, :1, :], last_hidden_state[:, :-1].shape)
        # Merge image embedding with class tokens
        image_embeds = last_hidden_state[:, 1:, :] * class_token_out
        image_embeds = self.layer_norm(image_embeds)
        # Resize to [batch_size, num_patches_height, num_patches_width, hidden_size]
        new_size = (image_embeds.shape[0], self.num_patches_height, self.num_patches_width, image_embeds.shape[-1])
        return image_embeds.reshape(new_size)

    def box_predictor(self, image_feats, feature_map):
        pred_boxes = self.box_head(image_feats)
        box_bias = self.box_bias.to(feature_map.device)
        pred_boxes += box_bias
        return self.sigmoid(pred_boxes)

    def forward(self, pixel_values, query_embeds, query_mask):
        feature_map = self.image_embedder(pixel_values)
        batch_size, num_patches_height, num_patches_width, hidden_dim = feature_map.shape
        image_feats = torch.reshape(feature_map, (batch_size, num_patches_height * num_patches_width, hidden_dim))
        pred_logits, class_embeds = self.class_head(image_feats, query_embeds, query_mask)
        pred_boxes = self.box_predictor(image_feats, feature_map)
        return {"logits": pred_logits, "pred_boxes": pred_boxes, "class_embeds": class_embeds}


torch.manual_seed(0)
model = OwlViTForObjectDetection().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    pixel_values = torch.randn(2, 3, 16, 16, generator=g)
    query_embeds = torch.randn(2, 3, 24, generator=g)
    query_mask = torch.tensor([[1, 1, 0], [1, 0, 0]])
    return pixel_values, query_embeds, query_mask
