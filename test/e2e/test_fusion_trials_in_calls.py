"""A fusion decomposition's trial run on the call's own arguments gives the
graphs the trial on static twins gives.

Where the oracle can, it runs a fusion decomposition's first trial on the
call's own fake arguments and takes the call's results from that run
(docs/tensor-oracle.md, "Trials that stand for the call's run"); elsewhere
it tries the decomposition on static twins, as every trial ran before.
`DYNC_FUSION_TRIALS=twins` makes every trial run on twins. The models here
reach both kinds: layer norm (whose decomposition meets var_mean's trial
inside it), softmax in float32 and bfloat16, batch and group norm, max
pooling (a decomposition that calls its own operator), a padding of zeros,
a linear layer (kept whole), embeddings and arange; and calls the oracle
must leave to the twins: a weight that requires grad, a sliced argument with
a storage offset, a dynamic batch. The graphs must be the same both ways,
with the call cache off, cold, warm and checking (which also tries each
verdict on twins and fails where they differ), and the trials in calls must
really have run.
"""
import os
import re
import textwrap

import pytest

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent('''
    import torch
    import torch.nn.functional as F
    from torch import nn


    class Frozen(nn.Module):
        """Parameters that require no grad: its calls' trials run in them."""

        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 16)
            self.fc = nn.Linear(16, 16)
            self.ln = nn.LayerNorm(16)
            self.gn = nn.GroupNorm(4, 16)
            self.bn = nn.BatchNorm1d(16).eval()
            self.requires_grad_(False)

        def forward(self, ids):
            pos = torch.arange(ids.shape[1])
            h = self.ln(self.emb(ids) + pos[:, None])
            h = self.fc(h).flatten(0, 1)
            h = self.bn(h) + self.gn(h)
            low = torch.softmax(h.to(torch.bfloat16), -1)
            return torch.softmax(h, -1), low, torch.log_softmax(h, dim=1)


    def pools(x):
        p = F.max_pool2d(x, 2)
        return p, F.pad(x, (0, 0, 0, 0)), torch.var_mean(x, dim=(-2, -1))


    def sliced(x):
        """Arguments with a storage offset and more storage than they use."""
        return F.layer_norm(x[1:], (x.shape[-1],)), torch.softmax(x[:, 2:], -1)


    class Trained(nn.Module):
        """A weight that requires grad: its trials run on twins."""

        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(8)

        def forward(self, x):
            return torch.softmax(self.ln(x), -1)


    def example_inputs():
        return (torch.randint(0, 20, (2, 5)),)


    def example_pools():
        return (torch.randn(2, 3, 8, 8),)


    def example_sliced():
        return (torch.randn(6, 8),)


    def example_trained():
        return (torch.randn(4, 8),)
''')

STATS = re.compile(r"fusion trials: (\d+) in calls, (\d+) on static twins")


def export_graphs(run_dync, folder, env, *extra):
    model = folder / "model.py"
    entries = [f"{model}:Frozen.forward"]
    if not extra:
        entries += [f"{model}:pools", f"{model}:sliced", f"{model}:Trained.forward",
                    "--example", "pools=example_pools", "--example", "sliced=example_sliced",
                    "--example", "Trained.forward=example_trained"]
    done = run_dync("export", *entries, "--emit=graph", *extra,
                    env=dict(os.environ, DYNC_ORACLE_CACHE_STATS="1", **env))
    assert done.returncode == 0, done.stderr
    counts = STATS.search(done.stderr)
    assert counts, done.stderr
    return done.stdout, tuple(int(n) for n in counts.groups())


# With a dynamic batch, the frozen model alone: calls on the symbolic
# batch leave their trials to the twins, the others run them in calls.
@pytest.mark.parametrize("extra", [(), ("--dynamic", "ids:0=b[2,8]")])
def test_trials_in_calls_give_the_twins_graphs(run_dync, tmp_path, extra):
    (tmp_path / "model.py").write_text(MODEL)
    twins, (in_calls, on_twins) = export_graphs(
        run_dync, tmp_path, {"DYNC_FUSION_TRIALS": "twins", "DYNC_ORACLE_CACHE": "off"}, *extra)
    assert in_calls == 0 and on_twins > 0

    off, (in_calls, on_twins) = export_graphs(run_dync, tmp_path, {"DYNC_ORACLE_CACHE": "off"},
                                              *extra)
    assert off == twins
    # Both kinds ran: the frozen model's calls in calls, the trained
    # weight's, the sliced arguments' (and a dynamic batch's) on twins.
    assert in_calls > 0 and on_twins > 0, (in_calls, on_twins)

    cache = tmp_path / "cache"
    for mode in ("on", "on", "check"):
        graphs, _ = export_graphs(run_dync, tmp_path,
                                  {"DYNC_ORACLE_CACHE": mode, "DYNC_CACHE_DIR": str(cache)},
                                  *extra)
        assert graphs == twins, mode
    checked, _ = export_graphs(run_dync, tmp_path, {"DYNC_ORACLE_CACHE": "check",
                                                    "DYNC_CACHE_DIR": str(tmp_path / "fresh")},
                               *extra)
    assert checked == twins
