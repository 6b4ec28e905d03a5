# What cannot be rewritten is an error naming the entry, never a silently
# wrong function. A generator function is refused by capture at its result
# (the rewriter refuses generator code objects too: RewrittenCodeTest); a
# complex number is not a value a graph returns; --emit=code writes one code
# object.
# RUN: not %dync export %s:generator --emit=bytecode 2>&1 | FileCheck %s --check-prefix=GEN
# RUN: not %dync export %s:complex_constant --emit=bytecode 2>&1 | FileCheck %s --check-prefix=COMPLEX
# RUN: not %dync export %s:generator %s:complex_constant --emit=code 2>&1 | FileCheck %s --check-prefix=CODE
import torch


def example_inputs():
    return [torch.randn(4, 3)]


def generator(x):
    yield x.relu()


def complex_constant(x):
    return x.relu(), 1j


# GEN: errors.py: error: generator: the function returns a iterator value, which a graph cannot return
# COMPLEX: errors.py: error: complex_constant: the function returns a constant value, which a graph cannot return
# CODE: dync: error: --emit=code writes one code object; export one entry at a time
