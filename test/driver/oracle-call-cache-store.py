# The call cache's store: a process writes the entries it stored as one
# pack file directly under oracle-calls/, renamed into place whole, with no
# folder made for it and no temporary file left; a process that stored
# nothing writes nothing. Files older builds wrote (a folder per digest
# prefix, a file per entry) count toward DYNC_ORACLE_CACHE_MAX_MB and are
# removed as the oldest. More than eight packs are merged into one, which
# holds every entry.
# RUN: rm -rf %t && mkdir -p %t
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=1 %dync export %s:f --emit=graph \
# RUN:   > %t/cold.txt 2> %t/cold.err
# RUN: FileCheck %s --check-prefix=COLD < %t/cold.err
# RUN: %python %S/Inputs/oracle_cache_layout.py packs %t/cache/oracle-calls 1
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=1 %dync export %s:f --emit=graph \
# RUN:   > %t/warm.txt 2> %t/warm.err
# RUN: FileCheck %s --check-prefix=WARM < %t/warm.err
# RUN: diff %t/cold.txt %t/warm.txt
# RUN: %python %S/Inputs/oracle_cache_layout.py packs %t/cache/oracle-calls 1
# Older builds' 2 MB, a day old, and a limit of 1 MB: the export of g,
# which stores entries of its own, removes them and keeps both packs.
# RUN: %python %S/Inputs/oracle_cache_layout.py older %t/cache/oracle-calls
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_MAX_MB=1 DYNC_ORACLE_CACHE_STATS=1 \
# RUN:   %dync export %s:g --emit=graph > %t/g.txt 2> %t/g.err
# RUN: FileCheck %s --check-prefix=STORED < %t/g.err
# RUN: %python %S/Inputs/oracle_cache_layout.py pruned %t/cache/oracle-calls 2
# Eight more packs (copies of those two): the next process that writes one
# merges all eleven, and f's, g's and h's exports then replay every call.
# RUN: %python %S/Inputs/oracle_cache_layout.py copies %t/cache/oracle-calls 8
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=1 %dync export %s:h --emit=graph \
# RUN:   > %t/h.txt 2> %t/h.err
# RUN: FileCheck %s --check-prefix=STORED < %t/h.err
# RUN: %python %S/Inputs/oracle_cache_layout.py packs %t/cache/oracle-calls 1
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=1 %dync export %s:f --emit=graph \
# RUN:   > %t/f2.txt 2> %t/f2.err
# RUN: FileCheck %s --check-prefix=WARM < %t/f2.err
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=1 %dync export %s:g --emit=graph \
# RUN:   > %t/g2.txt 2> %t/g2.err
# RUN: FileCheck %s --check-prefix=WARM < %t/g2.err
# RUN: diff %t/g.txt %t/g2.txt
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=1 %dync export %s:h --emit=graph \
# RUN:   > %t/h2.txt 2> %t/h2.err
# RUN: FileCheck %s --check-prefix=WARM < %t/h2.err
# RUN: %python %S/Inputs/oracle_cache_layout.py packs %t/cache/oracle-calls 1
# The check of the layout fails on another one.
# RUN: not %python %S/Inputs/oracle_cache_layout.py packs %t/cache 1
import torch


def f(x, w):
    return torch.tanh(x @ w).t() * 2


def g(x, w):
    return torch.sin(x @ w).sum(0) + 1


def h(x, w):
    return torch.cos(x @ w).mean(1) - 3


def example_inputs():
    return (torch.randn(3, 8), torch.randn(8, 4))

# COLD: dync: oracle call cache (on): 0 hits, [[MISSES:[1-9][0-9]*]] misses, [[MISSES]] stored,
# WARM: dync: oracle call cache (on): {{[1-9][0-9]*}} hits, 0 misses, 0 stored,
# STORED: dync: oracle call cache (on): {{[0-9]+}} hits, {{[1-9][0-9]*}} misses, {{[1-9][0-9]*}} stored,
