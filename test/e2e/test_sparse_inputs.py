"""Sparse COO tensor arguments, exported and run.

A graph takes a sparse COO tensor as an input (docs/capture.md, "Sparse
COO inputs"): the operators on it run through ATen, its nnz is a symbol
the guard binds, so one artifact serves adjacencies with any number of
edges. Each call is compared with eager mode (values, dtypes,
requires_grad and, in training, the parameters' gradients), and the
runtime's statistics say which path ran: a strided tensor where the graph
wants a sparse one (and the reverse), or a coalesced one where it was
captured uncoalesced, misses and runs the original code.
"""
import textwrap

import pytest

from test_export_roundtrip import PACKAGE_DIR, run_python

torch = pytest.importorskip("torch")

MODEL = textwrap.dedent("""
    import torch
    import torch.nn as nn


    class GCN(nn.Module):
        def __init__(self):
            super().__init__()
            self.w1 = nn.Parameter(torch.randn(5, 7) * 0.3)
            self.w2 = nn.Parameter(torch.randn(7, 3) * 0.3)
            self.bias = nn.Parameter(torch.randn(3) * 0.1)

        def forward(self, x, adj):
            h = torch.relu(torch.spmm(adj, x @ self.w1))
            out = torch.sparse.mm(adj, h @ self.w2) + self.bias
            return torch.log_softmax(out, dim=1), adj @ x


    def readers(adj, x):
        dense = adj.to_dense()
        return dense * 2 + x, adj._values().sum(), adj.sum(), adj._values().shape[0]


    def mixed(adj, x):
        return torch.mm(adj, x).sum(0) * 3


    def adjacency(n, edges, coalesce=False):
        rows = [a for a, b in edges] + [b for a, b in edges] + list(range(n))
        cols = [b for a, b in edges] + [a for a, b in edges] + list(range(n))
        values = torch.arange(1.0, len(rows) + 1) / len(rows)
        adj = torch.sparse_coo_tensor(torch.tensor([rows, cols]), values, (n, n))
        return adj.coalesce() if coalesce else adj


    EDGES = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (5, 2)]
    model = GCN()


    def example_inputs():
        return (torch.randn(6, 5), adjacency(6, EDGES))


    def readers_inputs():
        return (adjacency(6, EDGES), torch.randn(6, 6))


    def dense_inputs():
        return (adjacency(6, EDGES).to_dense(), torch.randn(6, 6))
""")

RUNNER = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {package!r})
    sys.path.insert(0, {folder!r})
    import torch
    import model
    import dync

    results = {{}}

    def call(fn, args, train):
        if not train:
            return fn(*args), None
        for p in model.model.parameters():
            p.grad = None
        out = fn(*args)
        (out[0] * torch.arange(out[0].numel()).view(out[0].shape)).sum().backward()
        return out, [p.grad.clone() for p in model.model.parameters()]

    def check(name, fn, entry, args, train=False):
        expected, expected_grads = call(fn, args, train)
        with dync.load({artifact!r}) as art:
            actual, grads = call(fn, args, train)
            stats = art.stats()[entry]
        torch.testing.assert_close(actual, expected, rtol=1e-6, atol=1e-6)
        flat = [t for t in (actual if isinstance(actual, tuple) else (actual,))
                if isinstance(t, torch.Tensor)]
        eager = [t for t in (expected if isinstance(expected, tuple) else (expected,))
                 if isinstance(t, torch.Tensor)]
        same_meta = all(a.dtype == e.dtype and a.requires_grad == e.requires_grad and
                        a.stride() == e.stride() for a, e in zip(flat, eager))
        if train:
            for g, e in zip(grads, expected_grads):
                torch.testing.assert_close(g, e, rtol=1e-6, atol=1e-6)
        results[name] = {{"meta": same_meta, "hits": stats["hits"], "misses": stats["misses"]}}

    {body}
    print(json.dumps(results))
""")


def test_sparse_adjacency_matches_eager_for_every_nnz(run_dync, tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    module = str(tmp_path / "model.py")
    out = tmp_path / "gcn.so"
    done = run_dync("export", module + ":GCN.forward", module + ":readers", module + ":mixed",
                    "--example", "readers=readers_inputs", "--example", "mixed=readers_inputs",
                    "-o", out)
    assert done.returncode == 0, done.stderr
    results = run_python(RUNNER.format(package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(out),
                                       body=textwrap.dedent("""
        net = model.model
        x = torch.randn(6, 5)
        small = model.adjacency(6, [(0, 1)])
        for label, adj in (("example", model.adjacency(6, model.EDGES)),
                           ("fewer edges", small),
                           ("more edges", model.adjacency(6, model.EDGES + [(0, 3), (1, 4)]))):
            with torch.no_grad():
                check("no_grad " + label, net, "GCN.forward", (x, adj))
            check("train " + label, net, "GCN.forward", (x, adj), train=True)
            check("readers " + label, model.readers, "readers", (adj, torch.randn(6, 6)))
        # A strided adjacency, and a coalesced one, miss and run eagerly.
        with torch.no_grad():
            check("no_grad dense", net, "GCN.forward", (x, small.to_dense()))
            check("no_grad coalesced", net, "GCN.forward", (x, small.coalesce()))
            check("mixed " + label, model.mixed, "mixed", (adj, torch.randn(6, 6)))
        check("mixed dense", model.mixed, "mixed", (small.to_dense(), torch.randn(6, 6)))
    """).strip()))
    for name, result in results.items():
        assert result["meta"], (name, result)
        missed = name.endswith("dense") or name.endswith("coalesced")
        assert (result["hits"], result["misses"]) == ((0, 1) if missed else (1, 0)), (name, result)


def test_strided_example_graph_misses_on_a_sparse_argument(run_dync, tmp_path):
    """The reverse: a graph captured with a strided matrix misses on a sparse
    one, whose call then runs the original code."""
    (tmp_path / "model.py").write_text(MODEL)
    module = str(tmp_path / "model.py")
    out = tmp_path / "dense.so"
    done = run_dync("export", module + ":mixed", "--example", "mixed=dense_inputs", "-o", out)
    assert done.returncode == 0, done.stderr
    results = run_python(RUNNER.format(package=PACKAGE_DIR, folder=str(tmp_path), artifact=str(out),
                                       body=textwrap.dedent("""
        adj = model.adjacency(6, model.EDGES)
        check("dense", model.mixed, "mixed", (adj.to_dense(), torch.randn(6, 6)))
        check("sparse", model.mixed, "mixed", (adj, torch.randn(6, 6)))
    """).strip()))
    assert (results["dense"]["hits"], results["dense"]["misses"]) == (1, 0), results
    assert (results["sparse"]["hits"], results["sparse"]["misses"]) == (0, 1), results
