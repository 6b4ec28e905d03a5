# Module hooks registered inside the captured function (OpenAI Whisper's kv
# cache filled by forward hooks installed in its decoding loop) run as part
# of the graph on the module calls after the registration, in eager's order
# (`prepend=True` first), with keywords for a `with_kwargs=True` pre-hook,
# and stop running once `handle.remove()` ran (or the handle's `with` block
# ended). No guard reads a handle id: the guards on the hook tables are
# about the call's entry, when the tables were empty.
# RUN: %dync export %s:Cached.forward --emit=graph | FileCheck %s --check-prefix=CACHED
# RUN: %dync export %s:Cached.forward --emit=guards | FileCheck %s --check-prefix=GUARDS
# RUN: %dync export %s:Ordered.forward --emit=graph | FileCheck %s --check-prefix=ORDERED
# RUN: %dync export %s:PreKwargs.forward --emit=graph | FileCheck %s --check-prefix=PREKW
#
# What capture cannot replay stops it, naming the registration: a hook
# still installed at the return, a handle returned or kept on the module, a
# handle made before the call removed, the hook table read while capture's
# own holds a hook, a global hook, a backward hook.
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:Cached.left_installed %s:Cached.returns_handle \
# RUN:   %s:Cached.keeps_handle %s:Cached.removes_earlier %s:Cached.reads_table \
# RUN:   %s:Cached.global_hook %s:Cached.backward_hook %s:Cached.reads_handle_id \
# RUN:   --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=LEFT,RETURNED,KEPT,EARLIER,TABLE,GLOBAL,BACKWARD,HANDLEID
import torch
from torch import nn


class Cached(nn.Module):
    def __init__(self):
        super().__init__()
        self.key = nn.Linear(4, 4)
        self.earlier = self.key.register_forward_hook(lambda m, i, o: None)
        self.earlier.remove()

    def forward(self, x):
        cache = {}

        def save(module, _, output):
            cache[module] = output
            return output * 2

        handle = self.key.register_forward_hook(save)
        y = self.key(x)
        handle.remove()
        return y + cache[self.key] + self.key(x)

    def left_installed(self, x):
        self.key.register_forward_hook(lambda m, i, o: o * 2)
        return self.key(x)

    def returns_handle(self, x):
        handle = self.key.register_forward_hook(lambda m, i, o: o * 2)
        y = self.key(x)
        handle.remove()
        return y, handle

    def keeps_handle(self, x):
        self.handle = self.key.register_forward_hook(lambda m, i, o: o * 2)
        y = self.key(x)
        self.handle.remove()
        return y

    def removes_earlier(self, x):
        self.earlier.remove()
        return self.key(x)

    def reads_table(self, x):
        handle = self.key.register_forward_hook(lambda m, i, o: o * 2)
        count = len(self.key._forward_hooks)
        handle.remove()
        return self.key(x) * count

    def global_hook(self, x):
        handle = nn.modules.module.register_module_forward_hook(lambda m, i, o: o * 2)
        y = self.key(x)
        handle.remove()
        return y

    def backward_hook(self, x):
        handle = self.key.register_full_backward_hook(lambda m, gi, go: None)
        y = self.key(x)
        handle.remove()
        return y

    def reads_handle_id(self, x):
        handle = self.key.register_forward_hook(lambda m, i, o: o * 2)
        y = self.key(x) + handle.id
        handle.remove()
        return y


class Inner(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x, scale=1.0):
        return self.fc(x) * scale


