# A call that changes an argument is never stored: its outcome is more than
# a function of the key, and a replay would leave the change undone. The
# cache reads what a fresh run must leave unchanged before the call and
# compares it after: an in-place write bumps the argument's version
# (add_), an in-place view changes its strides (t_). Both run afresh in a
# warm export too, and the graph is the same either way.
# RUN: rm -rf %t && mkdir -p %t
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=2 %dync export %s:f --emit=graph \
# RUN:   > %t/cold.txt 2> %t/cold.err
# RUN: FileCheck %s --check-prefix=COLD < %t/cold.err
# RUN: env DYNC_CACHE_DIR=%t/cache DYNC_ORACLE_CACHE=on DYNC_ORACLE_CACHE_STATS=2 %dync export %s:f --emit=graph \
# RUN:   > %t/warm.txt 2> %t/warm.err
# RUN: FileCheck %s --check-prefix=WARM < %t/warm.err
# RUN: diff %t/cold.txt %t/warm.txt
# RUN: FileCheck %s --check-prefix=GRAPH < %t/warm.txt
import torch


def f(x):
    y = x * 2
    y.add_(1)
    z = y * 3
    z.t_()
    return y, z


def example_inputs():
    return (torch.randn(3, 4),)


# COLD: oracle call cache (on): 0 hits, 4 misses, 2 stored, 2 uncacheable
# COLD-DAG: uncached: 1 'attr torch._C:TensorBase.add_': arguments changed
# COLD-DAG: uncached: 1 'attr torch._C:TensorBase.t_': arguments changed

# WARM: oracle call cache (on): 2 hits, 2 misses, 0 stored, 2 uncacheable
# WARM-DAG: uncached: 1 'attr torch._C:TensorBase.add_': arguments changed
# WARM-DAG: uncached: 1 'attr torch._C:TensorBase.t_': arguments changed

# GRAPH: aten::add_.Tensor
# GRAPH: aten::t_.default({{.*}}) : tensor<f32, [4, 3], [1, 4]>
