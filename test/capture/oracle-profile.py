# DYNC_ORACLE_PROFILE=FILE writes, when dync exits, the oracle's entry points
# with their calls, wall-clock and CPU times (Session.call by the callable it
# ran), then each call in the order it ran; the graph is the same as without.
# RUN: env DYNC_ORACLE_PROFILE=%t.profile %dync export %s:scaled --emit=graph > %t.graph
# RUN: FileCheck %s --check-prefix=PROFILE < %t.profile
# RUN: %dync export %s:scaled --emit=graph | diff - %t.graph
import torch


def scaled(x):
    return torch.relu(x) * 2


def example_inputs():
    return (torch.ones(3),)

# PROFILE:      oracle entry points: {{[0-9.]+}} s in all, {{[0-9.]+}} s of the thread's CPU time
# PROFILE-DAG:  Session.__init__ 1 calls
# PROFILE-DAG:  _Calls.call torch._VariableFunctionsClass.relu 1 calls
# PROFILE-DAG:  _Calls.call _operator.mul 1 calls
# PROFILE:      in order (ms, CPU ms):
# PROFILE-NEXT: {{[0-9.]+ +[0-9.]+}} Session.__init__
# PROFILE:      {{[0-9.]+ +[0-9.]+}} _Calls.call torch._VariableFunctionsClass.relu
# PROFILE-NEXT: {{[0-9.]+ +[0-9.]+}} _Calls.call _operator.mul
