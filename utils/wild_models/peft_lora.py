"""PEFT-style LoRA injected into a BERT-like encoder after construction:
`inject_adapter` walks `named_modules()`, matches target names by suffix and
replaces each `nn.Linear` with a `LoraLinear` wrapping the original as
`base_layer`, with per-adapter `nn.ModuleDict`s of `lora_A`/`lora_B`,
`lora_dropout` and a `scaling` dict, an `active_adapters` list, and a
`merged_adapters` list; one adapter is merged into the base weight
(`merge()` adds `B @ A * scaling` in place under `torch.no_grad()`) while
the other stays unmerged, so forward takes both paths; base weights are
frozen with `requires_grad_(False)` as PEFT does, so only the adapters get
gradients."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class BertLayer(nn.Module):
    def __init__(self, hidden=32, heads=4, ffn=64):
        super().__init__()
        self.heads = heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.dense = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden)
        self.intermediate = nn.Linear(hidden, ffn)
        self.output = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.heads, x.size(-1) // self.heads)
        return x.view(new_x_shape).permute(0, 2, 1, 3)

    def forward(self, hidden_states, extended_attention_mask):
        q = self.transpose_for_scores(self.query(hidden_states))
        k = self.transpose_for_scores(self.key(hidden_states))
        v = self.transpose_for_scores(self.value(hidden_states))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.size(-1))
        probs = nn.functional.softmax(scores + extended_attention_mask, dim=-1)
        ctx = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
        ctx = ctx.view(ctx.size()[:-2] + (-1,))
        h = self.ln1(self.dense(ctx) + hidden_states)
        return self.ln2(self.output(F.gelu(self.intermediate(h))) + h)


class BertClassifier(nn.Module):
    def __init__(self, vocab=64, hidden=32, layers=2, labels=3):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(16, hidden)
        self.layer = nn.ModuleList([BertLayer(hidden) for _ in range(layers)])
        self.classifier = nn.Linear(hidden, labels)

    def forward(self, input_ids, attention_mask):
        pos = torch.arange(input_ids.size(1), device=input_ids.device).expand_as(input_ids)
        h = self.word_embeddings(input_ids) + self.position_embeddings(pos)
        ext = (1.0 - attention_mask[:, None, None, :].to(h.dtype)) * torch.finfo(h.dtype).min
        for layer in self.layer:
            h = layer(h, ext)
        return self.classifier(h[:, 0])


class LoraLayer:
    adapter_layer_names = ("lora_A", "lora_B")

    def __init__(self, base_layer):
        self.base_layer = base_layer
        self.r = {}
        self.lora_alpha = {}
        self.scaling = {}
        self.lora_dropout = nn.ModuleDict({})
        self.lora_A = nn.ModuleDict({})
        self.lora_B = nn.ModuleDict({})
        self.merged_adapters = []
        self._active_adapter = []
        self.in_features = base_layer.in_features
        self.out_features = base_layer.out_features

    @property
    def active_adapters(self):
        return self._active_adapter

    @property
    def merged(self):
        return bool(self.merged_adapters)

    def update_layer(self, adapter_name, r, lora_alpha, lora_dropout):
        self.r[adapter_name] = r
        self.lora_alpha[adapter_name] = lora_alpha
        self.lora_dropout[adapter_name] = nn.Dropout(p=lora_dropout) if lora_dropout > 0.0 else nn.Identity()
        self.lora_A[adapter_name] = nn.Linear(self.in_features, r, bias=False)
        self.lora_B[adapter_name] = nn.Linear(r, self.out_features, bias=False)
        self.scaling[adapter_name] = lora_alpha / r
        nn.init.kaiming_uniform_(self.lora_A[adapter_name].weight, a=math.sqrt(5))
        nn.init.normal_(self.lora_B[adapter_name].weight, std=0.02)  # zeros in PEFT; trained here
        self._active_adapter.append(adapter_name)


class LoraLinear(nn.Module, LoraLayer):
    def __init__(self, base_layer, adapter_name, r=4, lora_alpha=8, lora_dropout=0.1):
        super().__init__()
        LoraLayer.__init__(self, base_layer)
        self.update_layer(adapter_name, r, lora_alpha, lora_dropout)

    def get_delta_weight(self, adapter):
        return (self.lora_B[adapter].weight @ self.lora_A[adapter].weight) * self.scaling[adapter]

    def merge(self, adapter_names=None):
        for active_adapter in adapter_names or self.active_adapters:
            if active_adapter in self.lora_A.keys():
                with torch.no_grad():
                    self.base_layer.weight.data += self.get_delta_weight(active_adapter)
                self.merged_adapters.append(active_adapter)

    def forward(self, x, *args, **kwargs):
        result = self.base_layer(x, *args, **kwargs)
        torch_result_dtype = result.dtype
        for active_adapter in self.active_adapters:
            if active_adapter not in self.lora_A.keys() or active_adapter in self.merged_adapters:
                continue
            lora_A = self.lora_A[active_adapter]
            lora_B = self.lora_B[active_adapter]
            dropout = self.lora_dropout[active_adapter]
            scaling = self.scaling[active_adapter]
            x = x.to(lora_A.weight.dtype)
            result = result + lora_B(lora_A(dropout(x))) * scaling
        return result.to(torch_result_dtype)


def _get_submodules(model, key):
    parent = model.get_submodule(".".join(key.split(".")[:-1]))
    target_name = key.split(".")[-1]
    return parent, model.get_submodule(key), target_name


def inject_adapter(model, adapter_name, target_modules, r, lora_alpha):
    key_list = [key for key, _ in model.named_modules()]
    for key in key_list:
        if not any(key.endswith(t) for t in target_modules):
            continue
        parent, target, target_name = _get_submodules(model, key)
        if isinstance(target, LoraLinear):
            target.update_layer(adapter_name, r, lora_alpha, 0.1)
        elif isinstance(target, nn.Linear):
            setattr(parent, target_name, LoraLinear(target, adapter_name, r, lora_alpha))
    for n, p in model.named_parameters():
        if "lora_" not in n:
            p.requires_grad_(False)
    return model


torch.manual_seed(0)
model = BertClassifier()
inject_adapter(model, "default", ["query", "value"], r=4, lora_alpha=8)
inject_adapter(model, "merged", ["query", "dense"], r=2, lora_alpha=4)
for module in model.modules():
    if isinstance(module, LoraLinear) and "merged" in module.lora_A:
        module.merge(["merged"])
model.classifier.weight.requires_grad_(True)
model = model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 64, (3, 7), generator=g)
    mask = torch.ones(3, 7, dtype=torch.long)
    mask[2, 5:] = 0
    return ids, mask
