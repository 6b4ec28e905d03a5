"""Gradient checkpointing as Hugging Face and timm training code switch
it on: `gradient_checkpointing_enable()` setting
`self._gradient_checkpointing_func = functools.partial(checkpoint,
use_reentrant=False)` on the encoder, the layer loop taking it when
`self.gradient_checkpointing and torch.is_grad_enabled()` (so evaluation
under no_grad runs the layers directly), the older
`create_custom_forward(module)` closure passed to
`torch.utils.checkpoint.checkpoint(..., use_reentrant=True)` over
`*inputs` with a None attention mask, timm's `checkpoint_seq` by
`torch.utils.checkpoint.checkpoint_sequential(blocks, segments, x,
use_reentrant=False)` over an nn.Sequential, and `preserve_rng_state`,
the layers' outputs as tuples with `output_attentions`."""
import functools

import torch
import torch.nn.functional as F
import torch.utils.checkpoint
from torch import nn
from torch.utils.checkpoint import checkpoint, checkpoint_sequential


class SelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, hidden_states, attention_mask=None, output_attentions=False):
        b, t, d = hidden_states.shape
        q, k, v = self.qkv(hidden_states).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5
        if attention_mask is not None:
            scores = scores + attention_mask
        probs = scores.softmax(-1)
        ctx = (probs @ v).transpose(1, 2).reshape(b, t, d)
        out = self.out(ctx)
        return (out, probs) if output_attentions else (out,)


class Layer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = SelfAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, hidden_states, attention_mask=None, output_attentions=False):
        attn_outputs = self.attn(self.ln1(hidden_states), attention_mask, output_attentions)
        hidden_states = hidden_states + attn_outputs[0]
        hidden_states = hidden_states + self.mlp(self.ln2(hidden_states))
        return (hidden_states,) + attn_outputs[1:]


class Encoder(nn.Module):
    def __init__(self, dim, heads, layers):
        super().__init__()
        self.layer = nn.ModuleList([Layer(dim, heads) for _ in range(layers)])
        self.gradient_checkpointing = False

    def forward(self, hidden_states, attention_mask=None, output_attentions=False):
        all_attentions = () if output_attentions else None
        for i, layer_module in enumerate(self.layer):
            if self.gradient_checkpointing and torch.is_grad_enabled():
                if i % 2 == 0:
                    layer_outputs = self._gradient_checkpointing_func(
                        layer_module.__call__, hidden_states, attention_mask, output_attentions)
                else:
                    def create_custom_forward(module):
                        def custom_forward(*inputs):
                            return module(*inputs, output_attentions)
                        return custom_forward

                    layer_outputs = torch.utils.checkpoint.checkpoint(
                        create_custom_forward(layer_module), hidden_states, attention_mask,
                        use_reentrant=True, preserve_rng_state=True)
            else:
                layer_outputs = layer_module(hidden_states, attention_mask, output_attentions)
            hidden_states = layer_outputs[0]
            if output_attentions:
                all_attentions = all_attentions + (layer_outputs[1],)
        return hidden_states, all_attentions


class ConvStem(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.blocks = nn.Sequential(*[nn.Sequential(nn.Conv1d(dim, dim, 3, padding=1), nn.GroupNorm(4, dim),
                                                    nn.SiLU()) for _ in range(4)])
        self.grad_checkpointing = False

    def forward(self, x):
        if self.grad_checkpointing and torch.is_grad_enabled():
            return checkpoint_sequential(self.blocks, 2, x, use_reentrant=False)
        return self.blocks(x)


class CheckpointedClassifier(nn.Module):
    def __init__(self, vocab=40, dim=32, heads=4, layers=4, classes=3):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, dim)
        self.stem = ConvStem(dim)
        self.encoder = Encoder(dim, heads, layers)
        self.classifier = nn.Linear(dim, classes)

    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        if gradient_checkpointing_kwargs is None:
            gradient_checkpointing_kwargs = {"use_reentrant": False}
        gradient_checkpointing_func = functools.partial(checkpoint, **gradient_checkpointing_kwargs)
        for module in self.modules():
            if hasattr(module, "gradient_checkpointing"):
                module._gradient_checkpointing_func = gradient_checkpointing_func
                module.gradient_checkpointing = True
            if hasattr(module, "grad_checkpointing"):
                module.grad_checkpointing = True

    def forward(self, input_ids, attention_mask, labels):
        x = self.embeddings(input_ids)
        x = self.stem(x.transpose(1, 2)).transpose(1, 2)
        extended = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min
        hidden, attentions = self.encoder(x, extended, output_attentions=True)
        pooled = (hidden * attention_mask[..., None]).sum(1) / attention_mask.sum(1, keepdim=True)
        logits = self.classifier(pooled)
        loss = F.cross_entropy(logits, labels)
        return loss, logits, torch.stack(attentions, 1)


torch.manual_seed(0)
model = CheckpointedClassifier().eval()
model.gradient_checkpointing_enable()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 40, (2, 9), generator=g)
    mask = torch.ones(2, 9)
    mask[1, 6:] = 0
    return ids, mask, torch.tensor([2, 0])
