"""A wav2vec 2.0 / HuBERT front end as fairseq and HF transformers write it:
a stack of strided Conv1d feature extractors whose first layer carries a
GroupNorm with one group per channel, GELU, the feature projection
(LayerNorm, Linear), the convolutional relative position embedding with a
`weight_norm` parametrization over dim=2 and `SamePad` trimming the last
frame, output lengths from the conv arithmetic by `torch.div(...,
rounding_mode="floor")` in a loop over (kernel, stride), the attention mask
rebuilt by scattering ones at `lengths - 1` and `flip().cumsum().flip()`,
a post-norm encoder layer with a `-inf`-filled extended mask, and a
CTC-style head."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Wav2Vec2GroupNormConvLayer(nn.Module):
    def __init__(self, conv_dim, conv_kernel, conv_stride, layer_id=0):
        super().__init__()
        self.in_conv_dim = conv_dim[layer_id - 1] if layer_id > 0 else 1
        self.out_conv_dim = conv_dim[layer_id]
        self.conv = nn.Conv1d(self.in_conv_dim, self.out_conv_dim, kernel_size=conv_kernel[layer_id],
                              stride=conv_stride[layer_id], bias=False)
        self.activation = nn.GELU()
        self.layer_norm = nn.GroupNorm(num_groups=self.out_conv_dim, num_channels=self.out_conv_dim, affine=True)

    def forward(self, hidden_states):
        hidden_states = self.conv(hidden_states)
        hidden_states = self.layer_norm(hidden_states)
        return self.activation(hidden_states)


class Wav2Vec2NoLayerNormConvLayer(nn.Module):
    def __init__(self, conv_dim, conv_kernel, conv_stride, layer_id=0):
        super().__init__()
        self.conv = nn.Conv1d(conv_dim[layer_id - 1], conv_dim[layer_id], kernel_size=conv_kernel[layer_id],
                              stride=conv_stride[layer_id], bias=False)
        self.activation = nn.GELU()

    def forward(self, hidden_states):
        return self.activation(self.conv(hidden_states))


class Wav2Vec2FeatureEncoder(nn.Module):
    def __init__(self, conv_dim, conv_kernel, conv_stride):
        super().__init__()
        conv_layers = [Wav2Vec2GroupNormConvLayer(conv_dim, conv_kernel, conv_stride, layer_id=0)] + [
            Wav2Vec2NoLayerNormConvLayer(conv_dim, conv_kernel, conv_stride, layer_id=i + 1)
            for i in range(len(conv_dim) - 1)]
        self.conv_layers = nn.ModuleList(conv_layers)
        self._requires_grad = True

    def forward(self, input_values):
        hidden_states = input_values[:, None]
        if self._requires_grad and self.training:
            hidden_states.requires_grad = True
        for conv_layer in self.conv_layers:
            hidden_states = conv_layer(hidden_states)
        return hidden_states


class Wav2Vec2FeatureProjection(nn.Module):
    def __init__(self, conv_dim, hidden_size):
        super().__init__()
        self.layer_norm = nn.LayerNorm(conv_dim, eps=1e-5)
        self.projection = nn.Linear(conv_dim, hidden_size)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states):
        norm_hidden_states = self.layer_norm(hidden_states)
        hidden_states = self.projection(norm_hidden_states)
        hidden_states = self.dropout(hidden_states)
        return hidden_states, norm_hidden_states


class Wav2Vec2SamePadLayer(nn.Module):
    def __init__(self, num_conv_pos_embeddings):
        super().__init__()
        self.num_pad_remove = 1 if num_conv_pos_embeddings % 2 == 0 else 0

    def forward(self, hidden_states):
        if self.num_pad_remove > 0:
            hidden_states = hidden_states[:, :, : -self.num_pad_remove]
        return hidden_states


class Wav2Vec2PositionalConvEmbedding(nn.Module):
    def __init__(self, hidden_size, num_conv_pos_embeddings, num_conv_pos_embedding_groups):
        super().__init__()
        self.conv = nn.Conv1d(hidden_size, hidden_size, kernel_size=num_conv_pos_embeddings,
                              padding=num_conv_pos_embeddings // 2, groups=num_conv_pos_embedding_groups)
        weight_norm = nn.utils.weight_norm
        if hasattr(nn.utils.parametrizations, "weight_norm"):
            weight_norm = nn.utils.parametrizations.weight_norm
        self.conv = weight_norm(self.conv, name="weight", dim=2)
        self.padding = Wav2Vec2SamePadLayer(num_conv_pos_embeddings)
        self.activation = nn.GELU()

    def forward(self, hidden_states):
        hidden_states = hidden_states.transpose(1, 2)
        hidden_states = self.conv(hidden_states)
        hidden_states = self.padding(hidden_states)
        hidden_states = self.activation(hidden_states)
        return hidden_states.transpose(1, 2)


class Wav2Vec2EncoderLayer(nn.Module):
    def __init__(self, hidden_size, num_heads, intermediate_size):
        super().__init__()
        self.attention = nn.MultiheadAttention(hidden_size, num_heads, dropout=0.1, batch_first=True)
        self.layer_norm = nn.LayerNorm(hidden_size)
        self.feed_forward = nn.Sequential(nn.Linear(hidden_size, intermediate_size), nn.GELU(),
                                          nn.Dropout(0.1), nn.Linear(intermediate_size, hidden_size))
        self.final_layer_norm = nn.LayerNorm(hidden_size)

    def forward(self, hidden_states, attention_mask=None):
        attn_residual = hidden_states
        hidden_states, _ = self.attention(hidden_states, hidden_states, hidden_states,
                                          attn_mask=attention_mask, need_weights=False)
        hidden_states = self.layer_norm(attn_residual + hidden_states)
        hidden_states = hidden_states + self.feed_forward(hidden_states)
        return self.final_layer_norm(hidden_states)


class Wav2Vec2ForCTC(nn.Module):
    def __init__(self, conv_dim=(16, 16, 16), conv_kernel=(10, 3, 2), conv_stride=(5, 2, 2), hidden_size=32,
                 num_heads=4, vocab_size=12, num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4):
        super().__init__()
        self.conv_kernel, self.conv_stride = conv_kernel, conv_stride
        self.num_heads = num_heads
        self.feature_extractor = Wav2Vec2FeatureEncoder(conv_dim, conv_kernel, conv_stride)
        self.feature_projection = Wav2Vec2FeatureProjection(conv_dim[-1], hidden_size)
        self.pos_conv_embed = Wav2Vec2PositionalConvEmbedding(hidden_size, num_conv_pos_embeddings,
                                                              num_conv_pos_embedding_groups)
        self.layer_norm = nn.LayerNorm(hidden_size)
        self.layers = nn.ModuleList([Wav2Vec2EncoderLayer(hidden_size, num_heads, 64) for _ in range(2)])
        self.lm_head = nn.Linear(hidden_size, vocab_size)

    def _get_feat_extract_output_lengths(self, input_lengths):
        def _conv_out_length(input_length, kernel_size, stride):
            return torch.div(input_length - kernel_size, stride, rounding_mode="floor") + 1

        for kernel_size, stride in zip(self.conv_kernel, self.conv_stride):
            input_lengths = _conv_out_length(input_lengths, kernel_size, stride)
        return input_lengths

    def _get_feature_vector_attention_mask(self, feature_vector_length, attention_mask):
        non_padded_lengths = attention_mask.cumsum(dim=-1)[:, -1]
        output_lengths = self._get_feat_extract_output_lengths(non_padded_lengths)
        output_lengths = output_lengths.to(torch.long)
        batch_size = attention_mask.shape[0]
        attention_mask = torch.zeros((batch_size, feature_vector_length), dtype=attention_mask.dtype,
                                     device=attention_mask.device)
        attention_mask[(torch.arange(attention_mask.shape[0], device=attention_mask.device),
                        output_lengths - 1)] = 1
        attention_mask = attention_mask.flip([-1]).cumsum(-1).flip([-1]).bool()
        return attention_mask

    def forward(self, input_values, attention_mask=None):
        extract_features = self.feature_extractor(input_values)
        extract_features = extract_features.transpose(1, 2)
        if attention_mask is not None:
            attention_mask = self._get_feature_vector_attention_mask(extract_features.shape[1], attention_mask)
        hidden_states, extract_features = self.feature_projection(extract_features)
        if attention_mask is not None:
            expand_attention_mask = attention_mask.unsqueeze(-1).repeat(1, 1, hidden_states.shape[2])
            hidden_states[~expand_attention_mask] = 0
            extended = 1.0 - attention_mask[:, None, None, :].to(dtype=hidden_states.dtype)
            extended = extended * torch.finfo(hidden_states.dtype).min
            extended = extended.expand(extended.shape[0], self.num_heads, hidden_states.shape[1],
                                       extended.shape[-1])
            extended = extended.reshape(-1, hidden_states.shape[1], extended.shape[-1])
        else:
            extended = None
        position_embeddings = self.pos_conv_embed(hidden_states)
        hidden_states = hidden_states + position_embeddings
        hidden_states = self.layer_norm(hidden_states)
        for layer in self.layers:
            hidden_states = layer(hidden_states, attention_mask=extended)
        logits = self.lm_head(hidden_states)
        log_probs = F.log_softmax(logits, dim=-1, dtype=torch.float32)
        return {"logits": logits, "log_probs": log_probs, "extract_features": extract_features}


torch.manual_seed(0)
model = Wav2Vec2ForCTC().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    values = torch.randn(2, 800, generator=g)
    mask = torch.ones(2, 800, dtype=torch.long)
    mask[1, 600:] = 0
    values[1, 600:] = 0.0
    return values, mask
