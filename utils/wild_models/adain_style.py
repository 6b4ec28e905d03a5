"""AdaIN style transfer as naoto0804/pytorch-AdaIN writes it: a VGG-like
encoder cut into `enc_1` .. `enc_4` by `nn.Sequential(*enc_layers[a:b])`
slices and read back by `getattr(self, 'enc_{:d}'.format(i + 1))`,
reflection padding, `calc_mean_std` by `feat.view(N, C, -1).var(dim=2) + eps`
and `.sqrt().view(N, C, 1, 1)`, `adaptive_instance_normalization` with
`expand(size)`, the style strength `alpha` as a keyword, a decoder with
nearest `nn.Upsample`, and the content and style losses by `F.mse_loss`
over the intermediate features of the re-encoded image."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def calc_mean_std(feat, eps=1e-5):
    size = feat.size()
    assert len(size) == 4
    N, C = size[:2]
    feat_var = feat.view(N, C, -1).var(dim=2) + eps
    feat_std = feat_var.sqrt().view(N, C, 1, 1)
    feat_mean = feat.view(N, C, -1).mean(dim=2).view(N, C, 1, 1)
    return feat_mean, feat_std


def adaptive_instance_normalization(content_feat, style_feat):
    assert content_feat.size()[:2] == style_feat.size()[:2]
    size = content_feat.size()
    style_mean, style_std = calc_mean_std(style_feat)
    content_mean, content_std = calc_mean_std(content_feat)
    normalized_feat = (content_feat - content_mean.expand(size)) / content_std.expand(size)
    return normalized_feat * style_std.expand(size) + style_mean.expand(size)


def make_vgg(widths=(3, 8, 16, 24, 32)):
    layers = [nn.Conv2d(3, 3, 1)]
    for i in range(1, len(widths)):
        if i > 1:
            layers += [nn.MaxPool2d(2, 2, ceil_mode=True)]
        layers += [nn.ReflectionPad2d(1), nn.Conv2d(widths[i - 1], widths[i], 3), nn.ReLU()]
    return nn.Sequential(*layers)


def make_decoder(widths=(32, 24, 16, 8)):
    layers = []
    for i in range(len(widths) - 1):
        layers += [nn.ReflectionPad2d(1), nn.Conv2d(widths[i], widths[i + 1], 3), nn.ReLU(),
                   nn.Upsample(scale_factor=2, mode="nearest")]
    layers += [nn.ReflectionPad2d(1), nn.Conv2d(widths[-1], 3, 3)]
    return nn.Sequential(*layers)


class Net(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        enc_layers = list(encoder.children())
        self.enc_1 = nn.Sequential(*enc_layers[:4])
        self.enc_2 = nn.Sequential(*enc_layers[4:8])
        self.enc_3 = nn.Sequential(*enc_layers[8:12])
        self.enc_4 = nn.Sequential(*enc_layers[12:16])
        self.decoder = decoder
        self.mse_loss = nn.MSELoss()
        for name in ["enc_1", "enc_2", "enc_3", "enc_4"]:
            for param in getattr(self, name).parameters():
                param.requires_grad = False

    def encode_with_intermediate(self, input):
        results = [input]
        for i in range(4):
            func = getattr(self, "enc_{:d}".format(i + 1))
            results.append(func(results[-1]))
        return results[1:]

    def encode(self, input):
        for i in range(4):
            input = getattr(self, "enc_{:d}".format(i + 1))(input)
        return input

    def calc_content_loss(self, input, target):
        assert input.size() == target.size()
        assert target.requires_grad is False
        return self.mse_loss(input, target)

    def calc_style_loss(self, input, target):
        input_mean, input_std = calc_mean_std(input)
        target_mean, target_std = calc_mean_std(target)
        return self.mse_loss(input_mean, target_mean) + self.mse_loss(input_std, target_std)

    def forward(self, content, style, alpha=1.0):
        assert 0 <= alpha <= 1
        style_feats = self.encode_with_intermediate(style)
        content_feat = self.encode(content)
        t = adaptive_instance_normalization(content_feat, style_feats[-1])
        t = alpha * t + (1 - alpha) * content_feat
        g_t = self.decoder(t)
        g_t_feats = self.encode_with_intermediate(g_t)
        loss_c = self.calc_content_loss(g_t_feats[-1], t.detach())
        loss_s = self.calc_style_loss(g_t_feats[0], style_feats[0].detach())
        for i in range(1, 4):
            loss_s = loss_s + self.calc_style_loss(g_t_feats[i], style_feats[i].detach())
        return g_t, loss_c, 10.0 * loss_s


torch.manual_seed(0)
model = Net(make_vgg(), make_decoder()).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return torch.rand(2, 3, 32, 32, generator=g), torch.rand(2, 3, 32, 32, generator=g)


def example_kwargs():
    return {"alpha": 0.8}
