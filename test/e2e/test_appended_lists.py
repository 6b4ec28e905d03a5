"""Lists in the program's state that the function only appends to.

The function reads nothing of the list, so capture leaves its items unread:
what it appends is replayed after the graph as an `extend` of the real
list, with no guard on its length, and every later call (the list longer
each time) is served. A program that reads the list (len, an item) reads it
whole, pinning its length, so the next call misses and runs eagerly.

The same scenario runs in two fresh interpreters, one eager and one with the
artifact loaded: each call's result and the lists afterwards must be
eager's, and each call must hit or miss as said.
"""
import textwrap

from conftest import PACKAGE_DIR, export_source, run_reporting_script

import pytest

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import collections

    import torch
    from torch import nn

    LOG = []


    class History(nn.Module):
        # Lightning's training_step_outputs, a detached history, and one list
        # reached through two attributes.
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 3)
            self.outputs = []
            self.history = [torch.zeros(2, 3)]
            self.first = self.second = []

        def forward(self, x):
            y = self.lin(x)
            self.outputs.append(y.sum())
            self.history.append(y.detach())
            self.first.append(y.mean())
            self.second.extend([y.amax(), 7])
            self.first.append(y.amin())
            return y


    class EpochLogs(nn.Module):
        # Epoch-level logs in a defaultdict(list), keyed by the metric.
        def __init__(self):
            super().__init__()
            self.logs = collections.defaultdict(list)
            self.logs["loss"] = []

        def forward(self, x):
            loss = (x * x).mean()
            self.logs["loss"].append((loss.detach(), x.shape[0]))
            return loss


    def log_global(x):
        LOG.append(x.sum())
        LOG.extend([x.mean(), "step"])
        return x + 1


    def append_arg(x, xs):
        xs.append(x * 2)
        return x - 1


    class Counted(nn.Module):
        # Appends, then reads the length: the list is read whole.
        def __init__(self):
            super().__init__()
            self.seen = []

        def forward(self, x):
            self.seen.append(x.sum())
            return x * len(self.seen)


    def example_inputs():
        return (torch.randn(2, 4),)


    def append_arg_inputs():
        return (torch.randn(2, 4), [])
""")

CHILD = textwrap.dedent("""
    import json, sys
    sys.path[:0] = [{package!r}, {folder!r}]
    import torch, dync
    import model as m


    def plain(value):
        if isinstance(value, torch.Tensor):
            return [round(v, 5) for v in value.flatten().tolist()] + [list(value.shape)]
        if isinstance(value, (list, tuple)):
            return [type(value).__name__] + [plain(v) for v in value]
        if isinstance(value, dict):
            return {{k: plain(v) for k, v in value.items()}}
        return value


    torch.manual_seed(0)
    history, logs, counted = m.History(), m.EpochLogs(), m.Counted()
    xs = []
    calls = [("History.forward", history), ("EpochLogs.forward", logs),
             ("log_global", m.log_global), ("append_arg", lambda x: m.append_arg(x, xs)),
             ("Counted.forward", counted)]
    art = dync.load({folder!r} + "/model.dync.so") if {compiled!r} else None
    report = []
    for round_ in range(3):
        for entry, fn in calls:
            x = torch.randn(2, 4)
            before = art.stats()[entry]["hits"] if art else 0
            out = fn(x)
            served = art.stats()[entry]["hits"] > before if art else None
            report.append([entry, round_, plain(out), served])
    state = {{"outputs": plain(history.outputs), "history": plain(history.history),
              "first": plain(history.first), "alias": history.first is history.second,
              "logs": plain(dict(logs.logs)), "LOG": plain(m.LOG), "xs": plain(xs),
              "seen": plain(counted.seen)}}
    print(json.dumps({{"calls": report, "state": state}}))
""")


def test_appended_lists_are_replayed_without_length_guards(tmp_path, run_dync):
    export_source(run_dync, tmp_path, MODEL,
                  ["History.forward", "EpochLogs.forward", "log_global", "append_arg",
                   "Counted.forward"], examples={"append_arg": "append_arg_inputs"})
    runs = {}
    for compiled in (False, True):
        runs[compiled] = run_reporting_script(
            CHILD.format(package=PACKAGE_DIR, folder=str(tmp_path), compiled=compiled))
    eager, dync_run = runs[False], runs[True]
    # Results and the lists left behind are eager's.
    assert [c[:3] for c in dync_run["calls"]] == [c[:3] for c in eager["calls"]]
    assert dync_run["state"] == eager["state"]
    assert dync_run["state"]["alias"] is True
    assert len(dync_run["state"]["outputs"]) == 1 + 3
    # Appends only: every call served. The list read after its append
    # (Counted) is pinned at its length: only its first call is.
    served = {(entry, round_): hit for entry, round_, _, hit in dync_run["calls"]}
    for entry in ("History.forward", "EpochLogs.forward", "log_global", "append_arg"):
        assert [served[(entry, r)] for r in range(3)] == [True, True, True], entry
    assert [served[("Counted.forward", r)] for r in range(3)] == [True, False, False]
