"""A slice of utils/zoo, the corpus of Hugging Face transformers models
(docs/testing.md, "Real models: utils/zoo"): one model run through the whole
harness, whatever its outcome today, checked for a consistent row and summary
line; a step that times out; and the harness's comparison with eager, which
must see each kind of difference it claims to see, and its float64 judgement
of results assert_close refuses."""
import collections
import importlib.machinery
import importlib.util
import math
import os
import re
import subprocess
import sys

import pytest

from conftest import BUILD, REPO

torch = pytest.importorskip("torch")
ZOO = os.path.join(REPO, "utils", "zoo")
SUMMARY = re.compile(r"zoo: (\d+) passed, (\d+) failed \(torch\.export accepts (\d+) of (\d+)\)")


def load_zoo():
    loader = importlib.machinery.SourceFileLoader("dync_zoo", ZOO)
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def run_zoo(*args):
    return subprocess.run([sys.executable, ZOO, "--build-dir", BUILD, *args], capture_output=True,
                          text=True, timeout=600)


def rows(stdout):
    """{model: cells} of the table printed before the summary."""
    lines = stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("model "))
    table = {}
    for line in lines[header + 1:]:
        if not line.strip():
            break
        cells = line.split(None, 5)
        table[cells[0]] = cells
    return table


def test_convnext_row_and_summary_agree(tmp_path):
    """ConvNeXt, the quickest model: torch.export accepts it; dync either
    passes it (exported, matched, hit, exit 0) or gives a failure row whose
    reason is the one listed by reason, and exits 1."""
    ran = run_zoo("--models", "convnext", "--no-time", "--keep", str(tmp_path))
    last = ran.stdout.strip().splitlines()[-1]
    summary = SUMMARY.fullmatch(last)
    assert summary, ran.stdout + ran.stderr
    passed, failed, accepted, total = map(int, summary.groups())
    assert (passed + failed, accepted, total) == (1, 1, 1), last
    row = rows(ran.stdout)["convnext"]
    assert row[1] == "yes"  # torch.export
    if passed:
        assert row[2:5] == ["yes", "yes", "yes"] and ran.returncode == 0, ran.stdout
        assert os.path.exists(tmp_path / "convnext.dync.so")
        return
    assert ran.returncode == 1
    assert "no" in row[2:5], row
    reason = row[5]
    assert reason, ran.stdout
    grouped = ran.stdout.split("failures by reason:\n", 1)[1].splitlines()[0]
    assert re.fullmatch(r"\s+1  .+ \(convnext\)", grouped), grouped
    assert load_zoo().reason_group(reason) in grouped
    # The progress line names the same failure.
    assert f"convnext failed: {reason}" in ran.stderr
    if row[2] == "no":
        # The reason is dync's own first line of error for this export.
        export = subprocess.run(
            [os.path.join(BUILD, "bin", "dync"), "export",
             os.path.join(REPO, "utils", "zoo_models", "convnext.py")
             + ":ConvNextForImageClassification.forward", "-o", str(tmp_path / "again.dync.so")],
            capture_output=True, text=True, cwd=tmp_path,
            env=dict(os.environ, HF_HUB_OFFLINE="1"))
        assert export.returncode != 0
        # The table shortens long reasons with "...".
        assert reason.split(" error: ", 1)[-1].removesuffix("...") in export.stderr


def test_a_step_that_times_out_fails_its_model_only():
    ran = run_zoo("--models", "vit", "--no-time", "--timeout", "1")
    lines = ran.stdout.strip().splitlines()
    assert lines[-1] == "zoo: 0 passed, 1 failed (torch.export accepts 0 of 1)", ran.stdout
    assert ran.returncode == 1
    assert "did not finish in 1 s" in rows(ran.stdout)["vit"][5]


