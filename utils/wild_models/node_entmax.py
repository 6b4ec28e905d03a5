"""Neural Oblivious Decision Ensembles as Qwicen/node writes them: feature
selection by `entmax15` (an `autograd.Function` whose forward sorts,
computes running means and squares by `cumsum`, finds the support size
by `(tau_star <= Xsrt).sum(dim)` and reads the threshold back with
`gather(dim, support_size - 1)`, saving the output for a sparse backward
written by hand), thresholds and log temperatures as parameters,
`sparsemoid` soft splits (`(0.5 * x + 0.5).clamp_(0, 1)`), a
`bin_codes_1hot` buffer built at construction from `torch.arange` and
integer division, response weights combined by `torch.einsum('bnds,dcs->bnd')`
on one-hot codes, `torch.prod` over depth, and dense blocks concatenating
every layer's trees with `torch.cat`, averaged by `.mean(dim=-2)`."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Function


def _make_ix_like(input, dim=0):
    d = input.size(dim)
    rho = torch.arange(1, d + 1, device=input.device, dtype=input.dtype)
    view = [1] * input.dim()
    view[0] = -1
    return rho.view(view).transpose(0, dim)


class Entmax15Function(Function):
    @staticmethod
    def forward(ctx, input, dim=0):
        ctx.dim = dim
        max_val, _ = input.max(dim=dim, keepdim=True)
        input = input - max_val
        input = input / 2
        tau_star, _ = Entmax15Function._threshold_and_support(input, dim)
        output = torch.clamp(input - tau_star, min=0) ** 2
        ctx.save_for_backward(output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        Y, = ctx.saved_tensors
        gppr = Y.sqrt()
        dX = grad_output * gppr
        q = dX.sum(ctx.dim) / gppr.sum(ctx.dim)
        q = q.unsqueeze(ctx.dim)
        dX -= q * gppr
        return dX, None

    @staticmethod
    def _threshold_and_support(input, dim=0):
        Xsrt, _ = torch.sort(input, descending=True, dim=dim)
        rho = _make_ix_like(input, dim)
        mean = Xsrt.cumsum(dim) / rho
        mean_sq = (Xsrt ** 2).cumsum(dim) / rho
        ss = rho * (mean_sq - mean ** 2)
        delta = (1 - ss) / rho
        delta_nz = torch.clamp(delta, 0)
        tau = mean - torch.sqrt(delta_nz)
        support_size = (tau <= Xsrt).sum(dim).unsqueeze(dim)
        tau_star = tau.gather(dim, support_size - 1)
        return tau_star, support_size


def entmax15(input, dim=-1):
    return Entmax15Function.apply(input, dim)


def sparsemoid(input):
    return (0.5 * input + 0.5).clamp_(0, 1)


class ODST(nn.Module):
    def __init__(self, in_features, num_trees, depth=3, tree_dim=1, flatten_output=True,
                 choice_function=entmax15, bin_function=sparsemoid):
        super().__init__()
        self.depth, self.num_trees, self.tree_dim, self.flatten_output = depth, num_trees, tree_dim, flatten_output
        self.choice_function, self.bin_function = choice_function, bin_function
        self.response = nn.Parameter(torch.randn(num_trees, tree_dim, 2 ** depth))
        self.feature_selection_logits = nn.Parameter(torch.rand(in_features, num_trees, depth))
        self.feature_thresholds = nn.Parameter(torch.randn(num_trees, depth) * 0.5)
        self.log_temperatures = nn.Parameter(torch.randn(num_trees, depth) * 0.1)
        with torch.no_grad():
            indices = torch.arange(2 ** self.depth)
            offsets = 2 ** torch.arange(self.depth)
            bin_codes = (indices.view(1, -1) // offsets.view(-1, 1) % 2).to(torch.float32)
            bin_codes_1hot = torch.stack([bin_codes, 1.0 - bin_codes], dim=-1)
        self.register_buffer("bin_codes_1hot", bin_codes_1hot)

    def forward(self, input):
        assert len(input.shape) >= 2
        if len(input.shape) > 2:
            return self.forward(input.view(-1, input.shape[-1])).view(*input.shape[:-1], -1)
        feature_logits = self.feature_selection_logits
        feature_selectors = self.choice_function(feature_logits, dim=0)
        feature_values = torch.einsum("bi,ind->bnd", input, feature_selectors)
        threshold_logits = (feature_values - self.feature_thresholds) * torch.exp(-self.log_temperatures)
        threshold_logits = torch.stack([-threshold_logits, threshold_logits], dim=-1)
        bins = self.bin_function(threshold_logits)
        bin_matches = torch.einsum("btds,dcs->btdc", bins, self.bin_codes_1hot)
        response_weights = torch.prod(bin_matches, dim=-2)
        response = torch.einsum("bnd,ncd->bnc", response_weights, self.response)
        return response.flatten(1, 2) if self.flatten_output else response


class DenseBlock(nn.Sequential):
    def __init__(self, input_dim, layer_dim, num_layers, tree_dim=1, max_features=None, **kwargs):
        layers = []
        for i in range(num_layers):
            oddt = ODST(input_dim, layer_dim, tree_dim=tree_dim, flatten_output=True, **kwargs)
            input_dim = min(input_dim + layer_dim * tree_dim, max_features or float("inf"))
            layers.append(oddt)
        super().__init__(*layers)
        self.num_layers, self.layer_dim, self.tree_dim = num_layers, layer_dim, tree_dim
        self.max_features = max_features

    def forward(self, x):
        initial_features = x.shape[-1]
        for layer in self:
            layer_inp = x
            if self.max_features is not None:
                tail_features = min(self.max_features, layer_inp.shape[-1]) - initial_features
                if tail_features != 0:
                    layer_inp = torch.cat([layer_inp[..., :initial_features], layer_inp[..., -tail_features:]], dim=-1)
            h = layer(layer_inp)
            x = torch.cat([x, h], dim=-1)
        outputs = x[..., initial_features:]
        return outputs.view(*outputs.shape[:-1], self.num_layers * self.layer_dim, self.tree_dim)


class Lambda(nn.Module):
    def __init__(self, func):
        super().__init__()
        self.func = func

    def forward(self, *args, **kwargs):
        return self.func(*args, **kwargs)


class NODEModel(nn.Module):
    def __init__(self, in_features=10, num_classes=3):
        super().__init__()
        self.net = nn.Sequential(
            DenseBlock(in_features, 8, num_layers=2, tree_dim=num_classes + 1, depth=3,
                       max_features=20),
            Lambda(lambda x: x[..., :num_classes].mean(dim=-2)),
        )

    def forward(self, x, y=None):
        logits = self.net(x)
        if y is None:
            return logits
        return logits, F.cross_entropy(logits, y)


torch.manual_seed(0)
model = NODEModel()
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.randn(12, 10, generator=g), torch.randint(0, 3, (12,), generator=g)
