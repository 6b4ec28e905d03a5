"""Functions of tensor inputs: which properties of an input (dtype, shape,
strides, dispatch bits, type, requires_grad) the compiled path depends on."""
import torch


def affine(x):
    return x * 2 + x.sum(0)


def pointwise4d(x):
    return x * 2 + 1


def complex_mix(z):
    return z * 2 + z.abs()


def example_affine():
    return (torch.randn(4, 3),)


def example_pointwise4d():
    return (torch.randn(2, 3, 4, 4),)


def example_complex_mix():
    return (torch.randn(4, 3, dtype=torch.complex64),)


class Tagged(torch.Tensor):
    """A subclass whose __torch_function__ keeps the subclass and adds one
    to every floating result: eager's result differs from a plain tensor's."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs or {})
        if isinstance(out, torch.Tensor) and out.is_floating_point() and func in (torch.Tensor.add, torch.Tensor.__add__):
            with torch._C.DisableTorchFunctionSubclass():
                return (out + 1).as_subclass(cls)
        return out
