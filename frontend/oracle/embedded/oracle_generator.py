"""Operators on the state of torch's default CPU random generator.

A graph's random operators draw from the default generator when the compiled
call runs, in the order eager's calls draw. A program that also reseeds,
saves or restores that generator between draws (torch.manual_seed,
torch.get_rng_state, torch.set_rng_state; op_db's seeded samples do all
three) needs those steps in the graph too, at their place among the draws:
nothing else keeps their order. ATen has no operators for them, so dync
defines three in its own namespace, with the same schemas and kernels as the
runtime's shim registers in the process that loads an artifact
(runtime/shim/GeneratorOps.cpp):

    dync::manual_seed(int seed) -> ()
    dync::get_rng_state() -> Tensor
    dync::set_rng_state(Tensor state) -> ()

Here they get fake implementations (a state tensor of the real state's size
and dtype) and CPU kernels, so they run as torch's own functions do. They
are tagged nondeterministic_seeded, as torch tags its random operators, so
fake tensors never run them for real to propagate constants.
"""

import torch

_NAMESPACE = "dync"

_SCHEMAS = {
    "manual_seed": "manual_seed(int seed) -> ()",
    "get_rng_state": "get_rng_state() -> Tensor",
    "set_rng_state": "set_rng_state(Tensor state) -> ()",
}

_library = None


def _state_like():
    """The default generator's state, as get_rng_state gives it: its size and
    dtype are the fake result's."""
    return torch.random.default_generator.get_state()


def _manual_seed(seed):
    torch.random.default_generator.manual_seed(seed)


def _get_rng_state():
    return torch.random.default_generator.get_state()


def _set_rng_state(state):
    torch.random.default_generator.set_state(state)


def _fake_get_rng_state():
    model = _state_like()
    return torch.empty(model.shape, dtype=model.dtype)


def _fake_set_rng_state(state):
    model = _state_like()
    torch._check(
        state.dtype == model.dtype and tuple(state.shape) == tuple(model.shape),
        lambda: f"set_rng_state expects a {model.dtype} tensor of shape {tuple(model.shape)}, "
        f"got {state.dtype} of shape {tuple(state.shape)}",
    )


def define():
    """Defines the operators once per process; the C++ half calls it before
    capture looks them up (GeneratorState.cpp)."""
    global _library
    if _library is not None:
        return
    library = torch.library.Library(_NAMESPACE, "FRAGMENT")
    # A process that also loaded the runtime's shim (a test linking both)
    # has them defined, with kernels, already.
    try:
        torch._C._dispatch_find_schema_or_throw(f"{_NAMESPACE}::get_rng_state", "")
        defined = True
    except RuntimeError:
        defined = False
    if not defined:
        tags = (torch.Tag.nondeterministic_seeded,)
        for schema in _SCHEMAS.values():
            library.define(schema, tags=tags)
        # Operators without tensor arguments reach no backend by dispatch
        # keys: the CompositeExplicitAutograd kernel is the one that runs.
        library.impl("manual_seed", _manual_seed, "CompositeExplicitAutograd")
        library.impl("get_rng_state", _get_rng_state, "CompositeExplicitAutograd")
        library.impl("set_rng_state", _set_rng_state, "CompositeExplicitAutograd")
    torch.library.register_fake(f"{_NAMESPACE}::manual_seed", lambda seed: None, lib=library)
    torch.library.register_fake(f"{_NAMESPACE}::get_rng_state", _fake_get_rng_state, lib=library)
    torch.library.register_fake(f"{_NAMESPACE}::set_rng_state", _fake_set_rng_state, lib=library)
    _library = library


def operator(name):
    """torch.ops.dync.NAME.default, defined first if need be."""
    define()
    return getattr(getattr(torch.ops, _NAMESPACE), name).default
