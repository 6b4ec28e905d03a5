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
# RUN: not %dync export %s:Cached.left_installed --emit=graph 2>&1 | FileCheck %s --check-prefix=LEFT
# RUN: not %dync export %s:Cached.returns_handle --emit=graph 2>&1 | FileCheck %s --check-prefix=RETURNED
# RUN: not %dync export %s:Cached.keeps_handle --emit=graph 2>&1 | FileCheck %s --check-prefix=KEPT
# RUN: not %dync export %s:Cached.removes_earlier --emit=graph 2>&1 | FileCheck %s --check-prefix=EARLIER
# RUN: not %dync export %s:Cached.reads_table --emit=graph 2>&1 | FileCheck %s --check-prefix=TABLE
# RUN: not %dync export %s:Cached.global_hook --emit=graph 2>&1 | FileCheck %s --check-prefix=GLOBAL
# RUN: not %dync export %s:Cached.backward_hook --emit=graph 2>&1 | FileCheck %s --check-prefix=BACKWARD
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
