"""The Session's inputs: fake twins of real tensors, with the dimensions the
user declared dynamic as ShapeEnv symbols, and symbolic int arguments.
"""

import torch
from torch._subclasses.fake_tensor import FakeTensor
from torch.fx.experimental.symbolic_shapes import DimDynamic, StrictMinMaxConstraint
from torch.utils._sympy.numbers import int_oo
from torch.utils._sympy.value_ranges import ValueRanges

from dync_oracle_call_canon import fake_empty_strided
from dync_oracle_imports import _while_busy
from dync_oracle_symbols import _Dim, _DimSource
from dync_oracle_wire import _DTYPES, OracleError


class _Inputs:
    """The part of Session that makes its inputs."""

    # Inputs ----------------------------------------------------------------

    @_while_busy
    def add_input(self, real, source, dynamic_dims):
        """The fake twin of `real`, with the listed dims symbolic.

        `dynamic_dims` is a sequence of (dim, name, lo, hi, hint), lo/hi None
        when unbounded; hint, when not None, is the size capture assumes
        instead of the example's (a specialization of the declared range:
        0 and 1 make the dimension that constant, as torch would). Returns
        (fake, meta) where meta is TensorMeta.
        """
        if not isinstance(real, torch.Tensor) or isinstance(real, FakeTensor):
            raise OracleError(f"{source} is a {type(real).__qualname__}, not a real tensor")
        if real.layout not in (torch.strided, torch.sparse_coo):
            raise OracleError(
                f"{source} has layout {real.layout}; only strided and sparse COO tensors are inputs"
            )
        if real.dtype not in _DTYPES:
            raise OracleError(f"{source} has dtype {real.dtype}, which graphs cannot hold")
        shape = list(real.shape)
        sizes = list(shape)
        seen = set()
        for dim, name, lo, hi, hint in dynamic_dims:
            if dim >= len(shape):
                raise OracleError(
                    f"{source} has {len(shape)} dimensions; it has no dimension {dim} to make dynamic"
                )
            if dim in seen:
                raise OracleError(f"dimension {dim} of {source} is declared dynamic twice")
            seen.add(dim)
            sizes[dim] = self._dim(real, source, dim, name, lo, hi, hint)
        if real.layout == torch.sparse_coo:
            fake = self._sparse_coo_input(real, source, sizes)
            return fake, self._meta(fake, fresh=True)
        strides = self._strides(real, source, shape, sizes, bool(dynamic_dims))
        requires_grad = real.requires_grad and self.inputs_require_grad
        if not dynamic_dims and real.device.type == "cpu":
            # Parameters are most inputs, and dispatching the factory
            # through the fake mode was most of their cost.
            fake = fake_empty_strided(self.fake, sizes, strides, real.dtype, real.device,
                                      requires_grad)
        else:
            with self.fake:
                fake = torch.empty_strided(
                    sizes, strides, dtype=real.dtype, device=real.device,
                    requires_grad=requires_grad,
                )
        meta = self._meta(fake, fresh=True)
        self.example.note_input(meta[0], real)
        return fake, meta

    def _sparse_coo_input(self, real, source, sizes):
        """The fake twin of a sparse COO tensor: fake indices and values whose
        entry count, nnz, is a symbol of its own (`nnz0`, `nnz1`, ... in input
        order), so the graph serves every nnz; torch specializes 0 and 1, so an
        example storing 0 or 1 entries makes nnz that constant."""
        nnz = real._nnz()
        name = f"nnz{self.sparse_inputs}"
        self.sparse_inputs += 1
        if name in self.dims:
            raise OracleError(f"{source}'s nnz symbol {name} is already a declared symbol")
        if nnz >= 2:
            where = f"{source}._values().size()[0]"
            nnz = self._new_symbol(name, nnz, where, None, None, (source, None))
        sparse_dim = real.sparse_dim()
        with self.fake:
            indices = torch.empty((sparse_dim, nnz), dtype=torch.int64, device=real.device)
            values = torch.empty([nnz, *sizes[sparse_dim:]], dtype=real.dtype, device=real.device)
            fake = torch.sparse_coo_tensor(
                indices, values, sizes, is_coalesced=real.is_coalesced(), check_invariants=False
            )
            if real.requires_grad and self.inputs_require_grad:
                fake.requires_grad_()
        fake._dync_sparse_input = True
        return fake

    def _dim(self, real, source, dim, name, lo, hi, hint=None):
        size = real.shape[dim] if hint is None else hint
        where = f"dimension {dim} of {source} ({name})"
        if hint is not None:
            # A specialization of the declared range may pin the symbol.
            self.specializing = True
            if hint in (0, 1):
                known = self.dims.get(name)
                if known is None:
                    self.dims[name] = _Dim(None, hint, hint, lo, hi, [(source, dim)])
                else:
                    known.places.append((source, dim))
                return hint
        if size in (0, 1):
            raise OracleError(
                f"{where} has example size {size}; torch specializes sizes 0 and 1, so a "
                f"dynamic dimension needs an example of size 2 or more"
            )
        if (lo is not None and size < lo) or (hi is not None and size > hi):
            raise OracleError(
                f"{where} has example size {size}, outside its declared range "
                f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
            )
        known = self.dims.get(name)
        if known is not None:
            if known.hint != size:
                first, first_dim = known.places[0]
                raise OracleError(
                    f"{where} has example size {size}, but the same symbol is "
                    + (first if first_dim is None else f"dimension {first_dim} of {first}")
                    + f", of size {known.hint}; dimensions that share a "
                    f"symbol must have equal example sizes"
                )
            if (known.lo, known.hi) != (lo, hi):
                raise OracleError(f"{where} gives symbol {name} a different range than before")
            known.places.append((source, dim))
            self.env.var_to_sources[known.symbol].append(_DimSource(f"{source}.size()[{dim}]"))
            return known.symint
        # One symbol per name: every dimension given this name reuses it, so
        # the ShapeEnv never has two symbols to reconcile.
        return self._new_symbol(name, size, f"{source}.size()[{dim}]", lo, hi, (source, dim))

    def _new_symbol(self, name, value, source_text, lo, hi, place):
        """The ShapeEnv symbol for user symbol `name`, example `value`, range
        [lo, hi] (None: unbounded), first seen at `place`."""
        symbol_source = _DimSource(source_text)
        constraint = StrictMinMaxConstraint(
            vr=ValueRanges(0 if lo is None else lo, int_oo if hi is None else hi),
            warn_only=False,
        )
        symbol = self.env.create_symbol(
            value, symbol_source, dynamic_dim=DimDynamic.DYNAMIC, constraint_dim=constraint
        )
        symint = self.env.create_symintnode(symbol, hint=value, source=symbol_source)
        self.dims[name] = _Dim(symbol, symint, value, lo, hi, [place])
        self.names[symbol] = name
        return symint

    # Symbolic int inputs ---------------------------------------------------

    @_while_busy
    def add_int_input(self, value, source, name, lo, hi, hint):
        """A torch.SymInt for the Python int argument `value` at `source`,
        the user symbol `name` with range [lo, hi] (None: unbounded).

        The symbol is a size, as a dynamic dimension's is: torch assumes
        0 and 1 away, so `value` is at least 2 (a capture at 0 or 1 is a
        constant the caller passes as such). A name a tensor dimension
        already uses is that very symbol: the int equals that size. `hint`
        (not None) is the value capture assumes instead of `value`, for a
        specialization of the declared range (see `_dim`)."""
        if type(value) is not int:
            raise OracleError(f"{source} is a {type(value).__qualname__}, not an int")
        if hint is not None:
            self.specializing = True
            value = hint
        where = f"{source} ({name})"
        if value in (0, 1):
            raise OracleError(
                f"{where} has example value {value}; torch specializes sizes 0 and 1, so a "
                f"symbolic int needs an example of 2 or more"
            )
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            raise OracleError(
                f"{where} has example value {value}, outside its declared range "
                f"[{'-inf' if lo is None else lo}, {'inf' if hi is None else hi}]"
            )
        known = self.dims.get(name)
        if known is not None:
            if known.hint != value:
                first, first_dim = known.places[0]
                first = first if first_dim is None else f"dimension {first_dim} of {first}"
                raise OracleError(
                    f"{where} is {value}, but the same symbol is {first}, of size {known.hint}; "
                    f"places that share a symbol must have equal example values"
                )
            if (known.lo, known.hi) != (lo, hi):
                raise OracleError(f"{where} gives symbol {name} a different range than before")
            known.places.append((source, None))
            self.env.var_to_sources[known.symbol].append(_DimSource(source))
            return known.symint
        return self._new_symbol(name, value, source, lo, hi, (source, None))

    @staticmethod
    def _strides(real, source, shape, sizes, dynamic):
        strides = list(real.stride())
        if not dynamic:
            return strides
        # A dense layout, in whatever dimension order, has strides that are
        # products of sizes; written with the symbolic sizes they stay right
        # for every size. Ties (size-1 dimensions) go innermost last, as in a
        # row-major layout. A static dimension of size 0 is one of size 1 to
        # the others' strides, as torch lays out an empty tensor ((4, 0, 3)
        # is contiguous with strides (3, 3, 1)). A static dimension of size 1
        # (or 0) with the dense stride of its place has it written with the
        # symbolic sizes too, as torch gives it at every size (a contiguous
        # [7, 1, s, 5] has stride 5*s there): kept as the example's number,
        # the guard would refuse every other size, and torch's checks of
        # layouts (channels-last or not) would compare it with the symbolic
        # strides and record relations between sizes the program never
        # asked for. Any other stride of such a dimension stays as it is.
        result = [None] * len(shape)
        expected, expected_hint = 1, 1
        for d in sorted(range(len(shape)), key=lambda d: (strides[d], -d)):
            if shape[d] in (0, 1) and not isinstance(sizes[d], torch.SymInt):
                result[d] = expected if strides[d] == expected_hint else strides[d]
                continue
            if strides[d] != expected_hint:
                raise OracleError(
                    f"{source} has strides {tuple(strides)} for sizes {tuple(shape)}, which is "
                    f"not a dense layout; a tensor with dynamic dimensions must be dense"
                )
            result[d] = expected
            expected = expected * sizes[d]
            expected_hint *= shape[d]
        return result
