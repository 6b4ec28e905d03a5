# A function marked with torch._dynamo.assume_constant_result is called for
# real on constant arguments and its result is a constant of the graph, as
# torch.compile takes it: here an install probe that reads the installed
# files through importlib and `re`, under functools.lru_cache. Its code is
# fingerprinted like any function capture ran. A marked function returning
# an object a graph cannot hold is refused naming it; on an argument known
# only symbolically (a tensor's size under --dynamic) it is inlined.
# RUN: %dync export %s:probe --emit=graph | FileCheck %s
# RUN: %dync export %s:symbolic --emit=graph --dynamic 'x:0=n' | FileCheck %s --check-prefix=SYM
# RUN: not %dync export %s:returns_object --emit=graph 2>&1 | FileCheck %s --check-prefix=OBJECT
import functools
import importlib.metadata
import importlib.util
import re

import torch
from torch._dynamo import assume_constant_result


def example_inputs():
    return (torch.randn(4, 3),)


@functools.lru_cache
@assume_constant_result
def installed_major(package):
    if importlib.util.find_spec(package) is None:
        return -1
    return int(re.match(r"(\d+)\.", importlib.metadata.version(package)).group(1))


@assume_constant_result
def digits(text):
    return tuple(int(d) for d in re.findall(r"\d", text))


def probe(x):
    if installed_major("torch") >= 2 and installed_major("no_such_package_here") == -1:
        x = x * digits("a7b")[0]
    return x + installed_major("torch")


# CHECK-LABEL: graph @probe(
# CHECK:         aten::mul.Tensor(%x, 7)
# CHECK:         aten::add.Tensor({{%[0-9]+}}, 2)


@assume_constant_result
def halve(n):
    return n // 2


def symbolic(x):
    return x[: halve(x.shape[0])]


# SYM-LABEL: graph @symbolic(
# SYM:         aten::slice.Tensor(%x, 0, 0, n floordiv 2)


@assume_constant_result
def settings():
    return object()


def returns_object(x):
    return x if settings() else -x


# OBJECT: error: settings() is marked as giving a constant result (torch._dynamo.assume_constant_result), but returned {{.*}}object{{.*}}, which a graph cannot hold as a constant
