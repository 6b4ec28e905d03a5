# transformers attaches warning_once and info_once (lru_cache memos) to
# logging.Logger; a model's forward calls them on the module's logger. They
# are made after the graph on that logger, so the memo decides once per
# message in the caller's process, as in eager.
# RUN: %dync export %s:Attention.forward --emit=graph | FileCheck %s
import torch
from torch import nn
from transformers.utils import logging

logger = logging.get_logger(__name__)


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x, output_attentions=False):
        if not output_attentions:
            logger.warning_once("sdpa does not return attention weights; falling back")
        logger.info_once("projected %d tokens", x.shape[0])
        return self.proj(x)


def example_inputs():
    return (torch.randn(2, 8),)

# CHECK:      return %{{[0-9]+}}
# CHECK-NEXT: after call G['logger'] method warning_once line 20 ("sdpa does not return attention weights; falling back",) {}
# CHECK-NEXT: after call G['logger'] method info_once line 21 ("projected %d tokens", 2) {}
# CHECK-NEXT: }
