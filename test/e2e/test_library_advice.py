"""What the refusals inside torch's own code advise (compiler/LibraryAdvice.cpp)
works: each advised program exports, runs compiled, matches its own eager
run, and matches in eager what the refused program computes (where the
advice keeps the results; the nested-tensor encoder's padded steps and the
packed LSTM's padded steps are compared where they are defined)."""
import importlib.util
import sys
import textwrap

import pytest

from conftest import compare_with_eager

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    from torch import nn
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    torch.manual_seed(0)
    DECODER = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0), 1).eval()
    TRANSFORMER = nn.Transformer(8, 2, 1, 1, 16, dropout=0.0).eval()
    ENCODER = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2).eval()
    UNNESTED = nn.TransformerEncoder(
        nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, batch_first=True), 2,
        enable_nested_tensor=False).eval()
    UNNESTED.load_state_dict(ENCODER.state_dict())
    LSTM = nn.LSTM(3, 5, batch_first=True)


    class Int8Linear(nn.Module):
        # Weight-only int8: the weight and its per-row scale kept as buffers.
        def __init__(self, linear):
            super().__init__()
            scale = linear.weight.detach().abs().amax(dim=1, keepdim=True) / 127
            self.register_buffer("weight", (linear.weight.detach() / scale).round().to(torch.int8))
            self.register_buffer("scale", scale)
            self.bias = nn.Parameter(linear.bias.detach().clone())

        def forward(self, x):
            return nn.functional.linear(x, self.weight.float() * self.scale, self.bias)


    FLOAT = nn.Sequential(nn.Linear(4, 3))
    INT8 = Int8Linear(FLOAT[0])


    def causal(n):
        return nn.Transformer.generate_square_subsequent_mask(n)


    def decoder_detected(tgt, memory):
        return DECODER(tgt, memory, tgt_mask=causal(tgt.shape[0]))


    def decoder_declared(tgt, memory):
        return DECODER(tgt, memory, tgt_mask=causal(tgt.shape[0]), tgt_is_causal=True)


    def transformer_detected(src, tgt):
        return TRANSFORMER(src, tgt, tgt_mask=causal(tgt.shape[0]))


    def transformer_declared(src, tgt):
        return TRANSFORMER(src, tgt, tgt_mask=causal(tgt.shape[0]), tgt_is_causal=True)


    def encoder_detected(x, mask):
        return ENCODER(x, mask=mask)


    def encoder_declared(x, mask):
        return ENCODER(x, mask=mask, is_causal=True)


    def encoder_nested(x, pad):
        with torch.no_grad():
            return ENCODER(x, src_key_padding_mask=pad)


    def encoder_unnested(x, pad):
        with torch.no_grad():
            return UNNESTED(x, src_key_padding_mask=pad)


    def lstm_packed(x, lengths):
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, (h, _) = LSTM(packed)
        y, _ = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        return y, h[-1]


    def lstm_masked(x, lengths):
        out, _ = LSTM(x)
        valid = torch.arange(x.shape[1]) < lengths[:, None]
        last = out.gather(1, (lengths - 1)[:, None, None].expand(-1, 1, out.shape[2]))
        return out * valid[..., None], last.squeeze(1)


    def float_linear(x):
        return FLOAT(x).relu()


    def int8_linear(x):
        return INT8(x).relu()


    def decoder_inputs():
        return torch.randn(5, 2, 8), torch.randn(4, 2, 8)


    def transformer_inputs():
        return torch.randn(6, 2, 8), torch.randn(5, 2, 8)


    def encoder_inputs():
        return torch.randn(2, 5, 8), causal(5)


    def padded_inputs():
        return torch.randn(2, 5, 8), torch.tensor([[False] * 5, [False] * 3 + [True] * 2])


    def lstm_inputs():
        return torch.randn(3, 4, 3), torch.tensor([4, 2, 3])


    def linear_inputs():
        return (torch.randn(2, 4),)
""")

# Advised entry -> (refused entry, its example function).
ADVISED = {
    "decoder_declared": ("decoder_detected", "decoder_inputs"),
    "transformer_declared": ("transformer_detected", "transformer_inputs"),
    "encoder_declared": ("encoder_detected", "encoder_inputs"),
    "encoder_unnested": ("encoder_nested", "padded_inputs"),
    "lstm_masked": ("lstm_packed", "lstm_inputs"),
    "float_linear": (None, "linear_inputs"),
    "int8_linear": (None, "linear_inputs"),
}


@pytest.fixture
def advised_module(tmp_path):
    path = tmp_path / "advised.py"
    path.write_text(MODEL)
    spec = importlib.util.spec_from_file_location("advised", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["advised"] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules["advised"]


def test_advice_keeps_eager_results(advised_module):
    """In eager, the advised program computes what the refused one does."""
    m = advised_module
    for advised, (refused, inputs) in ADVISED.items():
        if refused is None:
            continue
        args = getattr(m, inputs)()
        got, want = getattr(m, advised)(*args), getattr(m, refused)(*args)
        if advised == "encoder_unnested":
            # The nested fast path gives zeros at padded steps; the padded
            # input keeps values there.
            valid = ~args[1]
            got, want = got[valid], want[valid]
        torch.testing.assert_close(got, want, msg=advised)


def test_refused_programs_say_what_to_do(run_dync, tmp_path, advised_module):
    """The graph that records autograd (--emit=graph) takes the layers' slow
    paths, where each refusal arises; --data-branches=refuse keeps the
    causal-mask decision a refusal rather than a specialization."""
    advice = {
        "decoder_detected": "pass tgt_is_causal=True with a causal mask",
        "transformer_detected": "pass tgt_is_causal=True (src_is_causal=True) with a causal mask",
        "encoder_detected": "pass is_causal=True with a causal mask",
        "encoder_nested": "construct it with enable_nested_tensor=False",
        "lstm_packed": "call the RNN on the padded tensor itself",
    }
    for refused, text in advice.items():
        inputs = next(i for r, i in ADVISED.values() if r == refused)
        done = run_dync("export", f"{tmp_path / 'advised.py'}:{refused}", "--example",
                        f"{refused}={inputs}", "--emit=graph", "--data-branches=refuse")
        assert done.returncode != 0, refused
        assert text in done.stderr, done.stderr


def test_advised_programs_export_and_match_eager(run_dync, tmp_path, advised_module):
    artifact = tmp_path / "advised.dync.so"
    flags = [a for entry, (_, inputs) in ADVISED.items() for a in ("--example", f"{entry}={inputs}")]
    done = run_dync("export", *(f"{tmp_path / 'advised.py'}:{entry}" for entry in ADVISED),
                    *flags, "-o", artifact)
    assert done.returncode == 0, done.stderr
    setup = "import advised\ncalls = {\n" + "".join(
        f"    {entry!r}: lambda: advised.{entry}(*advised.{inputs}()),\n"
        for entry, (_, inputs) in ADVISED.items()) + "}\n"
    # Each call draws fresh inputs; the seed makes eager's and the compiled
    # call's the same.
    setup = setup.replace("lambda: advised.", "lambda: torch.manual_seed(1) and advised.")
    setup = "import torch\n" + setup
    results = compare_with_eager(tmp_path, artifact, setup)
    assert sorted(results) == sorted(ADVISED), results
    for name, (error, hits, misses, reason) in results.items():
        assert error is None, f"{name}: {error}"
        assert (hits, misses) == (1, 0), f"{name}: {reason}"
