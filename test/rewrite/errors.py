# What cannot be rewritten is an error naming the entry, never a silently
# wrong function. A generator function is refused by capture at its result
# (the rewriter refuses generator code objects too: RewrittenCodeTest); a
# dtype is not a value a graph returns; --emit=code writes one code object.
# RUN: not %dync export %s:generator --emit=bytecode 2>&1 | FileCheck %s --check-prefix=GEN
# RUN: not %dync export %s:dtype --emit=bytecode 2>&1 | FileCheck %s --check-prefix=DTYPE
# RUN: not %dync export %s:generator %s:dtype --emit=code 2>&1 | FileCheck %s --check-prefix=CODE
import torch


def example_inputs():
    return [torch.randn(4, 3)]


def generator(x):
    yield x.relu()


def dtype(x):
    return x.relu(), x.dtype


# GEN: errors.py: error: generator: the function returns a iterator value, which a graph cannot return
# DTYPE: errors.py: error: dtype: the function returns a constant value, which a graph cannot return
# CODE: dync: error: --emit=code writes one code object; export one entry at a time
