# The call cache's store: each entry is a file of its own directly under
# oracle-calls/, named by its key's SHA-256, with no folder made for it and
# no temporary file left (a key's first entry is written in place). Folders
# an older build made, one per digest prefix, count toward
# DYNC_ORACLE_CACHE_MAX_MB and their entries are removed as the oldest.
# RUN: rm -rf %t && mkdir -p %t
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=1 %dync export %s:f --emit=graph \
# RUN:   > %t/cold.txt 2> %t/cold.err
# RUN: FileCheck %s --check-prefix=COLD < %t/cold.err
# RUN: %python %S/Inputs/oracle_cache_layout.py flat %t/cache/oracle-calls 3
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=1 %dync export %s:f --emit=graph \
# RUN:   > %t/warm.txt 2> %t/warm.err
# RUN: FileCheck %s --check-prefix=WARM < %t/warm.err
# RUN: diff %t/cold.txt %t/warm.txt
# An older build's 2 MB, a day old, and a limit of 1 MB: the export of g,
# which stores entries of its own, removes them and keeps the new ones.
# RUN: %python %S/Inputs/oracle_cache_layout.py older %t/cache/oracle-calls
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_MAX_MB=1 DYNC_ORACLE_CACHE_STATS=1 \
# RUN:   %dync export %s:g --emit=graph > %t/g.txt 2> %t/g.err
# RUN: FileCheck %s --check-prefix=STORED < %t/g.err
# RUN: %python %S/Inputs/oracle_cache_layout.py pruned %t/cache/oracle-calls 3
# The check of the layout fails on another one.
# RUN: not %python %S/Inputs/oracle_cache_layout.py flat %t/cache 0
import torch


def f(x, w):
    return torch.tanh(x @ w).t() * 2


def g(x, w):
    return torch.sin(x @ w).sum(0) + 1


def example_inputs():
    return (torch.randn(3, 8), torch.randn(8, 4))

# COLD: dync: oracle call cache (on): 0 hits, [[MISSES:[1-9][0-9]*]] misses, [[MISSES]] stored,
# WARM: dync: oracle call cache (on): {{[1-9][0-9]*}} hits, 0 misses, 0 stored,
# STORED: dync: oracle call cache (on): {{[0-9]+}} hits, {{[1-9][0-9]*}} misses, {{[1-9][0-9]*}} stored,
