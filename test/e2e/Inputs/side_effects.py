"""Functions that change objects existing before the call: module and object
attributes, lists and dicts they are given, module globals. Exported with
dimension 0 of x dynamic; test_side_effects.py compares results and the state
left behind with eager's over calls that hit and calls that miss."""
import torch
from torch import nn

# Globals the functions assign.
calls = 0
last_sum = None
last_rows = None


class Info:
    """A plain object a function makes and leaves on a module."""

    def __init__(self, rows, total):
        self.rows = rows
        self.total = total


class Window(nn.Module):
    """Swin's pattern: sizes chosen in forward and kept on the module, never
    read before they are set, so a second call is served too."""

    def __init__(self):
        super().__init__()
        self.shift_size = 2
        self.window_size = 7
        self.max_window = 7
        self.proj = nn.Linear(4, 4)

    def forward(self, x):
        if x.shape[-1] <= self.max_window:
            self.shift_size = 0
            self.window_size = x.shape[-1]
        self.rows = x.shape[0] * 2
        self.last = self.proj(x).relu()
        self.info = Info(x.shape[0], x.sum())
        self.cache = {"scaled": x * 3, "step": 1}
        return self.last + self.shift_size + self.window_size


class Counter(nn.Module):
    """Reads its count before setting it: the guard pins the count at entry,
    so the next call (count one more) misses and runs eagerly."""

    def __init__(self):
        super().__init__()
        self.count = 0

    def forward(self, x):
        self.count += 1
        return x * self.count


def append_to(x, xs):
    """Appends to the list it is given; a later read sees the new item."""
    xs.append(x * 2)
    xs.append(len(xs))
    return xs[-2] + 1


def update_dict(x, d):
    """Replaces a tensor item (its guard is on metadata: the next call hits)
    and sets an entry it never reads (no guard on it: the next call hits)."""
    d["y"] = d["y"] + x.sum(0)
    d["rows"] = x.shape[0]
    return d["y"] * 2


def set_globals(x):
    """Assigns globals it never reads first: every call is served."""
    global last_sum, last_rows
    last_sum = x.sum()
    last_rows = x.shape[0] + 1
    return x - last_sum


def bump(x):
    """Reads the global before assigning it: the guard pins 0, so the
    second call misses."""
    global calls
    calls = calls + 1
    return x + calls


# The same weights in every interpreter that imports this.
torch.manual_seed(0)
window = Window()
counter = Counter()


def example_inputs():
    return (torch.randn(3, 4),)


def append_to_inputs():
    return (torch.randn(3, 4), [torch.ones(2)])


def update_dict_inputs():
    return (torch.randn(3, 4), {"y": torch.randn(4), "rows": 0})
