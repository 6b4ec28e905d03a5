# dync-opt --pipeline=export-O1 runs exactly the passes export runs: the
# graph export captures (--emit=graph) with its guards (--emit=guards), run
# through dync-opt, is the graph export prints after its pipeline
# (--emit=optimized-graph), kernels and all, with and without symbolic
# sizes. The guards go along because whether the passes may run depends on
# them (a graph that records autograd is left alone); the expected text is
# export's, printed canonically by dync-opt with no pass.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:Block.forward --init 'Block()' --example Block_inputs --emit=graph > %t/captured.dync
# RUN: %dync export %s:Block.forward --init 'Block()' --example Block_inputs --emit=guards > %t/guards.dync
# RUN: %dync export %s:Block.forward --init 'Block()' --example Block_inputs --emit=optimized-graph > %t/exported.dync
# RUN: cat %t/exported.dync %t/guards.dync | %dync_opt - -o %t/expected.dync
# RUN: cat %t/captured.dync %t/guards.dync | %dync_opt --pipeline=export-O1 - -o %t/replayed.dync
# RUN: diff %t/expected.dync %t/replayed.dync
# RUN: FileCheck %s < %t/replayed.dync
#
# RUN: %dync export %s:scaled_softmax --dynamic 'x:0=rows[2,4096]' --emit=graph > %t/captured-dyn.dync
# RUN: %dync export %s:scaled_softmax --dynamic 'x:0=rows[2,4096]' --emit=guards > %t/guards-dyn.dync
# RUN: %dync export %s:scaled_softmax --dynamic 'x:0=rows[2,4096]' --emit=optimized-graph > %t/exported-dyn.dync
# RUN: cat %t/exported-dyn.dync %t/guards-dyn.dync | %dync_opt - -o %t/expected-dyn.dync
# RUN: cat %t/captured-dyn.dync %t/guards-dyn.dync | %dync_opt --pipeline=export-O1 - -o %t/replayed-dyn.dync
# RUN: diff %t/expected-dyn.dync %t/replayed-dyn.dync
# RUN: FileCheck %s --check-prefix=DYN < %t/replayed-dyn.dync
#
# Without the guards, the parameters requiring grad make the graph one that
# records autograd, and the pipeline leaves it as captured:
# RUN: %dync_opt --pipeline=export-O1 %t/captured.dync | FileCheck %s --check-prefix=RECORDS
#
# The pipeline's passes are listed, and an unknown pipeline is an error:
# RUN: %dync_opt --list-passes | FileCheck %s --check-prefix=LIST
# RUN: not %dync_opt --pipeline=export-O2 %t/captured.dync 2>&1 | FileCheck %s --check-prefix=UNKNOWN
import torch
from torch import nn

# --emit=graph captures in the grad mode of the run, --emit=optimized-graph
# the artifact's first variant, under no_grad; off from the start, both
# capture the same graph.
torch.set_grad_enabled(False)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(32)
        self.fc = nn.Linear(32, 32)

    def forward(self, x):
        h = self.norm(x)
        return torch.relu(self.fc(h)) * 2.0 + x


def scaled_softmax(x):
    return torch.softmax(x * 0.5, dim=-1) + 1.0


def Block_inputs():
    return (torch.randn(4, 32),)


def example_inputs():
    return (torch.randn(8, 16),)

# CHECK: kernel @k0
# CHECK: graph @Block.forward
# CHECK: = @k0(

# DYN: kernel @k0
# DYN: graph @scaled_softmax
# DYN: = @k0(
# DYN: guards @scaled_softmax

# RECORDS-NOT: kernel
# RECORDS: aten::relu.default

# LIST: unfuse-unlowerable - replace the calls of kernels codegen cannot lower
# LIST: pipelines:
# LIST-NEXT: optimize -
# LIST-NEXT: functionalize fold cse dce fuse plan-memory
# LIST-NEXT: export-O1 - what 'dync export' runs at -O1 on every graph
# LIST-NEXT: functionalize fold cse dce fuse plan-memory unfuse-unlowerable

# UNKNOWN: dync-opt: error: unknown pipeline 'export-O2' (see --list-passes)
