"""QLoRA-style adapters as the bitsandbytes/PEFT fine-tuning code arranges
them, written in torch: the frozen base weight stored as 4-bit NormalFloat
codes packed two to a uint8 (`>> 4` and `& 0x0F` to unpack), dequantized
in forward through the NF4 lookup table and per-block absmax scales held
as buffers; a LoRA wrapper module holding the base layer, `lora_A` /
`lora_B` ModuleDicts keyed by adapter name, `lora_dropout` before
`lora_B(lora_A(x)) * scaling`, `active_adapters` looped over, the input
cast to the LoRA weight's dtype and the result back; only the adapters
train."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

NF4_TABLE = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
             -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
             0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
             0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0]


class Linear4bit(nn.Module):
    def __init__(self, in_features, out_features, blocksize=16):
        super().__init__()
        self.in_features, self.out_features, self.blocksize = in_features, out_features, blocksize
        w = torch.randn(out_features, in_features) / math.sqrt(in_features)
        flat = w.reshape(-1, blocksize)
        absmax = flat.abs().max(dim=1).values
        code = torch.tensor(NF4_TABLE)
        idx = (flat / absmax[:, None]).unsqueeze(-1).sub(code).abs().argmin(-1).to(torch.uint8).reshape(-1)
        packed = (idx[0::2] << 4) | idx[1::2]
        self.register_buffer("weight_packed", packed)
        self.register_buffer("absmax", absmax)
        self.register_buffer("code", code)
        self.bias = nn.Parameter(torch.zeros(out_features), requires_grad=False)

    def dequantize(self):
        hi = (self.weight_packed >> 4).long()
        lo = (self.weight_packed & 0x0F).long()
        idx = torch.stack([hi, lo], dim=-1).reshape(-1, self.blocksize)
        w = self.code[idx] * self.absmax[:, None]
        return w.reshape(self.out_features, self.in_features)

    def forward(self, x):
        return F.linear(x, self.dequantize().to(x.dtype), self.bias)


class LoraLayer(nn.Module):
    adapter_layer_names = ("lora_A", "lora_B")

    def __init__(self, base_layer, adapter_name="default", r=4, lora_alpha=8, lora_dropout=0.05):
        super().__init__()
        self.base_layer = base_layer
        self.r, self.lora_alpha, self.scaling = {}, {}, {}
        self.lora_dropout = nn.ModuleDict({})
        self.lora_A = nn.ModuleDict({})
        self.lora_B = nn.ModuleDict({})
        self.merged = False
        self._active_adapter = adapter_name
        self.update_layer(adapter_name, r, lora_alpha, lora_dropout)

    @property
    def active_adapters(self):
        if isinstance(self._active_adapter, str):
            return [self._active_adapter]
        return self._active_adapter

    def update_layer(self, adapter_name, r, lora_alpha, lora_dropout):
        self.r[adapter_name] = r
        self.lora_alpha[adapter_name] = lora_alpha
        self.lora_dropout[adapter_name] = nn.Dropout(p=lora_dropout) if lora_dropout > 0.0 else nn.Identity()
        self.lora_A[adapter_name] = nn.Linear(self.base_layer.in_features, r, bias=False)
        self.lora_B[adapter_name] = nn.Linear(r, self.base_layer.out_features, bias=False)
        self.scaling[adapter_name] = lora_alpha / r
        nn.init.kaiming_uniform_(self.lora_A[adapter_name].weight, a=math.sqrt(5))
        nn.init.normal_(self.lora_B[adapter_name].weight, std=0.02)

    def forward(self, x, *args, **kwargs):
        result = self.base_layer(x, *args, **kwargs)
        result = result.clone()
        for active_adapter in self.active_adapters:
            if active_adapter not in self.lora_A.keys():
                continue
            lora_A = self.lora_A[active_adapter]
            lora_B = self.lora_B[active_adapter]
            dropout = self.lora_dropout[active_adapter]
            scaling = self.scaling[active_adapter]
            requires_conversion = not torch.is_autocast_enabled()
            if requires_conversion:
                expected_dtype = result.dtype
                x = x.to(lora_A.weight.dtype)
            output = lora_B(lora_A(dropout(x)))
            if requires_conversion:
                output = output.to(expected_dtype)
            output = output * scaling
            result += output
        return result


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.input_layernorm = nn.RMSNorm(dim)
        self.q_proj = LoraLayer(Linear4bit(dim, dim))
        self.k_proj = Linear4bit(dim, dim)
        self.v_proj = LoraLayer(Linear4bit(dim, dim))
        self.o_proj = Linear4bit(dim, dim)
        self.post_attention_layernorm = nn.RMSNorm(dim)
        self.gate_proj = LoraLayer(Linear4bit(dim, 2 * dim))
        self.up_proj = Linear4bit(dim, 2 * dim)
        self.down_proj = LoraLayer(Linear4bit(2 * dim, dim))

    def forward(self, x):
        b, n, d = x.shape
        h = self.input_layernorm(x)
        q, k, v = (p(h).view(b, n, self.heads, -1).transpose(1, 2) for p in (self.q_proj, self.k_proj, self.v_proj))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, n, d)
        x = x + self.o_proj(y)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class QLoraLM(nn.Module):
    def __init__(self, vocab=64, dim=32, heads=4, layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([Block(dim, heads) for _ in range(layers)])
        self.norm = nn.RMSNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        for name, p in self.named_parameters():
            if "lora_" not in name:
                p.requires_grad_(False)

    def forward(self, input_ids, labels):
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            h = layer(h)
        logits = self.lm_head(self.norm(h)).float()
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1),
                               ignore_index=-100)
        return loss, logits


torch.manual_seed(0)
model = QLoraLM().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, 64, (2, 7), generator=g)
    labels = ids.clone()
    labels[0, :3] = -100
    return ids, labels
