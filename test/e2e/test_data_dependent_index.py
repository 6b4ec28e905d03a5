"""Indexing with an integer known only from tensor data, end to end
(Inputs/data_dependent_index.py): a 0-d integer tensor and an `item()` int
select as in eager. The artifact serves the example call, another timestep
(the guards do not pin the index's value), a negative one (select wraps it
as eager does) and raises for one out of range, as eager does (eager's
IndexError; the graph's RuntimeError names the select and the index)."""
import os

import pytest

from conftest import INPUTS, compare_with_eager

torch = pytest.importorskip("torch")


def test_data_dependent_index_as_eager(run_dync, tmp_path):
    source = os.path.join(INPUTS, "data_dependent_index.py")
    artifact = tmp_path / "index.dync.so"
    exported = run_dync("export", f"{source}:Step.forward", "-o", artifact)
    assert exported.returncode == 0, exported.stderr
    report = compare_with_eager(INPUTS, artifact, """
        import torch
        import data_dependent_index as m
        x, t, noise = m.example_inputs()
        calls = {"Step.forward": lambda: [m.model(x, torch.tensor(s), noise) for s in (31, 7, 49, -3)]}
        """)
    assert report["Step.forward"] == [None, 4, 0, None], report
    raised = compare_with_eager(INPUTS, artifact, """
        import torch
        import dync
        import data_dependent_index as m
        x, t, noise = m.example_inputs()

        def message(call):
            try:
                call()
            except Exception as error:
                return type(error).__name__ + (": index 50" if "index 50" in str(error) else "")
            return "no error"

        eager = message(lambda: m.model(x, torch.tensor(50), noise))
        with dync.load(%r) as art:
            compiled = message(lambda: m.model(x, torch.tensor(50), noise))
            stats = art.stats()["Step.forward"]
        calls = {}
        print(__import__("json").dumps({"eager": eager, "compiled": compiled, "calls": stats["calls"]}))
        raise SystemExit(0)
        """ % str(artifact))
    assert raised == {"eager": "IndexError: index 50", "compiled": "RuntimeError: index 50",
                      "calls": 1}, raised
