# A list of the caller's that the function only appends to (or extends with
# values it made) is not read: its type is pinned, not its length or items,
# and what was appended is replayed after the graph as one `extend`. The
# first read of the list in any other way reads it whole, as at the call's
# entry: its length pinned, its items read, the appended values after them,
# and the list refilled after the graph (no append made twice).
# RUN: %dync export %s:Steps.forward --emit=graph | FileCheck %s --check-prefix=STEPS
# RUN: %dync export %s:Steps.forward --emit=guards | FileCheck %s --check-prefix=STEPS-GUARDS
# RUN: %dync export %s:argument --example argument_inputs --emit=graph | FileCheck %s --check-prefix=ARGUMENT
# RUN: %dync export %s:argument --example argument_inputs --emit=guards | FileCheck %s --check-prefix=ARGUMENT-GUARDS
# RUN: %dync export %s:appended_then_read --example argument_inputs --emit=graph | FileCheck %s --check-prefix=THEN-READ
# RUN: %dync export %s:appended_then_read --example argument_inputs --emit=guards | FileCheck %s --check-prefix=THEN-READ-GUARDS
# RUN: %dync export %s:read_then_appended --emit=graph | FileCheck %s --check-prefix=READ-FIRST
# RUN: %dync export %s:read_then_appended --emit=guards | FileCheck %s --check-prefix=READ-FIRST-GUARDS
# RUN: %dync export %s:Logs.forward --emit=graph | FileCheck %s --check-prefix=LOGS
# RUN: %dync export %s:Logs.forward --emit=guards | FileCheck %s --check-prefix=LOGS-GUARDS
# RUN: %dync export %s:through_a_helper --emit=graph | FileCheck %s --check-prefix=HELPER
import collections

import torch
from torch import nn

HISTORY = [1, 2]


class Steps(nn.Module):
    def __init__(self):
        super().__init__()
        self.outputs = [torch.zeros(3)]
        # One list reached through two attributes: one value, one replay.
        self.first = self.second = []

    def forward(self, x):
        y = x * 2
        self.outputs.append(y.sum())
        self.outputs.append(y.detach())
        self.first.append(1)
        self.second.extend([y, "done"])
        return y

# STEPS:      return
# STEPS-NEXT: after extend L['self'].outputs = [%{{[0-9]+}}, %{{[0-9]+}}]
# STEPS-NEXT: after extend L['self'].first = [1, %{{[0-9]+}}, "done"]
# STEPS-NEXT: }
# STEPS-GUARDS:     type L['self'].outputs : builtins:list
# STEPS-GUARDS-NOT: length L['self'].outputs
# STEPS-GUARDS-NOT: L['self'].outputs[0]
# STEPS-GUARDS:     type L['self'].first : builtins:list
# STEPS-GUARDS-NOT: length L['self'].first
# STEPS-GUARDS:     same L['self'].second : L['self'].first
# STEPS-GUARDS-NOT: length L['self'].first


def argument(x, xs):
    xs.append(x + 1)
    xs.append(x.shape[0])
    return x

# ARGUMENT:      return
# ARGUMENT-NEXT: after extend L['xs'] = [%{{[0-9]+}}, 4]
# ARGUMENT-GUARDS:     type L['xs'] : builtins:list
# ARGUMENT-GUARDS-NOT: length L['xs']


def appended_then_read(x, xs):
    xs.append(x + 1)
    return x * len(xs)

# The read after the append reads the list whole: its entry item is a graph
# input, the refill holds it and the appended value, once.
# THEN-READ:      return
# THEN-READ-NEXT: after fill L['xs'] = [%xs_0, %{{[0-9]+}}]
# THEN-READ-GUARDS: length L['xs'] : 1


def read_then_appended(x):
    n = len(HISTORY)
    HISTORY.append(n)
    return x + n

# READ-FIRST:      return
# READ-FIRST-NEXT: after fill G['HISTORY'] = [1, 2, 2]
# READ-FIRST-GUARDS:      type G['HISTORY'] : builtins:list
# READ-FIRST-GUARDS:      length G['HISTORY'] : 2
# READ-FIRST-GUARDS-NEXT: equals G['HISTORY'][0] : 1
# READ-FIRST-GUARDS-NEXT: equals G['HISTORY'][1] : 2


class Logs(nn.Module):
    # Epoch logs in a defaultdict(list): `logs[k]` reads the key, the list
    # is appended to only.
    def __init__(self):
        super().__init__()
        self.logs = collections.defaultdict(list)
        self.logs["loss"] = [(torch.zeros(()), 3)]

    def forward(self, x):
        loss = x.mean()
        self.logs["loss"].append((loss.detach(), x.shape[0]))
        return loss

# LOGS:      return
# LOGS-NEXT: after extend L['self'].logs['loss'] = [(%{{[0-9]+}}, 4)]
# LOGS-NEXT: }
# LOGS-GUARDS:     type L['self'].logs : collections:defaultdict
# LOGS-GUARDS:     keys L['self'].logs : ["loss"]
# LOGS-GUARDS:     type L['self'].logs['loss'] : builtins:list
# LOGS-GUARDS-NOT: length L['self'].logs['loss']
# LOGS-GUARDS-NOT: L['self'].logs['loss'][0]


def record(log, value):
    log.append(value)


def through_a_helper(x):
    # Passing the list to a function capture runs reads it whole.
    record(HISTORY, 3)
    return x

# HELPER:      return
# HELPER-NEXT: after fill G['HISTORY'] = [1, 2, 3]


def example_inputs():
    return (torch.randn(4, 3),)


def argument_inputs():
    return (torch.randn(4, 3), [torch.ones(3)])
