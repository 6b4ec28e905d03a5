"""Learning to rank as allRank and PT-Ranking write it: a context-aware
scorer over a padded slate of documents (`nn.TransformerEncoder` with a
`src_key_padding_mask` from `y_true == PADDED_Y_VALUE`), then the losses
computed in forward: ListNet (`y_pred[mask] = float('-inf')` by boolean
index assignment on clones, `softmax` cross-entropy with an `eps`),
ApproxNDCG (soft ranks by a sigmoid of pairwise differences
`y[:, :, None] - y[:, None, :]`, `torch.log2` discounts), LambdaLoss
with an NDCG@k weighting scheme (`torch.sort(descending=True)`, `gather`
of the true labels by sorted indices, `torch.pow(2, y) - 1` gains,
`torch.arange(1, n + 1)` positions, `clamp(min=eps)` of the ideal DCG,
`padded_pairs_mask` by `torch.isfinite` and `&`, `torch.triu` of
rank pairs, `torch.where`), RankNet over `torch.combinations` of slate
positions, and NDCG@k as a metric with ranks from `argsort().argsort()`."""
import torch
import torch.nn as nn
import torch.nn.functional as F

PADDED_Y_VALUE = -1
DEFAULT_EPS = 1e-10


def listNet(y_pred, y_true, eps=DEFAULT_EPS, padded_value_indicator=PADDED_Y_VALUE):
    y_pred = y_pred.clone()
    y_true = y_true.clone()
    mask = y_true == padded_value_indicator
    y_pred[mask] = float("-inf")
    y_true[mask] = float("-inf")
    preds_smax = F.softmax(y_pred, dim=1)
    true_smax = F.softmax(y_true, dim=1)
    preds_smax = preds_smax + eps
    preds_log = torch.log(preds_smax)
    return torch.mean(-torch.sum(true_smax * preds_log, dim=1))


def approxNDCGLoss(y_pred, y_true, eps=DEFAULT_EPS, padded_value_indicator=PADDED_Y_VALUE, alpha=1.0):
    y_pred = y_pred.clone()
    y_true = y_true.clone()
    padded_mask = y_true == padded_value_indicator
    y_pred[padded_mask] = float("-inf")
    y_true[padded_mask] = float("-inf")
    y_pred_sorted, indices_pred = y_pred.sort(descending=True, dim=-1)
    y_true_sorted, _ = y_true.sort(descending=True, dim=-1)
    true_sorted_by_preds = torch.gather(y_true, dim=1, index=indices_pred)
    true_diffs = true_sorted_by_preds[:, :, None] - true_sorted_by_preds[:, None, :]
    padded_pairs_mask = torch.isfinite(true_diffs)
    padded_pairs_mask.diagonal(dim1=-2, dim2=-1).zero_()
    true_sorted_by_preds.clamp_(min=0.0)
    y_true_sorted.clamp_(min=0.0)
    pos_idxs = torch.arange(1, y_pred.shape[1] + 1).to(y_pred.device)
    D = torch.log2(1.0 + pos_idxs.float())[None, :]
    maxDCGs = torch.sum((torch.pow(2, y_true_sorted) - 1) / D, dim=-1).clamp(min=eps)
    G = (torch.pow(2, true_sorted_by_preds) - 1) / maxDCGs[:, None]
    scores_diffs = y_pred_sorted[:, :, None] - y_pred_sorted[:, None, :]
    scores_diffs[~padded_pairs_mask] = 0.0
    approx_pos = 1.0 + torch.sum(padded_pairs_mask.float() * torch.sigmoid(-alpha * scores_diffs).clamp(min=eps),
                                 dim=-1)
    approx_D = torch.log2(1.0 + approx_pos)
    approx_NDCG = torch.sum(G / approx_D, dim=-1)
    return -torch.mean(approx_NDCG)


def ndcgLoss2PP_scheme(G, D, mu, *args):
    pos_idxs = torch.arange(1, G.shape[1] + 1, device=G.device)
    delta_idxs = torch.abs(pos_idxs[:, None] - pos_idxs[None, :])
    deltas = torch.abs(torch.pow(torch.abs(D[0, delta_idxs - 1]), -1.0) - torch.pow(torch.abs(D[0, delta_idxs]), -1.0))
    deltas.diagonal().zero_()
    return mu * deltas[None, :, :] + torch.abs(G[:, :, None] - G[:, None, :]) \
        * torch.abs(torch.pow(D[:, :, None], -1.0) - torch.pow(D[:, None, :], -1.0))


