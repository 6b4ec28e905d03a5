"""BLIP-2's Q-Former in the style of Salesforce LAVIS (`Qformer.py`,
`blip2_qformer.py`): BERT layers with cross-attention to the image every
`cross_attention_freq` layers, learned query tokens concatenated before the
text, `query_length` splitting each layer's output so the query part goes
through its own feed-forward (`intermediate_query`/`output_query`) via
`apply_chunking_to_forward`, the extended attention mask from
`get_extended_attention_mask` with `(1.0 - mask) * -10000.0`, and the
image-text contrastive loss: normalized query and text features,
`torch.matmul(image_feats.unsqueeze(1), text_feat.unsqueeze(-1)).squeeze()`,
max over queries, a learned temperature, and label smoothing."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def apply_chunking_to_forward(forward_fn, chunk_size, chunk_dim, *input_tensors):
    if chunk_size > 0:
        num_chunks = input_tensors[0].shape[chunk_dim] // chunk_size
        input_tensors_chunks = tuple(t.chunk(num_chunks, dim=chunk_dim) for t in input_tensors)
        output_chunks = tuple(forward_fn(*c) for c in zip(*input_tensors_chunks))
        return torch.cat(output_chunks, dim=chunk_dim)
    return forward_fn(*input_tensors)


class BertConfig:
    hidden_size = 32
    num_attention_heads = 4
    intermediate_size = 64
    num_hidden_layers = 2
    encoder_width = 24
    cross_attention_freq = 2
    vocab_size = 50
    max_position_embeddings = 32
    layer_norm_eps = 1e-12
    chunk_size_feed_forward = 0


class BertSelfAttention(nn.Module):
    def __init__(self, config, is_cross_attention):
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = int(config.hidden_size / config.num_attention_heads)
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(config.hidden_size, self.all_head_size)
        if is_cross_attention:
            self.key = nn.Linear(config.encoder_width, self.all_head_size)
            self.value = nn.Linear(config.encoder_width, self.all_head_size)
        else:
            self.key = nn.Linear(config.hidden_size, self.all_head_size)
            self.value = nn.Linear(config.hidden_size, self.all_head_size)
        self.dropout = nn.Dropout(0.1)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(*new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask=None, encoder_hidden_states=None,
                encoder_attention_mask=None):
        is_cross_attention = encoder_hidden_states is not None
        if is_cross_attention:
            key_layer = self.transpose_for_scores(self.key(encoder_hidden_states))
            value_layer = self.transpose_for_scores(self.value(encoder_hidden_states))
            attention_mask = encoder_attention_mask
        else:
            key_layer = self.transpose_for_scores(self.key(hidden_states))
            value_layer = self.transpose_for_scores(self.value(hidden_states))
        mixed_query_layer = self.query(hidden_states)
        query_layer = self.transpose_for_scores(mixed_query_layer)
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        if attention_mask is not None:
            attention_scores = attention_scores + attention_mask
        attention_probs = nn.Softmax(dim=-1)(attention_scores)
        attention_probs_dropped = self.dropout(attention_probs)
        context_layer = torch.matmul(attention_probs_dropped, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        return context_layer.view(*new_context_layer_shape)


class BertAttention(nn.Module):
    def __init__(self, config, is_cross_attention=False):
        super().__init__()
        self.self = BertSelfAttention(config, is_cross_attention)
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden_states, attention_mask=None, encoder_hidden_states=None,
                encoder_attention_mask=None):
        self_outputs = self.self(hidden_states, attention_mask, encoder_hidden_states, encoder_attention_mask)
        return self.LayerNorm(self.dense(self_outputs) + hidden_states)


class BertLayer(nn.Module):
    def __init__(self, config, layer_num):
        super().__init__()
        self.chunk_size_feed_forward = config.chunk_size_feed_forward
        self.seq_len_dim = 1
        self.attention = BertAttention(config)
        self.layer_num = layer_num
        if layer_num % config.cross_attention_freq == 0:
            self.crossattention = BertAttention(config, is_cross_attention=True)
            self.has_cross_attention = True
        else:
            self.has_cross_attention = False
        self.intermediate = nn.Linear(config.hidden_size, config.intermediate_size)
        self.output = nn.Linear(config.intermediate_size, config.hidden_size)
        self.output_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.intermediate_query = nn.Linear(config.hidden_size, config.intermediate_size)
        self.output_query = nn.Linear(config.intermediate_size, config.hidden_size)
        self.output_query_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, hidden_states, attention_mask=None, encoder_hidden_states=None,
                encoder_attention_mask=None, query_length=0):
        attention_output = self.attention(hidden_states, attention_mask)
        if query_length > 0:
            query_attention_output = attention_output[:, :query_length, :]
            if self.has_cross_attention:
                assert encoder_hidden_states is not None, "encoder_hidden_states must be given for cross-attention layers"
                query_attention_output = self.crossattention(
                    query_attention_output, attention_mask, encoder_hidden_states, encoder_attention_mask)
            layer_output = apply_chunking_to_forward(
                self.feed_forward_chunk_query, self.chunk_size_feed_forward, self.seq_len_dim,
                query_attention_output)
            if attention_output.shape[1] > query_length:
                layer_output_text = apply_chunking_to_forward(
                    self.feed_forward_chunk, self.chunk_size_feed_forward, self.seq_len_dim,
                    attention_output[:, query_length:, :])
                layer_output = torch.cat([layer_output, layer_output_text], dim=1)
        else:
            layer_output = apply_chunking_to_forward(
                self.feed_forward_chunk, self.chunk_size_feed_forward, self.seq_len_dim, attention_output)
        return (layer_output,)

    def feed_forward_chunk(self, attention_output):
        intermediate_output = F.gelu(self.intermediate(attention_output))
        return self.output_norm(self.output(intermediate_output) + attention_output)

    def feed_forward_chunk_query(self, attention_output):
        intermediate_output = F.gelu(self.intermediate_query(attention_output))
        return self.output_query_norm(self.output_query(intermediate_output) + attention_output)


class BertModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.emb_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.register_buffer("position_ids", torch.arange(config.max_position_embeddings).expand((1, -1)))
        self.layer = nn.ModuleList([BertLayer(config, i) for i in range(config.num_hidden_layers)])

    def get_extended_attention_mask(self, attention_mask, input_shape, device, is_decoder=False):
        if attention_mask.dim() == 3:
            extended_attention_mask = attention_mask[:, None, :, :]
        elif attention_mask.dim() == 2:
            extended_attention_mask = attention_mask[:, None, None, :]
        else:
            raise ValueError(f"Wrong shape for input_ids (shape {input_shape}) or attention_mask "
                             f"(shape {attention_mask.shape})")
        extended_attention_mask = extended_attention_mask.to(dtype=self.word_embeddings.weight.dtype)
        return (1.0 - extended_attention_mask) * -10000.0

    def forward(self, input_ids=None, attention_mask=None, query_embeds=None, encoder_hidden_states=None,
                encoder_attention_mask=None):
        if input_ids is None:
            embeddings = query_embeds
        else:
            seq_length = input_ids.size()[1]
            position_ids = self.position_ids[:, :seq_length].clone()
            embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
            if query_embeds is not None:
                embeddings = torch.cat((query_embeds, embeddings), dim=1)
        embeddings = self.emb_norm(embeddings)
        query_length = query_embeds.shape[1] if query_embeds is not None else 0
        input_shape = embeddings.size()[:-1]
        batch_size, seq_length = input_shape
        device = embeddings.device
        if attention_mask is None:
            attention_mask = torch.ones(((batch_size, seq_length)), device=device)
        extended_attention_mask = self.get_extended_attention_mask(attention_mask, input_shape, device)
        if encoder_hidden_states is not None:
            if type(encoder_hidden_states) == list:
                encoder_batch_size, encoder_sequence_length, _ = encoder_hidden_states[0].size()
            else:
                encoder_batch_size, encoder_sequence_length, _ = encoder_hidden_states.size()
            encoder_hidden_shape = (encoder_batch_size, encoder_sequence_length)
            if encoder_attention_mask is None:
                encoder_attention_mask = torch.ones(encoder_hidden_shape, device=device)
            encoder_extended_attention_mask = (1.0 - encoder_attention_mask[:, None, None, :]) * -10000.0
        else:
            encoder_extended_attention_mask = None
        hidden_states = embeddings
        for layer_module in self.layer:
            hidden_states = layer_module(hidden_states, extended_attention_mask, encoder_hidden_states,
                                         encoder_extended_attention_mask, query_length)[0]
        return hidden_states


class Blip2Qformer(nn.Module):
    def __init__(self, config=BertConfig(), num_query_token=4, embed_dim=16):
        super().__init__()
        self.Qformer = BertModel(config)
        self.query_tokens = nn.Parameter(torch.zeros(1, num_query_token, config.hidden_size))
        self.query_tokens.data.normal_(mean=0.0, std=0.02)
        self.ln_vision = nn.LayerNorm(config.encoder_width)
        self.vision_proj = nn.Linear(config.hidden_size, embed_dim)
        self.text_proj = nn.Linear(config.hidden_size, embed_dim)
        self.temp = nn.Parameter(0.07 * torch.ones([]))

    def forward(self, image_embeds, text_ids, text_mask):
        image_embeds = self.ln_vision(image_embeds)
        image_atts = torch.ones(image_embeds.size()[:-1], dtype=torch.long).to(image_embeds.device)
        query_tokens = self.query_tokens.expand(image_embeds.shape[0], -1, -1)
        query_output = self.Qformer(query_embeds=query_tokens, encoder_hidden_states=image_embeds,
                                    encoder_attention_mask=image_atts)
        image_feats = F.normalize(self.vision_proj(query_output), dim=-1)
        text_output = self.Qformer(text_ids, attention_mask=text_mask)
        text_feat = F.normalize(self.text_proj(text_output[:, 0, :]), dim=-1)
        # image-text similarity: aggregate across all query tokens
        sim_q2t = torch.matmul(image_feats.unsqueeze(1), text_feat.unsqueeze(-1)).squeeze()
        sim_i2t, _ = sim_q2t.max(-1)
        sim_i2t = sim_i2t / self.temp
        sim_t2q = torch.matmul(text_feat.unsqueeze(1).unsqueeze(1), image_feats.permute(0, 2, 1)).squeeze()
        sim_t2i, _ = sim_t2q.max(-1)
        sim_t2i = sim_t2i / self.temp
        bs = image_embeds.size(0)
        targets = torch.linspace(0, bs - 1, bs, dtype=int).to(image_embeds.device)
        loss_itc = (F.cross_entropy(sim_i2t, targets, label_smoothing=0.1)
                    + F.cross_entropy(sim_t2i, targets, label_smoothing=0.1)) / 2
        return loss_itc, sim_i2t, query_output


torch.manual_seed(0)
model = Blip2Qformer().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    image_embeds = torch.randn(3, 7, 24, generator=g)
    text_ids = torch.randint(1, 50, (3, 6), generator=g)
    text_mask = torch.ones(3, 6, dtype=torch.long)
    text_mask[1, 4:] = 0
    return image_embeds, text_ids, text_mask
