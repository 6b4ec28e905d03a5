"""LLaVA in the style of transformers' `modeling_llava.py`: a CLIP-like
vision tower run with `output_hidden_states=True`, the feature layer picked
by index (`-2`) with the CLS token dropped under the "default" strategy, a
two-layer GELU projector, image features merged into the text embeddings by
`masked_scatter` at the image-token positions (after a placeholder check
that raises on a count mismatch), a frozen vision tower
(`requires_grad_(False)`), a small LLaMA decoder, and labels with the image
positions set to -100 before the shifted loss."""
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class LlavaConfig:
    image_size: int = 16
    patch_size: int = 4
    vision_hidden: int = 24
    vision_layers: int = 2
    text_hidden: int = 32
    text_layers: int = 2
    heads: int = 4
    vocab_size: int = 64
    image_token_id: int = 63
    vision_feature_layer: int = -2
    vision_feature_select_strategy: str = "default"


class CLIPEncoderLayer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.layer_norm1 = nn.LayerNorm(dim)
        self.self_attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.layer_norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, dim * 2)
        self.fc2 = nn.Linear(dim * 2, dim)

    def forward(self, x):
        h = self.layer_norm1(x)
        x = x + self.self_attn(h, h, h, need_weights=False)[0]
        h = self.layer_norm2(x)
        h = self.fc1(h)
        h = h * torch.sigmoid(1.702 * h)
        return x + self.fc2(h)


