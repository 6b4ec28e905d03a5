"""A program calling an installed library that memoizes in a container of
its own (see site-packages/memo_lib.py)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
import memo_lib  # noqa: E402


def scaled(x):
    return x * memo_lib.scale_for("abcd") + 1


def example_inputs():
    return (torch.randn(3),)
