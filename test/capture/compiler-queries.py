# torch.compiler.is_compiling() answers what eager answers when the served
# call is made, False: the graph is the program's eager path, and a program
# whose eager path branches on a tensor's values is refused there.
# --assume-compiling answers True, as torch.compile does: the graph is the
# program's compiled path. torch.compiler.is_exporting() answers False, also
# under --assume-compiling (torch.compile's answer); --assume-exporting
# answers True to both questions, as torch.export does.
# RUN: %dync export %s:asks %s:exports --example example_asks --emit=graph \
# RUN:   | FileCheck %s --check-prefix=EAGER
# RUN: %dync export %s:asks %s:exports --example example_asks --emit=graph --assume-compiling \
# RUN:   | FileCheck %s --check-prefix=COMPILED
# RUN: not %dync export --data-branches=refuse %s:masked --emit=graph 2>&1 | FileCheck %s --check-prefix=REFUSED
# RUN: %dync export %s:masked --emit=graph --assume-compiling | FileCheck %s --check-prefix=MASKED
# RUN: %dync export %s:exports --example example_asks --emit=graph --assume-exporting \
# RUN:   | FileCheck %s --check-prefix=EXPORTED
import torch


def asks(x):
    if torch.compiler.is_compiling():
        return x + 1
    return x - 1

# EAGER:         graph @asks(
# EAGER:         aten::sub.Tensor
# EAGER-NOT:     aten::add
# COMPILED:      graph @asks(
# COMPILED:      aten::add.Tensor
# COMPILED-NOT:  aten::sub


def masked(x, mask):
    # As libraries do: reading the mask's values only when not compiled.
    if not torch._dynamo.is_compiling() and bool(mask.all()):
        return x.softmax(-1)
    return x.masked_fill(mask == 0, float("-inf")).softmax(-1)

# REFUSED: data-dependent branch
# REFUSED-SAME: (note: torch.compiler.is_compiling() at {{.*}}compiler-queries.py:34 answered False, eager's answer; if the program computes the same on both paths, --assume-compiling captures its compiled path)
# MASKED:        graph @masked(
# MASKED:        aten::eq.Scalar(%mask, 0)
# MASKED:        aten::where.self


def exports(x):
    # As transformers' Mamba chooses its scan.
    if torch.compiler.is_compiling() and not torch.compiler.is_exporting():
        return x * 3
    if torch.compiler.is_exporting():
        return x.exp()
    return x.abs()

# EAGER:              graph @exports(
# EAGER-NEXT:         aten::abs.default
# EAGER-NEXT:         return
# COMPILED:           graph @exports(
# COMPILED-NEXT:      aten::mul.Tensor
# COMPILED-NEXT:      return
# EXPORTED:           graph @exports(
# EXPORTED-NEXT:      aten::exp.default
# EXPORTED-NEXT:      return


def example_asks():
    return (torch.randn(2, 5),)


def example_inputs():
    return torch.randn(2, 5), torch.ones(2, 5, dtype=torch.long)
