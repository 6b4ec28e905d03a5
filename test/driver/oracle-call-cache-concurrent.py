# Exports sharing one call cache at once: each writes its own pack, and
# with more than eight packs there, each merges what it finds while the
# others write and merge too. No entry is lost and none is read half
# written: a later export of each function replays every call, and the
# graphs are the same.
# RUN: rm -rf %t && mkdir -p %t
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on %dync export %s:f --emit=graph > %t/f.txt
# RUN: %python %S/Inputs/oracle_cache_layout.py copies %t/cache/oracle-calls 8
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=1 \
# RUN:   %python %S/Inputs/concurrent_exports.py -- "%dync export %s:g --emit=graph" \
# RUN:   "%dync export %s:h --emit=graph" "%dync export %s:f --emit=graph" > %t/at-once.err
# RUN: FileCheck %s --check-prefix=AT-ONCE < %t/at-once.err
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=1 \
# RUN:   %python %S/Inputs/concurrent_exports.py -- "%dync export %s:g --emit=graph" \
# RUN:   "%dync export %s:h --emit=graph" "%dync export %s:f --emit=graph" > %t/warm.err
# RUN: FileCheck %s --check-prefix=WARM < %t/warm.err
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on %dync export %s:f --emit=graph > %t/f-warm.txt
# RUN: diff %t/f.txt %t/f-warm.txt
# No temporary file is left.
# RUN: find %t/cache/oracle-calls -name '.tmp-*' > %t/left.txt
# RUN: not grep . %t/left.txt
import torch


def f(x, w):
    return torch.tanh(x @ w).t() * 2


def g(x, w):
    return torch.sin(x @ w).sum(0) + 1


def h(x, w):
    return torch.cos(x @ w).mean(1) - 3


def example_inputs():
    return (torch.randn(3, 8), torch.randn(8, 4))

# AT-ONCE: dync: oracle call cache (on): {{[0-9]+}} hits, {{[1-9][0-9]*}} misses, {{[1-9][0-9]*}} stored,
# AT-ONCE: dync: oracle call cache (on): {{[0-9]+}} hits, {{[1-9][0-9]*}} misses, {{[1-9][0-9]*}} stored,
# AT-ONCE: dync: oracle call cache (on): {{[1-9][0-9]*}} hits, 0 misses, 0 stored,
# WARM: dync: oracle call cache (on): {{[1-9][0-9]*}} hits, 0 misses, 0 stored,
# WARM: dync: oracle call cache (on): {{[1-9][0-9]*}} hits, 0 misses, 0 stored,
# WARM: dync: oracle call cache (on): {{[1-9][0-9]*}} hits, 0 misses, 0 stored,
