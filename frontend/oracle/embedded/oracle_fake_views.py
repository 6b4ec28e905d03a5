"""Views of fake tensors made for a replayed call, without fake mode's dispatch.

The call cache rebuilds a result that is a view as `as_strided` of its base
(docs/tensor-oracle.md, "The call cache"). Under the session's fake mode that
call goes through all of fake mode's dispatch: its own dispatch cache's key
(a walk over every argument), validation, then the meta kernel: about three
times what the view itself costs, and most of a warm capture's replays.

`fake_view` dispatches the same `aten::as_strided` with a mode of its own
below autograd instead, which does only what fake mode does for that call on
a static fake tensor of its own whose value it does not know:

- it runs the meta kernel of `as_strided` on the base seen as the meta tensor
  it holds (`in_kernel_invocation_manager`, as fake mode runs meta kernels),
  which gives a meta tensor of those sizes, strides and offset on the base's
  storage;
- it wraps that in a `FakeTensor` of the base's fake mode on the base's fake
  device, as fake mode wraps a meta kernel's output (the device of the only
  tensor argument).

Everything else a view is made of is done by the dispatcher above the mode,
in both paths alike: the ADInplaceOrView kernel of `as_strided` makes the
result a view of the base (`_base`, `_is_view()`) sharing its version counter,
and autograd's kernel its `requires_grad` (the cache replays no call on a
tensor that requires grad). Other operators the dispatch meets on the way
run as they would without the mode, on fake mode's own handling of fake
tensors; `prim::device` of a fake tensor, which the dispatch asks of each
view, is answered as the fake tensor's own handler answers it outside a
kernel (its fake device).

A base whose value fake mode knows (`constant`) gets a view of that value from
fake mode's constant propagation; such a base, a base of another fake mode and
a base with symbolic sizes go through fake mode as before.
"""

import weakref

import torch
from torch._subclasses.fake_tensor import FakeTensor, in_kernel_invocation_manager
from torch.utils._python_dispatch import TorchDispatchMode

_AS_STRIDED = torch.ops.aten.as_strided.default
_DEVICE = torch.ops.prim.device.default


class _ViewMaker(TorchDispatchMode):
    """Answers `aten::as_strided` of a fake tensor as fake mode would."""

    def __init__(self, fake):
        super().__init__()
        self.fake = fake

    @classmethod
    def _should_skip_dynamo(cls):
        # torch wraps a mode's __torch_dispatch__ in torch._dynamo.disable
        # unless the mode says otherwise; the wrapper only clears dynamo's
        # frame evaluation, which a capture never installs, at a cost
        # greater than the view's.
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if (func is _DEVICE and type(args[0]) is FakeTensor
                and not args[0].fake_mode.in_kernel_invocation):
            # The dispatch asks each view's device: the answer the fake
            # tensor's own handler gives outside a kernel, without going there.
            return args[0].fake_device
        if func is not _AS_STRIDED:
            return func(*args, **kwargs)
        base = args[0]
        with in_kernel_invocation_manager(self.fake):
            meta = func(*args, **kwargs)
        return FakeTensor(self.fake, meta, base.fake_device)


# One view maker per fake mode (a session's), for as long as the mode lives.
_makers = weakref.WeakKeyDictionary()


def _fast(base, fake):
    return (type(base) is FakeTensor and base.fake_mode is fake and base.constant is None
            and not base.requires_grad
            and not any(isinstance(n, torch.SymInt) for n in base.shape)
            and not any(isinstance(n, torch.SymInt) for n in base.stride())
            and not isinstance(base.storage_offset(), torch.SymInt))


def fake_view(fake, base, shape, stride, offset):
    """`torch.as_strided(base, shape, stride, offset)` as under fake mode
    `fake`, for a fake tensor `base`; called outside the fake mode."""
    if not _fast(base, fake):
        with fake:
            return torch.as_strided(base, shape, stride, offset)
    maker = _makers.get(fake)
    if maker is None:
        maker = _makers[fake] = _ViewMaker(fake)
    with maker:
        return torch.as_strided(base, shape, stride, offset)
