"""Random operators called so that they draw nothing decompose, and still
compute what eager computes; calls that draw are kept whole.

CPU attention (`_scaled_dot_product_flash_attention_for_cpu`) is tagged
nondeterministic_seeded for its `dropout_p`; with dropout_p = 0 it draws
nothing (frontend/oracle/embedded/oracle_draws.py), and is kept whole all
the same (oracle_decompositions.py's _KEPT_WHOLE). The
program's entries are exported at -O1 with the batch symbolic (so no
capture-time kernel check stands in for the comparison) and called at
several batch sizes: F.scaled_dot_product_attention with a padding mask,
causal with grouped-query heads, the operator called directly, causal and
masked at once, with a query whose scores are all masked out (its second
result, the log-sum-exp, included), and attention with dropout, whose
values and the generator's state after it must equal eager's under a seed.
Then the rule itself: each CPU kernel it answers "draws nothing" for leaves
the generator's state as it was.
"""
import json
import subprocess
import sys

import pytest

from conftest import PACKAGE_DIR

torch = pytest.importorskip("torch")

PROGRAM = '''
import torch
import torch.nn.functional as F


def padded(q, k, v, mask):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def causal(q, k, v, mask):
    return F.scaled_dot_product_attention(q, k[:, :1], v[:, :1], is_causal=True, enable_gqa=True)


def direct(q, k, v, mask):
    # Causal and a mask at once, which the kernel takes (the math path does not).
    return torch.ops.aten._scaled_dot_product_flash_attention_for_cpu(
        q, k, v, dropout_p=0.0, is_causal=True, attn_mask=mask, scale=0.3)


def dropping(q, k, v, mask):
    return F.scaled_dot_product_attention(q, k, v, dropout_p=0.25)


def example_inputs():
    return inputs(3)


def inputs(b):
    g = torch.Generator().manual_seed(b)
    q, k, v = (torch.randn(b, 2, 6, 8, generator=g) for _ in range(3))
    keep = torch.ones(b, 1, 6, 6, dtype=torch.bool)
    keep[0, :, :, 4:] = False
    keep[0, :, 5, :] = False  # a query that sees nothing
    mask = torch.zeros(b, 1, 6, 6).masked_fill(keep.logical_not(), float("-inf"))
    return q, k, v, mask
'''

CALLS = '''
import json, sys
sys.path[:0] = [{package!r}, {folder!r}]
import torch
import dync
import program

entries = {{
    "padded": lambda b: program.padded(*program.inputs(b)),
    "causal": lambda b: program.causal(*program.inputs(b)),
    "direct": lambda b: program.direct(*program.inputs(b)),
}}


def seeded(b):
    torch.manual_seed(b)
    out = program.dropping(*program.inputs(b))
    return out, torch.get_rng_state()


def difference(got, want):
    try:
        torch.testing.assert_close(got, want, rtol=1.3e-6, atol=1e-5)
        for g, w in zip(torch.utils._pytree.tree_leaves(got), torch.utils._pytree.tree_leaves(want)):
            assert g.stride() == w.stride(), f"strides {{g.stride()}} != {{w.stride()}}"
    except AssertionError as error:
        return str(error)
    return None


sizes = [1, 2, 5]
expected = {{e: [call(b) for b in sizes] for e, call in entries.items()}}
expected["dropping"] = [seeded(b) for b in sizes]
entries["dropping"] = seeded
report = []
with dync.load({artifact!r}) as artifact:
    for entry, call in entries.items():
        for b, want in zip(sizes, expected[entry]):
            dync.reset_stats()
            got = call(b)
            stats = artifact.stats()[entry]
            report.append([entry, b, difference(got, want), stats["hits"]])
print(json.dumps(report))
'''


