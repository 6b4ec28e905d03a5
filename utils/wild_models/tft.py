"""A Temporal Fusion Transformer as pytorch-forecasting writes it: a
`TimeDistributedInterpolation` that resizes features with
`F.interpolate(x.unsqueeze(1), self.output_size, mode="linear",
align_corners=True)` and a trainable gate, `GatedLinearUnit` (Linear then
`F.glu(x, dim=-1)`), `ResampleNorm`, `AddNorm`, `GateAddNorm`,
`GatedResidualNetwork` with an optional context, a `VariableSelectionNetwork`
over an `nn.ModuleDict` of per-variable GRNs whose outputs are stacked with
`torch.stack(var_outputs, dim=-1)` and weighted by a softmax over a
flattened GRN, an LSTM encoder and decoder initialised from static
context, `InterpretableMultiHeadAttention` with per-head query/key
projections, a shared value projection, a causal mask from
`torch.triu(torch.ones(...), diagonal=1)` and heads averaged by
`torch.stack(..., dim=2).mean(dim=2)`, and the quantile loss."""
from typing import Dict

import torch
import torch.nn as nn
import torch.nn.functional as F


class TimeDistributedInterpolation(nn.Module):
    def __init__(self, output_size: int, batch_first: bool = False, trainable: bool = False):
        super().__init__()
        self.output_size = output_size
        self.batch_first = batch_first
        self.trainable = trainable
        if self.trainable:
            self.mask = nn.Parameter(torch.zeros(self.output_size, dtype=torch.float32))
            self.gate = nn.Sigmoid()

    def interpolate(self, x):
        upsampled = F.interpolate(x.unsqueeze(1), self.output_size, mode="linear", align_corners=True).squeeze(1)
        if self.trainable:
            upsampled = upsampled * self.gate(self.mask.unsqueeze(0)) * 2.0
        return upsampled

    def forward(self, x):
        if len(x.size()) <= 2:
            return self.interpolate(x)
        x_reshape = x.contiguous().view(-1, x.size(-1))
        y = self.interpolate(x_reshape)
        if self.batch_first:
            y = y.contiguous().view(x.size(0), -1, y.size(-1))
        else:
            y = y.view(-1, x.size(1), y.size(-1))
        return y


class GatedLinearUnit(nn.Module):
    def __init__(self, input_size: int, hidden_size: int = None, dropout: float = None):
        super().__init__()
        self.dropout = nn.Dropout(dropout) if dropout is not None else dropout
        self.hidden_size = hidden_size or input_size
        self.fc = nn.Linear(input_size, self.hidden_size * 2)

    def forward(self, x):
        if self.dropout is not None:
            x = self.dropout(x)
        x = self.fc(x)
        x = F.glu(x, dim=-1)
        return x


class ResampleNorm(nn.Module):
    def __init__(self, input_size: int, output_size: int = None, trainable_add: bool = True):
        super().__init__()
        self.input_size = input_size
        self.trainable_add = trainable_add
        self.output_size = output_size or input_size
        if self.input_size != self.output_size:
            self.resample = TimeDistributedInterpolation(self.output_size, batch_first=True, trainable=False)
        if self.trainable_add:
            self.mask = nn.Parameter(torch.zeros(self.output_size, dtype=torch.float))
            self.gate = nn.Sigmoid()
        self.norm = nn.LayerNorm(self.output_size)

    def forward(self, x):
        if self.input_size != self.output_size:
            x = self.resample(x)
        if self.trainable_add:
            x = x * self.gate(self.mask) * 2.0
        return self.norm(x)


class AddNorm(nn.Module):
    def __init__(self, input_size: int, skip_size: int = None, trainable_add: bool = True):
        super().__init__()
        self.input_size = input_size
        self.trainable_add = trainable_add
        self.skip_size = skip_size or input_size
        if self.input_size != self.skip_size:
            self.resample = TimeDistributedInterpolation(self.input_size, batch_first=True, trainable=False)
        if self.trainable_add:
            self.mask = nn.Parameter(torch.zeros(self.input_size, dtype=torch.float))
            self.gate = nn.Sigmoid()
        self.norm = nn.LayerNorm(self.input_size)

    def forward(self, x, skip):
        if self.input_size != self.skip_size:
            skip = self.resample(skip)
        if self.trainable_add:
            skip = skip * self.gate(self.mask) * 2.0
        return self.norm(x + skip)


