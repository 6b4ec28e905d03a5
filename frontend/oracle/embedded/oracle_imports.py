"""How the tensor oracle imports torch, and how its entry points run.

dync_oracle imports this module before anything else of torch's beyond
`import torch`: it puts torch._dynamo's package body off while the oracle
works, and loads the parts of torch the oracle's modules use with the cyclic
collector frozen, so that their own imports find them loaded. Every oracle
entry point runs under `_while_busy`.
"""

import functools
import gc
import importlib.util
import os
import sys

import torch


# How many oracle entry points are running. torch._dynamo's package body is
# put off only while one is; see _defer_dynamo_package.
_busy = 0
# Functions that torch._disable_dynamo let run unwrapped meanwhile.
_disable_deferred = []


def _drop_disable_stand_ins():
    for fn in _disable_deferred:
        if getattr(fn, "__dynamo_disable", None) is fn:
            delattr(fn, "__dynamo_disable")
    _disable_deferred.clear()


# DYNC_ORACLE_PROFILE=FILE: where the oracle's time goes, written to FILE
# when the process exits (docs/tensor-oracle.md, "Profiling the oracle"):
# each entry point's calls and wall time (outermost calls only; Session.call
# by the callable it ran); with DYNC_ORACLE_PROFILE_PYTHON=1 also
# cProfile's statistics of everything they ran (which slows them down),
# and those statistics raw in FILE.pstats.
_profile_path = os.environ.get("DYNC_ORACLE_PROFILE")
_profiling = bool(_profile_path)
_profile = None
if _profiling:
    import atexit
    import time

    if os.environ.get("DYNC_ORACLE_PROFILE_PYTHON") == "1":
        import cProfile

        _profile = cProfile.Profile()
    _profile_totals = {}  # entry point -> [calls, seconds, CPU seconds]
    _profile_sequence = []  # (entry point, seconds, CPU seconds), in the order they ran

    def _write_profile():
        import io
        import pstats

        out = io.StringIO()
        seconds = sum(t for _, t, _ in _profile_totals.values())
        cpu = sum(c for _, _, c in _profile_totals.values())
        out.write(f"oracle entry points: {seconds:.4f} s in all, {cpu:.4f} s of the thread's CPU time\n")
        for name, (count, total, cpu) in sorted(_profile_totals.items(), key=lambda kv: -kv[1][1]):
            out.write(
                f"  {name:<60} {count:>6} calls {total:>8.4f} s {total / count * 1e6:>9.1f} us/call"
                f" (CPU {cpu:.4f} s)\n"
            )
        out.write("in order (ms, CPU ms):\n")
        for key, seconds, cpu in _profile_sequence:
            out.write(f"  {seconds * 1000:>8.2f} {cpu * 1000:>8.2f} {key}\n")
        if _profile is not None:
            stats = pstats.Stats(_profile, stream=out)
            stats.sort_stats("cumulative").print_stats(100)
            stats.sort_stats("tottime").print_stats(60)
            # The raw statistics beside it, for pstats' callers and callees.
            _profile.dump_stats(_profile_path + ".pstats")
        with open(_profile_path, "w") as f:
            f.write(out.getvalue())

    atexit.register(_write_profile)


def _while_busy(method):
    busy = _busy_while(method)
    return _profiled(method, busy) if _profiling else busy


def _busy_while(method):
    @functools.wraps(method)
    def run(*args, **kwargs):
        global _busy
        collecting = not _busy and gc.isenabled()
        if collecting:
            gc.disable()
        _busy += 1
        try:
            return method(*args, **kwargs)
        finally:
            _busy -= 1
            if collecting:
                gc.enable()
            if not _busy and _disable_deferred:
                # Outside the oracle, torch runs as if nothing had been put
                # off: the next call of each such function asks for the real
                # wrapper, which runs the package body.
                _drop_disable_stand_ins()

    return run


def _profiled(method, busy):
    """`busy`, which runs `method`, counting and timing its outermost calls."""
    name = method.__qualname__

    @functools.wraps(method)
    def run(*args, **kwargs):
        if _busy:
            return busy(*args, **kwargs)
        key = name
        if name.endswith(".call") and len(args) > 1:
            fn = args[1]
            key = f"{name} {getattr(fn, '__module__', None) or ''}.{getattr(fn, '__qualname__', type(fn).__qualname__)}"
        start = time.perf_counter()
        start_cpu = time.thread_time()
        if _profile is not None:
            _profile.enable()
        try:
            return busy(*args, **kwargs)
        finally:
            if _profile is not None:
                _profile.disable()
            seconds = time.perf_counter() - start
            cpu = time.thread_time() - start_cpu
            totals = _profile_totals.setdefault(key, [0, 0.0, 0.0])
            totals[0] += 1
            totals[1] += seconds
            totals[2] += cpu
            _profile_sequence.append((key, seconds, cpu))

    return run


