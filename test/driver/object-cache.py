# Compiled objects are cached by content: a second export of an unchanged
# function compiles nothing; a damaged entry is ignored, recompiled and
# replaced; --no-cache neither reads nor writes the cache.
# RUN: rm -rf %t && mkdir -p %t
# RUN: env DYNC_CACHE_DIR=%t/cache %dync -v export %s:f -o %t/first.so 2>&1 \
# RUN:   | FileCheck %s --check-prefix=FIRST
# RUN: env DYNC_CACHE_DIR=%t/cache %dync -v export %s:f -o %t/second.so -j 1 --time-report 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=SECOND,TIME
# RUN: %python -c "import glob; \
# RUN:   paths = sorted(glob.glob('%t/cache/objects/*.o')); assert len(paths) == 2, paths; \
# RUN:   f = open(paths[0], 'r+b'); f.seek(100); f.write(b'damaged')"
# RUN: env DYNC_CACHE_DIR=%t/cache %dync -v export %s:f -o %t/third.so 2>&1 \
# RUN:   | FileCheck %s --check-prefix=DAMAGED
# RUN: env DYNC_CACHE_DIR=%t/cache %dync -v export %s:f -o %t/fourth.so 2>&1 \
# RUN:   | FileCheck %s --check-prefix=SECOND
# RUN: env DYNC_CACHE_DIR=%t/cache %dync -v export %s:f -o %t/fifth.so --no-cache 2>&1 \
# RUN:   | FileCheck %s --check-prefix=OFF
# RUN: %dync inspect %t/fourth.so | FileCheck %s --check-prefix=INSPECT
import torch


def f(x):
    return torch.tanh(x) * 2


def example_inputs():
    return (torch.randn(3, 5),)

# Two objects: the main module, and the kernel tanh and mul are fused into.
# FIRST: dync: objects: 2 compiled, 0 from the cache ({{.*}}cache)

# SECOND: dync: objects: 0 compiled, 2 from the cache ({{.*}}cache)
# TIME: time report
# TIME: codegen:
# TIME: compile:
# TIME: link:

# DAMAGED: dync: objects: 1 compiled, 1 from the cache
# DAMAGED-NEXT: dync: cache: 1 damaged entry ignored and replaced

# OFF: dync: objects: 2 compiled, 0 from the cache (cache off)

# INSPECT: entry f line
