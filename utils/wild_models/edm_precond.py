"""EDM (Karras et al.) as NVlabs/edm's `training/networks.py` and
`training/loss.py` write it: `@persistence.persistent_class`-style plain
classes, `EDMPrecond` with `c_skip`, `c_out`, `c_in`, `c_noise =
sigma.log() / 4`, `sigma.to(torch.float32).reshape(-1, 1, 1, 1)`, the
class labels `None` / zeros / reshaped by a chained conditional, a
`dtype` chosen by `use_fp16 and not force_fp32 and x.device.type ==
'cuda'`, `round_sigma` by `torch.as_tensor`, a small SongUNet-like
denoiser (`PositionalEmbedding` with `x.ger(freqs)`, a `map_noise` /
`map_label` / `map_layer` embedding, UNet blocks with adaptive scale and
shift by `emb.unsqueeze(2).unsqueeze(3).chunk(2, dim=1)`, `torch.nn.
functional.silu`, skip connections scaled by `np.sqrt(0.5)`), and
`EDMLoss` with the log-normal sigma, `weight = (sigma ** 2 + sigma_data
** 2) / (sigma * sigma_data) ** 2`, the noise passed in (for a
reproducible call) and `augment_labels` None."""
import numpy as np
import torch
from torch.nn.functional import silu


def weight_init(shape, mode, fan_in, fan_out):
    if mode == "xavier_uniform":
        return np.sqrt(6 / (fan_in + fan_out)) * (torch.rand(*shape) * 2 - 1)
    if mode == "kaiming_normal":
        return np.sqrt(1 / fan_in) * torch.randn(*shape)
    raise ValueError(f'Invalid init mode "{mode}"')


class Linear(torch.nn.Module):
    def __init__(self, in_features, out_features, bias=True, init_mode="kaiming_normal", init_weight=1, init_bias=0):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        init_kwargs = dict(mode=init_mode, fan_in=in_features, fan_out=out_features)
        self.weight = torch.nn.Parameter(weight_init([out_features, in_features], **init_kwargs) * init_weight)
        self.bias = torch.nn.Parameter(weight_init([out_features], **init_kwargs) * init_bias) if bias else None

    def forward(self, x):
        x = x @ self.weight.to(x.dtype).t()
        if self.bias is not None:
            x = x.add_(self.bias.to(x.dtype))
        return x


class Conv2d(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel, bias=True, init_mode="kaiming_normal", init_weight=1,
                 init_bias=0):
        super().__init__()
        self.in_channels = in_channels
        self.out_channels = out_channels
        init_kwargs = dict(mode=init_mode, fan_in=in_channels * kernel * kernel, fan_out=out_channels * kernel * kernel)
        self.weight = torch.nn.Parameter(
            weight_init([out_channels, in_channels, kernel, kernel], **init_kwargs) * init_weight) if kernel else None
        self.bias = torch.nn.Parameter(
            weight_init([out_channels], **init_kwargs) * init_bias) if kernel and bias else None

    def forward(self, x):
        w = self.weight.to(x.dtype) if self.weight is not None else None
        b = self.bias.to(x.dtype) if self.bias is not None else None
        w_pad = w.shape[-1] // 2 if w is not None else 0
        if w is not None:
            x = torch.nn.functional.conv2d(x, w, padding=w_pad)
        if b is not None:
            x = x.add_(b.reshape(1, -1, 1, 1))
        return x


class GroupNorm(torch.nn.Module):
    def __init__(self, num_channels, num_groups=32, min_channels_per_group=4, eps=1e-5):
        super().__init__()
        self.num_groups = min(num_groups, num_channels // min_channels_per_group)
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(num_channels))
        self.bias = torch.nn.Parameter(torch.zeros(num_channels))

    def forward(self, x):
        return torch.nn.functional.group_norm(x, num_groups=self.num_groups, weight=self.weight.to(x.dtype),
                                              bias=self.bias.to(x.dtype), eps=self.eps)


