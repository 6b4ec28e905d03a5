"""dync's runtime: load an artifact written by `dync export` and run its
compiled code whenever its guards hold.

    import dync
    with dync.load("model.dync.so"):
        model(x)            # runs the compiled path when the guards hold

`load` validates the artifact (see docs/artifact.md), finds the live function
each entry replaces, and installs a PEP 523 frame hook that runs the entry's
native guard on every call of that function: on a hit the artifact's
rewritten bytecode runs instead of the original; on a miss the original runs
and `stats()` records which guard failed (or `GuardError` is raised, with
`strict=True`).

Environment:

    DYNC_OUTPUT_CACHE_MB   megabytes of freed graph-made tensors (1 MiB and
                           larger) kept for reuse, read once per process;
                           256 when unset, 0 turns the cache off
                           (docs/runtime.md, "Memory of large tensors")
"""

import atexit
import importlib
import importlib.util
import inspect
import marshal
import os
import sys
import threading
import types
import warnings

# Guards recognize tensors by torch's tensor type, which importing torch
# registers with the shim; the extension also links torch's libraries.
import torch

from . import _dync
from ._dync import ArtifactError, GuardError

__all__ = ["Artifact", "ArtifactError", "ArtifactWarning", "GuardError", "load", "reset_stats",
           "stats"]


class ArtifactWarning(UserWarning):
    """An artifact loaded with a caveat, e.g. its source changed since export."""


# Code flags of functions whose frames are resumed rather than called, which
# the hook never replaces.
_RESUMABLE = (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ITERABLE_COROUTINE |
              inspect.CO_ASYNC_GENERATOR)

# Serializes load and unload, which update the hook's table in several steps.
_lock = threading.RLock()
_live = []


