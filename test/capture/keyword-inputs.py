# Example inputs with keywords: example_inputs() gives the positional
# arguments and example_kwargs() the keyword arguments, by parameter name
# (with --example NAME, NAME's `_inputs` becomes `_kwargs`: NAME_kwargs()).
# Keywords bind as CPython binds them: to parameters by name (keyword-only
# ones too), the rest into **kwargs, whose keys are guarded; parameters left
# out keep their defaults and are guarded; --dynamic names keyword arguments
# like positional ones.
# RUN: %dync export %s:Model.forward --emit=guards | FileCheck %s --check-prefix=GUARDS
# RUN: %dync export %s:Model.forward --emit=graph --dynamic 'attention_mask:0=b[2,8]' \
# RUN:   --dynamic 'input_ids:0=b[2,8]' | FileCheck %s --check-prefix=DYNAMIC
# RUN: %dync export %s:only_keywords --example only_keywords_inputs --emit=graph \
# RUN:   | FileCheck %s --check-prefix=ONLY
# RUN: %dync export %s:varargs --example varargs_inputs --emit=guards \
# RUN:   | FileCheck %s --check-prefix=VARARGS
# RUN: %dync export %s:varargs_flag --example varargs_flag_inputs --emit=graph \
# RUN:   | FileCheck %s --check-prefix=VARFLAG
# RUN: not %dync export %s:Model.forward --example not_dict_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=NOTDICT
# RUN: not %dync export %s:Model.forward --example unknown_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=UNKNOWN
# RUN: not %dync export %s:Model.forward --example twice_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=TWICE
# RUN: not %dync export %s:Model.forward --example missing_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=MISSING
# RUN: not %dync export %s:positional_only --example posonly_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=POSONLY
# RUN: not %dync export %s:Model.forward --example badkey_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=BADKEY
# RUN: %dync export %s:named_tuple --example named_tuple_inputs --emit=guards \
# RUN:   | FileCheck %s --check-prefix=NAMEDTUPLE
# RUN: not %dync export %s:named_tuple --example own_items_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=OWNITEMS
# RUN: %dync export %s:ordered_items --example ordered_inputs --emit=graph \
# RUN:   | FileCheck %s --check-prefix=ORDEREDDICT
# RUN: not %dync export %s:Model.forward --example dynamic_inputs --emit=graph \
# RUN:   --dynamic 'mask:0=b' 2>&1 | FileCheck %s --check-prefix=NODYN
import collections

import torch
from torch import nn


class Model(nn.Module):
    def forward(self, input_ids, attention_mask=None, *, scale, eps=1e-5, **kwargs):
        h = input_ids.float() * scale + eps
        if attention_mask is not None:
            h = h * attention_mask
        for name, value in kwargs.items():
            h = h + value
        return h


model = Model()


def example_inputs():
    return (torch.ones(4, 3, dtype=torch.long),)


def example_kwargs():
    return {"attention_mask": torch.ones(4, 3), "scale": 2.0, "extra": torch.ones(3)}


# GUARDS-LABEL: guards @Model.forward(self, input_ids, attention_mask, scale, eps, kwargs
# GUARDS-NEXT:    tensor L['input_ids'] : tensor<i64, [4, 3]>
# GUARDS-NEXT:    tensor L['attention_mask'] : tensor<f32, [4, 3]>
# GUARDS-NEXT:    tensor L['kwargs']['extra'] : tensor<f32, [3]>
# GUARDS:         equals L['scale'] : 2.0
# GUARDS:         type L['kwargs'] : builtins:dict
# GUARDS-NEXT:    keys L['kwargs'] : ["extra"]
# GUARDS-NEXT:    equals L['eps'] : 1e-05

# DYNAMIC:      graph @Model.forward(%input_ids: tensor<i64, [b, 3]> = L['input_ids'],
# DYNAMIC-NEXT:   %attention_mask: tensor<f32, [b, 3]> = L['attention_mask'],
# DYNAMIC-NEXT:   %kwargs_extra: tensor<f32, [3]> = L['kwargs']['extra'])
# DYNAMIC-NEXT:   symbols { b: [2, 8] }


def only_keywords(*, x, y=None):
    return x * 2 if y is None else x * y


def only_keywords_kwargs():
    return {"x": torch.ones(2)}


# ONLY: graph @only_keywords(%x: tensor<f32, [2]> = L['x'])
# ONLY:   return %0


