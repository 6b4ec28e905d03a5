"""Building the artifact: objects cached by content, compiled in parallel, for
the CPU --target-cpu names.

Each artifact is exported, then loaded in a fresh interpreter and compared
with eager PyTorch, as in test_export_roundtrip.py.
"""
import glob
import os
import re

import pytest

from test_export_roundtrip import EXAMPLES, PACKAGE_DIR, run_python, runner

torch = pytest.importorskip("torch")
MLP = os.path.join(EXAMPLES, "mlp")


def export_mlp(run_dync, out, cache, *extra):
    env = dict(os.environ, DYNC_CACHE_DIR=str(cache))
    done = run_dync("-v", "export", os.path.join(MLP, "model.py") + ":MLP.forward", "-o", out,
                    *extra, env=env)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stderr.splitlines() if line.startswith("dync: objects:")][0]


def matches_eager(artifact):
    results = run_python(runner(MLP, "model.MLP()", str(artifact), "MLP.forward",
                                "check('example', model.example_inputs())\n"))
    return (results["example"]["hits"], results["example"]["misses"]) == (1, 0)


def object_counts(line):
    """(compiled, from the cache) from the driver's `dync: objects:` line."""
    match = re.match(r"dync: objects: (\d+) compiled, (\d+) from the cache", line)
    assert match, line
    return int(match.group(1)), int(match.group(2))


def test_cache_hit_and_damaged_entry(run_dync, tmp_path):
    cache = tmp_path / "cache"
    compiled, cached = object_counts(export_mlp(run_dync, tmp_path / "first.so", cache, "-j", "2"))
    # An empty cache: every object is compiled, and each becomes one entry.
    entries = sorted(glob.glob(str(cache / "objects" / "*.o")))
    assert compiled >= 1 and cached == 0
    assert len(entries) == compiled

    assert object_counts(export_mlp(run_dync, tmp_path / "second.so", cache)) == (0, compiled)
    assert matches_eager(tmp_path / "second.so")

    # A truncated entry is a miss: that object is compiled again and its
    # entry rewritten whole; the others still come from the cache.
    size = os.path.getsize(entries[0])
    with open(entries[0], "r+b") as entry:
        entry.truncate(size // 2)
    third = object_counts(export_mlp(run_dync, tmp_path / "third.so", cache))
    assert third == (1, compiled - 1)
    assert os.path.getsize(entries[0]) == size
    assert matches_eager(tmp_path / "third.so")


def test_no_cache_leaves_the_cache_alone(run_dync, tmp_path):
    cached_run = tmp_path / "with-cache"
    expected, _ = object_counts(export_mlp(run_dync, tmp_path / "cached.so", cached_run))
    cache = tmp_path / "cache"
    line = export_mlp(run_dync, tmp_path / "model.so", cache, "--no-cache")
    assert line == f"dync: objects: {expected} compiled, 0 from the cache (cache off)"
    assert not cache.exists()
    assert matches_eager(tmp_path / "model.so")


def host_has(*features):
    flags = set()
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("flags"):
                flags.update(line.split(":", 1)[1].split())
                break
    return all(feature in flags for feature in features)


@pytest.mark.skipif(host_has("amx_tile", "avx512_fp16"),
                    reason="this machine has Sapphire Rapids' features")
def test_artifact_for_a_cpu_with_more_features_is_refused(run_dync, tmp_path):
    out = tmp_path / "spr.so"
    export_mlp(run_dync, out, tmp_path / "cache", "--target-cpu", "sapphirerapids")
    inspect = run_dync("inspect", out)
    assert "target_cpu sapphirerapids" in inspect.stdout
    source = f"""
import json, sys
sys.path.insert(0, {PACKAGE_DIR!r})
sys.path.insert(0, {MLP!r})
import dync
try:
    dync.load({str(out)!r})
    print(json.dumps({{"loaded": True}}))
except dync.ArtifactError as error:
    print(json.dumps({{"kind": error.kind, "message": str(error)}}))
"""
    result = run_python(source)
    assert result.get("kind") == "cpu-feature-missing", result
    assert "amx-tile" in result["message"] and "sapphirerapids" in result["message"]


def test_artifact_for_a_baseline_cpu_runs(run_dync, tmp_path):
    out = tmp_path / "baseline.so"
    export_mlp(run_dync, out, tmp_path / "cache", "--target-cpu", "x86-64")
    inspect = run_dync("inspect", out)
    assert "target_cpu x86-64\n" in inspect.stdout
    assert "avx" not in inspect.stdout.split("cpu_features", 1)[1].splitlines()[0]
    assert matches_eager(out)
