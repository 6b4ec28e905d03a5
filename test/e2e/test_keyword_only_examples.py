"""A keyword-only parameter after *args given by example_kwargs(), end to
end (Inputs/keyword_only_examples.py): the export binds it by keyword, the
artifact serves a call made with the examples, and the result equals
eager's; a call with the flag left at its default misses the guard on it
and runs the original code, equal to eager too."""
import os

import pytest

from conftest import INPUTS, compare_with_eager

torch = pytest.importorskip("torch")


def test_keyword_only_after_varargs(run_dync, tmp_path):
    source = os.path.join(INPUTS, "keyword_only_examples.py")
    artifact = tmp_path / "keyword_only.dync.so"
    exported = run_dync("export", f"{source}:Backbone.forward", "-o", artifact)
    assert exported.returncode == 0, exported.stderr
    report = compare_with_eager(INPUTS, artifact, """
        import keyword_only_examples as m
        args, kwargs = m.example_inputs(), m.example_kwargs()
        calls = {"Backbone.forward": lambda: (m.model(*args, **kwargs),
                                              m.model(*args, masks=kwargs["masks"]))}
        """)
    error, hits, misses, reason = report["Backbone.forward"]
    assert error is None, error
    assert (hits, misses) == (1, 1), report
    assert "is_training" in reason, reason
