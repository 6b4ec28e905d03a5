"""Large tensors a compiled graph makes reuse the memory of dead ones.

The model's result is a kernel output of 4 MiB, above the output cache's
threshold. Results still alive must keep their own memory and values while
later calls run; once one dies, the next call's result takes its block
(the pages are already mapped) and its values are still those of eager.
The result's storage grows with resize_ as an eager tensor's does. A budget
in $DYNC_OUTPUT_CACHE_MB that is not a whole number keeps the default.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD

torch = pytest.importorskip("torch")
PACKAGE_DIR = os.path.join(BUILD, "python")

MODEL = textwrap.dedent("""
    import torch


    class Chain(torch.nn.Module):
        def forward(self, x):
            return torch.tanh(x * 2) + x


    def example_inputs():
        return (torch.randn(1 << 20),)
""")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import chain
    import dync

    def close(actual, expected):
        try:
            torch.testing.assert_close(actual, expected)
            return True
        except AssertionError:
            return False

    model = chain.Chain()
    inputs = [torch.randn(1 << 20, generator=torch.Generator().manual_seed(i)) for i in range(3)]
    expected = [model(x) for x in inputs]
    report = {{}}
    with dync.load({artifact!r}) as loaded:
        first = model(inputs[0])
        second = model(inputs[1])
        report["distinct"] = first.data_ptr() != second.data_ptr()
        report["first_kept"] = close(first, expected[0])
        report["second"] = close(second, expected[1])
        block = first.data_ptr()
        del first
        third = model(inputs[2])
        report["reused"] = third.data_ptr() == block
        report["third"] = close(third, expected[2])
        third.resize_(1 << 21)
        report["resized"] = close(third[: 1 << 20], expected[2])
        report["hits"] = loaded.stats()["Chain.forward"]["hits"]
    print(json.dumps(report))
""")


@pytest.fixture(scope="module")
def exported(run_dync, tmp_path_factory):
    """The model's folder and its artifact, exported once for every budget."""
    folder = tmp_path_factory.mktemp("output-cache")
    (folder / "chain.py").write_text(MODEL)
    artifact = folder / "chain-artifact.so"
    done = run_dync("export", f"{folder / 'chain.py'}:Chain.forward", "-o", artifact,
                    "--emit=optimized-graph")
    assert done.returncode == 0, done.stderr
    assert "kernel @" in done.stdout, done.stdout
    return folder, artifact


@pytest.mark.parametrize("budget", [None, "256MB", "-1"])
def test_dead_results_memory_is_reused(exported, budget):
    folder, artifact = exported
    source = RUNNER.format(package=PACKAGE_DIR, folder=str(folder), artifact=str(artifact))
    env = {k: v for k, v in os.environ.items() if k != "DYNC_OUTPUT_CACHE_MB"}
    if budget is not None:
        env["DYNC_OUTPUT_CACHE_MB"] = budget
    ran = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, env=env)
    assert ran.returncode == 0, ran.stderr
    # A budget that is not a whole number keeps the default, and says so once.
    warning = (f"dync: DYNC_OUTPUT_CACHE_MB={budget} is not a whole number of megabytes; "
               "the output cache keeps its default of 256")
    assert ran.stderr.count(warning) == (0 if budget is None else 1), ran.stderr
    report = json.loads(ran.stdout.strip().splitlines()[-1])
    assert report == {"distinct": True, "first_kept": True, "second": True, "reused": True,
                      "third": True, "resized": True, "hits": 3}, report
