# Random operators draw from torch's default generator when the graph runs,
# in the program's order and as the program calls them (bernoulli is not
# decomposed into other draws). Reseeding, saving and restoring the
# generator inside the function are graph nodes of dync's own operators,
# at their place among the draws; a @contextlib.contextmanager's generator
# pauses at its yield while its block runs, and torch's dispatch-exclusion
# guards are blocks that change nothing (op_db's wrapper_set_seed uses
# both, through torch.testing's freeze_rng_state).
# RUN: %dync export %s:draws %s:seeded %s:frozen --emit=graph | FileCheck %s
# RUN: not %dync export %s:nondeterministic %s:raising %s:twice %s:own_generator %s:made_generator --emit=graph \
# RUN:   --keep-going 2>&1 \
# RUN:   | FileCheck %s --check-prefix=REFUSED
import contextlib

import torch
import torch.testing._utils


def draws(x):
    return torch.bernoulli(x), torch.rand_like(x), torch.nn.functional.dropout(x, 0.5)

# CHECK:      graph @draws(
# CHECK:      aten::bernoulli.default(%x)
# CHECK-NEXT: aten::rand_like.default(%x
# CHECK:      aten::native_dropout.default(%x, 0.5, true)


def seeded(x):
    a = torch.rand_like(x)
    torch.manual_seed(3)
    return a, torch.bernoulli(x)

# CHECK:      graph @seeded(
# CHECK:      aten::rand_like.default(%x
# CHECK:      dync::manual_seed.default(3) : none
# CHECK-NEXT: aten::bernoulli.default(%x)


@contextlib.contextmanager
def saved_generator():
    state = torch.get_rng_state()
    try:
        yield state
    finally:
        torch.set_rng_state(state)


def frozen(x):
    with saved_generator():
        torch.manual_seed(42)
        y = torch.bernoulli(x)
    with torch.testing._utils.freeze_rng_state():
        torch.manual_seed(7)
        z = torch.nn.functional.dropout(x, 0.25)
    return y, z, torch.rand_like(x)

# CHECK:      graph @frozen(
# CHECK:      %[[STATE:[0-9]+]] = dync::get_rng_state.default() : tensor<u8, [5056]>
# CHECK-NEXT: dync::manual_seed.default(42)
# CHECK-NEXT: aten::bernoulli.default(%x)
# CHECK-NEXT: dync::set_rng_state.default(%[[STATE]])
# CHECK-NEXT: %[[STATE2:[0-9]+]] = dync::get_rng_state.default()
# CHECK-NEXT: dync::manual_seed.default(7)
# CHECK:      aten::native_dropout.default(%x, 0.25, true)
# CHECK:      dync::set_rng_state.default(%[[STATE2]])
# CHECK-NEXT: aten::rand_like.default(%x


def nondeterministic(x):
    torch.seed()
    return torch.bernoulli(x)

# REFUSED: generator-state.py:[[@LINE-3]]:5: error: torch.seed seeds torch's generator from a nondeterministic source, which a graph cannot reproduce; call it outside the exported function


def raising(x):
    with saved_generator():
        raise ValueError("inside")

# REFUSED: error: an exception leaving a 'with' block on saved_generator() (made by @contextlib.contextmanager) is not supported yet: capture does not throw it into the generator at its yield


@contextlib.contextmanager
def yields_twice():
    yield 1
    yield 2


def twice(x):
    with yields_twice():
        y = x + 1
    return y

# REFUSED: error: yields_twice() yielded a second time (eager raises RuntimeError: generator didn't stop)


GENERATOR = torch.Generator().manual_seed(3)


def own_generator(x):
    # A generator of the program's own is not a value a graph holds.
    return torch.bernoulli(x, generator=GENERATOR)

# REFUSED: generator-state.py:[[@LINE-2]]:12: error: an operator argument of type Generator cannot appear in a graph


def made_generator(x):
    # diffusers' seeded sampling: a generator made and seeded in the function.
    g = torch.Generator(device="cpu").manual_seed(0)
    return torch.rand(x.shape, generator=g)

# REFUSED: generator-state.py:[[@LINE-3]]:{{[0-9]+}}: error: making a torch.Generator in the captured function is not supported: a generator is state no graph holds, so draws from it cannot be compiled; seed torch's default generator instead (torch.manual_seed(seed)) and draw without generator=, or draw the noise outside the function and pass it in


def example_inputs():
    return (torch.rand(3, 4),)
