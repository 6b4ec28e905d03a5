"""Module container slices and functools.partial, end to end.

Inputs/containers_and_partials.py: a model that slices its ModuleList and
Sequential (prefixes, negative and stepped slices, slices of slices, calling
a sliced Sequential) and iterates its ModuleDict, and a function that makes,
flattens, reads and calls partials (one of a subclass, one read from a
global) and walks a functools.wraps chain with inspect.unwrap, whose id()
memo runs in capture, and reads inspect.signature of a partial. Both are exported in one artifact, loaded in a fresh
interpreter and compared with eager; then the sliced container's layers are
changed in place: the parameters are graph inputs, so the compiled code
follows the new weights and still matches eager.
"""
import os

from conftest import INPUTS, compare_with_eager


def test_slices_and_partials_match_eager(run_dync, tmp_path):
    source = os.path.join(INPUTS, "containers_and_partials.py")
    artifact = tmp_path / "slices.dync.so"
    exported = run_dync("export", f"{source}:Slices.forward", f"{source}:partials",
                        "--example", "partials=partials_inputs", "-o", artifact)
    assert exported.returncode == 0, exported.stderr
    report = compare_with_eager(INPUTS, artifact, """
        import torch
        import containers_and_partials as m
        x, = m.example_inputs()
        y, = m.partials_inputs()

        def retrained():
            # New weights in a layer only slices reach: a graph that baked
            # them in as constants would differ from eager.
            with torch.no_grad():
                m.model.layers[4].weight.mul_(-1.0)
            out = m.model(x)
            with torch.no_grad():
                m.model.layers[4].weight.mul_(-1.0)
            return out

        calls = {
            "Slices.forward": lambda: (m.model(x), m.model(2 * x), retrained()),
            "partials": lambda: (m.partials(y), m.partials(-y)),
        }
        """)
    assert report == {"Slices.forward": [None, 3, 0, None],
                      "partials": [None, 2, 0, None]}, report