class GateAddNorm(nn.Module):
    def __init__(self, input_size, hidden_size=None, skip_size=None, trainable_add=False, dropout=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size or input_size
        self.skip_size = skip_size or self.hidden_size
        self.dropout = dropout
        self.glu = GatedLinearUnit(self.input_size, hidden_size=self.hidden_size, dropout=self.dropout)
        self.add_norm = AddNorm(self.hidden_size, skip_size=self.skip_size, trainable_add=trainable_add)

    def forward(self, x, skip):
        output = self.glu(x)
        output = self.add_norm(output, skip)
        return output


class GatedResidualNetwork(nn.Module):
    def __init__(self, input_size, hidden_size, output_size, dropout=0.1, context_size=None, residual=False):
        super().__init__()
        self.input_size = input_size
        self.output_size = output_size
        self.context_size = context_size
        self.hidden_size = hidden_size
        self.dropout = dropout
        self.residual = residual
        if self.input_size != self.output_size and not self.residual:
            residual_size = self.input_size
        else:
            residual_size = self.output_size
        if self.output_size != residual_size:
            self.resample_norm = ResampleNorm(residual_size, self.output_size)
        self.fc1 = nn.Linear(self.input_size, self.hidden_size)
        self.elu = nn.ELU()
        if self.context_size is not None:
            self.context = nn.Linear(self.context_size, self.hidden_size, bias=False)
        self.fc2 = nn.Linear(self.hidden_size, self.hidden_size)
        self.init_weights()
        self.gate_norm = GateAddNorm(input_size=self.hidden_size, skip_size=self.output_size,
                                     hidden_size=self.output_size, dropout=self.dropout, trainable_add=False)

    def init_weights(self):
        for name, p in self.named_parameters():
            if "bias" in name:
                torch.nn.init.zeros_(p)
            elif "fc1" in name or "fc2" in name:
                torch.nn.init.kaiming_normal_(p, a=0, mode="fan_in", nonlinearity="leaky_relu")
            elif "context" in name:
                torch.nn.init.xavier_uniform_(p)

    def forward(self, x, context=None, residual=None):
        if residual is None:
            residual = x
        if self.input_size != self.output_size and not self.residual:
            residual = self.resample_norm(residual)
        x = self.fc1(x)
        if context is not None:
            context = self.context(context)
            x = x + context
        x = self.elu(x)
        x = self.fc2(x)
        x = self.gate_norm(x, residual)
        return x


class VariableSelectionNetwork(nn.Module):
    def __init__(self, input_sizes: Dict[str, int], hidden_size: int, dropout: float = 0.1, context_size=None):
        super().__init__()
        self.hidden_size = hidden_size
        self.input_sizes = input_sizes
        self.dropout = dropout
        self.context_size = context_size
        if self.num_inputs > 1:
            self.flattened_grn = GatedResidualNetwork(self.input_size_total, min(self.hidden_size, self.num_inputs),
                                                      self.num_inputs, self.dropout, self.context_size,
                                                      residual=False)
        self.single_variable_grns = nn.ModuleDict()
        self.prescalers = nn.ModuleDict()
        for name, input_size in self.input_sizes.items():
            self.single_variable_grns[name] = GatedResidualNetwork(input_size, min(input_size, self.hidden_size),
                                                                   output_size=self.hidden_size, dropout=self.dropout)
            self.prescalers[name] = nn.Linear(1, input_size)
        self.softmax = nn.Softmax(dim=-1)

    @property
    def input_size_total(self):
        return sum(size for size in self.input_sizes.values())

    @property
    def num_inputs(self):
        return len(self.input_sizes)

    def forward(self, x: Dict[str, torch.Tensor], context: torch.Tensor = None):
        if self.num_inputs > 1:
            var_outputs = []
            weight_inputs = []
            for name in self.input_sizes.keys():
                variable_embedding = x[name]
                if name in self.prescalers:
                    variable_embedding = self.prescalers[name](variable_embedding)
                weight_inputs.append(variable_embedding)
                var_outputs.append(self.single_variable_grns[name](variable_embedding))
            var_outputs = torch.stack(var_outputs, dim=-1)
            flat_embedding = torch.cat(weight_inputs, dim=-1)
            sparse_weights = self.flattened_grn(flat_embedding, context)
            sparse_weights = self.softmax(sparse_weights).unsqueeze(-2)
            outputs = var_outputs * sparse_weights
            outputs = outputs.sum(dim=-1)
        else:
            name = next(iter(self.single_variable_grns.keys()))
            variable_embedding = x[name]
            if name in self.prescalers:
                variable_embedding = self.prescalers[name](variable_embedding)
            outputs = self.single_variable_grns[name](variable_embedding)
            if outputs.ndim == 3:
                sparse_weights = torch.ones(outputs.size(0), outputs.size(1), 1, 1, device=outputs.device)
            else:
                sparse_weights = torch.ones(outputs.size(0), 1, 1, device=outputs.device)
        return outputs, sparse_weights


class ScaledDotProductAttention(nn.Module):
    def __init__(self, dropout: float = None, scale: bool = True):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout) if dropout is not None else dropout
        self.softmax = nn.Softmax(dim=2)
        self.scale = scale

    def forward(self, q, k, v, mask=None):
        attn = torch.bmm(q, k.permute(0, 2, 1))
        if self.scale:
            dimension = torch.as_tensor(k.size(-1), dtype=attn.dtype, device=attn.device).sqrt()
            attn = attn / dimension
        if mask is not None:
            attn = attn.masked_fill(mask, -1e9)
        attn = self.softmax(attn)
        if self.dropout is not None:
            attn = self.dropout(attn)
        output = torch.bmm(attn, v)
        return output, attn


