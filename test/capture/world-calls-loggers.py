# `logging.getLogger(name)` inside the function, with a constant name, is the
# process's one logger of that name: capture reads it where logging keeps it
# (the manager's table by name, logging.root for the root logger), guarded
# to hold a logger there, and the calls on it are made after the graph.
# Changing logging's state inside the function takes logging's lock, which
# is refused in plain words at the user's line.
# RUN: %dync export %s:by_name %s:module_name %s:root --emit=graph | FileCheck %s
# RUN: %dync export %s:by_name --emit=guards | FileCheck %s --check-prefix=GUARDS
# RUN: not %dync export %s:sets_level --emit=graph 2>&1 | FileCheck %s --check-prefix=REFUSED
import logging

import torch


def by_name(x):
    logging.getLogger("world_loggers").info("rows %d", x.shape[0])
    return x + 1

# CHECK-LABEL: graph @by_name(
# CHECK:       after call M['logging'].Logger.manager.loggerDict['world_loggers'] method info line 16 ("rows %d", 4) {}


def module_name(x):
    logging.getLogger(__name__).warning("sum %s", x.sum())
    return x * 2

# CHECK-LABEL: graph @module_name(
# CHECK:       after call M['logging'].Logger.manager.loggerDict['world-calls-loggers'] method warning line 24 ("sum %s", %{{[0-9]+}}) {}


def root(x):
    logging.getLogger().error("root sees %d", x.shape[1])
    return x - 1

# CHECK-LABEL: graph @root(
# CHECK:       after call M['logging'].root method error line 32 ("root sees %d", 3) {}

# GUARDS: type M['logging'].Logger.manager.loggerDict['world_loggers'] : logging:Logger


def sets_level(x):
    logging.getLogger("world_loggers").setLevel(logging.INFO)
    return x + 1

# REFUSED: world-calls-loggers.py:42:5: error: calling {{.*}}acquire{{.*}} takes a threading lock outside a 'with' block, which capture does not follow (logging takes one to change its loggers: setLevel, addHandler, basicConfig); make that change outside the exported function


def example_inputs():
    return (torch.randn(4, 3),)
