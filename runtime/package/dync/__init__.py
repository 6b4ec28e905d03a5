"""dync's runtime: load an artifact written by `dync export` and run its
compiled code whenever its guards hold.

    import dync
    with dync.load("model.dync.so"):
        model(x)            # runs the compiled path when the guards hold

`load` validates the artifact (see docs/artifact.md), finds the live function
each entry replaces (in the module that defines it), checks that every
function the entry's capture ran is still the same code, and installs a PEP
523 frame hook that runs the entry's native guard on every call of that
function: on a hit the artifact's rewritten bytecode runs instead of the
original; on a miss the original runs and `stats()` records which guard
failed (or `GuardError` is raised, with `strict=True`). An entry whose code
changed since export is not served (docs/runtime.md, "Code identity").

Environment:

    DYNC_OUTPUT_CACHE_MB   megabytes of freed graph-made tensors (1 MiB and
                           larger) kept for reuse, read once per process;
                           256 when unset, 0 turns the cache off
                           (docs/runtime.md, "Memory of large tensors")
"""

import atexit
import hashlib
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

from . import _code_identity, _dync
from ._dync import ArtifactError, FallBack, GuardError

__all__ = ["Artifact", "ArtifactError", "ArtifactWarning", "FallBack", "GuardError", "load",
           "reset_stats",
           "stats"]


class ArtifactWarning(UserWarning):
    """An artifact loaded with a caveat: an entry is not served because the
    code it was captured from changed, or is a generator."""


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
        #: Entries bound but not served because code their capture ran
        #: changed since export, with the reason (also each call's miss
        #: reason in stats()).
        self.stale = {}

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


def _same_file(a, b):
    return bool(a) and bool(b) and os.path.realpath(a) == os.path.realpath(b)


def _module_finder(manifest, module, path):
    """module_for(name, file): the module that defines functions of module
    `name` from `file`. Functions defined in the exported file are looked up
    in `module=` when it is given; all others in their own module, found in
    sys.modules by name, else by the file it was loaded from (a program run
    as __main__). Nothing is imported but a module=name."""
    source_path = manifest["source_path"]
    override = []

    def module_for(name, file):
        if module is not None and (_same_file(file, source_path) or not name):
            if not override:
                override.append(_module_for(source_path, module, path))
            return override[0]
        if not name:
            try:
                return _module_for(source_path, None, path)
            except ArtifactError:
                return None
        return _code_identity.module_named(name, file or "")

    return module_for


def _entry_module(entry, module_for, manifest, module, path):
    """The module an entry's function is found in: the module that defines
    it, which need not be the exported file's (a class imported from a
    library, torch's own nn classes)."""
    name = entry.get("module")
    if name is None:
        # An artifact that records no origin: the exported file's module.
        return _module_for(manifest["source_path"], module, path)
    found = module_for(name, entry.get("defining_file"))
    if found is None:
        raise _error("module-not-found", path,
                     f"{entry['qualified_name']} is defined in module {name} "
                     f"({entry.get('defining_file') or 'no file'}), which is not imported; "
                     "import it before loading the artifact, or pass module=")
    return found


def _stale_reason(entry, module_for):
    """Which functions `entry`'s capture ran are not the same code in this
    process, and how, or None when every fingerprinted function is
    unchanged."""
    functions = entry.get("functions")
    if not functions:
        return None
    records = [(f["module"], f["qualified_name"], f["file"], f["first_line"], f["code_sha256"])
               for f in functions]
    problems = _code_identity.check(records, module_for)
    if not problems:
        return None
    what = {"changed": "changed since export", "missing": "no longer exists",
            "not-imported": "is in a module that is not imported"}
    return "; ".join(f"{module}.{qualname} ({file}) {what[problem]}"
                     for (module, qualname, file, _, _), problem in problems)


def _own_fingerprint(entry, module_name):
    """Whether the entry's own function is among its fingerprints (its code
    digest then decides whether it is the same code, not its first line)."""
    return any(f["qualified_name"] == entry["qualified_name"] and f["module"] == module_name
               for f in entry.get("functions") or ())


