"""A served model whose backbone was exported with TorchScript and frozen,
as deployment code that predates torch.export does (TorchServe handlers,
Detectron2's `export` scripts, mobile pipelines): a feature extractor
`torch.jit.trace`d with an example input (`check_trace=True`, the
constant-size `view` it records), `torch.jit.freeze` of the traced module
(weights folded into constants), a head and post-processing left in
Python that read the traced output as a tuple, `isinstance(self.backbone,
torch.jit.ScriptModule)` checked, and `original_name` read for a log
prefix. The traced module's forward is TorchScript, not Python code."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 2, 1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, 2, 1)
        self.bn2 = nn.BatchNorm2d(32)

    def forward(self, x):
        c1 = F.relu(self.bn1(self.conv1(x)))
        c2 = F.relu(self.bn2(self.conv2(c1)))
        return c1, c2


class Served(nn.Module):
    def __init__(self, backbone, classes=5):
        super().__init__()
        self.backbone = backbone
        self.lateral = nn.Conv2d(16, 32, 1)
        self.cls = nn.Linear(32, classes)
        self.prefix = f"[{backbone.original_name}]"

    def forward(self, image):
        if not isinstance(self.backbone, torch.jit.ScriptModule):
            raise TypeError(f"{self.prefix} expects a TorchScript backbone")
        c1, c2 = self.backbone(image)
        up = F.interpolate(c2, size=c1.shape[-2:], mode="nearest")
        fused = self.lateral(c1) + up
        pooled = fused.amax(dim=(2, 3))
        logits = self.cls(pooled)
        return {"probs": logits.softmax(-1), "features": fused}


torch.manual_seed(0)
_backbone = Backbone().eval()
_example = torch.randn(1, 3, 32, 32, generator=torch.Generator().manual_seed(3))
with torch.no_grad():
    _traced = torch.jit.freeze(torch.jit.trace(_backbone, _example, check_trace=True))
model = Served(_traced).eval()


def example_inputs():
    return torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
