"""Python objects capture makes for values that exist only while capturing.

The interpreter (frontend/capture) is C++; these few classes and functions
are Python because CPython or torch must see Python objects: a context an
autograd.Function's forward is given, the stand-in a builtin method run in
CPython is handed for a symbolic value, markers for contexts and dispatch
blocks made while capturing, the int subclass of capture's identity numbers,
and a check asked of fake tensors. Each C++ file that uses one names it.
"""
import contextlib

import torch


class InferenceContext:
    """ctx of an autograd.Function applied without recording autograd
    (AutogradFunctions.cpp). Its methods are Python, so capture inlines them
    over an object that exists only in capture, and tensors can be its
    attributes."""

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad
        self.saved_tensors = ()
        self.materialize_grads = True

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors):
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        self.non_differentiable = tensors

    def set_materialize_grads(self, value):
        self.materialize_grads = value


class CaptureStopped(Exception):
    """Unwinds CPython out of a method call that capture stopped in
    (BuiltinMethods.cpp). Capture tells it from the program's exceptions by
    this module's name (Exceptions.cpp)."""


# Set by BuiltinMethods.cpp to C functions that hand each question back to
# the interpreter before the first SymbolicValue is made.
_compare = _hash = _truth = _length = _iterate = _call = _text = None


class SymbolicValue:
    """Stands for a value capture holds symbolically while a builtin method
    runs in CPython; what it is asked comes back to the interpreter."""
    __slots__ = ()

    def __lt__(self, other): return _compare(self, other, 0)
    def __le__(self, other): return _compare(self, other, 1)
    def __eq__(self, other): return _compare(self, other, 2)
    def __ne__(self, other): return _compare(self, other, 3)
    def __gt__(self, other): return _compare(self, other, 4)
    def __ge__(self, other): return _compare(self, other, 5)
    def __hash__(self): return _hash(self)
    def __bool__(self): return _truth(self)
    def __len__(self): return _length(self)
    def __iter__(self): return _iterate(self)
    def __call__(self, *args, **kwargs): return _call(self, args, kwargs)
    def __repr__(self): return _text(self)
    def __str__(self): return _text(self)
    def __format__(self, spec): return _text(self)


class DispatchExclusionStandIn:
    """torch._C._DisableTorchDispatch() or _DisableFuncTorch() made while
    capturing (DispatchExclusion.cpp): the real objects switch dispatch keys
    off when made."""

    __slots__ = ()


def exit_dispatch_exclusion(*exception):
    return None


class ContextManagerGenerator:
    """A @contextlib.contextmanager context made while capturing
    (GeneratorContexts.cpp)."""

    def __enter__(self):
        raise RuntimeError("a context made while capturing cannot be entered for real")

    def __exit__(self, *exception):
        raise RuntimeError("a context made while capturing cannot be left for real")


# The code of the function @contextlib.contextmanager returns, which tells a
# generator context's factory from other functions.
CONTEXT_FACTORY_CODE = contextlib.contextmanager(lambda: None).__code__


class CaptureIdentity(int):
    """The numbers id() gives while capturing (IdentityBuiltins.cpp)."""
    __slots__ = ()


def same_memory(tensor, value):
    """Whether `tensor.data = value` leaves tensor as it was: value views
    tensor's own memory with its dtype, device, layout, offset, sizes and
    strides (TensorDataAssignment.cpp). Asked of the fake tensors capture
    holds: fake mode keeps an alias on its base's storage, so `_is_alias_of`
    answers as for the real ones, and one alias's sizes and strides are the
    same expressions, so comparing them decides nothing about symbolic
    sizes."""
    return (torch._C._is_alias_of(value, tensor) and value.dtype == tensor.dtype
            and value.device == tensor.device and value.layout == tensor.layout
            and value.storage_offset() == tensor.storage_offset()
            and tuple(value.size()) == tuple(tensor.size())
            and tuple(value.stride()) == tuple(tensor.stride()))
