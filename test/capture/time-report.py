# --time-report prints, on stderr, the time of each phase of the command in
# the order they ran, then their total, each as wall-clock time and the
# process's CPU time; stdout keeps only what --emit asked.
# RUN: %dync export %s:double --emit=signature --time-report 2>%t.err | FileCheck %s --check-prefix=OUT
# RUN: FileCheck %s --check-prefix=TIMES < %t.err
import torch


def double(x):
    return x * 2


def example_inputs():
    return (torch.ones(3),)

# OUT:          result: tensor<f32, [3]>
# OUT-NOT:      time report
# TIMES:        dync: time report (wall-clock, and the process's CPU time)
# TIMES-NEXT:     python: {{ *}}{{[0-9]+\.[0-9]+}} s  (CPU {{ *}}{{[0-9]+\.[0-9]+}} s)
# TIMES-NEXT:     import: {{ *}}{{[0-9]+\.[0-9]+}} s  (CPU {{ *}}{{[0-9]+\.[0-9]+}} s)
# TIMES-NEXT:     capture: {{ *}}{{[0-9]+\.[0-9]+}} s  (CPU {{ *}}{{[0-9]+\.[0-9]+}} s)
# TIMES-NEXT:     output: {{ *}}{{[0-9]+\.[0-9]+}} s  (CPU {{ *}}{{[0-9]+\.[0-9]+}} s)
# TIMES-NEXT:     total: {{ *}}{{[0-9]+\.[0-9]+}} s  (CPU {{ *}}{{[0-9]+\.[0-9]+}} s)