class Artifact:
    """A loaded artifact. Unload it with `unload()` or by leaving a `with`
    block; its entries then run their original code again."""

    def __init__(self, native, manifest, strict):
        self._native = native
        self.path = native.path
        self.strict = strict
        #: The descriptor as a dict: format and shim ABI versions, Python
        #: magic number, torch version, CPU target, source path and hash, and
        #: the entries with their graphs.
        self.manifest = manifest
        #: The entries, as in manifest["entries"].
        self.entries = tuple(manifest["entries"])
        #: Entries that were not bound (generators), with the reason.
        self.skipped = {}

    @property
    def loaded(self):
        return self._native.loaded

    def stats(self):
        """{qualified_name: stats} for this artifact's entries (see dync.stats)."""
        return self._native.stats()

    def unload(self):
        """Restores plain execution of every entry; idempotent."""
        with _lock:
            self._native.unload()
            if self in _live:
                _live.remove(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.unload()
        return False

    def __repr__(self):
        state = "loaded" if self.loaded else "unloaded"
        names = ", ".join(e["qualified_name"] for e in self.entries)
        return f"<dync.Artifact {self.path!r} ({state}): {names}>"


def _error(kind, path, message):
    exc = ArtifactError(f"{path}: {message}")
    exc.kind = kind
    exc.path = path
    return exc


def _module_for(source_path, module, path):
    """The module whose functions the artifact replaces.

    `module` may be a module object or a name (imported if need be). Without
    it, the module is the one in sys.modules whose __file__ is the artifact's
    source file (compared after os.path.realpath); nothing is imported, since
    importing runs the user's code and is the user's decision."""
    if isinstance(module, types.ModuleType):
        return module
    if isinstance(module, str):
        try:
            return importlib.import_module(module)
        except Exception as e:
            raise _error("module-not-found", path, f"cannot import {module}: {e}") from e
    if module is not None:
        raise TypeError("module must be a module, a module name or None")
    target = os.path.realpath(source_path)
    for candidate in list(sys.modules.values()):
        if not isinstance(candidate, types.ModuleType):
            continue
        file = candidate.__dict__.get("__file__")
        if isinstance(file, str) and os.path.realpath(file) == target:
            return candidate
    raise _error("module-not-found", path,
                 f"no imported module was loaded from {source_path}; import it before loading "
                 "the artifact, or pass module=")


def _resolve(module, qualname, first_line, path):
    """The live function an entry replaces.

    The qualified name is walked from the module one dotted part at a time
    through each object's __dict__ (classes and modules), so no descriptor or
    __getattr__ runs; a staticmethod or classmethod is unwrapped to its
    function, and decorator wrappers are followed through __wrapped__ until
    a function whose code has this co_qualname. Local functions
    (`f.<locals>.g`) have no such path and cannot be served. The code's
    co_firstlineno must equal the entry's first line."""
    if "<locals>" in qualname.split("."):
        raise _error("entry-not-found", path,
                     f"{qualname} is a local function; dync serves functions reachable from "
                     "their module by qualified name")
    obj = module
    for part in qualname.split("."):
        namespace = getattr(obj, "__dict__", None)
        if not isinstance(namespace, (dict, types.MappingProxyType)) or part not in namespace:
            raise _error("entry-not-found", path,
                         f"{qualname} not found in module {module.__name__}: no {part!r}")
        obj = namespace[part]
    seen = 0
    while True:
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(obj, types.FunctionType) and obj.__code__.co_qualname == qualname:
            break
        wrapped = getattr(obj, "__wrapped__", None) if seen < 100 else None
        if wrapped is None:
            raise _error("entry-not-found", path,
                         f"{module.__name__}.{qualname} is not a Python function")
        obj, seen = wrapped, seen + 1
    line = obj.__code__.co_firstlineno
    if line != first_line:
        raise _error("entry-mismatch", path,
                     f"{qualname} in {module.__name__} starts at line {line}, but the artifact "
                     f"was exported from a {qualname} at line {first_line}; re-export it")
    return obj


_SIGNATURE_FLAGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def _rewritten_code(native, index, function, qualname, path):
    """Unmarshals an entry's rewritten code and checks that it takes exactly
    the arguments of the function it replaces, which the hook passes on
    unchanged."""
    blob = native.entry_code(index)
    try:
        code = marshal.loads(blob)
    except (ValueError, EOFError, TypeError) as e:
        raise _error("bad-code", path, f"{qualname}: the rewritten code does not unmarshal: {e}")
    if not isinstance(code, types.CodeType):
        raise _error("bad-code", path,
                     f"{qualname}: the rewritten code is a {type(code).__name__}, not a code "
                     "object")
    original = function.__code__
    nargs = (original.co_argcount + original.co_kwonlyargcount +
             bool(original.co_flags & inspect.CO_VARARGS) +
             bool(original.co_flags & inspect.CO_VARKEYWORDS))
    same = (code.co_argcount == original.co_argcount and
            code.co_posonlyargcount == original.co_posonlyargcount and
            code.co_kwonlyargcount == original.co_kwonlyargcount and
            (code.co_flags & _SIGNATURE_FLAGS) == (original.co_flags & _SIGNATURE_FLAGS) and
            code.co_varnames[:nargs] == original.co_varnames[:nargs] and
            code.co_freevars == original.co_freevars)
    if not same:
        raise _error("bad-code", path,
                     f"{qualname}: the rewritten code does not take the same arguments and free "
                     "variables as the function it replaces")
    return code


def load(path, *, strict=False, module=None):
    """Loads the artifact at `path` and serves its entries.

    Raises ArtifactError (with `kind` and `path`) when the artifact cannot run
    in this process: a missing, truncated or corrupt file, another format,
    CPython or torch version, missing CPU features, an entry whose function
    is not found, or another frame evaluator being active. A source file that
    changed since export is an ArtifactWarning. With strict=True a guard miss
    raises GuardError instead of running the original code."""
    path = os.fspath(path)
    with _lock:
        native = _dync.open(path, importlib.util.MAGIC_NUMBER, torch.__version__)
        try:
            manifest = native.manifest()
            artifact = Artifact(native, manifest, strict)
            for message in native.warnings():
                warnings.warn(message, ArtifactWarning, stacklevel=2)
            owner = None
            # A function's entries are its variants (one per grad mode, say),
            # in the order their guards are tried: {code: [function, indices,
            # codes]}, in the order functions first appear.
            variants = {}
            for index, entry in enumerate(manifest["entries"]):
                qualname = entry["qualified_name"]
                if owner is None:
                    owner = _module_for(manifest["source_path"], module, path)
                function = _resolve(owner, qualname, entry["first_line"], path)
                if function.__code__.co_flags & _RESUMABLE:
                    if qualname not in artifact.skipped:
                        reason = (f"{qualname} is a generator or coroutine function; dync runs "
                                  "it with the default evaluator")
                        artifact.skipped[qualname] = reason
                        warnings.warn(reason, ArtifactWarning, stacklevel=2)
                    continue
                code = _rewritten_code(native, index, function, qualname, path)
                bound = variants.setdefault(function.__code__, [function, [], []])
                bound[1].append(index)
                bound[2].append(code)
            for function, indices, codes in variants.values():
                native.bind(tuple(indices), function, tuple(codes), strict)
        except BaseException:
            native.unload()
            raise
        _live.append(artifact)
        return artifact


def stats():
    """Per loaded artifact and entry: {path: {qualified_name: {"calls",
    "hits", "misses", "last_miss_reason", "miss_reasons": {reason: count}}}}.
    A reason is the failing guard in sources, e.g. "L['x'].dim() == 2"."""
    return _dync.stats()


def reset_stats():
    """Zeroes the statistics of every loaded entry."""
    _dync.reset_stats()


def _unload_all():
    # At exit, before modules are torn down: leave the interpreter's frame
    # evaluator as it was.
    for artifact in list(_live):
        artifact.unload()


atexit.register(_unload_all)
