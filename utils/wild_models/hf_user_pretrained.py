"""A user's own model on the Hugging Face base classes, as a research repo
publishing to the Hub writes it: a `PretrainedConfig` subclass with a
`model_type` and its own keyword defaults, a `PreTrainedModel` subclass
with `config_class`, `base_model_prefix` and `_init_weights`, built by
`post_init()`, a `ModelOutput` dataclass returned from forward with
optional fields left `None`, `return_dict` defaulting to
`config.use_return_dict`, and a tuple return when it is false."""
from dataclasses import dataclass
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import nn
from transformers import PretrainedConfig, PreTrainedModel
from transformers.utils import ModelOutput


class TinyMixerConfig(PretrainedConfig):
    model_type = "tiny_mixer"

    def __init__(self, vocab_size=50, hidden_size=16, num_layers=2, seq_len=6, num_labels=3,
                 layer_norm_eps=1e-5, initializer_range=0.02, **kwargs):
        self.vocab_size = vocab_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.seq_len = seq_len
        self.layer_norm_eps = layer_norm_eps
        self.initializer_range = initializer_range
        super().__init__(num_labels=num_labels, **kwargs)


@dataclass
class TinyMixerOutput(ModelOutput):
    loss: Optional[torch.FloatTensor] = None
    logits: torch.FloatTensor = None
    hidden_states: Optional[Tuple[torch.FloatTensor, ...]] = None


class MixerLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm1 = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.token_mix = nn.Linear(config.seq_len, config.seq_len)
        self.norm2 = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.channel_mix = nn.Sequential(nn.Linear(config.hidden_size, config.hidden_size * 2), nn.GELU(),
                                         nn.Linear(config.hidden_size * 2, config.hidden_size))

    def forward(self, x):
        x = x + self.token_mix(self.norm1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.channel_mix(self.norm2(x))


class TinyMixerPreTrainedModel(PreTrainedModel):
    config_class = TinyMixerConfig
    base_model_prefix = "mixer"

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            module.weight.data.normal_(mean=0.0, std=self.config.initializer_range * 10)
            if module.bias is not None:
                module.bias.data.zero_()
        elif isinstance(module, nn.Embedding):
            module.weight.data.normal_(mean=0.0, std=1.0)


class TinyMixerForSequenceClassification(TinyMixerPreTrainedModel):
    def __init__(self, config):
        super().__init__(config)
        self.num_labels = config.num_labels
        self.embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([MixerLayer(config) for _ in range(config.num_layers)])
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.post_init()

    def forward(self, input_ids, labels=None, output_hidden_states=None, return_dict=None):
        return_dict = return_dict if return_dict is not None else self.config.use_return_dict
        output_hidden_states = (output_hidden_states if output_hidden_states is not None
                                else self.config.output_hidden_states)
        hidden = self.embeddings(input_ids)
        all_hidden = () if output_hidden_states else None
        for layer in self.layers:
            if output_hidden_states:
                all_hidden = all_hidden + (hidden,)
            hidden = layer(hidden)
        logits = self.classifier(hidden.mean(1))
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.view(-1, self.num_labels), labels.view(-1))
        if not return_dict:
            output = (logits,) + ((all_hidden,) if all_hidden is not None else ())
            return ((loss,) + output) if loss is not None else output
        return TinyMixerOutput(loss=loss, logits=logits, hidden_states=all_hidden)


torch.manual_seed(0)
model = TinyMixerForSequenceClassification(TinyMixerConfig()).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randint(0, 50, (2, 6), generator=g),)


def example_kwargs():
    return {"labels": torch.tensor([0, 2]), "output_hidden_states": True}
