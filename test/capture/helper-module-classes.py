# A class that a function of another module reads from that module's own
# globals (constructs it, calls it, checks isinstance against it, catches
# it) is pinned by a `class` guard through sys.modules, as the entry
# module's global classes are, and what constructing it runs is read
# through it: rebinding `block_helpers.Block` after export misses.
# RUN: %dync export %s:entry --emit=guards | FileCheck %s
import sys

import torch

sys.path.insert(0, __import__("os").path.join(__import__("os").path.dirname(__file__), "Inputs"))
import block_helpers  # noqa: E402


def entry(x):
    return block_helpers.make_block(x)

# CHECK-LABEL: guards @entry
# CHECK: function G['block_helpers'].make_block : block_helpers:make_block
# CHECK: class M['block_helpers'].Block : block_helpers:Block
# CHECK: function M['block_helpers'].Block.forward : block_helpers:Block.forward
# CHECK: class M['block_helpers'].Norm : block_helpers:Norm
# CHECK: absent M['block_helpers'].Norm.__new__
# CHECK: function M['block_helpers'].Norm.__init__ : block_helpers:Norm.__init__
# CHECK: function M['block_helpers'].Norm.apply : block_helpers:Norm.apply
# CHECK: class M['block_helpers'].Cfg : block_helpers:Cfg
# CHECK: class M['block_helpers'].Problem : block_helpers:Problem


def example_inputs():
    return (torch.randn(4),)
