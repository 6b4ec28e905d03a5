"""LSTMCell and GRUCell with trainable parameters run from an artifact.

Their C++ kernels split the gates with unsafe_chunk and write them in place
(sigmoid_, tanh_, add_). Captured as split_with_sizes (torch's core-ATen
decomposition), the writes failed at run time whenever autograd was
recording: autograd forbids in-place writes to outputs of a multi-output
view. dync decomposes the unsafe splits into slices instead. Each cell is
exported with grad mode on and parameters that require grad, loaded in a
fresh interpreter, and compared with eager; every call must run the
compiled path.
"""
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch


    class LSTM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.cell = torch.nn.LSTMCell(6, 5)

        def forward(self, x, h, c):
            return self.cell(x, (h, c))


    class GRU(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(1)
            self.cell = torch.nn.GRUCell(6, 5)

        def forward(self, x, h):
            return self.cell(x, h)


    def example_inputs():
        g = torch.Generator().manual_seed(2)
        return tuple(torch.randn(3, n, generator=g) for n in (6, 5, 5))


    def gru_inputs():
        return example_inputs()[:2]
""")

SETUP = """
    import cells

    lstm, gru = cells.LSTM(), cells.GRU()
    x, h, c = cells.example_inputs()
    calls = {"LSTM.forward": lambda: lstm(x, h, c), "GRU.forward": lambda: gru(x, h)}
"""


def test_cells_match_eager(run_dync, tmp_path):
    (tmp_path / "cells.py").write_text(MODEL)
    artifact = tmp_path / "cells-artifact.so"
    done = run_dync("export", f"{tmp_path / 'cells.py'}:LSTM.forward",
                    f"{tmp_path / 'cells.py'}:GRU.forward", "--example", "GRU.forward=gru_inputs",
                    "-o", artifact,
                    "--emit=graph")
    assert done.returncode == 0, done.stderr
    assert "split_with_sizes" not in done.stdout, done.stdout
    assert "sigmoid_" in done.stdout, done.stdout
    results = compare_with_eager(tmp_path, artifact, SETUP)
    for name, (error, hits, misses, reason) in results.items():
        assert error is None, f"{name}: {error}"
        assert (hits, misses) == (1, 0), f"{name}: {reason}"