def test_attention_kept_whole_matches_eager(run_dync, tmp_path):
    (tmp_path / "program.py").write_text(PROGRAM)
    artifact = tmp_path / "attention.dync.so"
    entries = [f"{tmp_path}/program.py:{e}" for e in ("padded", "causal", "direct", "dropping")]
    batch = [f"--dynamic={name}:0=b[1,8]" for name in ("q", "k", "v")]
    exported = run_dync("export", *entries, "-O1", *batch, "--dynamic=mask:0=b[1,8]",
                        "-o", artifact)
    assert exported.returncode == 0, exported.stderr
    listing = run_dync("export", *entries, "-O1", *batch, "--dynamic=mask:0=b[1,8]",
                       "--emit=graph")
    assert listing.returncode == 0, listing.stderr
    assert "_scaled_dot_product_flash_attention_for_cpu" in listing.stdout
    assert "aten::native_dropout" in listing.stdout
    ran = subprocess.run([sys.executable, "-c", CALLS.format(
        package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(artifact))],
        capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout.strip().splitlines()[-1])
    assert [r for r in report if r[2] is not None or r[3] != 1] == [], json.dumps(report, indent=1)
    assert len(report) == 12


def _unchanged_generator(call):
    torch.manual_seed(7)
    before = torch.get_rng_state()
    call()
    return torch.equal(before, torch.get_rng_state())


def test_the_rule_holds_for_the_cpu_kernels_it_answers_for():
    """Every call below is one the rule says draws nothing (a `train` or
    `training` False, a `dropout_p` or `dropout` of 0); each is checked on
    the kernel eager runs. `native_dropout`'s `p` is not one of the rule's
    names: at 0 with training on its CPU kernel still draws."""
    aten = torch.ops.aten
    x = torch.randn(3, 4, 5)
    q = torch.randn(2, 2, 4, 8)
    hidden = [torch.zeros(2, 4, 3), torch.zeros(2, 4, 3)]
    calls = {
        "attention": (aten._scaled_dot_product_flash_attention_for_cpu.default, (q, q, q, 0.0), {}),
        "dropout": (aten.dropout.default, (x, 0.5, False), {}),
        "alpha_dropout": (aten.alpha_dropout.default, (x, 0.5, False), {}),
        "native_dropout": (aten.native_dropout.default, (x, 0.5, False), {}),
        "rrelu": (aten.rrelu_with_noise.default, (x, torch.zeros_like(x)), {"training": False}),
        "lstm_dropout_0": (aten.lstm.input, (x, hidden, _rnn_weights(4), True, 2, 0.0, True, False, False), {}),
        "lstm_eval": (aten.lstm.input, (x, hidden, _rnn_weights(4), True, 2, 0.5, False, False, False), {}),
        "gru_eval": (aten.gru.input, (x, hidden[0], _rnn_weights(3), True, 2, 0.5, False,
                                      False, False), {}),
    }
    sys.path.insert(0, _embedded_folder())
    # The binary embeds ir/draw_switches.py as dync_draw_switches; outside
    # it, the module is loaded from the source under that name.
    import importlib.util
    import os

    spec = importlib.util.spec_from_file_location(
        "dync_draw_switches",
        os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(_embedded_folder()))), "ir",
                     "draw_switches.py"))
    switches = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(switches)
    sys.modules["dync_draw_switches"] = switches
    from oracle_draws import draws

    for name, (op, args, kwargs) in calls.items():
        assert not draws(op, args, kwargs), name
        assert _unchanged_generator(lambda: op(*args, **kwargs)), name
    # Calls that draw, by the rule and on the kernel.
    drawing = {
        "native_dropout_p0": (aten.native_dropout.default, (x, 0.0, True), {}),
        "dropout_train": (aten.dropout.default, (x, 0.5, True), {}),
        "bernoulli": (aten.bernoulli.p, (x, 0.0), {}),
    }
    for name, (op, args, kwargs) in drawing.items():
        assert draws(op, args, kwargs), name
        assert not _unchanged_generator(lambda: op(*args, **kwargs)), name


def _rnn_weights(gates, inputs=5, hidden=3, layers=2):
    """The flat parameters of a `layers`-layer recurrent layer with biases."""
    weights = []
    for layer in range(layers):
        width = inputs if layer == 0 else hidden
        weights += [torch.randn(gates * hidden, width), torch.randn(gates * hidden, hidden),
                    torch.randn(gates * hidden), torch.randn(gates * hidden)]
    return weights


def _embedded_folder():
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(os.path.dirname(os.path.dirname(here)), "frontend", "oracle", "embedded")
