"""RAFT optical flow as princeton-vl/RAFT writes it (small model): a
feature encoder and a context encoder of residual blocks with instance
and batch norm, all-pairs correlation by torch.matmul of flattened
feature maps divided by sqrt(dim), a correlation pyramid built by
F.avg_pool2d, lookup by bilinear_sampler (grid_sample over coordinates
normalized as 2*x/(W-1)-1, split and cat, align_corners=True) around a
delta grid from torch.meshgrid(torch.linspace), coords_grid from
meshgrid and stack, a ConvGRU update block run a fixed number of
iterations with coords1 detached each step, flow upsampled 8x by
F.interpolate, returned for each iteration (test_mode returns the
last low-res and upsampled flow)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def bilinear_sampler(img, coords, mode="bilinear", mask=False):
    H, W = img.shape[-2:]
    xgrid, ygrid = coords.split([1, 1], dim=-1)
    xgrid = 2 * xgrid / (W - 1) - 1
    ygrid = 2 * ygrid / (H - 1) - 1
    grid = torch.cat([xgrid, ygrid], dim=-1)
    img = F.grid_sample(img, grid, align_corners=True)
    if mask:
        mask = (xgrid > -1) & (ygrid > -1) & (xgrid < 1) & (ygrid < 1)
        return img, mask.float()
    return img


def coords_grid(batch, ht, wd, device):
    coords = torch.meshgrid(torch.arange(ht, device=device), torch.arange(wd, device=device), indexing="ij")
    coords = torch.stack(coords[::-1], dim=0).float()
    return coords[None].repeat(batch, 1, 1, 1)


def upflow8(flow, mode="bilinear"):
    new_size = (8 * flow.shape[2], 8 * flow.shape[3])
    return 8 * F.interpolate(flow, size=new_size, mode=mode, align_corners=True)


class CorrBlock:
    def __init__(self, fmap1, fmap2, num_levels=3, radius=2):
        self.num_levels = num_levels
        self.radius = radius
        self.corr_pyramid = []
        corr = CorrBlock.corr(fmap1, fmap2)
        batch, h1, w1, dim, h2, w2 = corr.shape
        corr = corr.reshape(batch * h1 * w1, dim, h2, w2)
        self.corr_pyramid.append(corr)
        for i in range(self.num_levels - 1):
            corr = F.avg_pool2d(corr, 2, stride=2)
            self.corr_pyramid.append(corr)

    def __call__(self, coords):
        r = self.radius
        coords = coords.permute(0, 2, 3, 1)
        batch, h1, w1, _ = coords.shape
        out_pyramid = []
        for i in range(self.num_levels):
            corr = self.corr_pyramid[i]
            dx = torch.linspace(-r, r, 2 * r + 1, device=coords.device)
            dy = torch.linspace(-r, r, 2 * r + 1, device=coords.device)
            delta = torch.stack(torch.meshgrid(dy, dx, indexing="ij"), axis=-1)
            centroid_lvl = coords.reshape(batch * h1 * w1, 1, 1, 2) / 2 ** i
            delta_lvl = delta.view(1, 2 * r + 1, 2 * r + 1, 2)
            coords_lvl = centroid_lvl + delta_lvl
            corr = bilinear_sampler(corr, coords_lvl)
            corr = corr.view(batch, h1, w1, -1)
            out_pyramid.append(corr)
        out = torch.cat(out_pyramid, dim=-1)
        return out.permute(0, 3, 1, 2).contiguous().float()

    @staticmethod
    def corr(fmap1, fmap2):
        batch, dim, ht, wd = fmap1.shape
        fmap1 = fmap1.view(batch, dim, ht * wd)
        fmap2 = fmap2.view(batch, dim, ht * wd)
        corr = torch.matmul(fmap1.transpose(1, 2), fmap2)
        corr = corr.view(batch, ht, wd, 1, ht, wd)
        return corr / torch.sqrt(torch.tensor(dim).float())


class BottleneckBlock(nn.Module):
    def __init__(self, in_planes, planes, norm_fn="instance", stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(in_planes, planes // 4, kernel_size=1, padding=0)
        self.conv2 = nn.Conv2d(planes // 4, planes // 4, kernel_size=3, padding=1, stride=stride)
        self.conv3 = nn.Conv2d(planes // 4, planes, kernel_size=1, padding=0)
        self.relu = nn.ReLU(inplace=True)
        if norm_fn == "batch":
            self.norm1, self.norm2, self.norm3 = (nn.BatchNorm2d(planes // 4), nn.BatchNorm2d(planes // 4),
                                                  nn.BatchNorm2d(planes))
            self.norm4 = nn.BatchNorm2d(planes) if stride != 1 else None
        else:
            self.norm1, self.norm2, self.norm3 = (nn.InstanceNorm2d(planes // 4), nn.InstanceNorm2d(planes // 4),
                                                  nn.InstanceNorm2d(planes))
            self.norm4 = nn.InstanceNorm2d(planes) if stride != 1 else None
        if stride == 1:
            self.downsample = None
        else:
            self.downsample = nn.Sequential(nn.Conv2d(in_planes, planes, kernel_size=1, stride=stride), self.norm4)

    def forward(self, x):
        y = x
        y = self.relu(self.norm1(self.conv1(y)))
        y = self.relu(self.norm2(self.conv2(y)))
        y = self.relu(self.norm3(self.conv3(y)))
        if self.downsample is not None:
            x = self.downsample(x)
        return self.relu(x + y)


class SmallEncoder(nn.Module):
    def __init__(self, output_dim=32, norm_fn="instance"):
        super().__init__()
        self.norm_fn = norm_fn
        self.norm1 = nn.InstanceNorm2d(16) if norm_fn == "instance" else nn.BatchNorm2d(16)
        self.conv1 = nn.Conv2d(3, 16, kernel_size=7, stride=2, padding=3)
        self.relu1 = nn.ReLU(inplace=True)
        self.layer1 = BottleneckBlock(16, 16, norm_fn, stride=1)
        self.layer2 = BottleneckBlock(16, 24, norm_fn, stride=2)
        self.layer3 = BottleneckBlock(24, 32, norm_fn, stride=2)
        self.conv2 = nn.Conv2d(32, output_dim, kernel_size=1)

    def forward(self, x):
        is_list = isinstance(x, tuple) or isinstance(x, list)
        if is_list:
            batch_dim = x[0].shape[0]
            x = torch.cat(x, dim=0)
        x = self.relu1(self.norm1(self.conv1(x)))
        x = self.layer3(self.layer2(self.layer1(x)))
        x = self.conv2(x)
        if is_list:
            x = torch.split(x, [batch_dim, batch_dim], dim=0)
        return x


class ConvGRU(nn.Module):
    def __init__(self, hidden_dim=32, input_dim=48):
        super().__init__()
        self.convz = nn.Conv2d(hidden_dim + input_dim, hidden_dim, 3, padding=1)
        self.convr = nn.Conv2d(hidden_dim + input_dim, hidden_dim, 3, padding=1)
        self.convq = nn.Conv2d(hidden_dim + input_dim, hidden_dim, 3, padding=1)

    def forward(self, h, x):
        hx = torch.cat([h, x], dim=1)
        z = torch.sigmoid(self.convz(hx))
        r = torch.sigmoid(self.convr(hx))
        q = torch.tanh(self.convq(torch.cat([r * h, x], dim=1)))
        return (1 - z) * h + z * q


class SmallUpdateBlock(nn.Module):
    def __init__(self, cor_planes, hidden_dim=32):
        super().__init__()
        self.convc1 = nn.Conv2d(cor_planes, 32, 1, padding=0)
        self.convf1 = nn.Conv2d(2, 16, 7, padding=3)
        self.convf2 = nn.Conv2d(16, 8, 3, padding=1)
        self.conv = nn.Conv2d(40, 30, 3, padding=1)
        self.gru = ConvGRU(hidden_dim=hidden_dim, input_dim=30 + 2 + 16)
        self.flow_head = nn.Sequential(nn.Conv2d(hidden_dim, 32, 3, padding=1), nn.ReLU(inplace=True),
                                       nn.Conv2d(32, 2, 3, padding=1))

    def forward(self, net, inp, corr, flow):
        cor = F.relu(self.convc1(corr))
        flo = F.relu(self.convf1(flow))
        flo = F.relu(self.convf2(flo))
        motion_features = torch.cat([F.relu(self.conv(torch.cat([cor, flo], dim=1))), flow], dim=1)
        inp = torch.cat([inp, motion_features], dim=1)
        net = self.gru(net, inp)
        delta_flow = self.flow_head(net)
        return net, None, delta_flow


class RAFT(nn.Module):
    def __init__(self, iters=4):
        super().__init__()
        self.hidden_dim = hdim = 32
        self.context_dim = cdim = 16
        self.corr_levels = 3
        self.corr_radius = 2
        self.iters = iters
        self.fnet = SmallEncoder(output_dim=64, norm_fn="instance")
        self.cnet = SmallEncoder(output_dim=hdim + cdim, norm_fn="batch")
        self.update_block = SmallUpdateBlock(self.corr_levels * (2 * self.corr_radius + 1) ** 2, hidden_dim=hdim)

    def initialize_flow(self, img):
        N, C, H, W = img.shape
        coords0 = coords_grid(N, H // 8, W // 8, device=img.device)
        coords1 = coords_grid(N, H // 8, W // 8, device=img.device)
        return coords0, coords1

    def forward(self, image1, image2, flow_init=None, test_mode=False):
        image1 = 2 * (image1 / 255.0) - 1.0
        image2 = 2 * (image2 / 255.0) - 1.0
        image1 = image1.contiguous()
        image2 = image2.contiguous()
        fmap1, fmap2 = self.fnet([image1, image2])
        fmap1 = fmap1.float()
        fmap2 = fmap2.float()
        corr_fn = CorrBlock(fmap1, fmap2, num_levels=self.corr_levels, radius=self.corr_radius)
        cnet = self.cnet(image1)
        net, inp = torch.split(cnet, [self.hidden_dim, self.context_dim], dim=1)
        net = torch.tanh(net)
        inp = torch.relu(inp)
        coords0, coords1 = self.initialize_flow(image1)
        if flow_init is not None:
            coords1 = coords1 + flow_init
        flow_predictions = []
        for itr in range(self.iters):
            coords1 = coords1.detach()
            corr = corr_fn(coords1)
            flow = coords1 - coords0
            net, up_mask, delta_flow = self.update_block(net, inp, corr, flow)
            coords1 = coords1 + delta_flow
            if up_mask is None:
                flow_up = upflow8(coords1 - coords0)
            flow_predictions.append(flow_up)
        if test_mode:
            return coords1 - coords0, flow_up
        return flow_predictions


torch.manual_seed(0)
model = RAFT().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.rand(1, 3, 32, 48, generator=g) * 255, torch.rand(1, 3, 32, 48, generator=g) * 255)