class Ordered(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        first = self.inner.register_forward_hook(lambda m, args, out: out + 1.0)
        second = self.inner.register_forward_hook(lambda m, args, out: out.neg(), prepend=True)
        y = self.inner(x)
        first.remove()
        second.remove()
        return y


class PreKwargs(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        def rescale(module, args, kwargs):
            return (args[0].sigmoid(),), {"scale": kwargs["scale"] * 3.0}

        with self.inner.register_forward_pre_hook(rescale, with_kwargs=True):
            y = self.inner(x, scale=0.5)
        return y + self.inner(x, scale=0.5)



def example_inputs():
    return (torch.randn(2, 4),)


# The hook doubles the output the first call gives; the cache holds the
# output before it; the call after remove() runs no hook.
# CACHED-LABEL: graph @Cached.forward(
# CACHED: %[[W:[0-9]+]] = aten::permute.default(%self_key_weight, [1, 0])
# CACHED-NEXT: %[[OUT:[0-9]+]] = aten::addmm.default(%self_key_bias, %x, %[[W]])
# CACHED-NEXT: %[[HOOKED:[0-9]+]] = aten::mul.Tensor(%[[OUT]], 2)
# CACHED-NEXT: %[[SUM:[0-9]+]] = aten::add.Tensor(%[[HOOKED]], %[[OUT]])
# CACHED-NEXT: aten::permute.default
# CACHED-NEXT: %[[AGAIN:[0-9]+]] = aten::addmm.default(%self_key_bias, %x,
# CACHED-NEXT: %[[RESULT:[0-9]+]] = aten::add.Tensor(%[[SUM]], %[[AGAIN]])
# CACHED-NEXT: return %[[RESULT]]
# CACHED-NOT: after

# The tables are guarded empty, as they were at the call; no guard names a
# handle id or a position in a table.
# GUARDS: function type(L['self']._modules['key']).register_forward_hook : torch.nn.modules.module:Module.register_forward_hook
# GUARDS: empty L['self']._modules['key']._forward_hooks
# GUARDS: empty L['self']._modules['key']._forward_pre_hooks
# GUARDS-NOT: _forward_hooks.values()

# The hook registered with prepend=True runs first.
# ORDERED-LABEL: graph @Ordered.forward(
# ORDERED: %[[OUT:[0-9]+]] = aten::mul.Tensor(%{{[0-9]+}}, 1.0)
# ORDERED-NEXT: %[[NEG:[0-9]+]] = aten::neg.default(%[[OUT]])
# ORDERED-NEXT: %[[ADD:[0-9]+]] = aten::add.Tensor(%[[NEG]], 1.0)
# ORDERED-NEXT: return %[[ADD]]

# The keyword pre-hook replaces the argument and the scale inside the with
# block (0.5 * 3.0) and not after it.
# PREKW-LABEL: graph @PreKwargs.forward(
# PREKW: %[[ARG:[0-9]+]] = aten::sigmoid.default(%x)
# PREKW: aten::addmm.default(%self_inner_fc_bias, %[[ARG]],
# PREKW-NEXT: aten::mul.Tensor(%{{[0-9]+}}, 1.5)
# PREKW: aten::addmm.default(%self_inner_fc_bias, %x,
# PREKW-NEXT: aten::mul.Tensor(%{{[0-9]+}}, 0.5)

# LEFT: module-hook-registration.py:49:9: error: a forward hook registered at {{.*}}module-hook-registration.py:48 (register_forward_hook on L['self']._modules['key']) is still installed when the function returns, which is not supported yet: capture keeps hooks registered inside the captured function in its own table, and the rewritten code does not register them on the real module after the graph; remove the hook (handle.remove()) before returning, or register it before calling the function
# RETURNED: module-hook-registration.py: error: Cached.returns_handle: the function returns a torch.utils.hooks.RemovableHandle, the handle of a hook registered inside the captured function, which the rewritten code cannot rebuild (a real handle holds an id from torch's process-wide counter and a reference to the hook table of the module or tensor); keep the handle inside the function
# KEPT: module-hook-registration.py:61:9: error: the function leaves L['self'].handle set to a value the rewritten code cannot rebuild after the graph (changed at {{.*}}module-hook-registration.py:58): the function returns a torch.utils.hooks.RemovableHandle
# EARLIER: module-hook-registration.py:64:9: error: RemovableHandle.remove() on L['self'].earlier that was not made by a registration inside the captured function (a hook registered before the call) is not supported yet
# TABLE: module-hook-registration.py:69:21: error: reading _forward_hooks of L['self']._modules['key'] after the program registered a hook on it in this call is not supported yet: capture keeps that hook in its own table, not in the module's
# GLOBAL: module-hook-registration.py:74:18: error: torch.nn.modules.module.register_module_forward_hook inside the captured function is not supported yet: a global hook changes what every later module call runs
# BACKWARD: module-hook-registration.py:80:18: error: nn.Module.register_full_backward_hook inside the captured function is not supported: a backward hook runs in backward, through autograd functions wrapping the module's inputs and outputs, which a graph does not hold
# Reading a handle's attributes (its id) is refused in plain words.
# HANDLEID: module-hook-registration.py:87:27: error: reading 'id' of a torch.utils.hooks.RemovableHandle returned by a hook registration inside the captured function is not supported: the handle exists only while capturing, and its id comes from torch's process-wide counter, which a graph must not bake in; use the handle only to remove the hook (handle.remove() or `with handle:`)
