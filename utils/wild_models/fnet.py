"""FNet in the style of transformers' `modeling_fnet.py`: token mixing by
`partial(torch.fft.fftn, dim=(1, 2))` keeping `.real`, word, position and
token-type embeddings with a `position_ids` buffer and a zero
`token_type_ids` buffer expanded to the batch, post-LayerNorm blocks,
`apply_chunking_to_forward` over the feed-forward (chunk size 0: one
call), a tied MLM head and next-sentence head, and the summed losses."""
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn


def apply_chunking_to_forward(forward_fn, chunk_size, chunk_dim, *input_tensors):
    if chunk_size > 0:
        tensor_shape = input_tensors[0].shape[chunk_dim]
        num_chunks = tensor_shape // chunk_size
        input_tensors_chunks = tuple(t.chunk(num_chunks, dim=chunk_dim) for t in input_tensors)
        output_chunks = tuple(forward_fn(*c) for c in zip(*input_tensors_chunks))
        return torch.cat(output_chunks, dim=chunk_dim)
    return forward_fn(*input_tensors)


class FNetConfig:
    vocab_size = 60
    hidden_size = 32
    intermediate_size = 64
    num_hidden_layers = 2
    max_position_embeddings = 16
    type_vocab_size = 2
    layer_norm_eps = 1e-12
    pad_token_id = 3
    chunk_size_feed_forward = 4


class FNetEmbeddings(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.word_embeddings = nn.Embedding(config.vocab_size, config.hidden_size,
                                            padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.projection = nn.Linear(config.hidden_size, config.hidden_size)
        self.dropout = nn.Dropout(0.1)
        self.register_buffer("position_ids", torch.arange(config.max_position_embeddings).expand((1, -1)),
                             persistent=False)
        self.register_buffer("token_type_ids", torch.zeros(self.position_ids.size(), dtype=torch.long),
                             persistent=False)

    def forward(self, input_ids=None, token_type_ids=None, position_ids=None):
        input_shape = input_ids.size()
        seq_length = input_shape[1]
        if position_ids is None:
            position_ids = self.position_ids[:, :seq_length]
        if token_type_ids is None:
            if hasattr(self, "token_type_ids"):
                buffered_token_type_ids = self.token_type_ids[:, :seq_length]
                token_type_ids = buffered_token_type_ids.expand(input_shape[0], seq_length)
            else:
                token_type_ids = torch.zeros(input_shape, dtype=torch.long, device=self.position_ids.device)
        embeddings = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        embeddings += self.position_embeddings(position_ids)
        embeddings = self.LayerNorm(embeddings)
        embeddings = self.projection(embeddings)
        return self.dropout(embeddings)


class FNetBasicFourierTransform(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.fourier_transform = partial(torch.fft.fftn, dim=(1, 2))

    def forward(self, hidden_states):
        outputs = self.fourier_transform(hidden_states).real
        return (outputs,)


class FNetLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.chunk_size_feed_forward = config.chunk_size_feed_forward
        self.seq_len_dim = 1
        self.fourier = FNetBasicFourierTransform(config)
        self.fourier_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.intermediate = nn.Linear(config.hidden_size, config.intermediate_size)
        self.output = nn.Linear(config.intermediate_size, config.hidden_size)
        self.output_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(0.1)

    def forward(self, hidden_states):
        self_fourier_outputs = self.fourier(hidden_states)
        fourier_output = self.fourier_norm(hidden_states + self_fourier_outputs[0])
        layer_output = apply_chunking_to_forward(
            self.feed_forward_chunk, self.chunk_size_feed_forward, self.seq_len_dim, fourier_output)
        return (layer_output,)

    def feed_forward_chunk(self, fourier_output):
        intermediate_output = F.gelu(self.intermediate(fourier_output), approximate="tanh")
        output = self.dropout(self.output(intermediate_output))
        return self.output_norm(output + fourier_output)


class FNetForPreTraining(nn.Module):
    def __init__(self, config=FNetConfig()):
        super().__init__()
        self.config = config
        self.embeddings = FNetEmbeddings(config)
        self.layer = nn.ModuleList([FNetLayer(config) for _ in range(config.num_hidden_layers)])
        self.pooler = nn.Linear(config.hidden_size, config.hidden_size)
        self.transform = nn.Linear(config.hidden_size, config.hidden_size)
        self.transform_norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size)
        self.decoder.weight = self.embeddings.word_embeddings.weight
        self.seq_relationship = nn.Linear(config.hidden_size, 2)

    def forward(self, input_ids, token_type_ids=None, labels=None, next_sentence_label=None):
        hidden_states = self.embeddings(input_ids=input_ids, token_type_ids=token_type_ids)
        for layer_module in self.layer:
            hidden_states = layer_module(hidden_states)[0]
        pooled_output = torch.tanh(self.pooler(hidden_states[:, 0]))
        h = self.transform_norm(F.gelu(self.transform(hidden_states), approximate="tanh"))
        prediction_scores = self.decoder(h)
        seq_relationship_score = self.seq_relationship(pooled_output)
        total_loss = None
        if labels is not None and next_sentence_label is not None:
            masked_lm_loss = F.cross_entropy(prediction_scores.view(-1, self.config.vocab_size), labels.view(-1))
            next_sentence_loss = F.cross_entropy(seq_relationship_score.view(-1, 2), next_sentence_label.view(-1))
            total_loss = masked_lm_loss + next_sentence_loss
        return total_loss, prediction_scores, seq_relationship_score


torch.manual_seed(0)
model = FNetForPreTraining().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(4, 60, (2, 12), generator=g)
    token_type_ids = torch.zeros_like(ids)
    token_type_ids[:, 7:] = 1
    labels = torch.full_like(ids, -100)
    labels[0, 3] = 11
    labels[1, 8] = 22
    return ids, token_type_ids, labels, torch.tensor([0, 1])