# The torch._dynamo submodules that import without the package body: the
# ones ShapeEnv() reaches through torch.fx.experimental.validator.
_DYNAMO_ALONE = frozenset({"config", "exc", "graph_utils", "metrics_context", "utils"})


def _defer_dynamo_package():
    """Leaves torch._dynamo's package body unrun while the oracle works.

    ShapeEnv() imports torch.fx.experimental.validator, which imports
    torch._dynamo.exc and torch._dynamo.utils; importing any submodule first
    runs the package's __init__, which pulls in all of dynamo, inductor and
    much of torch.distributed: about 0.75 s, two thirds of a small capture,
    for modules the oracle never uses. The submodules themselves are cheap.
    So the package enters sys.modules as a module whose __path__ lets
    submodules load, and whose body runs, complete and once, in its own
    namespace, the first time anything reads an attribute the body defines,
    or imports a new submodule from outside the oracle: whatever uses
    torch._dynamo later sees the package, and the modules its body imports,
    as it would have without this.
    """
    name = "torch._dynamo"
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    module = importlib.util.module_from_spec(spec)
    directories = list(spec.submodule_search_locations)
    state = {"unrun": True}

    def run_body():
        if not state["unrun"]:
            return
        state["unrun"] = False
        del module.__dict__["__getattr__"]
        if finder in sys.meta_path:
            sys.meta_path.remove(finder)
        try:
            spec.loader.exec_module(module)
        except BaseException:
            # As a failed import: the half-run package is not kept.
            if sys.modules.get(name) is module:
                del sys.modules[name]
            raise
        finally:
            _drop_disable_stand_ins()

    def disable(fn=None, recursive=True, *, reason=None, wrapping=True):
        # torch._disable_dynamo (on every dispatch mode's __torch_dispatch__,
        # on meta kernels and decompositions) builds torch._dynamo.disable(fn)
        # at fn's first call, with wrapping=False, and keeps it on fn as
        # `__dynamo_disable`. The wrapper only clears dynamo's frame
        # evaluation around fn, which nothing can have installed before the
        # body has run; so inside the oracle fn stands for itself, until the
        # oracle returns or the body runs.
        if _busy and not wrapping and fn is not None and state["unrun"]:
            _disable_deferred.append(fn)
            return fn
        run_body()
        return module.disable(fn, recursive, reason=reason, wrapping=wrapping)

    def load(attribute):
        if attribute == "disable" and state["unrun"]:
            return disable
        # `from . import config` in a submodule reads the attribute before it
        # imports the submodule: a submodule name imports that submodule.
        if any(
            os.path.isfile(os.path.join(d, attribute + ".py"))
            or os.path.isfile(os.path.join(d, attribute, "__init__.py"))
            for d in directories
        ):
            return importlib.import_module(f"{name}.{attribute}")
        run_body()
        try:
            return module.__dict__[attribute]
        except KeyError:
            hook = module.__dict__.get("__getattr__")
            if hook is not None:
                return hook(attribute)
            raise AttributeError(f"module {name!r} has no attribute {attribute!r}") from None

    class _RunBodyFirst:
        """A new torch._dynamo submodule is imported as import would, after
        the package body, unless the oracle is running and it is one of those
        the ShapeEnv and fake tensors import, which import on their own; the
        rest of dynamo expects its body's import order (eval_frame, which
        dynamic sizes bring in to tell torch's frames from the user's, fails
        with a circular import without it)."""

        @staticmethod
        def find_spec(fullname, path=None, target=None):
            if state["unrun"] and fullname.startswith(name + "."):
                if not _busy or fullname[len(name) + 1 :] not in _DYNAMO_ALONE:
                    run_body()
            return None

    finder = _RunBodyFirst()
    module.__getattr__ = load
    sys.modules[name] = module
    torch._dynamo = module
    sys.meta_path.insert(0, finder)


# The cyclic garbage collector's full collections walk every object the
# process holds, and `import torch` leaves a few hundred thousand of them.
# Fake tensor dispatch allocates enough to set off a collection every few
# calls, and so does importing sympy: about a third of a capture went to
# walking torch's own module objects again and again. Those objects live as
# long as the process, so they are frozen (moved out of the collector's
# sight), once before the imports below and once after them; and the
# collector waits while an oracle entry point runs (_while_busy), whose
# garbage is collected after it returns. Nothing in torch depends on when a
# cycle is collected.
gc.freeze()
_gc_enabled_before_import = gc.isenabled()
gc.disable()
try:
    _defer_dynamo_package()

    # The modules the oracle's parts import names from, which then find
    # them loaded.
    import sympy  # noqa: F401
    import torch._decomp
    import torch._dispatch.python
    import torch._guards
    import torch._subclasses.fake_tensor
    import torch.fx.experimental.symbolic_shapes
    import torch.utils._python_dispatch
    import torch.multiprocessing.reductions
    import torch.utils._sympy.functions
    import torch.utils._sympy.numbers
    import torch.utils._sympy.value_ranges
finally:
    gc.freeze()
    if _gc_enabled_before_import:
        gc.enable()
