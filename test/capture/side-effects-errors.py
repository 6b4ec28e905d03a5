# Side effects the rewritten code cannot replay stop capture with the object
# and the reason.
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:Holder.forward %s:Holder.submodule %s:tensor_attribute \
# RUN:   %s:custom_setattr %s:leaves_function %s:deletes %s:set_of_caller \
# RUN:   --example set_of_caller=set_inputs --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=PARAM,SUBMODULE,TENSOR,SETATTR,FUNCTION,DELETE,SET
import torch
from torch import nn


class Holder(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)

    def forward(self, x):
        self.lin.weight = None
        return x

    def submodule(self, x):
        self.lin = nn.Identity()
        return x

# PARAM: side-effects-errors.py:[[@LINE-7]]:9: error: assigning attribute 'weight' of L['self']._modules['lin'] (it is in the module's _parameters, which assignment would change; a side effect outside the graph)
# SUBMODULE: side-effects-errors.py:[[@LINE-4]]:9: error: assigning attribute 'lin' of L['self'] (it is in the module's _modules, which assignment would change; a side effect outside the graph)


def tensor_attribute(x):
    x.tag = 1
    return x

# TENSOR: side-effects-errors.py:[[@LINE-3]]:5: error: assigning attribute 'tag' of L['x'] (a side effect outside the graph)


class Logged:
    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)


logged = Logged()


def custom_setattr(x):
    logged.count = 1
    return x

# SETATTR: side-effects-errors.py:[[@LINE-3]]:5: error: assigning attribute 'count' of G['logged'] (its class defines __setattr__; a side effect outside the graph)


class Config:
    pass


config = Config()


def leaves_function(x):
    config.hook = torch.relu
    return x

# FUNCTION: error: the function leaves G['config'].hook set to a value the rewritten code cannot rebuild after the graph (changed at {{.*}}side-effects-errors.py:[[@LINE-3]]): the function {{.*}}relu is not what its module and qualified name lead to now (they lead nowhere), so the rewritten code cannot import it by that name


def deletes(x):
    del config.hook
    return x

# DELETE: side-effects-errors.py:[[@LINE-3]]:9: error: unsupported opcode DELETE_ATTR (deleting an attribute (a side effect outside the graph))


def set_of_caller(x, s):
    s.add(1)
    return x

# SET: side-effects-errors.py:[[@LINE-3]]:5: error: calling add() on L['s'] (only exact lists and dicts of the caller's are changed after the graph, not a set; a side effect outside the graph)


def example_inputs():
    return (torch.ones(2),)


def set_inputs():
    return (torch.ones(2), {0})
