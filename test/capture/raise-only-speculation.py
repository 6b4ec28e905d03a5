# The sides of a branch that only raises run through capture's own opcode
# handlers on a checkpoint that is rolled back: a side may store locals,
# mutate a list and read globals before raising, and none of it is left
# behind on the side capture follows.
# RUN: %dync export %s:stores %s:global_message --emit=graph | FileCheck %s
# RUN: %dync export %s:global_message --emit=guards | FileCheck %s --check-prefix=GUARDS
# RUN: %dync export %s:refused --emit=graph | FileCheck %s --check-prefix=REFUSED
import torch

MESSAGE = "x has a positive sum"


# The raising side appends to a list the other side reads: rolled back,
# the list still has two items there (eager: x + 2, or "too many: 3").
def stores(x):
    items = [1, 2]
    if x.sum() > 0:
        items.append(3)
        message = f"too many: {len(items)}"
        raise ValueError(message)
    return x + len(items)


# The message is a global of the program: the guard reading it stays, so a
# changed message is a guard failure rather than a stale check.
def global_message(x):
    if x.sum() > 0:
        raise ValueError(MESSAGE)
    return x - 1


# An operation on a tensor cannot be taken back: the side is refused before
# it runs, and the check falls back to the original code, which raises.
def refused(x):
    if x.sum() > 0:
        raise ValueError(f"sum is {x.sum()}")
    return x


def example_inputs():
    return (torch.rand(4) - 2.0,)

# CHECK-LABEL: graph @stores(
# CHECK:      %[[SUM:[0-9]+]] = aten::sum.dim_IntList(%x, [])
# CHECK-NEXT: %[[GT:[0-9]+]] = aten::gt.Scalar(%[[SUM]], 0)
# CHECK-NEXT: %[[OK:[0-9]+]] = aten::logical_not.default(%[[GT]])
# CHECK-NEXT: aten::_assert_async.msg(%[[OK]], "ValueError: too many: 3") : none
# CHECK-NEXT: %[[ADD:[0-9]+]] = aten::add.Tensor(%x, 2)
# CHECK-NEXT: return %[[ADD]]

# CHECK-LABEL: graph @global_message(
# CHECK:      aten::_assert_async.msg(%{{[0-9]+}}, "ValueError: x has a positive sum") : none
# CHECK-NEXT: aten::sub.Tensor(%x, 1)

# GUARDS-LABEL: guards @global_message(x)
# GUARDS: equals G['MESSAGE'] : "x has a positive sum"

# REFUSED: aten::_assert_async.msg(%{{[0-9]+}}, "fall back: the program raises at {{.*}}raise-only-speculation.py:36, with an exception capture cannot make again")
