"""FoldingNet point-cloud autoencoder (the An-Tao / AnTao97 port) trained
with a Chamfer loss written in plain torch: `knn(x, k)` by
`-xx - inner - xx.transpose(2, 1)` and `topk`, `local_cov` computing each
point's 3x3 neighbourhood covariance by `torch.matmul` of gathered
neighbours (`idx = idx + idx_base`, `.view(batch_size * num_points, -1)[idx,
:]`), `local_maxpool` over the k neighbours, a graph-layer encoder whose
global codeword is `torch.max(x, 2, keepdim=True)[0]`, a decoder folding a
2-D grid built at init with `itertools.product` over `np.linspace`
ranges (kept as a numpy array and `torch.tensor(...).to(device)` in
`build_grid`), the codeword `repeat`-ed over the grid points and
concatenated twice (two folds); the ChamferLoss module as the PCN/TopNet
repos write it: `batch_pairwise_dist` by `bmm` and `diag_ind` diagonals,
then `torch.min` both ways, summed."""
import itertools

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def knn(x, k):
    batch_size = x.size(0)
    num_points = x.size(2)
    inner = -2 * torch.matmul(x.transpose(2, 1), x)
    xx = torch.sum(x ** 2, dim=1, keepdim=True)
    pairwise_distance = -xx - inner - xx.transpose(2, 1)
    idx = pairwise_distance.topk(k=k, dim=-1)[1]
    if idx.get_device() == -1:
        idx_base = torch.arange(0, batch_size).view(-1, 1, 1) * num_points
    else:
        idx_base = torch.arange(0, batch_size, device=idx.get_device()).view(-1, 1, 1) * num_points
    idx = idx + idx_base
    idx = idx.view(-1)
    return idx


def local_cov(pts, idx):
    batch_size = pts.size(0)
    num_points = pts.size(2)
    pts = pts.view(batch_size, -1, num_points)
    _, num_dims, _ = pts.size()
    x = pts.transpose(2, 1).contiguous()
    x = x.view(batch_size * num_points, -1)[idx, :]
    x = x.view(batch_size, num_points, -1, num_dims)
    x = torch.matmul(x[:, :, 0].unsqueeze(3), x[:, :, 1].unsqueeze(2))
    x = x.view(batch_size, num_points, 9).transpose(2, 1)
    x = torch.cat((pts, x), dim=1)
    return x


def local_maxpool(x, idx):
    batch_size = x.size(0)
    num_points = x.size(2)
    x = x.view(batch_size, -1, num_points)
    _, num_dims, _ = x.size()
    x = x.transpose(2, 1).contiguous()
    x = x.view(batch_size * num_points, -1)[idx, :]
    x = x.view(batch_size, num_points, -1, num_dims)
    x, _ = torch.max(x, dim=2)
    return x


class FoldNet_Encoder(nn.Module):
    def __init__(self, args):
        super(FoldNet_Encoder, self).__init__()
        if args.k is None:
            self.k = 16
        else:
            self.k = args.k
        self.n = 2048
        self.mlp1 = nn.Sequential(nn.Conv1d(12, 32, 1), nn.ReLU(), nn.Conv1d(32, 32, 1), nn.ReLU(),
                                  nn.Conv1d(32, 32, 1), nn.ReLU())
        self.linear1 = nn.Linear(32, 32)
        self.conv1 = nn.Conv1d(32, 64, 1)
        self.linear2 = nn.Linear(64, 64)
        self.conv2 = nn.Conv1d(64, 128, 1)
        self.mlp2 = nn.Sequential(nn.Conv1d(128, args.feat_dims, 1), nn.ReLU(),
                                  nn.Conv1d(args.feat_dims, args.feat_dims, 1))

    def graph_layer(self, x, idx):
        x = local_maxpool(x, idx)
        x = self.linear1(x)
        x = x.transpose(2, 1)
        x = F.relu(self.conv1(x))
        x = local_maxpool(x, idx)
        x = self.linear2(x)
        x = x.transpose(2, 1)
        x = self.conv2(x)
        return x

    def forward(self, pts):
        pts = pts.transpose(2, 1)
        idx = knn(pts, k=self.k)
        x = local_cov(pts, idx)
        x = self.mlp1(x)
        x = self.graph_layer(x, idx)
        x = torch.max(x, 2, keepdim=True)[0]
        x = self.mlp2(x)
        feat = x.transpose(2, 1)
        return feat