def _source_changed(manifest):
    """For an artifact that records no code identity: whether the exported
    file exists and its SHA-256 differs from the one recorded."""
    source = manifest["source_path"]
    if not source or not os.path.isfile(source):
        return False
    try:
        with open(source, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest() != manifest["source_sha256"]
    except OSError:
        return False


def _resolve(module, qualname, first_line, path, check_line=True, code_qualname=None):
    """The live function an entry replaces.

    The qualified name is walked from the module one dotted part at a time
    through each object's __dict__ (classes and modules), so no descriptor or
    __getattr__ runs; a name an instance's __dict__ lacks is read from the
    __dict__ of the classes along its type's MRO (an entry exported as
    `model.forward` whose class no module names, such as a torch.fx
    GraphModule's); a staticmethod or classmethod is unwrapped to its
    function, and decorator wrappers are followed through __wrapped__ until
    a function whose code has the co_qualname of the code that was captured
    (`code_qualname`; the entry's own name when not given). A decorated
    function captured through its wrapper (`functools.wraps` names the
    wrapper after the function) is the wrapper itself. Local functions
    (`f.<locals>.g`) have no such path and cannot be served. The code's
    co_firstlineno must equal the entry's first line."""
    wanted = code_qualname or qualname
    if "<locals>" in qualname.split("."):
        raise _error("entry-not-found", path,
                     f"{qualname} is a local function; dync serves functions reachable from "
                     "their module by qualified name")
    obj = module
    for part in qualname.split("."):
        namespace = getattr(obj, "__dict__", None)
        if (not isinstance(obj, (type, types.ModuleType)) and
                (not isinstance(namespace, dict) or part not in namespace)):
            namespace = next((c.__dict__ for c in type(obj).__mro__ if part in c.__dict__), None)
        if not isinstance(namespace, (dict, types.MappingProxyType)) or part not in namespace:
            raise _error("entry-not-found", path,
                         f"{qualname} not found in module {module.__name__}: no {part!r}")
        obj = namespace[part]
    seen = 0
    while True:
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(obj, types.FunctionType) and obj.__code__.co_qualname == wanted:
            break
        wrapped = getattr(obj, "__wrapped__", None) if seen < 100 else None
        if wrapped is None:
            raise _error("entry-not-found", path,
                         f"{module.__name__}.{qualname} is not a Python function")
        obj, seen = wrapped, seen + 1
    line = obj.__code__.co_firstlineno
    if check_line and line != first_line:
        raise _error("entry-mismatch", path,
                     f"{qualname} in {module.__name__} starts at line {line}, but the artifact "
                     f"was exported from a {qualname} at line {first_line}; re-export it")
    return obj


_SIGNATURE_FLAGS = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def _unmarshal_code(native, index, qualname, path):
    """An entry's rewritten code object."""
    blob = native.entry_code(index)
    try:
        code = marshal.loads(blob)
    except (ValueError, EOFError, TypeError) as e:
        raise _error("bad-code", path, f"{qualname}: the rewritten code does not unmarshal: {e}")
    if not isinstance(code, types.CodeType):
        raise _error("bad-code", path,
                     f"{qualname}: the rewritten code is a {type(code).__name__}, not a code "
                     "object")
    return code


def _rewritten_code(native, index, function, qualname, path):
    """Unmarshals an entry's rewritten code and checks that it takes exactly
    the arguments of the function it replaces, which the hook passes on
    unchanged."""
    code = _unmarshal_code(native, index, qualname, path)
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

    Each entry's function is found in the module that defines it (recorded
    at export), which must be imported; `module` (a module or a name, imported
    if need be) stands for the exported file's module instead.

    Raises ArtifactError (with `kind` and `path`) when the artifact cannot run
    in this process: a missing, truncated or corrupt file, another format,
    CPython or torch version, missing CPU features, an entry whose function
    or module is not found, or another frame evaluator being active. An
    entry whose captured code changed since export (the entry's function or
    any function its capture ran) is not served: an ArtifactWarning, and
    each call runs the original code with that miss reason in stats(); with
    strict=True it is an ArtifactError of kind "stale" instead. With
    strict=True a guard miss raises GuardError instead of running the
    original code."""
    path = os.fspath(path)
    with _lock:
        native = _dync.open(path, importlib.util.MAGIC_NUMBER, torch.__version__)
        try:
            manifest = native.manifest()
            artifact = Artifact(native, manifest, strict)
            for message in native.warnings():
                warnings.warn(message, ArtifactWarning, stacklevel=2)
            entries = manifest["entries"]
            if any(e["functions"] is None for e in entries) and _source_changed(manifest):
                warnings.warn(f"{manifest['source_path']} changed since it was exported; the "
                              "artifact runs the code as it was then", ArtifactWarning,
                              stacklevel=2)
            module_for = _module_finder(manifest, module, path)
            # A function's entries are its variants (one per grad mode, say),
            # in the order their guards are tried: {function: [function,
            # indices, codes, stale reason]}, in the order functions first
            # appear.
            variants = {}
            for index, entry in enumerate(entries):
                qualname = entry["qualified_name"]
                owner = _entry_module(entry, module_for, manifest, module, path)
                captured = _unmarshal_code(native, index, qualname, path).co_qualname
                function = _resolve(owner, qualname, entry["first_line"], path,
                                    check_line=not _own_fingerprint(entry, entry["module"]),
                                    code_qualname=captured)
                if function.__code__.co_flags & _RESUMABLE:
                    if qualname not in artifact.skipped:
                        reason = (f"{qualname} is a generator or coroutine function; dync runs "
                                  "it with the default evaluator")
                        artifact.skipped[qualname] = reason
                        warnings.warn(reason, ArtifactWarning, stacklevel=2)
                    continue
                # Keyed by the function: decorated functions share their
                # wrapper's code.
                group = variants.setdefault(function, [function, [], [], None])
                group[1].append(index)
                changed = _stale_reason(entry, module_for)
                if changed is not None:
                    # One changed function is enough: none of the variants
                    # is served.
                    message = (f"{qualname} is not served: the code captured for it changed: "
                               f"{changed}; re-export the artifact")
                    if strict:
                        raise _error("stale", path, message)
                    if group[3] is None:
                        group[3] = f"stale code: {changed}; the original code runs"
                        artifact.stale[qualname] = group[3]
                        warnings.warn(f"{path}: {message}; the original code runs",
                                      ArtifactWarning, stacklevel=2)
                    continue
                group[2].append(_rewritten_code(native, index, function, qualname, path))
            for function, indices, codes, stale in variants.values():
                native.bind(tuple(indices), function, None if stale else tuple(codes), strict,
                            stale)
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
