# Ints held in an argument's attributes and items declared dynamic
# (`--dynamic cfg.window=w`, `dims[1]=c`, `opts['n']=n`) are graph int inputs
# read from those sources, with `int` guards, while the fields left
# undeclared stay constants under `equals` guards. Declarations that cannot
# hold are errors that name what the example holds; nothing is written.
# RUN: %dync export %s:held --dynamic 'cfg.window=w[1,32]' --dynamic 'dims[1]=c[2,8]' \
# RUN:   --emit=graph | FileCheck %s --check-prefix=GRAPH
# RUN: %dync export %s:held --dynamic 'cfg.window=w[1,32]' --dynamic 'dims[1]=c[2,8]' \
# RUN:   --emit=guards | FileCheck %s --check-prefix=GUARDS
# RUN: %dync export %s:keyed --example keyed_inputs --dynamic "opts['n']=n[2,32]" --emit=guards \
# RUN:   | FileCheck %s --check-prefix=KEYED
# RUN: rm -f %t.so
# RUN: not %dync export %s:held -o %t.so --dynamic 'cfg.size=w[1,32]' 2>&1 | FileCheck %s --check-prefix=NOATTR
# RUN: not %dync export %s:held -o %t.so --dynamic 'cfg.scale=w[1,32]' 2>&1 | FileCheck %s --check-prefix=FLOAT
# RUN: not %dync export %s:held -o %t.so --dynamic 'dims[2]=w[1,32]' 2>&1 | FileCheck %s --check-prefix=LENGTH
# RUN: not %dync export %s:held -o %t.so --dynamic 'cfg.window=w[8,32]' 2>&1 | FileCheck %s --check-prefix=OUTSIDE
# RUN: not %dync export %s:held -o %t.so --dynamic 'cfg.unused=u[1,32]' 2>&1 | FileCheck %s --check-prefix=UNREAD
# RUN: not %dync export %s:held -o %t.so --dynamic 'cfg.window=w[1,32]' --dynamic 'cfg.window=v[1,32]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=TWICE
# RUN: not %dync export %s:held -o %t.so --dynamic 'cfg=w[1,32]' --dynamic 'cfg.window=w[1,32]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=BOTH
# RUN: not %dync export %s:held -o %t.so --dynamic 'cfg.(x)=w' 2>&1 | FileCheck %s --check-prefix=MALFORMED
# RUN: not %dync export %s:held -o %t.so --strict-dynamic --dynamic 'cfg.window=w[1,64]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=CUT
# RUN: not test -e %t.so
import dataclasses

import torch


@dataclasses.dataclass
class Config:
    window: int
    scale: float
    unused: int = 3


def held(x, cfg, dims):
    rows, cols = dims
    head = x[: cfg.window, :cols] * cfg.scale
    return head.reshape(-1), cfg.window + rows


def keyed(x, opts):
    return x[: opts["n"]].sum(0)


def example_inputs():
    return (torch.randn(32, 8), Config(5, 0.5), (3, 4))


def keyed_inputs():
    return (torch.randn(32, 8), {"n": 6})

# GRAPH: graph @held(%x: tensor<f32, [32, 8]> = L['x'],
# GRAPH-NEXT: %dims_1: int<c> = L['dims'][1],
# GRAPH-NEXT: %cfg_window: int<w> = L['cfg'].window)
# GRAPH-NEXT: symbols { c: [2, 8], w: [2, 32] }
# GRAPH: aten::slice.Tensor(%x, 0, 0, w) : tensor<f32, [w, 8]>
# GRAPH: return (%{{[0-9]+}}, w + 3)

# GUARDS: int L['dims'][1] : c
# GUARDS-NEXT: int L['cfg'].window : w
# GUARDS: type L['cfg'] : {{.*}}Config
# GUARDS-DAG: equals L['cfg'].scale : 0.5
# GUARDS-DAG: equals L['dims'][0] : 3
# GUARDS-NOT: equals L['cfg'].window

# KEYED: int L['opts']['n'] : n
# KEYED: type L['opts'] : builtins:dict
# KEYED-NOT: keys L['opts']

# NOATTR: error: --dynamic 'cfg.size=w[1,32]': the example has no L['cfg'].size: L['cfg'] is a Config with no attribute 'size' in its instance __dict__ or its class
# FLOAT: error: --dynamic 'cfg.scale=w[1,32]': the example's L['cfg'].scale is a float, not an int; only an int can be a symbolic int
# LENGTH: error: --dynamic 'dims[2]=w[1,32]': the example has no L['dims'][2]: L['dims'] is a tuple of length 2
# OUTSIDE: error: --dynamic 'cfg.window=w[8,32]': the example's L['cfg'].window is 5, outside the range
# UNREAD: error: --dynamic: held never reads L['cfg'].unused
# TWICE: error: --dynamic 'cfg.window=v[1,32]' names 'cfg.window' again, after --dynamic 'cfg.window=w[1,32]'; declare each int once
# BOTH: error: --dynamic 'cfg=w[1,32]' and --dynamic 'cfg.window=w[1,32]' name 'cfg' both as an int and as an object or container holding an int
# MALFORMED: error: malformed --dynamic 'cfg.(x)=w': '.(x)' is not a path of attribute and item reads
# CUT: dynamic-int-paths.py:40:12: error: --dynamic 'cfg.window=w[1,64]' contradicts the program: this line assumes L['cfg'].window is in [2, 32]
