# What an artifact records of the code capture ran: each entry's module and
# defining file (the library's, although this file never imports the name
# Net), then one fingerprint per Python function whose code capture ran, the
# entry first; torch's own functions (nn.Linear.forward, F.relu) are left
# out, since the torch version check covers them.
# RUN: rm -rf %t && mkdir -p %t
# RUN: %dync export %s:model.forward -o %t/m.so
# RUN: %dync inspect %t/m.so | FileCheck %s
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
import code_identity_lib  # noqa: E402

model = code_identity_lib.Net()


def example_inputs():
    return (torch.randn(2, 4),)

# CHECK: format_version 2
# CHECK: entry Net.forward line 15 graphs
# CHECK-NEXT: module code_identity_lib file {{.*}}Inputs/code_identity_lib.py{{$}}
# CHECK-NEXT: ran code_identity_lib:Net.forward file {{.*}}Inputs/code_identity_lib.py line 15 code_sha256 {{([0-9a-f]{64})$}}
# CHECK-NEXT: ran code_identity_lib:scale file {{.*}}Inputs/code_identity_lib.py line 6 code_sha256 {{([0-9a-f]{64})$}}
# CHECK-NOT: ran
# CHECK: graph @
