# A declared range the program cuts at a boundary is served by one graph per
# part, each selected by its symbol's range; a size the program treats apart
# (`n != 7`) gets a graph of its own. Export notes each, with the guard and
# the line that made it; --strict-dynamic refuses at that line instead.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:cut -o %t/cut.dync.so --dynamic 'x:0=n[1,100]' 2>&1 | FileCheck %s --check-prefix=CUT
# RUN: %dync inspect %t/cut.dync.so | FileCheck %s --check-prefix=GRAPHS
# RUN: %dync export %s:apart -o %t/apart.dync.so --dynamic 'x:0=n[2,100]' 2>&1 | FileCheck %s --check-prefix=APART
# RUN: not %dync export %s:cut -o %t/strict.dync.so --strict-dynamic --dynamic 'x:0=n[1,100]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=STRICT
# RUN: not test -e %t/strict.dync.so
# RUN: not %dync export %s:apart -o %t/strict.dync.so --strict-dynamic --dynamic 'x:0=n[2,100]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=STRICT-APART
# RUN: not test -e %t/strict.dync.so
import torch


def cut(x):
    if x.shape[0] > 4:
        return x * 2
    return x - 1


def apart(x):
    if x.shape[0] == 7:
        return x + 7
    return x * 3


def example_inputs():
    return (torch.randn(8, 3),)

# CUT: dync: note: cut: --dynamic 'x:0=n[1,100]': the program cuts the range at 5, so the graph for n serves n in [5, 100] (n > 4 at dynamic-range-cut.py:19); adding a graph for n = 4
# CUT-NEXT: dync: note: cut: --dynamic 'x:0=n[1,100]': torch specializes sizes 0 and 1, so the graph for n serves n >= 2; adding a graph for n = 1
# GRAPHS: graph @cut(%x: tensor<f32, [n, 3]> = L['x'])
# GRAPHS-NEXT: symbols { n: [5, 100] }
# CUT-NEXT: dync: note: cut: --dynamic 'x:0=n[1,100]': the graph for n = 1 is the general graph there; one graph serves n in [1, 4]
# GRAPHS: graph @cut$n_4(%x: tensor<f32, [n, 3]> = L['x'])
# GRAPHS-NEXT: symbols { n: [1, 4] }
# GRAPHS-NOT: graph @cut$n_1
# APART: dync: note: apart: --dynamic 'x:0=n[2,100]': the graph assumes n != 7 at dynamic-range-cut.py:25; adding a graph for n = 7
# STRICT: dynamic-range-cut.py:19:8: error: --dynamic 'x:0=n[1,100]' contradicts the program: this line assumes dimension 0 of L['x'] is in [5, 100]
# STRICT-NEXT: {{^}}    if x.shape[0] > 4:
# STRICT-APART: dynamic-range-cut.py: error: --dynamic 'x:0=n[2,100]' is not served whole by one graph (--strict-dynamic): the graph assumes n != 7 at dynamic-range-cut.py:25, so n = 7 would need a graph of its own
