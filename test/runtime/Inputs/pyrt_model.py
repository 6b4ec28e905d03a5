# The source the Python runtime's test artifact (PyRuntimeArtifact.c, set 1)
# claims to have been exported from. Each function's rewritten code, in
# pyrt_model_rewritten.py, returns something the original does not, so a test
# can tell which of the two ran.
import torch


def scale(x):
    return x * 1


def linear(x, w, b):
    return torch.relu(torch.addmm(b, x, w))


def mixed(a, /, b, *args, c=3, **kw):
    return ("original", a, b, args, c, kw)


def countdown(x, n):
    if n == 0:
        return x
    return countdown(x, n - 1)


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 1


def numbers(x):
    yield x
