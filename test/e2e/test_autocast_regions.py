"""Autocast regions the program enters itself, end to end: capture records
the casts autocast makes as graph nodes, so the artifact computes in the
dtypes eager does, outside any autocast state of the caller. Results are
compared with eager (values, dtypes, strides), with grad mode on and
trainable parameters the parameters' gradients too, and every call must
hit."""
import os

import pytest

from conftest import INPUTS, compare_with_eager, run_reporting_script, PACKAGE_DIR

torch = pytest.importorskip("torch")
SOURCE = os.path.join(INPUTS, "autocast_regions.py")


@pytest.fixture(scope="module")
def artifact(run_dync, tmp_path_factory):
    path = tmp_path_factory.mktemp("autocast") / "autocast.dync.so"
    exported = run_dync("export", f"{SOURCE}:Block.forward", f"{SOURCE}:decorated",
                        "--example", "decorated=decorated_inputs", "-o", path)
    assert exported.returncode == 0, exported.stderr
    return path


def test_graph_records_autocast_casts(run_dync):
    listing = run_dync("export", f"{SOURCE}:decorated", "--example", "decorated=decorated_inputs",
                       "--emit=graph")
    assert listing.returncode == 0, listing.stderr
    # The matmul runs in bfloat16 on cast inputs; the result stays bfloat16.
    assert "aten::_to_copy.default(%x, dtype=bf16)" in listing.stdout, listing.stdout
    assert "aten::mm.default(" in listing.stdout and ": tensor<bf16, [4, 3]>" in listing.stdout
    # What the autocast object keeps is left on it as eager leaves it.
    assert "after set G['low_precision_mm'].__closure__[0].cell_contents.prev_fastdtype = bf16" \
        in listing.stdout, listing.stdout


def test_autocast_regions_match_eager(artifact):
    report = compare_with_eager(INPUTS, artifact, """
        import torch
        import autocast_regions as m
        block = m.Block()
        x, = m.example_inputs()
        a, w = m.decorated_inputs()
        def inference():
            with torch.no_grad():
                return block(x)
        calls = {
            "Block.forward": inference,
            "decorated": lambda: m.decorated(a, w),
        }
        """)
    assert report == {"Block.forward": [None, 1, 0, None], "decorated": [None, 1, 0, None]}, report


def test_autocast_gradients_match_eager(artifact):
    source = f"""
import json, sys
sys.path.insert(0, {PACKAGE_DIR!r})
sys.path.insert(0, {INPUTS!r})
import torch
import dync
import autocast_regions as m

def step():
    block = m.Block()
    x, = m.example_inputs()
    out = block(x)
    out.square().sum().backward()
    return [out.detach(), *(p.grad for p in block.parameters())]

eager = step()
with dync.load({str(artifact)!r}) as art:
    compiled = step()
    hits = art.stats()["Block.forward"]["hits"]
errors = []
for got, want in zip(compiled, eager, strict=True):
    try:
        torch.testing.assert_close(got, want)
    except AssertionError as error:
        errors.append(str(error))
print(json.dumps({{"hits": hits, "errors": errors}}))
"""
    result = run_reporting_script(source)
    assert result == {"hits": 1, "errors": []}, result
