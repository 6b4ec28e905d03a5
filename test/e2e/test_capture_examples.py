"""Captured graphs against eager PyTorch: for each example, the types of the
results `dync export --emit=signature` reports equal those of running the
model eagerly on the same example inputs."""
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import REPO

EXAMPLES = os.path.join(REPO, "examples")

# (file, entry, --dynamic specs as (argument, dim, symbol, range))
CASES = [
    ("mlp/model.py", "MLP.forward", []),
    ("cnn/model.py", "CNN.forward", []),
    ("cnn/model.py", "model.forward", [("images", 0, "n", "[1,8]")]),
    ("transformer/model.py", "EncoderBlock.forward", []),
    ("transformer/model.py", "EncoderBlock.forward",
     [("x", 0, "b", "[1,64]"), ("x", 1, "seq", "[1,512]")]),
]

# Runs the entry eagerly the way capture does: self is the module-level
# instance of the class if there is one, else Class(); the arguments are
# example_inputs(). Prints each result's dtype and shape, and each tensor
# argument's shape, as JSON.
EAGER = r"""
import importlib.util, json, sys, torch
path, qualname = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("model", path)
module = importlib.util.module_from_spec(spec)
sys.modules["model"] = module
spec.loader.exec_module(module)
owner_name, method = qualname.rsplit(".", 1)
owner = getattr(module, owner_name)
if isinstance(owner, type):
    instances = [v for v in vars(module).values() if type(v) is owner]
    owner = instances[0] if instances else owner()
args = module.example_inputs()
with torch.no_grad():
    out = getattr(owner, method)(*args)
outs = out if isinstance(out, tuple) else (out,)
print(json.dumps({
    "results": [[str(o.dtype).replace("torch.", ""), list(o.shape)] for o in outs],
    "args": [list(a.shape) if isinstance(a, torch.Tensor) else None for a in args],
}))
"""

DTYPES = {"f32": "float32", "f64": "float64", "f16": "float16", "bf16": "bfloat16",
          "i64": "int64", "i32": "int32", "bool": "bool"}


def parse_signature(text):
    """The tensors of 'result: tensor<f32, [32, 10]>' (a single result) or
    'result 0: tensor<...>' (an element of a returned tuple or list) lines, as
    (dtype, [size text, ...]), depth-first."""
    results = []
    for line in text.splitlines():
        if re.fullmatch(r"result(?: [\d.]+)?: (tuple|list)", line.strip()):
            continue
        match = re.fullmatch(r"result(?: [\d.]+)?: tensor<(\w+), \[([^\]]*)\].*>", line.strip())
        assert match, f"unexpected signature line: {line!r}"
        sizes = [s.strip() for s in match.group(2).split(",") if s.strip()]
        results.append((DTYPES[match.group(1)], sizes))
    return results


def evaluate(size, symbols):
    """A size of the graph's symbolic-integer language at the example's
    values: products and sums of symbols and constants."""
    expr = size.replace("floordiv", "//").replace("mod", "%")
    return eval(expr, {"__builtins__": {}, "min": min, "max": max}, symbols)


@pytest.mark.parametrize("path,entry,dynamic", CASES,
                         ids=[f"{p.split('/')[0]}:{e}{'-dynamic' if d else ''}"
                              for p, e, d in CASES])
def test_capture_matches_eager(run_dync, path, entry, dynamic):
    model = os.path.join(EXAMPLES, path)
    args = ["export", f"{model}:{entry}", "--emit=signature"]
    for argument, dim, symbol, bounds in dynamic:
        args += ["--dynamic", f"{argument}:{dim}={symbol}{bounds}"]
    captured = run_dync(*args)
    assert captured.returncode == 0, captured.stderr
    signature = parse_signature(captured.stdout)

    eager = subprocess.run([sys.executable, "-c", EAGER, model, entry],
                           capture_output=True, text=True, check=True)
    expected = json.loads(eager.stdout.strip().splitlines()[-1])

    # Bind each declared symbol to the example's size for that dimension.
    code_args = {"MLP.forward": ["x"], "CNN.forward": ["images"], "model.forward": ["images"],
                 "EncoderBlock.forward": ["x"]}[entry]
    symbols = {}
    for argument, dim, symbol, _ in dynamic:
        symbols[symbol] = expected["args"][code_args.index(argument)][dim]

    assert len(signature) == len(expected["results"])
    for (dtype, sizes), (eager_dtype, eager_shape) in zip(signature, expected["results"]):
        assert dtype == eager_dtype
        assert [evaluate(s, symbols) for s in sizes] == eager_shape
        if dynamic:
            # The batch dimension stays symbolic in the captured type.
            assert any(re.search(r"[a-z]", s) for s in sizes), sizes
