"""PointNet classification as its reference ports write it: a T-Net that
predicts a 3x3 (and a 64x64 feature) transform from the points, added to an
identity and applied with bmm; shared MLPs as Conv1d with kernel 1 and
BatchNorm1d; a max over the points with torch.max(...)[0]; the feature
transform's orthogonality regularizer returned beside the logits."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TNet(nn.Module):
    def __init__(self, k):
        super().__init__()
        self.k = k
        self.conv1 = nn.Conv1d(k, 32, 1)
        self.conv2 = nn.Conv1d(32, 64, 1)
        self.fc1 = nn.Linear(64, 32)
        self.fc2 = nn.Linear(32, k * k)
        self.bn1 = nn.BatchNorm1d(32)
        self.bn2 = nn.BatchNorm1d(64)

    def forward(self, x):
        batchsize = x.size()[0]
        x = F.relu(self.bn1(self.conv1(x)))
        x = F.relu(self.bn2(self.conv2(x)))
        x = torch.max(x, 2, keepdim=True)[0]
        x = x.view(-1, 64)
        x = self.fc2(F.relu(self.fc1(x)))
        iden = torch.eye(self.k, dtype=x.dtype, device=x.device).flatten().view(1, self.k * self.k)
        x = x + iden.repeat(batchsize, 1)
        return x.view(-1, self.k, self.k)


class PointNetCls(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.stn = TNet(3)
        self.fstn = TNet(32)
        self.conv1 = nn.Conv1d(3, 32, 1)
        self.conv2 = nn.Conv1d(32, 64, 1)
        self.bn1 = nn.BatchNorm1d(32)
        self.bn2 = nn.BatchNorm1d(64)
        self.fc = nn.Linear(64, classes)

    def forward(self, points):
        n_pts = points.size()[2]
        trans = self.stn(points)
        x = points.transpose(2, 1)
        x = torch.bmm(x, trans)
        x = x.transpose(2, 1)
        x = F.relu(self.bn1(self.conv1(x)))
        trans_feat = self.fstn(x)
        x = torch.bmm(x.transpose(2, 1), trans_feat).transpose(2, 1)
        pointfeat = x
        x = self.bn2(self.conv2(x))
        x = torch.max(x, 2, keepdim=True)[0].view(-1, 64)
        logits = F.log_softmax(self.fc(x), dim=1)
        d = trans_feat.size()[1]
        identity = torch.eye(d)[None, :, :]
        reg = torch.mean(torch.norm(torch.bmm(trans_feat, trans_feat.transpose(2, 1)) - identity, dim=(1, 2)))
        return logits, reg, pointfeat.size(1) * n_pts


torch.manual_seed(0)
model = PointNetCls().eval()
check_gradients = True


def example_inputs():
    return (torch.randn(4, 3, 50, generator=torch.Generator().manual_seed(1)),)