def lambdaLoss(y_pred, y_true, eps=DEFAULT_EPS, padded_value_indicator=PADDED_Y_VALUE, weighing_scheme=None,
               k=None, sigma=1.0, mu=10.0, reduction="sum"):
    device = y_pred.device
    y_pred = y_pred.clone()
    y_true = y_true.clone()
    padded_mask = y_true == padded_value_indicator
    y_pred[padded_mask] = float("-inf")
    y_true[padded_mask] = float("-inf")
    y_pred_sorted, indices_pred = y_pred.sort(descending=True, dim=-1)
    y_true_sorted, _ = y_true.sort(descending=True, dim=-1)
    true_sorted_by_preds = torch.gather(y_true, dim=1, index=indices_pred)
    true_diffs = true_sorted_by_preds[:, :, None] - true_sorted_by_preds[:, None, :]
    padded_pairs_mask = torch.isfinite(true_diffs)
    if weighing_scheme != "ndcgLoss1_scheme":
        padded_pairs_mask = padded_pairs_mask & (true_diffs > 0)
    ndcg_at_k_mask = torch.zeros((y_pred.shape[1], y_pred.shape[1]), dtype=torch.bool, device=device)
    ndcg_at_k_mask[:k, :k] = 1
    true_sorted_by_preds.clamp_(min=0.0)
    y_true_sorted.clamp_(min=0.0)
    pos_idxs = torch.arange(1, y_pred.shape[1] + 1).to(device)
    D = torch.log2(1.0 + pos_idxs.float())[None, :]
    maxDCGs = torch.sum(((torch.pow(2, y_true_sorted) - 1) / D)[:, :k], dim=-1).clamp(min=eps)
    G = (torch.pow(2, true_sorted_by_preds) - 1) / maxDCGs[:, None]
    if weighing_scheme is None:
        weights = 1.0
    else:
        weights = globals()[weighing_scheme](G, D, mu, true_sorted_by_preds)
    scores_diffs = (y_pred_sorted[:, :, None] - y_pred_sorted[:, None, :]).clamp(min=-1e8, max=1e8)
    scores_diffs = torch.where(torch.isnan(scores_diffs), torch.zeros_like(scores_diffs), scores_diffs)
    weighted_probas = (torch.sigmoid(sigma * scores_diffs).clamp(min=eps) ** weights).clamp(min=eps)
    losses = torch.log2(weighted_probas)
    masked_losses = losses[padded_pairs_mask & ndcg_at_k_mask]
    if reduction == "sum":
        return -torch.sum(masked_losses)
    return -torch.mean(masked_losses)


def rankNet(y_pred, y_true, padded_value_indicator=PADDED_Y_VALUE):
    n = y_pred.shape[1]
    pairs = torch.combinations(torch.arange(n, device=y_pred.device), r=2)
    i, j = pairs[:, 0], pairs[:, 1]
    valid = (y_true[:, i] != padded_value_indicator) & (y_true[:, j] != padded_value_indicator)
    label = (y_true[:, i] > y_true[:, j]).float()
    differs = valid & (y_true[:, i] != y_true[:, j])
    logits = y_pred[:, i] - y_pred[:, j]
    losses = F.binary_cross_entropy_with_logits(logits, label, reduction="none")
    return (losses * differs).sum() / differs.sum().clamp(min=1)


def ndcg_at_k(y_pred, y_true, k, padded_value_indicator=PADDED_Y_VALUE):
    mask = y_true == padded_value_indicator
    scores = y_pred.masked_fill(mask, float("-inf"))
    gains = torch.pow(2.0, y_true.clamp(min=0)) - 1
    ranks = scores.argsort(dim=1, descending=True).argsort(dim=1) + 1
    discounts = torch.where(ranks <= k, 1.0 / torch.log2(ranks.float() + 1), torch.zeros_like(scores))
    dcg = (gains * discounts).sum(1)
    ideal = torch.sort(gains, dim=1, descending=True).values[:, :k]
    idcg = (ideal / torch.log2(torch.arange(2, ideal.shape[1] + 2, dtype=torch.float32))).sum(1)
    return torch.where(idcg > 0, dcg / idcg.clamp(min=DEFAULT_EPS), torch.ones_like(dcg))


class ContextScorer(nn.Module):
    def __init__(self, n_features=12, dim=32, heads=4, layers=2):
        super().__init__()
        self.input_layer = nn.Sequential(nn.Linear(n_features, dim), nn.ReLU())
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 2, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.output_layer = nn.Linear(dim, 1)

    def forward(self, x, y_true):
        mask = y_true == PADDED_Y_VALUE
        h = self.input_layer(x)
        h = self.encoder(h, src_key_padding_mask=mask)
        y_pred = self.output_layer(h).squeeze(-1)
        return {
            "scores": y_pred,
            "listnet": listNet(y_pred, y_true),
            "approx_ndcg": approxNDCGLoss(y_pred, y_true),
            "lambda_ndcg2pp": lambdaLoss(y_pred, y_true, weighing_scheme="ndcgLoss2PP_scheme", k=5),
            "ranknet": rankNet(y_pred, y_true),
            "ndcg@5": ndcg_at_k(y_pred.detach(), y_true, 5),
        }


torch.manual_seed(0)
model = ContextScorer()
model.eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(3, 8, 12, generator=g)
    y = torch.randint(0, 4, (3, 8), generator=g).float()
    y[1, 6:] = PADDED_Y_VALUE
    y[2, 5:] = PADDED_Y_VALUE
    return x, y
