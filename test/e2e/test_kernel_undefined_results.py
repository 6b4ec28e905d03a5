"""Results a CPU kernel leaves undefined (None in Python) where torch's meta
function gives a tensor are None in the compiled call too.

nn.MultiheadAttention in eval mode takes its fast path
(torch._native_multi_head_attention) when grad mode is off or nothing
requires grad; with need_weights=False the kernel gives no weights (None),
its meta function an empty tensor. nn.TransformerEncoderLayer beside it has
a fast path of its own. One artifact serves inference mode, no_grad and
grad mode (where the fast path is not taken); every call must hit and match
eager, None included.
"""
import textwrap

import pytest

from conftest import INPUTS, export_and_report

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    from torch import nn


    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(16, 2, 32, dropout=0.1, batch_first=True)
            self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
            self.mha = nn.MultiheadAttention(16, 2, batch_first=True)

        def forward(self, x, mask):
            y = self.enc(x, src_key_padding_mask=mask)
            z, w = self.mha(y, y, y, key_padding_mask=mask, need_weights=False)
            return y, z, w


    torch.manual_seed(0)
    model = Encoder().eval()


    def example_inputs():
        g = torch.Generator().manual_seed(1)
        return torch.randn(2, 5, 16, generator=g), torch.tensor([[False] * 5, [False] * 3 + [True] * 2])
""")

RUNNER = textwrap.dedent("""
    import json, sys, torch
    sys.path[:0] = [{package!r}, {inputs!r}, {folder!r}]
    import dync, eager_comparison, undefined_results as m
    args = m.example_inputs()
    report = []
    for mode in ("inference_mode", "no_grad", "enable_grad"):
        with getattr(torch, mode)():
            want = m.model(*args)
            with dync.load({artifact!r}) as loaded:
                got = m.model(*args)
                stats = loaded.stats()["Encoder.forward"]
        eager_comparison.assert_same_structure(type(want)(t.detach() if t is not None else t for t in got),
                                               type(want)(t.detach() if t is not None else t for t in want), mode)
        report.append([mode, want[2] is None, got[2] is None, stats["hits"], stats["last_miss_reason"]])
    print(json.dumps(report))
""")


def test_undefined_results_are_none(run_dync, tmp_path):
    report = export_and_report(run_dync, tmp_path, MODEL, ["Encoder.forward"], RUNNER,
                               module="undefined_results", inputs=INPUTS)
    for mode, eager_none, compiled_none, hits, reason in report:
        assert eager_none == compiled_none, mode
        assert hits == 1, (mode, reason)
    # need_weights=False gives no weights on either path.
    assert all(eager_none for _, eager_none, *_ in report)
