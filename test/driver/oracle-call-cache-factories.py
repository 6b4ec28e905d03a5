# The call cache replays factories called on no tensor (arange, full) and
# results whose one-element value fake mode knows (new_ones of a scalar,
# arange(1)), the value coming back with the result, and calls on such
# values (the value is part of the key; a view of one gets a view of its
# value): a warm export misses none of them and emits the same graph,
# checking mode agrees. Calls on no
# tensor that make no tensor (autocast's setters and queries) are never
# stored: a replay would leave a setter's effect undone.
# RUN: rm -rf %t && mkdir -p %t
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=2 %dync export %s:f --emit=graph \
# RUN:   > %t/cold.txt 2> %t/cold.err
# RUN: FileCheck %s --check-prefix=COLD < %t/cold.err
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=2 %dync export %s:f --emit=graph \
# RUN:   > %t/warm.txt 2> %t/warm.err
# RUN: FileCheck %s --check-prefix=WARM < %t/warm.err
# RUN: diff %t/cold.txt %t/warm.txt
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=check DYNC_ORACLE_CACHE_STATS=1 \
# RUN:   %dync export %s:f --emit=graph > %t/check.txt 2> %t/check.err
# RUN: FileCheck %s --check-prefix=CHECKED < %t/check.err
# RUN: diff %t/cold.txt %t/check.txt
# RUN: env DYNC_ORACLE_CACHE=off %dync export %s:f --emit=graph > %t/off.txt
# RUN: diff %t/cold.txt %t/off.txt
# RUN: FileCheck %s --check-prefix=GRAPH < %t/warm.txt
import torch


def f(x):
    pos = torch.arange(x.shape[1])
    one = torch.arange(1)
    flag = x.new_ones((), dtype=torch.bool)
    with torch.autocast("cpu", enabled=False):
        y = x * 2
    z = torch.full((2,), 3.5)
    first = one[0]
    return x + pos, one * 3, flag & (x > 0), y, z, first + x


def example_inputs():
    return (torch.randn(3, 4),)

# COLD: dync: oracle call cache (on): 0 hits, [[MISSES:[1-9][0-9]*]] misses, {{[1-9][0-9]*}} stored,
# COLD: 'fn torch:set_autocast_enabled': no tensor arguments, and no tensor made
# WARM: dync: oracle call cache (on): {{[1-9][0-9]*}} hits, {{[0-9]+}} misses, 0 stored,
# WARM-NOT: arange
# WARM-NOT: new_ones
# WARM-NOT: full
# WARM-NOT: and_
# WARM-NOT: getitem
# WARM: 'fn torch:set_autocast_enabled': no tensor arguments, and no tensor made
# WARM-NOT: arange
# WARM-NOT: new_ones
# WARM-NOT: full
# WARM-NOT: and_
# WARM-NOT: getitem
# CHECKED: dync: oracle call cache (check): 0 hits, {{[0-9]+}} misses, 0 stored, {{[0-9]+}} uncacheable, {{[1-9][0-9]*}} checked
# GRAPH: aten::arange.start_step(0, 4,
# GRAPH: aten::arange.start_step(0, 1,
# GRAPH: aten::full.default([], true, dtype=bool,
# GRAPH: aten::full.default([2], 3.5,
