# A call made after the graph may be passed an object that lives in a module
# under a stable name: a warning's category (`warnings.warn(msg,
# FutureWarning)`, typing_extensions' @deprecated wrapper of
# torch._check_is_size), a function, an enum member, a module. The rewritten
# code imports it again by that name (`named module:qualname`). A warning
# made in a function capture inlined has its stacklevel counted from the
# exported function's frame, which makes the call. An object whose name
# does not lead back to it (a class made inside a function) is refused,
# naming the call.
# RUN: %dync export %s:category %s:category_keyword %s:deprecated_wrapper %s:helper_warns %s:named_values --emit=graph | FileCheck %s
# RUN: %dync export %s:category --emit=bytecode | FileCheck %s --check-prefix=REWRITE
# RUN: not %dync export %s:local_class --emit=graph 2>&1 | FileCheck %s --check-prefix=REFUSED
import enum
import math
import os.path
import warnings

import torch


class Mode(enum.Enum):
    FAST = 1
    SLOW = 2


def category(x):
    warnings.warn("old api", FutureWarning)
    return x + 1

# CHECK-LABEL: graph @category(
# CHECK:       after call M['warnings'].warn line 27 ("old api", named builtins:FutureWarning) {}
# CHECK-NEXT:  }

# REWRITE: IMPORT_NAME {{.*}}builtins
# REWRITE-NEXT: LOAD_ATTR {{.*}}FutureWarning


def category_keyword(x):
    warnings.warn("old api", category=DeprecationWarning, stacklevel=2)
    return x + 1

# CHECK-LABEL: graph @category_keyword(
# CHECK:       after call M['warnings'].warn line 39 ("old api",) {"category": named builtins:DeprecationWarning, "stacklevel": 2}


def deprecated_wrapper(x):
    torch._check_is_size(x.shape[0])
    return x + 1

# The wrapper warns with stacklevel 2, one call below the exported function:
# its line, so 1 from there.
# CHECK-LABEL: graph @deprecated_wrapper(
# CHECK:       after call M['warnings'].warn line 47 ("_check_is_size will be removed {{.*}}",) {"category": named builtins:FutureWarning, "stacklevel": 1}


def warn_below(x, level):
    warnings.warn("from a helper", UserWarning, level)


def helper_warns(x):
    warn_below(x, 1)
    warn_below(x, 3)
    return x * 2

# A level naming the helper's frame names the exported function's line; one
# naming the exported function's caller keeps naming it.
# CHECK-LABEL: graph @helper_warns(
# CHECK:       after call M['warnings'].warn line 61 ("from a helper", named builtins:UserWarning, 1) {}
# CHECK-NEXT:  after call M['warnings'].warn line 62 ("from a helper", named builtins:UserWarning, 2) {}


def named_values(x):
    print("values", Mode.FAST, math.floor, os.path, torch.nn.functional.relu)
    return x - 1

# CHECK-LABEL: graph @named_values(
# CHECK:       after call M['builtins'].print line 73 ("values", named "world-calls-named":Mode.FAST, named math:floor, named posixpath, named torch.nn.functional:relu) {}


def local_class(x):
    class Local(UserWarning):
        pass

    warnings.warn("local", Local)
    return x + 1

# REFUSED: the call of M['warnings'].warn at {{.*}}world-calls-named.py:{{[0-9]+}}, made after the graph, is passed a value the rewritten code cannot rebuild: the class world-calls-named.local_class.<locals>.Local has no name the rewritten code can import it by (a lambda, or made inside a function); define it at module level


def example_inputs():
    return (torch.randn(4, 3),)


def example_kwargs():
    return {}
