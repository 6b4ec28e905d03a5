# The tensor oracle's call results are cached across processes: a second
# export of an unchanged function replays every call it can and emits the
# same graph; checking mode runs each call afresh too and compares; a
# damaged or foreign entry is a miss, replaced by a good one; --no-cache
# neither reads nor writes the cache.
# RUN: rm -rf %t && mkdir -p %t
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=1 %dync export %s:f --emit=graph \
# RUN:   > %t/cold.txt 2> %t/cold.err
# RUN: FileCheck %s --check-prefix=COLD < %t/cold.err
# No temporary file is left (a replaced entry goes through one, renamed).
# RUN: find %t/cache/oracle-calls -name '.tmp-*' > %t/left.txt
# RUN: not grep . %t/left.txt
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=1 %dync export %s:f --emit=graph \
# RUN:   > %t/warm.txt 2> %t/warm.err
# RUN: FileCheck %s --check-prefix=WARM < %t/warm.err
# RUN: diff %t/cold.txt %t/warm.txt
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=check DYNC_ORACLE_CACHE_STATS=1 \
# RUN:   %dync export %s:f --emit=graph > %t/check.txt 2> %t/check.err
# RUN: FileCheck %s --check-prefix=CHECKED < %t/check.err
# RUN: diff %t/cold.txt %t/check.txt
# Every entry damaged: one byte changed in the middle, another cut short,
# the rest swapped for another entry (a foreign key at that path).
# RUN: %python %S/Inputs/damage_oracle_cache.py %t/cache/oracle-calls
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=1 %dync export %s:f --emit=graph \
# RUN:   > %t/damaged.txt 2> %t/damaged.err
# RUN: FileCheck %s --check-prefix=DAMAGED < %t/damaged.err
# RUN: diff %t/cold.txt %t/damaged.txt
# RUN: find %t/cache/oracle-calls -name '.tmp-*' > %t/left-damaged.txt
# RUN: not grep . %t/left-damaged.txt
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=1 %dync export %s:f --emit=graph \
# RUN:   > %t/replaced.txt 2> %t/replaced.err
# RUN: FileCheck %s --check-prefix=WARM < %t/replaced.err
# RUN: diff %t/cold.txt %t/replaced.txt
# RUN: env DYNC_CACHE_DIR=%t/off DYNC_ORACLE_CACHE_STATS=1 %dync export %s:f --emit=graph \
# RUN:   --no-cache > %t/off.txt 2> %t/off.err
# RUN: FileCheck %s --check-prefix=OFF < %t/off.err
# RUN: diff %t/cold.txt %t/off.txt
# RUN: not ls %t/off/oracle-calls
import torch
import torch.nn.functional as F


def f(x, w):
    h = F.layer_norm(x, (8,))
    a, b = h.split(4, dim=1)
    y = torch.addmm(b[0], a, w).t()
    return y.view(4, 3), a, torch.tanh(y[1:, :2]) * 2


def example_inputs():
    return (torch.randn(3, 8), torch.randn(4, 4))

# COLD: dync: oracle call cache (on): 0 hits, [[MISSES:[1-9][0-9]*]] misses, [[MISSES]] stored,
# WARM: dync: oracle call cache (on): {{[1-9][0-9]*}} hits, 0 misses, 0 stored,
# CHECKED: dync: oracle call cache (check): 0 hits, 0 misses, 0 stored, {{[0-9]+}} uncacheable, {{[1-9][0-9]*}} checked
# DAMAGED: dync: oracle call cache (on): 0 hits, [[MISSES:[1-9][0-9]*]] misses, [[MISSES]] stored,
# OFF: dync: oracle call cache (off): 0 hits, 0 misses, 0 stored, 0 uncacheable, 0 checked
