"""DeepAR as GluonTS's torch model writes it: a MeanScaler over the observed
context (`abs() * observed` summed, a default scale from the whole batch
where a series has no observations, `torch.where`, `clamp(min=...)`),
lagged values by `lagged_sequence_values` (prior context cat'ed, one slice
per lag index, stacked on a new last axis), a FeatureEmbedder of
static categorical columns (ModuleList of Embeddings over `chunk`ed
columns), static reals and `log` of the scale expanded over time, an LSTM
unrolled on the context, a StudentTOutput projection (`args_dim` dict of
Linears, `2.0 + softplus` degrees of freedom, `softplus` scale, a
`domain_map` classmethod), an `AffineTransformed(TransformedDistribution)`
subclass with its own `mean`, the training loss `-log_prob` averaged
by `weighted_average` over observed values, and greedy decoding over the
prediction length feeding each step's mean back through the lags."""
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import AffineTransform, Distribution, StudentT, TransformedDistribution


class AffineTransformed(TransformedDistribution):
    def __init__(self, base_distribution: Distribution, loc=None, scale=None, event_dim=0):
        self.scale = 1.0 if scale is None else scale
        self.loc = 0.0 if loc is None else loc
        super().__init__(base_distribution, [AffineTransform(loc=self.loc, scale=self.scale, event_dim=event_dim)])

    @property
    def mean(self):
        return self.base_dist.mean * self.scale + self.loc

    @property
    def variance(self):
        return self.base_dist.variance * self.scale ** 2


class StudentTOutput:
    args_dim: Dict[str, int] = {"df": 1, "loc": 1, "scale": 1}
    distr_cls = StudentT

    @classmethod
    def domain_map(cls, df, loc, scale):
        epsilon = torch.finfo(scale.dtype).eps
        scale = F.softplus(scale).clamp_min(epsilon)
        df = 2.0 + F.softplus(df)
        return df.squeeze(-1), loc.squeeze(-1), scale.squeeze(-1)

    def get_args_proj(self, in_features):
        return PtArgProj(in_features=in_features, args_dim=self.args_dim, domain_map=self.domain_map)

    def distribution(self, distr_args, loc=None, scale=None):
        distr = self.distr_cls(*distr_args)
        if loc is None and scale is None:
            return distr
        return AffineTransformed(distr, loc=loc, scale=scale)


class PtArgProj(nn.Module):
    def __init__(self, in_features, args_dim, domain_map):
        super().__init__()
        self.args_dim = args_dim
        self.proj = nn.ModuleList([nn.Linear(in_features, dim) for dim in args_dim.values()])
        self.domain_map = domain_map

    def forward(self, x):
        params_unbounded = [proj(x) for proj in self.proj]
        return self.domain_map(*params_unbounded)


class MeanScaler(nn.Module):
    def __init__(self, dim=-1, keepdim=False, default_scale=None, minimum_scale=1e-10):
        super().__init__()
        self.dim = dim
        self.keepdim = keepdim
        self.minimum_scale = minimum_scale
        self.default_scale = default_scale

    def forward(self, data, weights):
        ts_sum = (data * weights).abs().sum(self.dim, keepdim=True)
        num_observed = weights.sum(self.dim, keepdim=True)
        scale = ts_sum / torch.clamp(num_observed, min=1)
        if self.default_scale is None:
            batch_sum = ts_sum.sum(dim=0)
            batch_observations = torch.clamp(num_observed.sum(0), min=1)
            default_scale = torch.squeeze(batch_sum / batch_observations)
        else:
            default_scale = self.default_scale * torch.ones_like(scale)
        scale = torch.where(num_observed > 0, scale, default_scale)
        scale = torch.clamp(scale, min=self.minimum_scale)
        scaled_data = data / scale
        if not self.keepdim:
            scale = scale.squeeze(dim=self.dim)
        return scaled_data, torch.zeros_like(scale), scale


class FeatureEmbedder(nn.Module):
    def __init__(self, cardinalities: List[int], embedding_dims: List[int]):
        super().__init__()
        self._num_features = len(cardinalities)
        self._embedders = nn.ModuleList([nn.Embedding(c, d) for c, d in zip(cardinalities, embedding_dims)])

    def forward(self, features):
        if self._num_features > 1:
            cat_feature_slices = torch.chunk(features, self._num_features, dim=-1)
        else:
            cat_feature_slices = [features]
        return torch.cat([embed(cat_feature_slice.squeeze(-1))
                          for embed, cat_feature_slice in zip(self._embedders, cat_feature_slices)], dim=-1)


