"""RNN-Transducer training step in plain torch, as reference
implementations (the "transducer" tutorial ports, warp-transducer's Python
checks) write it: an LSTM encoder and a prediction network over the
blank-prepended labels (`F.pad(labels, (1, 0), value=blank)`), the joint
network by broadcasting `enc.unsqueeze(2) + pred.unsqueeze(1)` through
tanh and a Linear, `log_softmax`, the blank and label log-probabilities
picked by `gather` on the label index expanded over time, and the forward
variable alpha computed over the (T, U) lattice by two Python loops: a
first column by cumulative blanks, then each `alpha[:, t, u]` from
`torch.logaddexp` of the emit and blank paths, written into a list of
lists and stacked; per-utterance final terms taken at (T_b - 1, U_b) by
advanced indexing with the lengths, the loss the mean negative
log-likelihood divided by target lengths, and a greedy decode of the
argmax over the joint at u = 0 per frame."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, feat_dim, hidden):
        super().__init__()
        self.lstm = nn.LSTM(feat_dim, hidden, num_layers=2, batch_first=True, bidirectional=False)

    def forward(self, x):
        out, _ = self.lstm(x)
        return out


class Predictor(nn.Module):
    def __init__(self, vocab, hidden, blank):
        super().__init__()
        self.blank = blank
        self.embed = nn.Embedding(vocab, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)

    def forward(self, labels):
        y = F.pad(labels, (1, 0), value=self.blank)
        out, _ = self.rnn(self.embed(y))
        return out


class Joint(nn.Module):
    def __init__(self, hidden, joint_dim, vocab):
        super().__init__()
        self.enc_proj = nn.Linear(hidden, joint_dim)
        self.pred_proj = nn.Linear(hidden, joint_dim, bias=False)
        self.out = nn.Linear(joint_dim, vocab)

    def forward(self, enc, pred):
        h = self.enc_proj(enc).unsqueeze(2) + self.pred_proj(pred).unsqueeze(1)
        return self.out(torch.tanh(h))


def rnnt_loss_reference(log_probs, labels, logit_lengths, label_lengths, blank=0):
    B, T, U1, V = log_probs.shape
    U = U1 - 1
    blank_lp = log_probs[..., blank]  # (B, T, U + 1)
    idx = labels.unsqueeze(1).expand(B, T, U).unsqueeze(-1)
    emit_lp = torch.gather(log_probs[:, :, :U, :], 3, idx).squeeze(-1)  # (B, T, U)

    alpha = [[None] * (U + 1) for _ in range(T)]
    alpha[0][0] = log_probs.new_zeros(B)
    for u in range(1, U + 1):
        alpha[0][u] = alpha[0][u - 1] + emit_lp[:, 0, u - 1]
    for t in range(1, T):
        alpha[t][0] = alpha[t - 1][0] + blank_lp[:, t - 1, 0]
        for u in range(1, U + 1):
            no_emit = alpha[t - 1][u] + blank_lp[:, t - 1, u]
            emit = alpha[t][u - 1] + emit_lp[:, t, u - 1]
            alpha[t][u] = torch.logaddexp(no_emit, emit)
    alphas = torch.stack([torch.stack(row, dim=1) for row in alpha], dim=1)  # (B, T, U + 1)

    b = torch.arange(B, device=log_probs.device)
    t_last = logit_lengths - 1
    log_likelihood = alphas[b, t_last, label_lengths] + blank_lp[b, t_last, label_lengths]
    return -log_likelihood, alphas


class Transducer(nn.Module):
    def __init__(self, feat_dim=8, hidden=24, joint_dim=32, vocab=6, blank=0):
        super().__init__()
        self.blank = blank
        self.encoder = Encoder(feat_dim, hidden)
        self.predictor = Predictor(vocab, hidden, blank)
        self.joint = Joint(hidden, joint_dim, vocab)

    def forward(self, feats, feat_lens, labels, label_lens):
        enc = self.encoder(feats)
        pred = self.predictor(labels)
        logits = self.joint(enc, pred)
        log_probs = logits.log_softmax(dim=-1)
        nll, alphas = rnnt_loss_reference(log_probs, labels, feat_lens, label_lens, blank=self.blank)
        loss = (nll / label_lens.to(nll.dtype)).mean()
        # greedy frame-wise symbols from the joint with the blank context
        hyp = self.joint(enc, pred[:, :1]).squeeze(2).argmax(-1)
        hyp = hyp.masked_fill(torch.arange(feats.shape[1]).unsqueeze(0) >= feat_lens.unsqueeze(1), self.blank)
        return loss, nll, hyp, alphas


torch.manual_seed(0)
model = Transducer().eval()
check_gradients = True


def example_inputs():
    g = torch.Generator().manual_seed(1)
    feats = torch.randn(3, 7, 8, generator=g)
    labels = torch.tensor([[1, 4, 2, 5], [3, 3, 0, 0], [2, 1, 5, 0]])
    return feats, torch.tensor([7, 5, 6]), labels, torch.tensor([4, 2, 3])
