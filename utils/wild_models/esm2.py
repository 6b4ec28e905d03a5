"""ESM-2 in the style of transformers' `modeling_esm.py` (a port of
fair-esm): token dropout that zeroes <mask> embeddings and rescales by the
observed mask ratio, rotary embeddings whose cos/sin tables are rebuilt on
the module when the length changes, queries scaled before the rotation,
pre-LayerNorm layers, an extended additive attention mask from
`finfo(dtype).min`, a tied LM head, and the contact head: attentions of
every layer stacked, eos/bos rows cut, symmetrized and APC-corrected, then
a logistic regression over layers x heads."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


def apply_rotary_pos_emb(x, cos, sin):
    cos = cos[:, :, : x.shape[-2], :]
    sin = sin[:, :, : x.shape[-2], :]
    return (x * cos) + (rotate_half(x) * sin)


def gelu(x):
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


def symmetrize(x):
    return x + x.transpose(-1, -2)


def average_product_correct(x):
    a1 = x.sum(-1, keepdims=True)
    a2 = x.sum(-2, keepdims=True)
    a12 = x.sum((-1, -2), keepdims=True)
    avg = a1 * a2
    avg.div_(a12)
    normalized = x - avg
    return normalized


class RotaryEmbedding(torch.nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
        self.register_buffer("inv_freq", inv_freq)
        self._seq_len_cached = None
        self._cos_cached = None
        self._sin_cached = None

    def _update_cos_sin_tables(self, x, seq_dimension=2):
        seq_len = x.shape[seq_dimension]
        if seq_len != self._seq_len_cached or self._cos_cached.device != x.device:
            self._seq_len_cached = seq_len
            t = torch.arange(x.shape[seq_dimension], device=x.device).type_as(self.inv_freq)
            freqs = torch.outer(t, self.inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1).to(x.device)
            self._cos_cached = emb.cos()[None, None, :, :]
            self._sin_cached = emb.sin()[None, None, :, :]
        return self._cos_cached, self._sin_cached

    def forward(self, q, k):
        self._cos_cached, self._sin_cached = self._update_cos_sin_tables(k, seq_dimension=-2)
        return (
            apply_rotary_pos_emb(q, self._cos_cached, self._sin_cached),
            apply_rotary_pos_emb(k, self._cos_cached, self._sin_cached),
        )


class EsmConfig:
    vocab_size = 33
    hidden_size = 32
    num_hidden_layers = 2
    num_attention_heads = 4
    intermediate_size = 64
    layer_norm_eps = 1e-5
    pad_token_id = 1
    mask_token_id = 32
    cls_token_id = 0
    eos_token_id = 2
    token_dropout = True


class EsmEmbeddings(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size,
                                            padding_idx=config.pad_token_id)
        self.layer_norm = None
        self.dropout = nn.Dropout(0.0)
        self.padding_idx = config.pad_token_id
        self.token_dropout = config.token_dropout
        self.mask_token_id = config.mask_token_id

    def forward(self, input_ids, attention_mask):
        embeddings = self.word_embeddings(input_ids)
        if self.token_dropout:
            embeddings = embeddings.masked_fill((input_ids == self.mask_token_id).unsqueeze(-1), 0.0)
            mask_ratio_train = 0.15 * 0.8
            src_lengths = attention_mask.sum(-1)
            mask_ratio_observed = (input_ids == self.mask_token_id).sum(-1).float() / src_lengths
            embeddings = (embeddings * (1 - mask_ratio_train) / (1 - mask_ratio_observed)[:, None, None]).to(
                embeddings.dtype)
        if self.layer_norm is not None:
            embeddings = self.layer_norm(embeddings)
        if attention_mask is not None:
            embeddings = (embeddings * attention_mask.unsqueeze(-1)).to(embeddings.dtype)
        return self.dropout(embeddings)


class EsmSelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = config.hidden_size // config.num_attention_heads
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(config.hidden_size, self.all_head_size)
        self.key = nn.Linear(config.hidden_size, self.all_head_size)
        self.value = nn.Linear(config.hidden_size, self.all_head_size)
        self.dropout = nn.Dropout(0.0)
        self.rotary_embeddings = RotaryEmbedding(dim=self.attention_head_size)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask=None, output_attentions=False):
        query_layer = self.transpose_for_scores(self.query(hidden_states))
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = query_layer * self.attention_head_size ** -0.5
        query_layer, key_layer = self.rotary_embeddings(query_layer, key_layer)
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        if attention_mask is not None:
            attention_scores = attention_scores + attention_mask
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)
        attention_probs = self.dropout(attention_probs)
        context_layer = torch.matmul(attention_probs.to(value_layer.dtype), value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        context_layer = context_layer.view(new_context_layer_shape)
        outputs = (context_layer, attention_probs) if output_attentions else (context_layer,)
        return outputs


class EsmLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.self = EsmSelfAttention(config)
        self.attn_out = nn.Linear(config.hidden_size, config.hidden_size)
        self.ffn_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.intermediate = nn.Linear(config.hidden_size, config.intermediate_size)
        self.output = nn.Linear(config.intermediate_size, config.hidden_size)

    def forward(self, hidden_states, attention_mask=None, output_attentions=False):
        ln = self.LayerNorm(hidden_states)
        self_outputs = self.self(ln, attention_mask, output_attentions)
        attention_output = self.attn_out(self_outputs[0]) + hidden_states
        outputs = self_outputs[1:]
        inter = gelu(self.intermediate(self.ffn_norm(attention_output)))
        layer_output = self.output(inter) + attention_output
        return (layer_output,) + outputs


class EsmContactPredictionHead(nn.Module):
    def __init__(self, in_features, bias=True, eos_idx=2):
        super().__init__()
        self.in_features = in_features
        self.eos_idx = eos_idx
        self.regression = nn.Linear(in_features, 1, bias)
        self.activation = nn.Sigmoid()

    def forward(self, tokens, attentions):
        eos_mask = tokens.ne(self.eos_idx).to(attentions)
        eos_mask = eos_mask.unsqueeze(1) * eos_mask.unsqueeze(2)
        attentions = attentions * eos_mask[:, None, None, :, :]
        attentions = attentions[..., :-1, :-1]
        attentions = attentions[..., 1:, 1:]
        batch_size, layers, heads, seqlen, _ = attentions.size()
        attentions = attentions.view(batch_size, layers * heads, seqlen, seqlen)
        attentions = attentions.to(self.regression.weight.device)
        attentions = average_product_correct(symmetrize(attentions))
        attentions = attentions.permute(0, 2, 3, 1)
        return self.activation(self.regression(attentions).squeeze(3))


class EsmForMaskedLMWithContacts(nn.Module):
    def __init__(self, config=EsmConfig()):
        super().__init__()
        self.config = config
        self.embeddings = EsmEmbeddings(config)
        self.layer = nn.ModuleList([EsmLayer(config) for _ in range(config.num_hidden_layers)])
        self.emb_layer_norm_after = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.lm_dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.lm_layer_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.lm_bias = nn.Parameter(torch.zeros(config.vocab_size))
        self.contact_head = EsmContactPredictionHead(
            config.num_hidden_layers * config.num_attention_heads, eos_idx=config.eos_token_id)

    def get_extended_attention_mask(self, attention_mask, dtype):
        extended = attention_mask[:, None, None, :].to(dtype=dtype)
        return (1.0 - extended) * torch.finfo(dtype).min

    def forward(self, input_ids, attention_mask=None, labels=None, return_contacts=True):
        if attention_mask is None:
            attention_mask = torch.ones_like(input_ids)
        hidden_states = self.embeddings(input_ids, attention_mask)
        extended_attention_mask = self.get_extended_attention_mask(attention_mask, hidden_states.dtype)
        all_self_attentions = ()
        for layer_module in self.layer:
            layer_outputs = layer_module(hidden_states, extended_attention_mask, return_contacts)
            hidden_states = layer_outputs[0]
            if return_contacts:
                all_self_attentions = all_self_attentions + (layer_outputs[1],)
        sequence_output = self.emb_layer_norm_after(hidden_states)
        x = self.lm_layer_norm(gelu(self.lm_dense(sequence_output)))
        logits = F.linear(x, self.embeddings.word_embeddings.weight) + self.lm_bias
        result = {"logits": logits}
        if labels is not None:
            result["loss"] = F.cross_entropy(logits.view(-1, self.config.vocab_size), labels.view(-1),
                                             ignore_index=-100)
        if return_contacts:
            attns = torch.stack(all_self_attentions, dim=1)
            attns *= attention_mask.unsqueeze(1).unsqueeze(2).unsqueeze(3)
            attns *= attention_mask.unsqueeze(1).unsqueeze(2).unsqueeze(4)
            result["contacts"] = self.contact_head(input_ids, attns)
        return result


torch.manual_seed(0)
model = EsmForMaskedLMWithContacts().eval()
check_gradients = True


def _warm():
    # One call outside inference mode fills the rotary tables, as a model in
    # use has them; tables made under inference_mode could not be saved for
    # a later backward.
    with torch.no_grad():
        model(*example_inputs())


def example_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(4, 24, (2, 9), generator=g)
    ids[:, 0] = 0
    ids[0, -1] = 2
    ids[1, 6] = 2
    ids[1, 7:] = 1
    ids[0, 3] = 32
    ids[1, 2] = 32
    ids[1, 4] = 32
    attention_mask = (ids != 1).long()
    labels = torch.full_like(ids, -100)
    labels[0, 3] = 7
    labels[1, 2] = 9
    labels[1, 4] = 11
    return ids, attention_mask, labels


_warm()