def test_list_names_every_model_file_once():
    ran = subprocess.run([sys.executable, ZOO, "--list"], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    names = [line.split()[0] for line in ran.stdout.splitlines()]
    # _examples.py is what the model files share, not a model.
    files = sorted(f[:-3] for f in os.listdir(os.path.join(REPO, "utils", "zoo_models"))
                   if f.endswith(".py") and not f.startswith("_"))
    assert sorted(names) == files and len(set(names)) == len(names)
    assert len(names) >= 25


def test_unknown_model_is_a_usage_error():
    ran = run_zoo("--models", "gpt2,no_such_model")
    assert ran.returncode == 2
    assert "unknown model(s) no_such_model" in ran.stderr


class Output(collections.OrderedDict):
    """A result type like transformers' ModelOutput, an OrderedDict."""


def test_comparison_sees_each_difference():
    zoo = load_zoo()

    def output(**items):
        return Output(items)

    logits = torch.randn(2, 3)
    hidden = torch.randn(2, 4)
    expected = output(logits=logits, hidden=hidden)
    assert zoo.difference(output(logits=logits.clone(), hidden=hidden.clone()), expected) is None
    assert zoo.difference(output(logits=logits + 1e-7, hidden=hidden), expected) is None
    cases = {
        "values differ": output(logits=logits + 1e-2, hidden=hidden),
        "torch.float64": output(logits=logits.double(), hidden=hidden),
        "[3, 2]": output(logits=logits.t().contiguous(), hidden=hidden),
        "eager a Output of ('logits', 'hidden')": output(logits=logits),
        "a tuple": (logits, hidden),
        "a Output of ('hidden', 'logits')": output(hidden=hidden, logits=logits),
        "None": output(logits=logits, hidden=None),
    }
    for expect, actual in cases.items():
        why = zoo.difference(actual, expected)
        assert why is not None and expect in why, (expect, why)
    nan = torch.tensor([float("nan"), 1.0])
    assert zoo.difference((nan.clone(),), (nan,)) is None


def test_float64_judgement_passes_only_results_as_accurate_as_eager():
    """Where assert_close refuses a float tensor, the harness judges it
    against a float64 run: a result nearer the exact one than eager's
    passes, a result with one element off by 1e-3 does not, wherever that
    element is (here where eager's own error is largest), and without a
    float64 result the refusal stands."""
    zoo = load_zoo()
    generator = torch.Generator().manual_seed(0)
    # OWL-ViT's class logits in miniature: a similarity, a shift that nearly
    # cancels it, scaled up, so float32's roundings of the similarity show.
    a = torch.randn(64, 32, dtype=torch.float64, generator=generator)
    b = torch.randn(32, dtype=torch.float64, generator=generator)
    shift = -(a @ b) + 1e-3 * torch.randn(64, dtype=torch.float64, generator=generator)
    exact = (a @ b + shift) * 100
    eager = (a.float() @ b.float() + shift.float()) * 100
    # A masked position, as OWL-ViT fills them: float32's lowest number in
    # eager, -inf when computed in float64 and cast to float32.
    exact[5] = -math.inf
    eager[5] = torch.finfo(torch.float32).min
    rounded = exact.float()
    rounded[5] = eager[5]
    assert zoo.difference((rounded,), (eager,)) is not None

    notes = []
    assert zoo.difference((rounded,), (eager,), lambda: (exact,), notes) is None
    assert len(notes) == 1 and notes[0].startswith("result[0] passes"), notes

    eager_error = (eager.double() - exact).abs().nan_to_num(posinf=0)
    worst = int(eager_error.argmax())
    wrong = rounded.clone()
    wrong[worst] += 1e-3
    why = zoo.difference((wrong,), (eager,), lambda: (exact,))
    assert why is not None and f"at ({worst},)" in why, why

    def no_float64():
        raise RuntimeError("expected scalar type Float")

    why = zoo.difference((rounded,), (eager,), no_float64)
    assert why is not None and "no float64 result to judge by" in why, why


def test_floats_read_from_float32_tensors_are_judged_as_float32():
    """A Python float that is exactly a float32 number (`float(loss)` of a
    float32 loss, as CycleGAN's logged losses are) is judged as the 0-d
    float32 tensor it was read from: one float32 rounding apart passes, a
    larger difference names both values, and floats that are not float32
    numbers must be equal."""
    zoo = load_zoo()
    loss = torch.tensor(1.3387749195098877, dtype=torch.float32)
    neighbour = torch.nextafter(loss, torch.tensor(2.0))
    assert zoo.difference((float(neighbour),), (float(loss),)) is None
    why = zoo.difference((float(loss) + 1e-3,), (float(loss),))
    assert why is not None and "eager" in why, why
    far = float(torch.tensor(1.5, dtype=torch.float32))
    why = zoo.difference((far,), (float(loss),))
    assert why is not None and "1.5" in why, why
    assert zoo.difference((0.1,), (0.1,)) is None
    assert zoo.difference((0.1,), (0.1000001,)) is not None


def test_dynamic_plan_finds_batch_and_length_dimensions():
    """utils/zoo --dynamic declares a dimension symbolic where it followed
    the batch or the text length between two example calls, in every input
    that has one, and nowhere else (a hidden size of 8 that equals the
    export's length stays static because it did not move)."""
    zoo_dynamic = load_zoo().zoo_dynamic
    export, probe = zoo_dynamic.EXPORT_SIZES, zoo_dynamic.PROBE_SIZES

    def inputs(sizes):
        batch, length = sizes["batch"], sizes["length"]
        return {"input_ids": torch.zeros(batch, length, dtype=torch.long),
                "features": torch.zeros(batch, 3, export["length"]),
                "boxes": torch.zeros(batch, length, 4),
                "scale": 2.0}

    dims = zoo_dynamic.varying_dims(inputs(export), inputs(probe))
    assert dims == {"input_ids": {0: "b", 1: "s"}, "features": {0: "b"},
                    "boxes": {0: "b", 1: "s"}}
    specs = zoo_dynamic.dync_specs({"dims": dims, "length_max": 16})
    low, high = zoo_dynamic.BATCH_RANGE
    assert specs == ["--dynamic", f"input_ids:0=b[{low},{high}]", "--dynamic", "input_ids:1=s[1,16]",
                     "--dynamic", f"features:0=b[{low},{high}]",
                     "--dynamic", f"boxes:0=b[{low},{high}]", "--dynamic", "boxes:1=s[1,16]"]
    sizes = zoo_dynamic.sample_sizes(16)
    assert (1, 1) in sizes and (1, 16) in sizes and sizes[-1] == (export["batch"], export["length"])


class CancellingLogits(torch.nn.Module):
    """OWL-ViT's class logits in miniature, as a model: a similarity and a
    shift that nearly cancels it, scaled up."""

    def __init__(self):
        super().__init__()
        generator = torch.Generator().manual_seed(1)
        b = torch.randn(32, dtype=torch.float64, generator=generator)
        self.register_buffer("b", b.float())

    def forward(self, a, shift):
        return ((a @ self.b + shift) * 100,)


def test_dynamic_sizes_are_judged_against_float64_at_each_size():
    """utils/zoo --dynamic judges each size's result as the example's:
    a result as accurate as eager's own passes, with a note naming the
    size; one element off by 1e-3 at the second size fails there."""
    zoo = load_zoo()
    model = CancellingLogits()
    ran = []
    for rows in (16, 64):
        generator = torch.Generator().manual_seed(rows)
        a = torch.randn(rows, 32, generator=generator)
        shift = -(a.double() @ model.b.double()).float()
        shift += 1e-3 * torch.randn(rows, generator=generator)
        eager = model(a, shift)
        (exact,) = zoo.zoo_accuracy.float64_result(model, (a, shift), {})
        ran.append((f"batch {rows}", (a, shift), {}, eager, (exact.float(),)))
    # The judgement is needed: assert_close refuses a float32 rounding of
    # the exact result at both sizes.
    assert all(zoo.difference(actual, expected) is not None
               for _, _, _, expected, actual in ran)
    why, notes = zoo.sizes_difference(model, ran)
    assert why is None, why
    assert [n.split(":")[0] for n in notes] == ["at batch 16", "at batch 64"], notes

    where, args, kwargs, expected, (rounded,) = ran[1]
    wrong = rounded.clone()
    wrong[7] += 1e-3
    ran[1] = (where, args, kwargs, expected, (wrong,))
    why, _ = zoo.sizes_difference(model, ran)
    assert why is not None and why.startswith("at batch 64: the compiled result differs"), why
    assert "at (7,)" in why, why
