"""Python complex numbers in tensor expressions give eager's results.

`1j * x` on a float tensor, a complex number times a complex128 tensor, a
complex `alpha`, and an S4D-style kernel (complex exponentials of a
Vandermonde product, an FFT convolution) are exported into one artifact at
-O1 and at -O0, loaded in a fresh interpreter and compared with eager:
values, dtypes and strides; every call must run the compiled path.
"""
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import math

    import torch
    from torch import nn


    def rotate(x, z):
        a = -torch.exp(x) + 1j * x
        b = z * (2.5 - 0.5j)
        return a, b, torch.add(z, a, alpha=1j), torch.view_as_real(a * (0.5 + 2j))


    class Kernel(nn.Module):
        def __init__(self, h=4, n=6):
            super().__init__()
            self.log_dt = nn.Parameter(torch.linspace(-3.0, -1.0, h))
            self.log_a_real = nn.Parameter(torch.log(0.5 * torch.ones(h, n)))
            self.a_imag = nn.Parameter(math.pi * torch.arange(n).repeat(h, 1).float())
            self.c = nn.Parameter(torch.view_as_real(torch.randn(h, n, dtype=torch.cfloat)))

        def forward(self, u):
            length = u.size(-1)
            dt = torch.exp(self.log_dt)
            a = -torch.exp(self.log_a_real) + 1j * self.a_imag
            dta = a * dt.unsqueeze(-1)
            c = torch.view_as_complex(self.c) * (torch.exp(dta) - 1.0) / a
            k = 2 * torch.einsum("hn,hnl->hl", c, torch.exp(dta.unsqueeze(-1) * torch.arange(length))).real
            y = torch.fft.irfft(torch.fft.rfft(u, n=2 * length) * torch.fft.rfft(k, n=2 * length), n=2 * length)
            return y[..., :length]


    torch.manual_seed(0)
    kernel = Kernel()


    def example():
        g = torch.Generator().manual_seed(1)
        return torch.randn(4, generator=g), torch.randn(4, dtype=torch.complex128, generator=g)


    def example_u():
        return (torch.randn(2, 4, 10, generator=torch.Generator().manual_seed(2)),)
""")

SETUP = """
    import torch
    import complex_scalars as m

    x, z = m.example()
    (u,) = m.example_u()
    calls = {"rotate": lambda: m.rotate(x, z), "Kernel.forward": lambda: m.kernel(u)}
"""


@pytest.fixture(scope="module", params=["-O1", "-O0"])
def results(request, run_dync, tmp_path_factory):
    folder = tmp_path_factory.mktemp("complex-scalars")
    (folder / "complex_scalars.py").write_text(MODEL)
    artifact = folder / "complex.dync.so"
    done = run_dync("export", f"{folder / 'complex_scalars.py'}:rotate", "--example", "rotate=example",
                    f"{folder / 'complex_scalars.py'}:kernel.forward", "--example",
                    "kernel.forward=example_u", request.param, "-o", artifact)
    assert done.returncode == 0, done.stderr
    return compare_with_eager(folder, artifact, textwrap.dedent(SETUP))


@pytest.mark.parametrize("entry", ["rotate", "Kernel.forward"])
def test_matches_eager(results, entry):
    error, hits, misses, reason = results[entry]
    assert error is None, error
    assert (hits, misses) == (1, 0), reason
