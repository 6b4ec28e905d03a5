# dync's process lets OpenMP's idle worker threads (torch's intra-op pool,
# which the oracle's kernel checks and layout probes use) wait for work
# asleep, unless the user chose how they wait: OMP_WAIT_POLICY is PASSIVE
# by the time the user's module is imported, and a policy or spin count the
# user set is kept as it is.
# RUN: env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT %dync export %s:f --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=DEFAULT
# RUN: env OMP_WAIT_POLICY=ACTIVE %dync export %s:f --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=ACTIVE
# RUN: env -u OMP_WAIT_POLICY GOMP_SPINCOUNT=1000 %dync export %s:f --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=SPIN
import os
import sys

import torch

sys.stderr.write(f"wait policy: {os.environ.get('OMP_WAIT_POLICY')}\n")


def f(x):
    return torch.relu(x) + 1


def example_inputs():
    return (torch.randn(3, 4),)

# DEFAULT: wait policy: PASSIVE
# DEFAULT: aten::relu
# ACTIVE: wait policy: ACTIVE
# ACTIVE: aten::relu
# SPIN: wait policy: None
# SPIN: aten::relu
