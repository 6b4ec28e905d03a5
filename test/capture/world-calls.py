# print, warnings.warn and logging calls inside the function are calls into
# the world that feed nothing back: capture records each with the values the
# program passed, and the rewritten code makes it after the graph, on the
# real objects, at the line that made it (`after call ...`). Tensors are
# passed as the graph computes them; lists as they were at the call.
# RUN: %dync export %s:prints %s:warns %s:Logged.forward %s:root_logging %s:adapter --emit=graph | FileCheck %s
# RUN: %dync export %s:prints --emit=bytecode | FileCheck %s --check-prefix=REWRITE
# RUN: not %dync export %s:written_after %s:exc_info %s:changes_logger %s:in_cond --keep-going --emit=graph 2>&1 | FileCheck %s --check-prefix=REFUSED
import logging
import warnings

import torch
from torch import nn

logger = logging.getLogger("world_calls")


def prints(x):
    y = x.relu()
    seen = [1]
    print("relu", y, x.shape[0], seen, sep=" | ")
    seen.append(2)
    return y * 2

# CHECK-LABEL: graph @prints(
# CHECK:       return %[[Y:[0-9]+]]
# CHECK-NEXT:  after call M['builtins'].print line 21 ("relu", %{{[0-9]+}}, 4, [1]) {"sep": " | "}
# CHECK-NEXT:  }

# REWRITE: CALL_FUNCTION_EX


def warns(x):
    if x.shape[0] > 2:
        warnings.warn("large input", stacklevel=2)
    return x + 1

# CHECK-LABEL: graph @warns(
# CHECK:       after call M['warnings'].warn line 35 ("large input",) {"stacklevel": 2}


class Logged(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.log = logging.getLogger("world_calls.module")

    def forward(self, x):
        y = self.lin(x)
        logger.info("output %s of %d rows", y, x.shape[0])
        self.helper(y)
        logger.log(logging.WARNING, "done")
        return y

    def helper(self, y):
        # Made in an inlined method: the call stands for forward's line.
        self.log.warning("helper saw %s", y.sum())

# CHECK-LABEL: graph @Logged.forward(
# CHECK:       after call G['logger'] method info line 50 ("output %s of %d rows", %{{[0-9]+}}, 4) {}
# CHECK-NEXT:  after call L['self'].log method warning line 51 ("helper saw %s", %{{[0-9]+}}) {}
# CHECK-NEXT:  after call G['logger'] method log line 52 (30, "done") {}


def root_logging(x):
    logging.debug("root %s", 1)
    return x - 1

# CHECK-LABEL: graph @root_logging(
# CHECK:       after call M['logging'].debug line 66 ("root %s", 1) {}

ADAPTER = logging.LoggerAdapter(logger, {"request": 7})


def adapter(x):
    ADAPTER.error("adapted")
    return x * 3

# CHECK-LABEL: graph @adapter(
# CHECK:       after call G['ADAPTER'] method error line 76 ("adapted",) {}


def written_after(x):
    y = x * 2
    print(y)
    y.add_(1)
    return y

# REFUSED: error: the call of M['builtins'].print at {{.*}}world-calls.py:85 is passed a tensor the function then writes in place


def exc_info(x):
    logger.error("failed", exc_info=True)
    return x

# REFUSED: world-calls.py:[[@LINE-3]]:5: error: G['logger'].error(..., exc_info=...) is not supported


def changes_logger(x):
    logging.getLogger("world_calls.inner").setLevel(logging.DEBUG)
    return x

# Changing a logger takes logging's lock: refused in plain words at the line
# (a logger found by name and only logged to is made after the graph,
# world-calls-loggers.py).
# REFUSED: world-calls.py:[[@LINE-6]]:5: error: calling {{.*}} takes a threading lock outside a 'with' block, which capture does not follow


def in_cond(x):
    def loud(a):
        print("true side")
        return a + 1

    return torch.cond(x.sum() > 0, loud, lambda a: a - 1, (x,))

# REFUSED: error: torch.cond's true branch calls M['builtins'].print at {{.*}}world-calls.py:[[@LINE-5]]


def example_inputs():
    return (torch.randn(4, 4),)
