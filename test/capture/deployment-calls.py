# Calls deployed model code makes around its tensors. unicodedata's
# functions are pure (tokenizers normalize text in forward), so on constant
# strings they run while capturing and the graph holds what they gave. A
# module made by torch.jit.trace is TorchScript, not Python: calling it is
# refused in plain words with what to do instead. A label picked from a tuple
# by an index read from tensor data has no value while capturing: refused
# with the two ways around it. Quantized tensors (eager-mode static
# quantization passes them between its modules) have no graph type: refused
# with what to do instead.
# RUN: %dync export %s:normalized_length --example text_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=TEXT
# Each refused program is an entry of one export that goes on past each
# refusal, and each refusal is reported at its line, in entry order.
# RUN: not %dync export %s:Served.forward %s:label_of %s:quantized \
# RUN:   --keep-going --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefixes=SCRIPT,LABEL,QUANT
import unicodedata

import torch
from torch import nn


def normalized_length(x, text):
    # NFKC splits the ligature into two letters
    return x * len(unicodedata.normalize("NFKC", text)) + (unicodedata.category(text[0]) == "Ll")

# TEXT-LABEL: graph @normalized_length(
# TEXT-NEXT:    %0 = aten::mul.Tensor(%x, 3)
# TEXT-NEXT:    %1 = aten::add.Tensor(%0, true)


class Served(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.backbone = torch.jit.trace(nn.Linear(4, 4), torch.randn(1, 4))

    def forward(self, x):
        return self.backbone(x).relu()

# SCRIPT: deployment-calls.py:[[@LINE-2]]:16: error: calling a TorchScript module (one torch.jit.trace or torch.jit.script made) cannot be captured: its code is TorchScript, not Python, and a frozen module's weights are folded into it; call the nn.Module (or the Python function) it was made from instead
# SCRIPT-NEXT: return self.backbone(x).relu()


LABELS = ("cat", "dog")


def label_of(x):
    return LABELS[x.argmax().item()]

# LABEL: deployment-calls.py:[[@LINE-2]]:12: error: indexing a tuple with a symbolic number (a size declared dynamic, or a number computed from tensor data) is not supported: which item it picks is not known while capturing; index a tensor instead (torch.tensor(items)[i] for numbers), or return the index and pick the item outside the exported function


def quantized(x):
    q = torch.quantize_per_tensor(x, 0.1, 0, torch.quint8)
    return q.dequantize() * 2

# QUANT: deployment-calls.py:[[@LINE-3]]:9: error: dtype torch.quint8 cannot appear in a graph: quantized tensors (what a QuantStub and the modules torch.ao.quantization.convert makes pass between them) are not supported; export the float model, or quantize the weights only (torch.ao.quantization.quantize_dynamic keeps activations float)


def example_inputs():
    return (torch.randn(1, 4),)


def text_inputs():
    return torch.randn(3), "ﬁx"
