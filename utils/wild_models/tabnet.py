"""TabNet as `pytorch-tabnet` writes it: a `Sparsemax` custom
`autograd.Function` (sort descending, `cumsum`, support size by comparison
with `arange`, `gather` of the threshold, backward through the support mask),
Ghost BatchNorm splitting the batch by `chunk(ceil(n / vbs))`, GLU blocks
with the `* sqrt(0.5)` residual scaling, shared and step-specific feature
transformers, attentive transformers updating a `prior` by
`(gamma - M)`, the sparsity regulariser `mean(sum(M * log(M + eps)))`, and
embeddings of categorical columns spliced back by column index."""
import numpy as np
import torch
from torch import nn
from torch.autograd import Function


def _make_ix_like(input, dim=0):
    d = input.size(dim)
    rho = torch.arange(1, d + 1, device=input.device, dtype=input.dtype)
    view = [1] * input.dim()
    view[0] = -1
    return rho.view(view).transpose(0, dim)


class SparsemaxFunction(Function):
    @staticmethod
    def forward(ctx, input, dim=-1):
        ctx.dim = dim
        max_val, _ = input.max(dim=dim, keepdim=True)
        input -= max_val
        tau, supp_size = SparsemaxFunction._threshold_and_support(input, dim=dim)
        output = torch.clamp(input - tau, min=0)
        ctx.save_for_backward(supp_size, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        supp_size, output = ctx.saved_tensors
        dim = ctx.dim
        grad_input = grad_output.clone()
        grad_input[output == 0] = 0
        v_hat = grad_input.sum(dim=dim) / supp_size.to(output.dtype).squeeze()
        v_hat = v_hat.unsqueeze(dim)
        grad_input = torch.where(output != 0, grad_input - v_hat, grad_input)
        return grad_input, None

    @staticmethod
    def _threshold_and_support(input, dim=-1):
        input_srt, _ = torch.sort(input, descending=True, dim=dim)
        input_cumsum = input_srt.cumsum(dim) - 1
        rhos = _make_ix_like(input, dim)
        support = rhos * input_srt > input_cumsum
        support_size = support.sum(dim=dim).unsqueeze(dim)
        tau = input_cumsum.gather(dim, support_size - 1)
        tau /= support_size.to(input.dtype)
        return tau, support_size


sparsemax = SparsemaxFunction.apply


class Sparsemax(nn.Module):
    def __init__(self, dim=-1):
        self.dim = dim
        super().__init__()

    def forward(self, input):
        return sparsemax(input, self.dim)


class GBN(torch.nn.Module):
    def __init__(self, input_dim, virtual_batch_size=128, momentum=0.01):
        super().__init__()
        self.input_dim = input_dim
        self.virtual_batch_size = virtual_batch_size
        self.bn = nn.BatchNorm1d(self.input_dim, momentum=momentum)

    def forward(self, x):
        chunks = x.chunk(int(np.ceil(x.shape[0] / self.virtual_batch_size)), 0)
        res = [self.bn(x_) for x_ in chunks]
        return torch.cat(res, dim=0)


class GLU_Layer(torch.nn.Module):
    def __init__(self, input_dim, output_dim, fc=None, virtual_batch_size=128, momentum=0.02):
        super().__init__()
        self.output_dim = output_dim
        self.fc = fc if fc else nn.Linear(input_dim, 2 * output_dim, bias=False)
        self.bn = GBN(2 * output_dim, virtual_batch_size=virtual_batch_size, momentum=momentum)

    def forward(self, x):
        x = self.bn(self.fc(x))
        return torch.mul(x[:, : self.output_dim], torch.sigmoid(x[:, self.output_dim:]))


class GLU_Block(torch.nn.Module):
    def __init__(self, input_dim, output_dim, n_glu=2, first=False, shared_layers=None,
                 virtual_batch_size=128, momentum=0.02):
        super().__init__()
        self.first = first
        self.shared_layers = shared_layers
        self.n_glu = n_glu
        self.glu_layers = torch.nn.ModuleList()
        params = {"virtual_batch_size": virtual_batch_size, "momentum": momentum}
        fc = shared_layers[0] if shared_layers else None
        self.glu_layers.append(GLU_Layer(input_dim, output_dim, fc=fc, **params))
        for glu_id in range(1, self.n_glu):
            fc = shared_layers[glu_id] if shared_layers else None
            self.glu_layers.append(GLU_Layer(output_dim, output_dim, fc=fc, **params))

    def forward(self, x):
        scale = torch.sqrt(torch.FloatTensor([0.5]).to(x.device))
        if self.first:
            x = self.glu_layers[0](x)
            layers_left = range(1, self.n_glu)
        else:
            layers_left = range(self.n_glu)
        for glu_id in layers_left:
            x = torch.add(x, self.glu_layers[glu_id](x))
            x = x * scale
        return x


class FeatTransformer(torch.nn.Module):
    def __init__(self, input_dim, output_dim, shared_layers, n_glu_independent, virtual_batch_size=128, momentum=0.02):
        super().__init__()
        params = {"n_glu": 2, "virtual_batch_size": virtual_batch_size, "momentum": momentum}
        self.shared = GLU_Block(input_dim, output_dim, first=True, shared_layers=shared_layers, **params)
        spec_input_dim = output_dim
        params["n_glu"] = n_glu_independent
        self.specifics = GLU_Block(spec_input_dim, output_dim, first=False, **params)

    def forward(self, x):
        return self.specifics(self.shared(x))


class AttentiveTransformer(torch.nn.Module):
    def __init__(self, input_dim, group_dim, virtual_batch_size=128, momentum=0.02):
        super().__init__()
        self.fc = nn.Linear(input_dim, group_dim, bias=False)
        self.bn = GBN(group_dim, virtual_batch_size=virtual_batch_size, momentum=momentum)
        self.selector = Sparsemax(dim=-1)

    def forward(self, priors, processed_feat):
        x = self.bn(self.fc(processed_feat))
        x = torch.mul(x, priors)
        return self.selector(x)


class EmbeddingGenerator(torch.nn.Module):
    def __init__(self, input_dim, cat_dims, cat_idxs, cat_emb_dims):
        super().__init__()
        self.embeddings = torch.nn.ModuleList()
        for cat_dim, emb_dim in zip(cat_dims, cat_emb_dims):
            self.embeddings.append(torch.nn.Embedding(cat_dim, emb_dim))
        self.continuous_idx = torch.ones(input_dim, dtype=torch.bool)
        self.continuous_idx[cat_idxs] = 0
        self.post_embed_dim = int(input_dim + np.sum(cat_emb_dims) - len(cat_emb_dims))

    def forward(self, x):
        cols = []
        cat_feat_counter = 0
        for feat_init_idx, is_continuous in enumerate(self.continuous_idx):
            if is_continuous:
                cols.append(x[:, feat_init_idx].float().view(-1, 1))
            else:
                cols.append(self.embeddings[cat_feat_counter](x[:, feat_init_idx].long()))
                cat_feat_counter += 1
        return torch.cat(cols, dim=1)


class TabNet(torch.nn.Module):
    def __init__(self, input_dim=6, output_dim=3, n_d=8, n_a=8, n_steps=3, gamma=1.3, cat_idxs=(1, 4),
                 cat_dims=(5, 7), cat_emb_dim=3, n_independent=2, n_shared=2, epsilon=1e-15,
                 virtual_batch_size=4, momentum=0.02):
        super().__init__()
        self.embedder = EmbeddingGenerator(input_dim, list(cat_dims), list(cat_idxs), [cat_emb_dim] * len(cat_dims))
        self.input_dim = post = self.embedder.post_embed_dim
        self.n_d, self.n_a, self.n_steps, self.gamma, self.epsilon = n_d, n_a, n_steps, gamma, epsilon
        self.initial_bn = nn.BatchNorm1d(post, momentum=0.01)
        shared_feat_transform = torch.nn.ModuleList()
        for i in range(n_shared):
            shared_feat_transform.append(nn.Linear(post if i == 0 else n_d + n_a, 2 * (n_d + n_a), bias=False))
        self.initial_splitter = FeatTransformer(post, n_d + n_a, shared_feat_transform, n_independent,
                                                virtual_batch_size, momentum)
        self.feat_transformers = torch.nn.ModuleList()
        self.att_transformers = torch.nn.ModuleList()
        for step in range(n_steps):
            self.feat_transformers.append(FeatTransformer(post, n_d + n_a, shared_feat_transform, n_independent,
                                                          virtual_batch_size, momentum))
            self.att_transformers.append(AttentiveTransformer(n_a, post, virtual_batch_size, momentum))
        self.final_mapping = nn.Linear(n_d, output_dim, bias=False)

    def forward(self, x):
        x = self.embedder(x)
        res = 0
        x = self.initial_bn(x)
        prior = torch.ones(x.shape).to(x.device)
        M_loss = 0
        att = self.initial_splitter(x)[:, self.n_d:]
        for step in range(self.n_steps):
            M = self.att_transformers[step](prior, att)
            M_loss += torch.mean(torch.sum(torch.mul(M, torch.log(M + self.epsilon)), dim=1))
            prior = torch.mul(self.gamma - M, prior)
            masked_x = torch.mul(M, x)
            out = self.feat_transformers[step](masked_x)
            d = torch.nn.ReLU()(out[:, : self.n_d])
            res = torch.add(res, d)
            att = out[:, self.n_d:]
        M_loss /= self.n_steps
        return self.final_mapping(res), M_loss


torch.manual_seed(0)
model = TabNet().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(10, 6, generator=g)
    x[:, 1] = torch.randint(0, 5, (10,), generator=g).float()
    x[:, 4] = torch.randint(0, 7, (10,), generator=g).float()
    return x