class UNetBlock(torch.nn.Module):
    def __init__(self, in_channels, out_channels, emb_channels, adaptive_scale=True, skip_scale=1, eps=1e-5):
        super().__init__()
        self.out_channels = out_channels
        self.adaptive_scale = adaptive_scale
        self.skip_scale = skip_scale
        self.norm0 = GroupNorm(num_channels=in_channels, eps=eps)
        self.conv0 = Conv2d(in_channels, out_channels, kernel=3)
        self.affine = Linear(emb_channels, out_channels * (2 if adaptive_scale else 1))
        self.norm1 = GroupNorm(num_channels=out_channels, eps=eps)
        self.conv1 = Conv2d(out_channels, out_channels, kernel=3, init_weight=0.2)
        self.skip = None
        if out_channels != in_channels:
            self.skip = Conv2d(in_channels, out_channels, kernel=1)

    def forward(self, x, emb):
        orig = x
        x = self.conv0(silu(self.norm0(x)))
        params = self.affine(emb).unsqueeze(2).unsqueeze(3).to(x.dtype)
        if self.adaptive_scale:
            scale, shift = params.chunk(chunks=2, dim=1)
            x = silu(torch.addcmul(shift, self.norm1(x), scale + 1))
        else:
            x = silu(self.norm1(x.add_(params)))
        x = self.conv1(x)
        x = x.add_(self.skip(orig) if self.skip is not None else orig)
        x = x * self.skip_scale
        return x