class InterpretableMultiHeadAttention(nn.Module):
    def __init__(self, n_head: int, d_model: int, dropout: float = 0.0):
        super().__init__()
        self.n_head = n_head
        self.d_model = d_model
        self.d_k = self.d_q = self.d_v = d_model // n_head
        self.dropout = nn.Dropout(p=dropout)
        self.v_layer = nn.Linear(self.d_model, self.d_v)
        self.q_layers = nn.ModuleList([nn.Linear(self.d_model, self.d_q) for _ in range(self.n_head)])
        self.k_layers = nn.ModuleList([nn.Linear(self.d_model, self.d_k) for _ in range(self.n_head)])
        self.attention = ScaledDotProductAttention()
        self.w_h = nn.Linear(self.d_v, self.d_model, bias=False)

    def forward(self, q, k, v, mask=None):
        heads = []
        attns = []
        vs = self.v_layer(v)
        for i in range(self.n_head):
            qs = self.q_layers[i](q)
            ks = self.k_layers[i](k)
            head, attn = self.attention(qs, ks, vs, mask)
            head_dropout = self.dropout(head)
            heads.append(head_dropout)
            attns.append(attn)
        head = torch.stack(heads, dim=2) if self.n_head > 1 else heads[0]
        attn = torch.stack(attns, dim=2)
        outputs = torch.mean(head, dim=2) if self.n_head > 1 else head
        outputs = self.w_h(outputs)
        outputs = self.dropout(outputs)
        return outputs, attn