class FoldNet_Decoder(nn.Module):
    def __init__(self, args):
        super(FoldNet_Decoder, self).__init__()
        self.m = 64
        self.shape = args.shape
        self.meshgrid = [[-0.3, 0.3, 8], [-0.3, 0.3, 8]]
        self.sphere = None
        if self.shape == "plane":
            self.folding1 = nn.Sequential(nn.Conv1d(args.feat_dims + 2, args.feat_dims, 1), nn.ReLU(),
                                          nn.Conv1d(args.feat_dims, args.feat_dims, 1), nn.ReLU(),
                                          nn.Conv1d(args.feat_dims, 3, 1))
        self.folding2 = nn.Sequential(nn.Conv1d(args.feat_dims + 3, args.feat_dims, 1), nn.ReLU(),
                                      nn.Conv1d(args.feat_dims, args.feat_dims, 1), nn.ReLU(),
                                      nn.Conv1d(args.feat_dims, 3, 1))

    def build_grid(self, batch_size):
        if self.shape == "plane":
            x = np.linspace(*self.meshgrid[0])
            y = np.linspace(*self.meshgrid[1])
            points = np.array(list(itertools.product(x, y)))
        points = np.repeat(points[np.newaxis, ...], repeats=batch_size, axis=0)
        points = torch.tensor(points)
        return points.float()

    def forward(self, x):
        x = x.transpose(1, 2).repeat(1, 1, self.m)
        points = self.build_grid(x.shape[0]).transpose(1, 2)
        if x.get_device() != -1:
            points = points.cuda(x.get_device())
        cat1 = torch.cat((x, points), dim=1)
        folding_result1 = self.folding1(cat1)
        cat2 = torch.cat((x, folding_result1), dim=1)
        folding_result2 = self.folding2(cat2)
        return folding_result2.transpose(1, 2)


class ChamferLoss(nn.Module):
    def __init__(self):
        super(ChamferLoss, self).__init__()
        self.use_cuda = torch.cuda.is_available()

    def batch_pairwise_dist(self, x, y):
        bs, num_points_x, points_dim = x.size()
        _, num_points_y, _ = y.size()
        xx = torch.bmm(x, x.transpose(2, 1))
        yy = torch.bmm(y, y.transpose(2, 1))
        zz = torch.bmm(x, y.transpose(2, 1))
        if self.use_cuda:
            dtype = torch.cuda.LongTensor
        else:
            dtype = torch.LongTensor
        diag_ind_x = torch.arange(0, num_points_x).type(dtype)
        diag_ind_y = torch.arange(0, num_points_y).type(dtype)
        rx = xx[:, diag_ind_x, diag_ind_x].unsqueeze(1).expand_as(zz.transpose(2, 1))
        ry = yy[:, diag_ind_y, diag_ind_y].unsqueeze(1).expand_as(zz)
        P = rx.transpose(2, 1) + ry - 2 * zz
        return P

    def forward(self, preds, gts):
        P = self.batch_pairwise_dist(gts, preds)
        mins, _ = torch.min(P, 1)
        loss_1 = torch.sum(mins)
        mins, _ = torch.min(P, 2)
        loss_2 = torch.sum(mins)
        return loss_1 + loss_2


class Args:
    k = 8
    feat_dims = 32
    shape = "plane"


class ReconstructionNet(nn.Module):
    def __init__(self, args):
        super(ReconstructionNet, self).__init__()
        self.encoder = FoldNet_Encoder(args)
        self.decoder = FoldNet_Decoder(args)
        self.loss = ChamferLoss()

    def forward(self, input):
        feature = self.encoder(input)
        output = self.decoder(feature)
        return output, feature, self.get_loss(input, output)

    def get_parameter(self):
        return list(self.encoder.parameters()) + list(self.decoder.parameters())

    def get_loss(self, input, output):
        return self.loss(input, output)


torch.manual_seed(0)
model = ReconstructionNet(Args()).eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    return (torch.randn(2, 96, 3, generator=g) * 0.3,)