class PositionalEmbedding(torch.nn.Module):
    def __init__(self, num_channels, max_positions=10000, endpoint=False):
        super().__init__()
        self.num_channels = num_channels
        self.max_positions = max_positions
        self.endpoint = endpoint

    def forward(self, x):
        freqs = torch.arange(start=0, end=self.num_channels // 2, dtype=torch.float32, device=x.device)
        freqs = freqs / (self.num_channels // 2 - (1 if self.endpoint else 0))
        freqs = (1 / self.max_positions) ** freqs
        x = x.ger(freqs.to(x.dtype))
        x = torch.cat([x.cos(), x.sin()], dim=1)
        return x


class SongUNet(torch.nn.Module):
    def __init__(self, img_resolution=8, in_channels=3, out_channels=3, label_dim=4, model_channels=16,
                 channel_mult=(1, 2), num_blocks=1):
        super().__init__()
        emb_channels = model_channels * 4
        noise_channels = model_channels
        self.label_dim = label_dim
        self.map_noise = PositionalEmbedding(num_channels=noise_channels, endpoint=True)
        self.map_label = Linear(label_dim, noise_channels, init_mode="kaiming_normal") if label_dim else None
        self.map_layer0 = Linear(noise_channels, emb_channels, init_mode="xavier_uniform")
        self.map_layer1 = Linear(emb_channels, emb_channels, init_mode="xavier_uniform")
        self.enc = torch.nn.ModuleDict()
        cout = in_channels
        skips = []
        for level, mult in enumerate(channel_mult):
            res = img_resolution >> level
            if level == 0:
                cin = cout
                cout = model_channels
                self.enc[f"{res}x{res}_conv"] = Conv2d(cin, cout, kernel=3, init_mode="xavier_uniform")
            else:
                self.enc[f"{res}x{res}_down"] = torch.nn.AvgPool2d(2)
            for idx in range(num_blocks):
                cin = cout
                cout = model_channels * mult
                self.enc[f"{res}x{res}_block{idx}"] = UNetBlock(cin, cout, emb_channels, skip_scale=np.sqrt(0.5))
            skips.append(cout)
        self.dec = torch.nn.ModuleDict()
        for level, mult in reversed(list(enumerate(channel_mult))):
            res = img_resolution >> level
            if level != len(channel_mult) - 1:
                self.dec[f"{res}x{res}_up"] = torch.nn.Upsample(scale_factor=2, mode="nearest")
            cin = cout + skips.pop()
            cout = model_channels * mult
            self.dec[f"{res}x{res}_block0"] = UNetBlock(cin, cout, emb_channels, skip_scale=np.sqrt(0.5))
        self.out_norm = GroupNorm(num_channels=cout)
        self.out_conv = Conv2d(cout, out_channels, kernel=3, init_weight=0.2)

    def forward(self, x, noise_labels, class_labels, augment_labels=None):
        emb = self.map_noise(noise_labels)
        emb = emb.reshape(emb.shape[0], 2, -1).flip(1).reshape(*emb.shape)
        if self.map_label is not None:
            tmp = class_labels
            emb = emb + self.map_label(tmp * np.sqrt(self.map_label.in_features))
        emb = silu(self.map_layer0(emb))
        emb = silu(self.map_layer1(emb))
        skips = []
        for name, block in self.enc.items():
            x = block(x, emb) if isinstance(block, UNetBlock) else block(x)
            if name.endswith("block0"):
                skips.append(x)
        for name, block in self.dec.items():
            if isinstance(block, UNetBlock):
                x = torch.cat([x, skips.pop()], dim=1)
                x = block(x, emb)
            else:
                x = block(x)
        return self.out_conv(silu(self.out_norm(x)))


class EDMPrecond(torch.nn.Module):
    def __init__(self, img_resolution=8, img_channels=3, label_dim=4, use_fp16=False, sigma_min=0,
                 sigma_max=float("inf"), sigma_data=0.5, **model_kwargs):
        super().__init__()
        self.img_resolution = img_resolution
        self.img_channels = img_channels
        self.label_dim = label_dim
        self.use_fp16 = use_fp16
        self.sigma_min = sigma_min
        self.sigma_max = sigma_max
        self.sigma_data = sigma_data
        self.model = SongUNet(img_resolution=img_resolution, in_channels=img_channels, out_channels=img_channels,
                              label_dim=label_dim, **model_kwargs)

    def forward(self, x, sigma, class_labels=None, force_fp32=False, **model_kwargs):
        x = x.to(torch.float32)
        sigma = sigma.to(torch.float32).reshape(-1, 1, 1, 1)
        class_labels = None if self.label_dim == 0 else torch.zeros([1, self.label_dim], device=x.device) \
            if class_labels is None else class_labels.to(torch.float32).reshape(-1, self.label_dim)
        dtype = torch.float16 if (self.use_fp16 and not force_fp32 and x.device.type == "cuda") else torch.float32
        c_skip = self.sigma_data ** 2 / (sigma ** 2 + self.sigma_data ** 2)
        c_out = sigma * self.sigma_data / (sigma ** 2 + self.sigma_data ** 2).sqrt()
        c_in = 1 / (self.sigma_data ** 2 + sigma ** 2).sqrt()
        c_noise = sigma.log() / 4
        F_x = self.model((c_in * x).to(dtype), c_noise.flatten(), class_labels=class_labels, **model_kwargs)
        assert F_x.dtype == dtype
        D_x = c_skip * x + c_out * F_x.to(torch.float32)
        return D_x

    def round_sigma(self, sigma):
        return torch.as_tensor(sigma)


class EDMLoss:
    def __init__(self, P_mean=-1.2, P_std=1.2, sigma_data=0.5):
        self.P_mean = P_mean
        self.P_std = P_std
        self.sigma_data = sigma_data

    def __call__(self, net, images, rnd_normal, noise, labels=None, augment_pipe=None):
        sigma = (rnd_normal * self.P_std + self.P_mean).exp()
        weight = (sigma ** 2 + self.sigma_data ** 2) / (sigma * self.sigma_data) ** 2
        y, augment_labels = augment_pipe(images) if augment_pipe is not None else (images, None)
        n = noise * sigma
        D_yn = net(y + n, sigma, labels, augment_labels=augment_labels)
        loss = weight * ((D_yn - y) ** 2)
        return loss


class TrainStep(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = EDMPrecond()
        self.loss_fn = EDMLoss()

    def forward(self, images, rnd_normal, noise, labels):
        loss = self.loss_fn(net=self.net, images=images, rnd_normal=rnd_normal, noise=noise, labels=labels)
        return loss.sum().mul(1.0 / images.shape[0]), self.net(images, self.net.round_sigma(0.002))


torch.manual_seed(0)
model = TrainStep().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    images = torch.randn(2, 3, 8, 8, generator=g) * 0.5
    rnd_normal = torch.randn(2, 1, 1, 1, generator=g)
    noise = torch.randn(2, 3, 8, 8, generator=g)
    labels = torch.nn.functional.one_hot(torch.tensor([1, 3]), 4)
    return images, rnd_normal, noise, labels