def varargs(a, *rest):
    return a + sum(rest)


def varargs_inputs():
    return (torch.ones(2), torch.ones(2), torch.ones(2))


# VARARGS:      type L['rest'] : builtins:tuple
# VARARGS-NEXT: length L['rest'] : 2


# A keyword-only parameter after *args is given by keyword only, however
# many positional examples there are (DINOv2's `forward(*args,
# is_training=False, **kwargs)`).
def varargs_flag(*args, scale=False, **kwargs):
    return args[0] * 3 if scale else args[0]


def varargs_flag_inputs():
    return (torch.ones(2),)


def varargs_flag_kwargs():
    return {"scale": True}


# VARFLAG: graph @varargs_flag(%args_0: tensor<f32, [2]> = L['args'][0])
# VARFLAG-NEXT: aten::mul.Tensor


def not_dict_inputs():
    return example_inputs()


def not_dict_kwargs():
    return [("scale", 2.0)]


# NOTDICT: keyword-inputs.py: error: not_dict_kwargs() returned a list; it must return a dict of keyword arguments by parameter name, such as {"attention_mask": mask}


def unknown_inputs():
    return example_inputs()


def unknown_kwargs():
    return {"scale": 1.0, "self": 3}


# UNKNOWN: keyword-inputs.py: error: unknown_kwargs() gives 'self', which is Model.forward's 'self'


def twice_inputs():
    return example_inputs()


def twice_kwargs():
    return {"scale": 1.0, "input_ids": torch.ones(4, 3)}


# TWICE: keyword-inputs.py: error: twice_kwargs() gives 'input_ids', which twice_inputs() already gives as argument 0


def missing_inputs():
    return example_inputs()


# MISSING: keyword-inputs.py: error: Model.forward() needs the keyword-only argument 'scale', which the examples do not give: return it from missing_kwargs()


def positional_only(x, /, y):
    return x + y


def posonly_inputs():
    return ()


def posonly_kwargs():
    return {"x": torch.ones(2), "y": torch.ones(2)}


# POSONLY: keyword-inputs.py: error: posonly_kwargs() gives 'x', a positional-only parameter of positional_only; give it in posonly_inputs()


def badkey_inputs():
    return example_inputs()


def badkey_kwargs():
    return {1: 2.0}


# BADKEY: keyword-inputs.py: error: badkey_kwargs() returned a dict with the key 1; keyword arguments are named by str keys


def dynamic_inputs():
    return example_inputs()


def dynamic_kwargs():
    return {"scale": 1.0}


# NODYN: keyword-inputs.py: error: --dynamic 'mask:0=b' names 'mask', which is not an example argument of Model.forward


# A named tuple and an OrderedDict, whose items the guards read as a
# tuple's and a dict's, and a tuple subclass with an item method of its own,
# whose items they cannot read as the program does.
Pair = collections.namedtuple("Pair", "a b")


class Reversed(tuple):
    def __getitem__(self, i):
        return tuple.__getitem__(self, len(self) - 1 - i)


def named_tuple(p):
    return p[0] + p[1]


def named_tuple_inputs():
    return (Pair(torch.ones(2), torch.ones(2)),)


def ordered_items(p):
    return p["a"] * 2


def ordered_kwargs():
    return {"p": collections.OrderedDict(a=torch.ones(2))}


def own_items_inputs():
    return (Reversed((torch.ones(2), torch.zeros(2))),)


# NAMEDTUPLE: guards @named_tuple(p) {
# NAMEDTUPLE-NEXT: tensor L['p'][0] : tensor<f32, [2]>
# NAMEDTUPLE-NEXT: tensor L['p'][1] : tensor<f32, [2]>
# NAMEDTUPLE-NEXT: type L['p'] : "keyword-inputs":Pair
# NAMEDTUPLE-NEXT: length L['p'] : 2
# OWNITEMS: keyword-inputs.py: error: L['p'] is a keyword-inputs.Reversed holding tensors, whose class reads its items with methods of its own (__getitem__, __len__ or __iter__); guards cannot read its items as the program does, so such inputs are not supported yet: pass a plain tuple instead
# An OrderedDict's items are inputs by key, as a dict's are.
# ORDEREDDICT: graph @ordered_items(%p_a: tensor<f32, [2]> = L['p']['a'])