def lagged_sequence_values(indices: List[int], prior_sequence, sequence, dim: int):
    assert max(indices) <= prior_sequence.shape[dim], (
        f"lags cannot go further than prior sequence length, found lag {max(indices)} "
        f"while prior sequence is only {prior_sequence.shape[dim]}-long")
    full_sequence = torch.cat((prior_sequence, sequence), dim=dim)
    lags_values = []
    for lag_index in indices:
        begin_index = -lag_index - sequence.shape[dim]
        end_index = -lag_index if lag_index > 0 else None
        lags_values.append(full_sequence[:, begin_index:end_index, ...])
    return torch.stack(lags_values, dim=-1)


def weighted_average(x, weights: Optional[torch.Tensor] = None, dim=None):
    if weights is not None:
        weighted_tensor = torch.where(weights != 0, x * weights, torch.zeros_like(x))
        sum_weights = torch.clamp(weights.sum(dim=dim) if dim else weights.sum(), min=1.0)
        return (weighted_tensor.sum(dim=dim) if dim else weighted_tensor.sum()) / sum_weights
    return x.mean(dim=dim)


class DeepARModel(nn.Module):
    def __init__(self, freq="H", context_length=8, prediction_length=4, num_feat_dynamic_real=2,
                 num_feat_static_real=1, num_feat_static_cat=2, cardinality=(5, 3), embedding_dimension=None,
                 num_layers=2, hidden_size=12, dropout_rate=0.1, lags_seq=None, scaling=True):
        super().__init__()
        self.context_length = context_length
        self.prediction_length = prediction_length
        self.distr_output = StudentTOutput()
        self.param_proj = self.distr_output.get_args_proj(hidden_size)
        self.target_shape = ()
        self.num_feat_dynamic_real = num_feat_dynamic_real
        self.num_feat_static_cat = num_feat_static_cat
        self.num_feat_static_real = num_feat_static_real
        self.embedding_dimension = (embedding_dimension if embedding_dimension is not None or cardinality is None
                                    else [min(50, (cat + 1) // 2) for cat in cardinality])
        self.lags_seq = lags_seq or [1, 2, 3, 7]
        self.lags_seq = [lag - 1 for lag in self.lags_seq]
        self.num_parallel_samples = 1
        self.past_length = self.context_length + max(self.lags_seq)
        self.embedder = FeatureEmbedder(cardinalities=list(cardinality), embedding_dims=self.embedding_dimension)
        if scaling:
            self.scaler = MeanScaler(dim=-1, keepdim=True)
        else:
            raise NotImplementedError("only the mean scaler here")
        self.rnn_input_size = len(self.lags_seq) + self._number_of_features
        self.rnn = nn.LSTM(input_size=self.rnn_input_size, hidden_size=hidden_size, num_layers=num_layers,
                           dropout=dropout_rate, batch_first=True)

    @property
    def _number_of_features(self) -> int:
        return (sum(self.embedding_dimension) + self.num_feat_dynamic_real + self.num_feat_static_real + 1)

    def prepare_rnn_input(self, feat_static_cat, feat_static_real, past_time_feat, past_target,
                          past_observed_values, future_time_feat=None, future_target=None):
        context = past_target[..., -self.context_length:]
        observed_context = past_observed_values[..., -self.context_length:]
        input, _, scale = self.scaler(context, observed_context)
        future_length = future_time_feat.shape[-2]
        if future_length > 1:
            assert future_target is not None
            input = torch.cat((input, future_target[..., : future_length - 1] / scale), dim=-1)
        prior_input = past_target[..., : -self.context_length] / scale
        lags = lagged_sequence_values(self.lags_seq, prior_input, input, dim=-1)
        time_feat = torch.cat((past_time_feat[..., -self.context_length + 1:, :], future_time_feat), dim=-2)
        embedded_cat = self.embedder(feat_static_cat)
        static_feat = torch.cat((embedded_cat, feat_static_real, scale.log()), dim=-1)
        expanded_static_feat = static_feat.unsqueeze(1).expand(-1, time_feat.shape[-2], -1)
        features = torch.cat((expanded_static_feat, time_feat), dim=-1)
        return torch.cat((lags, features), dim=-1), scale, static_feat

    def unroll_lagged_rnn(self, feat_static_cat, feat_static_real, past_time_feat, past_target,
                          past_observed_values, future_time_feat=None, future_target=None):
        rnn_input, scale, static_feat = self.prepare_rnn_input(
            feat_static_cat, feat_static_real, past_time_feat, past_target, past_observed_values,
            future_time_feat, future_target)
        output, new_state = self.rnn(rnn_input)
        params = self.param_proj(output)
        return params, scale, output, static_feat, new_state

    def output_distribution(self, params, scale=None, trailing_n=None):
        sliced_params = params
        if trailing_n is not None:
            sliced_params = [p[:, -trailing_n:] for p in params]
        return self.distr_output.distribution(sliced_params, scale=scale)

    def log_prob(self, feat_static_cat, feat_static_real, past_time_feat, past_target, past_observed_values,
                 future_time_feat, future_target, future_observed_values):
        params, scale, _, _, _ = self.unroll_lagged_rnn(
            feat_static_cat, feat_static_real, past_time_feat, past_target, past_observed_values,
            future_time_feat[:, :1], None)
        params, scale, _, _, _ = self.unroll_lagged_rnn(
            feat_static_cat, feat_static_real, past_time_feat, past_target, past_observed_values,
            future_time_feat, future_target)
        context_target = past_target[:, -self.context_length + 1:]
        target = torch.cat((context_target, future_target), dim=1)
        context_observed = past_observed_values[:, -self.context_length + 1:]
        observed_values = torch.cat((context_observed, future_observed_values), dim=1)
        distr = self.output_distribution(params, scale)
        loss_values = -distr.log_prob(target)
        return weighted_average(loss_values, weights=observed_values, dim=1)

    def forward(self, feat_static_cat, feat_static_real, past_time_feat, past_target, past_observed_values,
                future_time_feat, future_target, future_observed_values):
        loss = self.log_prob(feat_static_cat, feat_static_real, past_time_feat, past_target,
                             past_observed_values, future_time_feat, future_target,
                             future_observed_values).mean()
        # greedy forecast: each step's mean is the next step's input
        params, scale, _, static_feat, state = self.unroll_lagged_rnn(
            feat_static_cat, feat_static_real, past_time_feat, past_target, past_observed_values,
            future_time_feat[:, :1])
        repeated_scale = scale
        repeated_static_feat = static_feat.unsqueeze(dim=1)
        repeated_past_target = past_target / repeated_scale
        repeated_time_feat = future_time_feat
        distr = self.output_distribution(params, trailing_n=1)
        next_sample = distr.mean
        future_samples = [next_sample * repeated_scale]
        for k in range(1, self.prediction_length):
            scaled_next_sample = next_sample
            next_features = torch.cat((repeated_static_feat, repeated_time_feat[:, k: k + 1]), dim=-1)
            next_lags = lagged_sequence_values(self.lags_seq, repeated_past_target, scaled_next_sample, dim=-1)
            rnn_input = torch.cat((next_lags, next_features), dim=-1)
            output, state = self.rnn(rnn_input, state)
            repeated_past_target = torch.cat((repeated_past_target, scaled_next_sample), dim=1)
            params = self.param_proj(output)
            distr = self.output_distribution(params)
            next_sample = distr.mean
            future_samples.append(next_sample * repeated_scale)
        forecast = torch.cat(future_samples, dim=1)
        return loss, forecast


torch.manual_seed(0)
model = DeepARModel().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    B, past, future = 3, 8 + 6, 4
    t = torch.arange(past + future).float()
    level = torch.rand(B, 1, generator=g) * 10
    series = level + torch.sin(t / 2)[None] * 2 + 0.3 * torch.randn(B, past + future, generator=g)
    past_observed = torch.ones(B, past)
    past_observed[1, -3:] = 0
    past_observed[2] = 0  # no observation at all: the batch's default scale
    time_feat = torch.stack([torch.sin(t / 3), torch.cos(t / 3)], -1).expand(B, -1, -1)
    return (torch.tensor([[1, 2], [4, 0], [0, 1]]), torch.randn(B, 1, generator=g), time_feat[:, :past],
            series[:, :past], past_observed, time_feat[:, past:], series[:, past:], torch.ones(B, future))
