"""The check of what fake tensors say a call gives against torch's CPU
kernels."""

import warnings

import torch
from torch._subclasses.fake_tensor import FakeTensor
from torch.utils._python_dispatch import _disable_current_modes

from dync_oracle_leaves import _leaves
from dync_oracle_wire import _DTYPES, OracleError


class _KernelCheck:
    """Checks what fake tensors say a call gives against torch's CPU kernels.

    Fake tensors take result types from torch's meta functions and Python
    decompositions, which are written apart from the C++ kernels eager mode
    runs. Where the two disagree, a graph would compute something other than
    eager mode: torch's decomposition of aten::multilabel_margin_loss_forward
    gives a 1-D input with reduction='none' a result of shape [1], where the
    kernel gives []. Such bugs depend on ranks, dtypes and flags, not on how
    large sizes are, so a call whose tensors are small and static also runs
    for real, once per callable and argument signature, on zero-filled
    tensors of the same sizes, strides and dtypes, with no mode and no Python
    dispatcher; a difference in result shapes or dtypes stops capture. A call
    the kernel refuses on zeros is not checked.
    """

    # Arguments of more elements than this, in all, are not checked.
    MAX_NUMEL = 1 << 14

    def __init__(self):
        self.checked = {}  # (callable, signature) -> message or None

    def prepare(self, fn, args, kwargs):
        """What the check needs from the arguments as they are before the
        call (an in-place call changes them), or None when it does not apply."""
        flat, spec = torch.utils._pytree.tree_flatten((args, kwargs))
        signature = []
        numel = 0
        for a in flat:
            if isinstance(a, FakeTensor):
                # Symbolic sizes first: comparing one would be a decision.
                if (
                    a._has_symbolic_sizes_strides
                    or a.device.type != "cpu"
                    or a.layout != torch.strided
                ):
                    return None
                numel += a.numel()
                if numel > self.MAX_NUMEL:
                    return None
                signature.append((tuple(a.shape), tuple(a.stride()), a.dtype))
            elif isinstance(a, (torch.SymInt, torch.SymFloat, torch.SymBool, torch.Tensor)):
                return None
            else:
                signature.append(a)
        key = (fn, tuple(signature))
        try:
            hash(key)
        except TypeError:
            return None
        return key, flat, spec, signature

    def check(self, fn, prepared, out):
        if prepared is None:
            return
        key, flat, spec, signature = prepared
        got = self._types(out)
        if not any(got):
            return
        # A data-dependent size (nonzero's u0, from static arguments) is
        # known only when the graph runs; zeros would give one value of it.
        if any(type(d) is not int for t in got if t is not None for d in t[0]):
            return
        if key not in self.checked:
            self.checked[key] = self._compare(fn, flat, spec, signature, got)
        if self.checked[key] is not None:
            raise OracleError(self.checked[key])

    @staticmethod
    def _types(value):
        return [
            (tuple(t.shape), t.dtype) if isinstance(t, torch.Tensor) else None
            for t in _leaves(value)
        ]

    def _compare(self, fn, flat, spec, signature, got):
        def real(a, meta):
            if not isinstance(a, FakeTensor):
                return a
            shape, stride, dtype = meta
            return torch.empty_strided(shape, stride, dtype=dtype).zero_()

        # What the kernel warns about zeros is not the program's business.
        with _disable_current_modes(), torch._C._DisablePythonDispatcher(), torch.no_grad(), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                probes = [real(a, m) for a, m in zip(flat, signature)]
                args, kwargs = torch.utils._pytree.tree_unflatten(probes, spec)
                kwargs = kwargs or {}
                if kwargs or callable(fn):
                    expected = fn(*args, **kwargs)
                else:
                    expected = fn.__get__(args[0], type(args[0]))
            except Exception:
                return None
        want = self._types(expected)
        if got == want:
            return None

        def show(found):
            return ", ".join(
                "?" if t is None else f"{_DTYPES.get(t[1], t[1])} {list(t[0])}" for t in found
            )

        module = getattr(fn, "__module__", None)
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
        if module and module != "builtins":
            name = f"{module}.{name}"
        return (
            f"torch's meta functions give {name} a result of ({show(got)}) where its CPU "
            f"kernel gives ({show(want)}); a graph of what they say would not compute what "
            f"eager mode does"
        )