class CLIPVisionModel(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.patch_embedding = nn.Conv2d(3, cfg.vision_hidden, cfg.patch_size, cfg.patch_size, bias=False)
        num_positions = (cfg.image_size // cfg.patch_size) ** 2 + 1
        self.class_embedding = nn.Parameter(torch.randn(cfg.vision_hidden))
        self.position_embedding = nn.Embedding(num_positions, cfg.vision_hidden)
        self.register_buffer("position_ids", torch.arange(num_positions).expand((1, -1)), persistent=False)
        self.pre_layrnorm = nn.LayerNorm(cfg.vision_hidden)
        self.layers = nn.ModuleList([CLIPEncoderLayer(cfg.vision_hidden, 2) for _ in range(cfg.vision_layers)])

    def forward(self, pixel_values, output_hidden_states=False):
        batch_size = pixel_values.shape[0]
        target_dtype = self.patch_embedding.weight.dtype
        patch_embeds = self.patch_embedding(pixel_values.to(dtype=target_dtype))
        patch_embeds = patch_embeds.flatten(2).transpose(1, 2)
        class_embeds = self.class_embedding.expand(batch_size, 1, -1)
        embeddings = torch.cat([class_embeds, patch_embeds], dim=1)
        embeddings = embeddings + self.position_embedding(self.position_ids)
        hidden_states = self.pre_layrnorm(embeddings)
        all_hidden = (hidden_states,) if output_hidden_states else None
        for layer in self.layers:
            hidden_states = layer(hidden_states)
            if output_hidden_states:
                all_hidden = all_hidden + (hidden_states,)
        return {"last_hidden_state": hidden_states, "hidden_states": all_hidden}


class LlavaMultiModalProjector(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.linear_1 = nn.Linear(cfg.vision_hidden, cfg.text_hidden, bias=True)
        self.act = nn.GELU()
        self.linear_2 = nn.Linear(cfg.text_hidden, cfg.text_hidden, bias=True)

    def forward(self, image_features):
        return self.linear_2(self.act(self.linear_1(image_features)))


class LlamaRMSNorm(nn.Module):
    def __init__(self, hidden_size, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class LlamaDecoderLayer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.input_layernorm = LlamaRMSNorm(dim)
        self.q_proj = nn.Linear(dim, dim, bias=False)
        self.k_proj = nn.Linear(dim, dim, bias=False)
        self.v_proj = nn.Linear(dim, dim, bias=False)
        self.o_proj = nn.Linear(dim, dim, bias=False)
        self.post_attention_layernorm = LlamaRMSNorm(dim)
        self.gate_proj = nn.Linear(dim, dim * 2, bias=False)
        self.up_proj = nn.Linear(dim, dim * 2, bias=False)
        self.down_proj = nn.Linear(dim * 2, dim, bias=False)

    def forward(self, x, cos, sin, mask):
        b, n, _ = x.shape
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(h).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(h).view(b, n, self.heads, self.head_dim).transpose(1, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        attn = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim) + mask
        attn = F.softmax(attn, dim=-1, dtype=torch.float32).to(q.dtype)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, n, -1)
        x = x + self.o_proj(out)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class LlavaForConditionalGeneration(nn.Module):
    def __init__(self, cfg=LlavaConfig()):
        super().__init__()
        self.config = cfg
        self.vision_tower = CLIPVisionModel(cfg)
        self.multi_modal_projector = LlavaMultiModalProjector(cfg)
        self.embed_tokens = nn.Embedding(cfg.vocab_size, cfg.text_hidden)
        self.layers = nn.ModuleList([LlamaDecoderLayer(cfg.text_hidden, cfg.heads)
                                     for _ in range(cfg.text_layers)])
        self.norm = LlamaRMSNorm(cfg.text_hidden)
        self.lm_head = nn.Linear(cfg.text_hidden, cfg.vocab_size, bias=False)
        head_dim = cfg.text_hidden // cfg.heads
        inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2, dtype=torch.int64).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def get_image_features(self, pixel_values, vision_feature_layer, vision_feature_select_strategy):
        image_outputs = self.vision_tower(pixel_values, output_hidden_states=True)
        selected_image_feature = image_outputs["hidden_states"][vision_feature_layer]
        if vision_feature_select_strategy == "default":
            selected_image_feature = selected_image_feature[:, 1:]
        elif vision_feature_select_strategy == "full":
            selected_image_feature = selected_image_feature
        return self.multi_modal_projector(selected_image_feature)

    def get_placeholder_mask(self, input_ids, inputs_embeds, image_features):
        special_image_mask = input_ids == self.config.image_token_id
        n_image_tokens = special_image_mask.sum()
        special_image_mask = special_image_mask.unsqueeze(-1).expand_as(inputs_embeds).to(inputs_embeds.device)
        n_image_features = image_features.shape[0] * image_features.shape[1]
        if inputs_embeds[special_image_mask].numel() != image_features.numel():
            raise ValueError(
                f"Image features and image tokens do not match: tokens: {n_image_tokens}, features {n_image_features}")
        return special_image_mask

    def rotary(self, position_ids, dtype):
        inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        position_ids_expanded = position_ids[:, None, :].float()
        freqs = (inv_freq_expanded @ position_ids_expanded).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos().to(dtype)[:, None], emb.sin().to(dtype)[:, None]

    def forward(self, input_ids, pixel_values, attention_mask, labels=None):
        inputs_embeds = self.embed_tokens(input_ids)
        image_features = self.get_image_features(
            pixel_values, self.config.vision_feature_layer, self.config.vision_feature_select_strategy)
        image_features = image_features.to(inputs_embeds.device, inputs_embeds.dtype)
        special_image_mask = self.get_placeholder_mask(input_ids, inputs_embeds, image_features)
        inputs_embeds = inputs_embeds.masked_scatter(special_image_mask, image_features)

        position_ids = (attention_mask.long().cumsum(-1) - 1).clamp(min=0)
        cos, sin = self.rotary(position_ids, inputs_embeds.dtype)
        n = input_ids.shape[1]
        min_value = torch.finfo(inputs_embeds.dtype).min
        causal = torch.full((n, n), min_value, dtype=inputs_embeds.dtype).triu(1)
        padding = (1.0 - attention_mask[:, None, None, :].to(inputs_embeds.dtype)) * min_value
        mask = causal[None, None] + padding
        hidden_states = inputs_embeds
        for layer in self.layers:
            hidden_states = layer(hidden_states, cos, sin, mask)
        logits = self.lm_head(self.norm(hidden_states))
        loss = None
        if labels is not None:
            labels = labels.masked_fill(input_ids == self.config.image_token_id, -100)
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss = F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
        return {"loss": loss, "logits": logits, "image_hidden_states": image_features}


torch.manual_seed(0)
model = LlavaForConditionalGeneration().eval()
model.vision_tower.requires_grad_(False)
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    n_img = (16 // 4) ** 2
    text = torch.randint(1, 60, (2, 6), generator=g)
    input_ids = torch.cat([text[:, :2], torch.full((2, n_img), 63), text[:, 2:]], dim=1)
    attention_mask = torch.ones_like(input_ids)
    attention_mask[1, :1] = 0
    pixel_values = torch.randn(2, 3, 16, 16, generator=g)
    labels = input_ids.clone()
    labels[attention_mask == 0] = -100
    return input_ids, pixel_values, attention_mask, labels
