# A module swapped in by torch.ao.quantization.quantize_dynamic holds its
# int8 weights packed in a TorchScript object, which its forward passes to
# torch.ops.quantized.linear_dynamic; a graph cannot hold such an object,
# so the export is refused at the user's line (torch.export refuses it
# too), saying what exports instead (test/e2e/test_library_advice.py
# exports both), and no artifact is left.
# RUN: rm -f %t.dync.so
# RUN: not %dync export %s:quantized -o %t.dync.so 2>&1 | FileCheck %s
# RUN: not ls %t.dync.so
import torch
from torch import nn

torch.backends.quantized.engine = "x86" if "x86" in torch.backends.quantized.supported_engines else "fbgemm"
LINEAR = torch.ao.quantization.quantize_dynamic(nn.Sequential(nn.Linear(4, 3)), {nn.Linear}, dtype=torch.qint8)


def quantized(x):
    return LINEAR(x).relu()

# CHECK: quantized-packed-weights.py:[[@LINE-2]]:12: error: an operator argument of type ScriptObject cannot appear in a graph (in Linear.forward, {{.*}}dynamic/modules/linear.py:{{[0-9]+}}); a module quantize_dynamic swapped in keeps its int8 weights packed in a TorchScript object: export the float model (before torch.ao.quantization.quantize_dynamic), or keep int8 weights and their scales as buffers and dequantize them in forward (weight.float() * scale)
# CHECK-NEXT: return LINEAR(x).relu()


def example_inputs():
    return (torch.randn(2, 4),)
