# A call whose arguments do not bind to the inlined function raises
# TypeError, as CPython's does, so a handler around it runs (SpeechBrain's
# layer loop retries without `lengths=`); uncaught, it names the call. A
# program's own call of nn.Module.__getattr__ reads the module's tables as
# an attribute read does, with their sources; a name in none of them
# raises AttributeError, with the tables' keys pinned.
# RUN: %dync export %S/../e2e/Inputs/binding_and_getattr.py:RetryWithout.forward \
# RUN:   %S/../e2e/Inputs/binding_and_getattr.py:missing_argument \
# RUN:   %S/../e2e/Inputs/binding_and_getattr.py:Heads.forward --emit=graph | FileCheck %s
# RUN: %dync export %S/../e2e/Inputs/binding_and_getattr.py:Heads.forward --emit=guards \
# RUN:   | FileCheck %s --check-prefix=GUARDS
# RUN: not %dync export %s:wrong_keyword --emit=graph 2>&1 | FileCheck %s --check-prefix=UNCAUGHT
import torch

# Plain layers were retried without `lengths`, the masked one took it.
# CHECK-LABEL: graph @RetryWithout.forward(
# CHECK: aten::relu
# CHECK: aten::lt.Tensor
# CHECK: aten::relu

# CPython's words: len("needs_two() missing 1 required positional argument: 'b'") is 55.
# CHECK-LABEL: graph @missing_argument(
# CHECK: aten::add.Tensor(%x, 55)

# Both heads by name, the buffer through __getattr__, the fallback's sum.
# CHECK-LABEL: graph @Heads.forward(
# CHECK: L['self']._buffers['offset']
# CHECK: L['self']._modules['hm']._parameters['weight']
# CHECK: aten::sum.dim_IntList

# GUARDS-LABEL: guards @Heads.forward(
# GUARDS-DAG: keys L['self']._parameters : []
# GUARDS-DAG: keys L['self']._buffers : ["offset"]
# GUARDS-DAG: keys L['self']._modules : ["hm", "wh"]


def scale(x, factor):
    return x * factor


def wrong_keyword(x):
    # UNCAUGHT: binding-and-getattr.py:[[@LINE+1]]:12: error: TypeError: scale() got an unexpected keyword argument 'by'
    return scale(x, by=2)


def example_inputs():
    return (torch.ones(2),)
