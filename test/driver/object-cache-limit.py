# The object cache is kept under $DYNC_CACHE_MAX_MB megabytes (1024 unless
# set): after an export that compiled something, the least recently used
# entries are removed. A limit that is not a whole number is a warning and the
# default applies; the export succeeds either way.
# RUN: rm -rf %t && mkdir -p %t
# RUN: env DYNC_CACHE_DIR=%t/cache %dync -v export %s:f -o %t/kept.so 2>&1 \
# RUN:   | FileCheck %s --check-prefix=KEPT
# RUN: %python -c "import glob; assert len(glob.glob('%t/cache/objects/*.o')) == 2"
# A limit beyond what bytes can count (2^50 MB) keeps everything.
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_CACHE_MAX_MB=1125899906842624 %dync -v export %s:g -o %t/huge.so 2>&1 \
# RUN:   | FileCheck %s --check-prefix=KEPT
# RUN: %python -c "import glob; assert len(glob.glob('%t/cache/objects/*.o')) == 4"
# RUN: rm -rf %t/cache && env DYNC_CACHE_DIR=%t/cache %dync export %s:f -o %t/kept.so
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_CACHE_MAX_MB=0 %dync -v export %s:f -o %t/none.so --no-cache 2>&1 \
# RUN:   | FileCheck %s --check-prefix=OFF
# RUN: %python -c "import glob; assert len(glob.glob('%t/cache/objects/*.o')) == 2"
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_CACHE_MAX_MB=0 %dync -v export %s:g -o %t/pruned.so 2>&1 \
# RUN:   | FileCheck %s --check-prefix=PRUNED
# RUN: %python -c "import glob; assert glob.glob('%t/cache/objects/*') == []"
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_CACHE_MAX_MB=lots %dync export %s:f -o %t/warned.so 2>&1 \
# RUN:   | FileCheck %s --check-prefix=WARNED
# RUN: %dync inspect %t/pruned.so | FileCheck %s --check-prefix=INSPECT
# RUN: %dync inspect %t/warned.so | FileCheck %s --check-prefix=INSPECT-F
import torch


def f(x):
    return torch.tanh(x) * 2


def g(x):
    return torch.sigmoid(x) + 1


def example_inputs():
    return (torch.randn(3, 5),)

# KEPT: dync: objects: 2 compiled, 0 from the cache
# KEPT-NOT: removed

# With the cache off nothing is stored, and nothing is pruned.
# OFF: dync: objects: 2 compiled, 0 from the cache (cache off)
# OFF-NOT: removed

# g's two objects and f's two older ones.
# PRUNED: dync: objects: 2 compiled, 0 from the cache
# PRUNED-NEXT: dync: cache: removed 4 least recently used entries ({{[0-9.]+}} MB) to stay under $DYNC_CACHE_MAX_MB

# WARNED: warning: DYNC_CACHE_MAX_MB='lots' is not a whole number of megabytes; keeping the cache under 1024 MB

# INSPECT: entry g line
# INSPECT-F: entry f line
