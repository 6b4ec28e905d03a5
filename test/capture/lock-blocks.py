# A 'with' block on a threading lock (libraries take one around work done
# once per process, such as installing hooks on a model's first call) runs
# as eager runs it in one thread: the block's work is captured and the lock
# leaves nothing in the graph. A Lock and an RLock (re-entered, as eager
# may), and an exception leaving the block, which the lock does not swallow
# and leaves free. A lock held while capturing (eager would wait for it) is
# refused at the program's line.
# RUN: %dync export %s:locked --emit=graph | FileCheck %s
# RUN: not %dync export %s:held --emit=graph 2>&1 | FileCheck %s --check-prefix=HELD
import threading

import torch

LOCK = threading.Lock()
RLOCK = threading.RLock()
TAKEN = threading.Lock()
TAKEN.acquire()


def locked(x):
    with LOCK:
        x = x + 1
    with RLOCK:
        with RLOCK:
            x = x * 2
    try:
        with LOCK:
            raise ValueError("inside")
    except ValueError:
        x = x - 3
    # Free again: the exception left the block.
    with LOCK:
        x = x / 4
    return x

# CHECK-LABEL: graph @locked
# CHECK-NEXT: aten::add.Tensor(%x, 1)
# CHECK-NEXT: aten::mul.Tensor(%0, 2)
# CHECK-NEXT: aten::sub.Tensor(%1, 3)
# CHECK-NEXT: aten::div.Tensor(%2, 4)
# CHECK-NEXT: return %3


def held(x):
    with TAKEN:
        x = x + 1
    return x

# HELD: lock-blocks.py:[[@LINE-4]]: error: 'with' on {{.*}}: the lock is held while capturing (eager would wait for it, or never return if this thread holds it); capture enters a lock block only when the lock is free
# HELD-NEXT: {{^}}    with TAKEN:{{$}}
# HELD-NOT: ^


def example_inputs():
    return (torch.ones(3),)
