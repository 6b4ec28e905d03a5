"""Programs whose try/except/else/finally and `with` exits run while capturing.

Each function raises somewhere (a `raise`, an operation capture models, a real
call capture makes, a shape error torch reports) and handles it; the graph is
what the handled run computes. Shared by test/capture/exceptions.py (graphs)
and test/e2e/test_exception_handlers.py (artifact against eager).
"""
import sys

import torch


class Suppress:
    """A context manager written in Python whose __exit__ swallows one class
    of exception and remembers what it saw."""

    def __init__(self, kind):
        self.kind = kind
        self.seen = None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        self.seen = kind
        return kind is not None and issubclass(kind, self.kind)


class ConfigError(ValueError):
    pass


def check(n):
    if n > 2:
        raise ConfigError(f"n={n} is too big")
    return n


def try_else_finally(x):
    steps = []
    try:
        y = x + 1
    except ValueError:
        y = x - 1
    else:
        steps.append("else")
        y = y * 2
    finally:
        steps.append("finally")
    return y + len(steps)


def except_as(x):
    try:
        {"a": 1}["b"]
        y = x
    except (IndexError, KeyError) as error:
        y = x * len(error.args) + (2 if isinstance(error, KeyError) else 0)
    try:
        error
    except NameError:
        # `except ... as error` deletes the name after the handler.
        y = y - 1
    return y


def nested_reraise(x):
    steps = []
    try:
        try:
            raise ValueError("inner")
        except ValueError:
            steps.append(1)
            raise
        finally:
            steps.append(2)
    except ValueError as error:
        steps.append(3 if str(error) == "inner" else 30)
    return x * sum(steps)


def raise_from(x):
    try:
        try:
            check(5)
        except ConfigError as error:
            raise TypeError("wrapped") from error
    except TypeError as outer:
        cause = outer.__cause__
        return x + (4 if isinstance(cause, ConfigError) else 0)
    return x


def with_suppress(x):
    manager = Suppress(KeyError)
    y = x
    with manager:
        y = x * 2
        raise KeyError("swallowed")
    return y + (1 if manager.seen is KeyError else 0)


def with_passes_through(x):
    manager = Suppress(KeyError)
    try:
        with manager:
            raise ValueError("not swallowed")
    except ValueError:
        y = x - 3
    return y + (1 if manager.seen is ValueError else 0)


def callee_raises(x):
    try:
        return x * check(3)
    except ValueError:
        return x * check(2)


def attribute_fallback(x):
    try:
        scale = torch.nn.functional.no_such_attribute
    except AttributeError:
        scale = 3
    return x * scale


def shape_fallback(x):
    try:
        y = x @ torch.ones(4, 2)
    except RuntimeError:
        y = x @ torch.ones(3, 2)
    return y


def finally_on_return(x):
    steps = []
    for i in range(3):
        try:
            if i == 1:
                continue
            steps.append(i)
        finally:
            steps.append(10)
    return x + sum(steps)


def grad_mode_exit(x):
    try:
        with torch.no_grad():
            y = x * 2
            raise RuntimeError("leaves the block")
    except RuntimeError:
        pass
    return y + x


def example_inputs():
    return (torch.randn(2, 3),)


def describe_handled():
    # A callee sees the exception its caller's handler handles.
    kind, value, _ = sys.exc_info()
    return kind.__name__, str(value)


def exc_info_in_handler(x):
    # sys.exc_info() in a handler, in a callee, in a nested handler and
    # after it, and outside any: 10 * x + 8 + 1 + 1 - 1.
    try:
        raise ValueError("bad size")
    except ValueError:
        name, message = describe_handled()
        y = x * len(name) + len(message)
        outer = sys.exc_info()[1]
        try:
            {}["k"]
        except KeyError:
            y = y + int(sys.exc_info()[0] is KeyError)
        y = y + int(sys.exc_info()[1] is outer)
    return y - int(sys.exc_info() == (None, None, None))
