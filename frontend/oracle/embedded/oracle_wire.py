"""What crosses over to the C++ half besides plain Python values.

The tag types, which TensorOracle.cpp recognizes by exact type; TensorMeta,
whose fields TensorMetaSchema.cpp finds by name; the names graphs give
dtypes, layouts and memory formats; and OracleError. dync_oracle imports
them, and the C++ half reads them from there.
"""

import torch


class OracleError(Exception):
    """A problem with what capture asked for, reported as its message alone."""


# Tags for the values records carry; the C++ side dispatches on exact type.
class Ref(int):
    """A fake tensor, by its id."""

    __slots__ = ()


class Sym(str):
    """A symbolic integer, as IR text."""

    __slots__ = ()


class ScalarMeta(tuple):
    """A result that is a Python float or bool computed from tensor data (a
    torch.SymFloat or SymBool): (id, "float" or "bool"). Later records
    name it as Ref(id), as they name tensors."""

    __slots__ = ()


class DType(str):
    __slots__ = ()


class Device(str):
    __slots__ = ()


class Layout(str):
    __slots__ = ()


class MemoryFormat(str):
    __slots__ = ()


class TensorMeta(tuple):
    """A result tensor's metadata: the fields FIELDS names, in that order.

    FIELDS is the one declaration of the layout: the C++ half reads it when
    the oracle starts and finds each field by name (TensorMetaSchema.cpp), so
    a field added, renamed or moved here is either read where it now is or
    stops the start-up with an error naming it.
    """

    __slots__ = ()
    # sparse: None for a strided tensor, (sparse_dim, nnz, is_coalesced) for
    # a sparse COO one (whose strides are then ()).
    FIELDS = ("id", "dtype", "sizes", "strides", "device", "requires_grad", "sparse")

    @classmethod
    def of(cls, **fields):
        if fields.keys() != set(cls.FIELDS):
            raise OracleError(f"TensorMeta takes the fields {cls.FIELDS}, not {tuple(fields)}")
        return cls(fields[name] for name in cls.FIELDS)


_DTYPES = {
    torch.float32: "f32",
    torch.float64: "f64",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.int16: "i16",
    torch.int8: "i8",
    torch.uint8: "u8",
    torch.bool: "bool",
    torch.complex64: "c64",
    torch.complex128: "c128",
}
_DTYPE_TAGS = {dtype: DType(name) for dtype, name in _DTYPES.items()}
_LAYOUTS = {
    torch.strided: "strided",
    torch.sparse_coo: "sparse_coo",
    torch.sparse_csr: "sparse_csr",
    torch.sparse_csc: "sparse_csc",
    torch.sparse_bsr: "sparse_bsr",
    torch.sparse_bsc: "sparse_bsc",
    torch._mkldnn: "_mkldnn",
    torch.jagged: "jagged",
}
_MEMORY_FORMATS = {
    torch.contiguous_format: "contiguous_format",
    torch.channels_last: "channels_last",
    torch.channels_last_3d: "channels_last_3d",
    torch.preserve_format: "preserve_format",
}
