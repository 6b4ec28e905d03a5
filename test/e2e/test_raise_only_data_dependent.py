"""A branch on a number computed from tensor data whose one side only
raises, exported and run.

LLaVA's placeholder check, `if embeds[mask].numel() != feats.numel(): raise
ValueError(...)`, compares a size known only from the mask's values.
Capture states with torch._check that the raising side is not taken
(docs/capture.md, "Branches that only raise"); the artifact must give
eager's values where the statement holds (a hit) and, where it does not,
run the original code, which raises eager's exception.
"""
import textwrap

import pytest

from test_raise_only_branch import entry, export, run_checks

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch


    def merge(ids, embeds, feats):
        mask = (ids == 7).unsqueeze(-1).expand_as(embeds)
        if embeds[mask].numel() != feats.numel():
            raise ValueError(f"tokens {mask.sum()} and features {feats.numel()} do not match")
        return embeds.masked_scatter(mask, feats) * 2


    def counted(x, n):
        k = n.item()
        if k < 0:
            raise ValueError("negative count")
        return torch.zeros(k) + x.sum()


    def asserted(x, limit):
        picked = x[x > 0]
        assert picked.shape[0] <= limit.shape[0], "too many"
        return picked.sum() + limit.sum()


    def merge_inputs():
        ids = torch.tensor([[1, 7, 7, 2], [7, 3, 4, 5]])
        return ids, torch.randn(2, 4, 3), torch.randn(3, 3)


    def counted_inputs():
        return torch.randn(3), torch.tensor(4)


    def asserted_inputs():
        return torch.tensor([1.0, -1.0, 2.0, -3.0]), torch.zeros(3)
""")


@pytest.fixture
def model_dir(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def test_size_check_holds_hits_and_breaks_fall_back(run_dync, model_dir):
    artifact = export(run_dync, model_dir, entry(model_dir, "merge"), entry(model_dir, "counted"),
                      entry(model_dir, "asserted"), "--example", "merge=merge_inputs",
                      "--example", "counted=counted_inputs", "--example", "asserted=asserted_inputs")
    results = run_checks(model_dir, artifact, """
        ids, embeds, feats = model.merge_inputs()
        check("merge good", "merge", (ids, embeds, feats))
        other = torch.tensor([[7, 1, 2, 3], [4, 7, 5, 7]])
        check("merge other positions", "merge", (other, embeds, feats))
        check("merge bad", "merge", (torch.tensor([[7, 7, 1, 2], [3, 4, 5, 6]]), embeds, feats))
        x, n = model.counted_inputs()
        check("counted good", "counted", (x, n))
        check("counted zero", "counted", (x, torch.tensor(0)))
        check("counted bad", "counted", (x, torch.tensor(-2)))
        x, limit = model.asserted_inputs()
        check("asserted good", "asserted", (x, limit))
        check("asserted bad", "asserted", (torch.ones(4), limit))
    """)
    for name, result in results.items():
        assert result["same"], (name, result)
        if name.endswith("bad"):
            assert result["expected"] == "raised", (name, result)
            assert (result["hits"], result["misses"]) == (0, 1), (name, result)
            assert "ran the original code" in result["reason"], (name, result)
        else:
            assert result["expected"] == "value", (name, result)
            assert (result["hits"], result["misses"]) == (1, 0), (name, result)
    assert "do not match" in results["merge bad"]["actual"]
    assert "negative count" in results["counted bad"]["actual"]
    assert "too many" in results["asserted bad"]["actual"]
