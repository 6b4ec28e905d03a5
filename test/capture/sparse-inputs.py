# Sparse COO tensor arguments: the input's type names its layout, sparse
# dimensions and nnz, a symbol of its own (nnz0, nnz1, ...) the guard binds,
# so one graph serves every nnz; coalesced-ness is part of the type. Calls
# on a sparse operand stay whole (torch's decompositions are for strided
# tensors) and run through ATen. A node whose result is sparse, an
# operator fake mode refuses, another sparse layout and --dynamic sizes of a
# sparse argument stop with a message at the user's line.
# RUN: %dync export %s:f --emit=graph 2>&1 | FileCheck %s --check-prefix=GRAPH
# RUN: %dync export %s:f --emit=guards 2>&1 | FileCheck %s --check-prefix=GUARDS
# RUN: %dync export %s:k --example coalesced_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=COALESCED
# RUN: not %dync export %s:g --example one_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=RESULT
# RUN: not %dync export %s:k --example one_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=UNCOALESCED
# RUN: not %dync export %s:g --example csr_inputs --emit=graph 2>&1 \
# RUN:   | FileCheck %s --check-prefix=CSR
# RUN: not %dync export %s:f --emit=graph --dynamic 'adj:0=n[2,64]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=DYNSPARSE
# RUN: not %dync export %s:f --emit=graph --dynamic 'x:1=c[2,64]' 2>&1 \
# RUN:   | FileCheck %s --check-prefix=DYNDENSE
import torch


def f(x, adj):
    return torch.spmm(adj, x) + adj.to_dense().sum(1, keepdim=True), adj._values() * 2, adj.sum()


def g(adj):
    return adj.coalesce()


def k(adj):
    return adj.indices()


def adjacency(coalesced=False):
    i = torch.tensor([[0, 1, 2, 3, 0], [1, 2, 3, 0, 0]])
    a = torch.sparse_coo_tensor(i, torch.arange(1.0, 6.0), (4, 4))
    return a.coalesce() if coalesced else a


def example_inputs():
    return (torch.randn(4, 3), adjacency())


def one_inputs():
    return (adjacency(),)


def coalesced_inputs():
    return (adjacency(True),)


def csr_inputs():
    return (adjacency().to_sparse_csr(),)


# GRAPH-LABEL: graph @f(%x: tensor<f32, [4, 3]> = L['x'],
# GRAPH-NEXT:      %adj: tensor<f32, [4, 4], sparse_coo(2, nnz0)> = L['adj'])
# GRAPH-NEXT:      symbols { nnz0: [2, inf] } {
# GRAPH-NEXT:    %0 = aten::mm.default(%adj, %x) : tensor<f32, [4, 3]>
# GRAPH-NEXT:    %1 = aten::_to_dense.default(%adj) : tensor<f32, [4, 4]>
# GRAPH:         aten::_values.default(%adj) : tensor<f32, [nnz0]>
# GRAPH:         aten::sum.default(%adj) : tensor<f32, []>

# GUARDS-LABEL: guards @f(x, adj) {
# GUARDS-NEXT:    tensor L['x'] : tensor<f32, [4, 3]>
# GUARDS-NEXT:    tensor L['adj'] : tensor<f32, [4, 4], sparse_coo(2, nnz0)>

# COALESCED:      graph @k(%adj: tensor<f32, [4, 4], sparse_coo(2, nnz0, coalesced)> = L['adj'])
# COALESCED:        aten::indices.default(%adj) : tensor<i64, [2, nnz0]>

# RESULT: sparse-inputs.py:30:12: error: the result has layout torch.sparse_coo; graphs hold sparse tensors only as inputs, since fake tensors cannot tell how many entries an operator's sparse result stores: densify it (to_dense()) or compute on it outside the graph
# RESULT-NEXT: return adj.coalesce()

# UNCOALESCED: sparse-inputs.py:34:12: error: calling torch.Tensor.indices with the example's sizes raised RuntimeError: Cannot get indices on an uncoalesced tensor, please call .coalesce() first

# CSR: error: L['adj'] has layout torch.sparse_csr; only strided and sparse COO tensors are inputs

# DYNSPARSE: error: finishing the shape environment: dimension 0 of L['adj'] (n) was specialized to 4

# DYNDENSE: sparse-inputs.py:26:12: error: torch.spmm reaches aten.mm.default, for which torch has no rule giving its result's sizes from symbolic ones, so it cannot be captured with sizes declared dynamic (nor can torch.export): keep this call's arguments at fixed sizes, or call it outside the exported function
# DYNDENSE-NOT: UnsupportedOperatorException