class TemporalFusionTransformer(nn.Module):
    def __init__(self, hidden_size=16, heads=2, quantiles=(0.1, 0.5, 0.9)):
        super().__init__()
        self.quantiles = quantiles
        self.static_variables = {"group": 4}
        self.encoder_variables = {"target": 1, "price": 1, "time_idx": 1}
        self.decoder_variables = {"price": 1, "time_idx": 1}
        self.static_embedding = nn.Embedding(3, 4)
        self.static_variable_selection = VariableSelectionNetwork({"group": 4}, hidden_size)
        self.static_variable_selection.prescalers = nn.ModuleDict()
        self.encoder_variable_selection = VariableSelectionNetwork(self.encoder_variables, hidden_size,
                                                                   context_size=hidden_size)
        self.decoder_variable_selection = VariableSelectionNetwork(self.decoder_variables, hidden_size,
                                                                   context_size=hidden_size)
        self.static_context_variable_selection = GatedResidualNetwork(hidden_size, hidden_size, hidden_size)
        self.static_context_initial_hidden_lstm = GatedResidualNetwork(hidden_size, hidden_size, hidden_size)
        self.static_context_initial_cell_lstm = GatedResidualNetwork(hidden_size, hidden_size, hidden_size)
        self.static_context_enrichment = GatedResidualNetwork(hidden_size, hidden_size, hidden_size)
        self.lstm_encoder = nn.LSTM(hidden_size, hidden_size, num_layers=1, batch_first=True)
        self.lstm_decoder = nn.LSTM(hidden_size, hidden_size, num_layers=1, batch_first=True)
        self.post_lstm_gate_encoder = GateAddNorm(hidden_size, dropout=0.1, trainable_add=False)
        self.post_lstm_gate_decoder = self.post_lstm_gate_encoder
        self.static_enrichment = GatedResidualNetwork(hidden_size, hidden_size, hidden_size, context_size=hidden_size)
        self.multihead_attn = InterpretableMultiHeadAttention(d_model=hidden_size, n_head=heads)
        self.post_attn_gate_norm = GateAddNorm(hidden_size, dropout=0.1, trainable_add=False)
        self.pos_wise_ff = GatedResidualNetwork(hidden_size, hidden_size, hidden_size)
        self.pre_output_gate_norm = GateAddNorm(hidden_size, dropout=None, trainable_add=False)
        self.output_layer = nn.Linear(hidden_size, len(quantiles))

    def expand_static_context(self, context, timesteps):
        return context[:, None].expand(-1, timesteps, -1)

    def get_attention_mask(self, encoder_lengths, decoder_length):
        attend_step = torch.arange(decoder_length, device=encoder_lengths.device)
        predict_step = torch.arange(0, decoder_length, device=encoder_lengths.device)[:, None]
        decoder_mask = (attend_step >= predict_step).unsqueeze(0).expand(encoder_lengths.size(0), -1, -1)
        encoder_mask = (torch.arange(encoder_lengths.max(), device=encoder_lengths.device)
                        .unsqueeze(0).expand(encoder_lengths.size(0), -1) >= encoder_lengths.unsqueeze(-1))
        encoder_mask = encoder_mask.unsqueeze(1).expand(-1, decoder_length, -1)
        return torch.cat((encoder_mask, decoder_mask), dim=2)

    def forward(self, x: Dict[str, torch.Tensor]):
        encoder_lengths = x["encoder_lengths"]
        max_encoder_length = int(encoder_lengths.max())
        x_cont = torch.cat([x["encoder_cont"], x["decoder_cont"]], dim=1)
        timesteps = x_cont.size(1)
        names = ["target", "price", "time_idx"]
        input_vectors = {name: x_cont[..., idx].unsqueeze(-1) for idx, name in enumerate(names)}
        static_embedding, static_variable_selection = self.static_variable_selection(
            {"group": self.static_embedding(x["groups"][:, 0])})
        static_context_variable_selection = self.expand_static_context(
            self.static_context_variable_selection(static_embedding), timesteps)
        embeddings_varying_encoder = {name: input_vectors[name][:, :max_encoder_length]
                                      for name in self.encoder_variables}
        embeddings_varying_encoder, encoder_sparse_weights = self.encoder_variable_selection(
            embeddings_varying_encoder, static_context_variable_selection[:, :max_encoder_length])
        embeddings_varying_decoder = {name: input_vectors[name][:, max_encoder_length:]
                                      for name in self.decoder_variables}
        embeddings_varying_decoder, decoder_sparse_weights = self.decoder_variable_selection(
            embeddings_varying_decoder, static_context_variable_selection[:, max_encoder_length:])
        input_hidden = self.static_context_initial_hidden_lstm(static_embedding).expand(1, -1, -1)
        input_cell = self.static_context_initial_cell_lstm(static_embedding).expand(1, -1, -1)
        encoder_output, (hidden, cell) = self.lstm_encoder(embeddings_varying_encoder, (input_hidden, input_cell))
        decoder_output, _ = self.lstm_decoder(embeddings_varying_decoder, (hidden, cell))
        lstm_output_encoder = self.post_lstm_gate_encoder(encoder_output, embeddings_varying_encoder)
        lstm_output_decoder = self.post_lstm_gate_decoder(decoder_output, embeddings_varying_decoder)
        lstm_output = torch.cat([lstm_output_encoder, lstm_output_decoder], dim=1)
        static_context_enrichment = self.static_context_enrichment(static_embedding)
        attn_input = self.static_enrichment(lstm_output, self.expand_static_context(static_context_enrichment,
                                                                                     timesteps))
        attn_output, attn_output_weights = self.multihead_attn(
            q=attn_input[:, max_encoder_length:], k=attn_input, v=attn_input,
            mask=self.get_attention_mask(encoder_lengths=encoder_lengths,
                                         decoder_length=timesteps - max_encoder_length))
        attn_output = self.post_attn_gate_norm(attn_output, attn_input[:, max_encoder_length:])
        output = self.pos_wise_ff(attn_output)
        output = self.pre_output_gate_norm(output, lstm_output[:, max_encoder_length:])
        prediction = self.output_layer(output)
        errors = x["target"].unsqueeze(-1) - prediction
        q = torch.tensor(self.quantiles, dtype=prediction.dtype)
        loss = torch.max((q - 1) * errors, q * errors).mean()
        return {"prediction": prediction, "encoder_variables": encoder_sparse_weights,
                "attention": attn_output_weights, "loss": loss}


torch.manual_seed(0)
model = TemporalFusionTransformer().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    batch, enc, dec = 3, 8, 4
    t = torch.arange(enc + dec, dtype=torch.float32) / 12
    target = torch.sin(6 * t).expand(batch, -1) + 0.1 * torch.randn(batch, enc + dec, generator=g)
    price = torch.randn(batch, enc + dec, generator=g)
    cont = torch.stack([target, price, t.expand(batch, -1)], -1)
    decoder_cont = cont[:, enc:].clone()
    decoder_cont[..., 0] = 0.0
    return ({"encoder_cont": cont[:, :enc].contiguous(), "decoder_cont": decoder_cont,
             "encoder_lengths": torch.tensor([8, 8, 8]), "groups": torch.tensor([[0], [2], [1]]),
             "target": target[:, enc:].contiguous()},)
