"""One step of a multi-object tracker as SORT / DeepSORT / ByteTrack run
it at inference, batched over tracks in torch: a constant-velocity Kalman
filter with the state `[cx, cy, a, h, vx, vy, va, vh]` (motion matrix
built from `torch.eye` with `F_[i, i + 4] = dt`, noise scaled by each
track's height as DeepSORT's `std_weight_position` does), predict by
`bmm`s of batched covariances, projection to measurement space,
innovation covariances factored by `torch.linalg.cholesky` and solved by
`torch.cholesky_solve` for the Kalman gain, squared Mahalanobis
distances for every track-detection pair by `torch.linalg.solve_triangular`,
gating at the chi-square 0.95 quantile for 4 degrees of freedom, an IoU
cost from `xyah` converted back to corners, a greedy assignment loop over
a fixed number of rounds (`argmin` over the flattened cost, row and
column by `//` and `%`, the pair masked with `inf` by index assignment),
and the matched tracks updated, unmatched ones aged."""
import torch
import torch.nn as nn

CHI2_95_4DOF = 9.4877


def xyah_to_xyxy(m):
    cx, cy, a, h = m.unbind(-1)
    w = a * h
    return torch.stack([cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], -1)


def box_iou(a, b):
    area_a = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    area_b = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    lt = torch.max(a[:, None, :2], b[None, :, :2])
    rb = torch.min(a[:, None, 2:], b[None, :, 2:])
    inter = (rb - lt).clamp(min=0).prod(-1)
    return inter / (area_a[:, None] + area_b[None] - inter)


class KalmanTracker(nn.Module):
    def __init__(self, dt=1.0, std_pos=1.0 / 20, std_vel=1.0 / 160, max_rounds=4, iou_weight=0.5):
        super().__init__()
        motion = torch.eye(8)
        for i in range(4):
            motion[i, i + 4] = dt
        self.register_buffer("motion", motion)
        self.register_buffer("update_mat", torch.eye(4, 8))
        self.std_pos, self.std_vel = std_pos, std_vel
        self.max_rounds, self.iou_weight = max_rounds, iou_weight
        # a small appearance embedding, as DeepSORT pairs motion with
        self.embed = nn.Sequential(nn.Linear(12, 16), nn.ReLU(), nn.Linear(16, 8))

    def motion_noise(self, h):
        std = torch.stack([self.std_pos * h, self.std_pos * h, torch.full_like(h, 1e-2), self.std_pos * h,
                           self.std_vel * h, self.std_vel * h, torch.full_like(h, 1e-5), self.std_vel * h], -1)
        return torch.diag_embed(std.square())

    def predict(self, mean, cov):
        mean = mean @ self.motion.T
        f = self.motion.expand(mean.shape[0], 8, 8)
        cov = torch.bmm(torch.bmm(f, cov), f.transpose(1, 2)) + self.motion_noise(mean[:, 3])
        return mean, cov

    def project(self, mean, cov):
        h = mean[:, 3]
        std = torch.stack([self.std_pos * h, self.std_pos * h, torch.full_like(h, 1e-1), self.std_pos * h], -1)
        hm = self.update_mat.expand(mean.shape[0], 4, 8)
        s = torch.bmm(torch.bmm(hm, cov), hm.transpose(1, 2)) + torch.diag_embed(std.square())
        return mean[:, :4], s

    def forward(self, mean, cov, track_feat, det, det_feat, age):
        mean, cov = self.predict(mean, cov)
        proj_mean, s = self.project(mean, cov)
        chol = torch.linalg.cholesky(s)  # [T, 4, 4]
        diff = det[None, :, :] - proj_mean[:, None, :]  # [T, D, 4]
        z = torch.linalg.solve_triangular(chol, diff.transpose(1, 2), upper=False)  # [T, 4, D]
        maha = z.square().sum(1)
        emb_t = nn.functional.normalize(self.embed(track_feat), dim=-1)
        emb_d = nn.functional.normalize(self.embed(det_feat), dim=-1)
        appearance = 1 - emb_t @ emb_d.T
        iou = box_iou(xyah_to_xyxy(proj_mean), xyah_to_xyxy(det))
        cost = self.iou_weight * (1 - iou) + (1 - self.iou_weight) * appearance
        cost = torch.where(maha > CHI2_95_4DOF, torch.full_like(cost, float("inf")), cost)
        n_det = det.shape[0]
        matched_det = torch.full((mean.shape[0],), -1, dtype=torch.long)
        work = cost.clone()
        for _ in range(self.max_rounds):
            flat = work.flatten().argmin()
            t, d = flat // n_det, flat % n_det
            ok = torch.isfinite(work[t, d])
            matched_det[t] = torch.where(ok, d, matched_det[t])
            work[t, :] = float("inf")
            work[:, d] = float("inf")
        matched = matched_det >= 0
        # Kalman update for every track; unmatched tracks keep their prediction
        gain_t = torch.cholesky_solve(torch.bmm(cov, self.update_mat.T.expand(mean.shape[0], 8, 4)).transpose(1, 2),
                                      chol)  # [T, 4, 8]
        gain = gain_t.transpose(1, 2)
        meas = det[matched_det.clamp(min=0)]
        innovation = meas - proj_mean
        new_mean = mean + torch.bmm(gain, innovation.unsqueeze(-1)).squeeze(-1)
        new_cov = cov - torch.bmm(torch.bmm(gain, s), gain.transpose(1, 2))
        mean = torch.where(matched[:, None], new_mean, mean)
        cov = torch.where(matched[:, None, None], new_cov, cov)
        age = torch.where(matched, torch.zeros_like(age), age + 1)
        return mean, cov, matched_det, age, cost


torch.manual_seed(0)
model = KalmanTracker().eval()


def example_inputs():
    g = torch.Generator().manual_seed(1)
    t, d = 5, 6
    cxcy = torch.rand(t, 2, generator=g) * 100
    mean = torch.cat([cxcy, torch.full((t, 1), 0.5), torch.rand(t, 1, generator=g) * 20 + 20,
                      torch.randn(t, 4, generator=g) * 0.5], 1)
    cov = torch.diag_embed(torch.rand(t, 8, generator=g) + 0.5)
    det = mean[:, :4].clone()[[0, 1, 2, 4, 3, 0]] + torch.randn(d, 4, generator=g) * 0.5
    det[:, 2] = det[:, 2].abs()
    det[5, :2] += 50.0
    track_feat = torch.randn(t, 12, generator=g)
    det_feat = torch.randn(d, 12, generator=g)
    age = torch.tensor([0, 1, 0, 3, 2])
    return mean, cov, track_feat, det, det_feat, age
