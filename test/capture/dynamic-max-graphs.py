# An entry is captured at most --max-graphs times for the sizes of its
# declared ranges; the sizes no graph then serves run the original code,
# and export names them in one warning, as it does the sizes a relation
# leaves out where the program cannot run (export tries the first of them).
#
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:cuts -o %t/all.dync.so --dynamic 'x:0=n[1,12]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=ALL
# RUN: %dync export %s:cuts -o %t/two.dync.so --max-graphs 2 --dynamic 'x:0=n[1,12]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=TWO
# RUN: %dync inspect %t/two.dync.so | FileCheck %s --check-prefix=TWO-GRAPHS
# RUN: %dync export %s:rows -o %t/rows.dync.so --example rows=example_rows --dynamic 'x:0=n[8,32]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=ROWS
# RUN: not %dync export %s:cuts -o %t/none.dync.so --max-graphs 0 --dynamic 'x:0=n[1,12]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=ZERO
import torch


def cuts(x):
    if x.shape[0] > 4:
        x = x * 2
    if x.shape[0] > 8:
        x = x + 1
    return x - 1


def rows(x):
    return x.reshape(-1, 8).sum(1)


def example_inputs():
    return (torch.randn(10),)


def example_rows():
    return (torch.randn(16),)


# Served whole: [9, 12], [5, 8], [2, 4], and 1 folded into [2, 4].
# ALL: adding a graph for n = 8
# ALL: adding a graph for n = 4
# ALL-NOT: warning
# Two captures: the example's ([9, 12]) and n = 8 ([5, 8]).
# TWO: dync: note: cuts: --dynamic 'x:0=n[1,12]': the program cuts the range at 9, {{.*}}; adding a graph for n = 8
# TWO-NOT: adding a graph
# TWO: dync: warning: cuts: 4 sizes of the declared ranges run the original code, no graph serving them: n in {1..4}; export captures an entry at most 2 times for its ranges (--max-graphs)
# TWO-GRAPHS: graph @cuts(
# TWO-GRAPHS: symbols { n: [9, 12] }
# TWO-GRAPHS: graph @cuts$n_8(
# TWO-GRAPHS: symbols { n: [5, 8] }
# TWO-GRAPHS-NOT: graph @cuts$n_4
# ROWS: dync: note: rows: no graph made so far serves n = 9 of the declared ranges; adding a graph for it
# ROWS: dync: warning: rows: 21 sizes of the declared ranges run the original code, no graph serving them: n in {9..15, 17..23, 25..31}; the graphs' relations leave them out, and at n = 9 the program cannot be captured: {{.*}}dynamic-max-graphs.py:28:12: calling torch.Tensor.reshape with the example's sizes raised RuntimeError: shape '[-1, 8]' is invalid
# ZERO: --max-graphs: Value 0 not in range
