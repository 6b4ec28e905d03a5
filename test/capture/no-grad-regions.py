# A no_grad block inside a graph that records autograd (the variant for
# grad mode on, when something requires grad): each call in the block reads
# the tensors it is given that require grad through aten::detach, so its
# results do not require grad and nothing flows back through them, as in
# eager. An in-place write to such a tensor goes through the detached alias
# (same data, same version counter), and later calls read the tensor as it
# was, history and all. enable_grad nested inside records again.
# RUN: %dync export %s:regions --example grad_inputs -o %t.so
# RUN: %dync inspect %t.so | FileCheck %s
# A view made in the block of a tensor that requires grad requires grad in
# eager with no history; the graph's, of a detached tensor, would not: used
# with grad mode on, it leaves the variant for grad mode on out.
# RUN: %dync -v export %s:view_escapes --example grad_inputs -o %t.view.so 2>&1 | FileCheck %s --check-prefix=VIEW
# Without -v, the same is a note: calls with grad mode on run the original code.
# RUN: %dync export %s:view_escapes --example grad_inputs -o %t.view-note.so 2>&1 | FileCheck %s --check-prefix=VIEWNOTE
# A tensor made in an inference_mode block that leaves the function would be
# an inference tensor in eager and a normal one in the graph: refused.
# RUN: not %dync export %s:returns_inference --emit=graph 2>&1 | FileCheck %s --check-prefix=RETURNED
# RUN: not %dync export %s:Stores.forward --emit=graph 2>&1 | FileCheck %s --check-prefix=STORED
import torch


def regions(x, w):
    h = x * w
    with torch.no_grad():
        target = h.mean()
        h.clamp_(-1.0, 1.0)
        with torch.enable_grad():
            inner = h * w
    return (h - target) * inner

# CHECK-LABEL: graph @regions$grad(
# CHECK:         %[[H:[0-9]+]] = aten::mul.Tensor(%x, %w)
# CHECK-NEXT:    %[[D:[0-9]+]] = aten::detach.default(%[[H]])
# CHECK-NEXT:    %[[T:[0-9]+]] = aten::mean.default(%[[D]])
# CHECK-NEXT:    %[[D2:[0-9]+]] = aten::detach.default(%[[H]])
# CHECK-NEXT:    aten::clamp_.default(%[[D2]], -1.0, 1.0)
# CHECK-NEXT:    %[[I:[0-9]+]] = aten::mul.Tensor(%[[H]], %w)
# CHECK-NEXT:    %[[S:[0-9]+]] = aten::sub.Tensor(%[[H]], %[[T]])
# CHECK-NEXT:    aten::mul.Tensor(%[[S]], %[[I]])


def view_escapes(x, w):
    h = x * w
    with torch.no_grad():
        v = h[1:]
    return v * 2

# VIEW: view_escapes: calls with grad mode on are not compiled (they run the original code): {{.*}}no-grad-regions.py:[[@LINE-2]]:12: a view made with grad mode off of a tensor that requires grad is used with grad mode on or leaves the function: eager's requires grad with no history, which a graph that records autograd cannot make yet; clone() it inside the block
# VIEWNOTE: dync: note: view_escapes: calls with grad mode on are not compiled (they run the original code): {{.*}}no-grad-regions.py:[[@LINE-3]]:12: a view made with grad mode off


def returns_inference(x):
    with torch.inference_mode():
        s = x.mean()
    return x - s, s

# RETURNED: no-grad-regions.py:[[@LINE-2]]:5: error: the function returns a tensor made in a torch.inference_mode() block, which eager returns as an inference tensor and the graph cannot make yet; return a clone() of it, or compute it under torch.no_grad()


class Stores(torch.nn.Module):
    def forward(self, x):
        with torch.inference_mode():
            self.stat = x.mean()
        return x * 2

# STORED: error: the function leaves L['self'].stat set to a value the rewritten code cannot rebuild after the graph (changed at {{.*}}no-grad-regions.py:[[@LINE-3]]): a tensor made in a torch.inference_mode() block leaves the function; eager's is an inference tensor, which the graph cannot make yet: clone() it first, or compute it under torch.no_grad()


def grad_inputs():
    return (torch.randn(4, 3, requires_grad=True), torch.randn(3, requires_grad=True))


def example_inputs():
    return (torch.randn(4, 3),)
