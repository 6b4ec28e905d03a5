# A 'with' block on a threading lock (libraries take one around work done
# once per process, such as installing hooks on a model's first call) is
# refused, naming the lock's type, at the program's line.
# RUN: not %dync export %s:locked --emit=graph 2>&1 | FileCheck %s
import threading

import torch

LOCK = threading.Lock()


def locked(x):
    with LOCK:
        x = x + 1
    return x

# CHECK: lock-blocks.py:[[@LINE-4]]: error: 'with' on object of type '_thread.lock' is not supported; only torch.no_grad(), torch.enable_grad(), torch.set_grad_enabled() and torch.inference_mode() blocks are, and context managers whose __enter__ and __exit__ are written in Python


def example_inputs():
    return (torch.ones(3),)
