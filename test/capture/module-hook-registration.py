# Registering a module hook inside the captured function (OpenAI Whisper's
# kv cache filled by forward hooks installed in its decoding loop) is
# refused at the user's line, naming the registration: the hook changes
# what later module calls run, which capture does not model yet.
# RUN: not %dync export %s:Cached.forward --emit=graph 2>&1 | FileCheck %s
# RUN: not %dync export %s:Cached.global_hook --emit=graph 2>&1 | FileCheck %s --check-prefix=GLOBAL
import torch
from torch import nn


class Cached(nn.Module):
    def __init__(self):
        super().__init__()
        self.key = nn.Linear(4, 4)

    def forward(self, x):
        cache = {}

        def save(module, _, output):
            cache[module] = output

        handle = self.key.register_forward_hook(save)
        y = self.key(x)
        handle.remove()
        return y + cache[self.key]

    def global_hook(self, x):
        handle = nn.modules.module.register_module_forward_hook(lambda m, i, o: o * 2)
        y = self.key(x)
        handle.remove()
        return y


model = Cached()


def example_inputs():
    return (torch.randn(2, 4),)

# CHECK: module-hook-registration.py:22:18: error: nn.Module.register_forward_hook inside the captured function is not supported yet: the hook changes what later module calls run, in this call and after it, which capture does not model; register hooks before calling the function
# GLOBAL: module-hook-registration.py:28:18: error: torch.nn.modules.module.register_module_forward_hook inside the captured function is not supported yet
