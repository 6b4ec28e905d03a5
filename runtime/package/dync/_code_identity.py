"""Code identity: fingerprints of the Python functions whose code capture ran,
and the check that the live functions are still the same code.

One file serves both sides. `dync export` runs it inside its embedded
interpreter (it is compiled into the binary as the module
`dync__code_identity`) to fingerprint what capture ran; `dync.load` imports it
from the package to check those fingerprints against the functions a process
has. Both therefore hash a code object the same way, with no second
implementation to keep in step.

A fingerprint is (module, qualname, file, first line, digest). The digest is
a SHA-256 over what decides what the code does: its bytecode (`co_code`, the
unspecialized instructions), its constants (code objects among them hashed
the same way, recursively), the names it reads (`co_names`), its local,
cell and free variable names, its flags, its argument counts and its
exception table. Line numbers, the line table and the file name are left
out, so moving a function or editing a comment elsewhere in its file keeps
its digest, while any change to what it does changes it.

Functions of torch and of the standard library are not fingerprinted: the
artifact's torch and Python version checks cover them.
"""

import functools
import hashlib
import os
import sys
import sysconfig
import types

__all__ = ["digest", "fingerprints", "find_live_code", "check"]


def _feed_const(h, value):
    # A type tag before every value, so that 1, 1.0, True and "1" differ.
    if isinstance(value, types.CodeType):
        h.update(b"code(")
        _feed_code(h, value)
        h.update(b")")
    elif isinstance(value, tuple):
        h.update(b"tuple(%d" % len(value))
        for item in value:
            _feed_const(h, item)
        h.update(b")")
    elif isinstance(value, frozenset):
        # A frozenset's iteration order depends on the hash seed of the
        # process; its members' digests sorted do not.
        parts = []
        for item in value:
            sub = hashlib.sha256()
            _feed_const(sub, item)
            parts.append(sub.digest())
        h.update(b"frozenset(%d" % len(parts))
        for part in sorted(parts):
            h.update(part)
        h.update(b")")
    elif isinstance(value, (bytes, bytearray)):
        h.update(b"bytes(%d:" % len(value))
        h.update(bytes(value))
        h.update(b")")
    elif isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        h.update(b"str(%d:" % len(data))
        h.update(data)
        h.update(b")")
    else:
        # None, Ellipsis, bool, int, float (repr tells -0.0 and nan apart),
        # complex: their repr is exact.
        text = f"{type(value).__name__}({value!r})".encode("utf-8", "surrogatepass")
        h.update(b"%d:" % len(text))
        h.update(text)


def _feed_names(h, tag, names):
    h.update(tag + b"(%d" % len(names))
    for name in names:
        data = name.encode("utf-8", "surrogatepass")
        h.update(b"%d:" % len(data))
        h.update(data)
    h.update(b")")


def _feed_code(h, code):
    _feed_names(h, b"name", (code.co_name, code.co_qualname))
    h.update(b"counts(%d,%d,%d,%d)" % (code.co_argcount, code.co_posonlyargcount,
                                       code.co_kwonlyargcount, code.co_flags))
    h.update(b"code(%d:" % len(code.co_code))
    h.update(code.co_code)
    h.update(b")")
    h.update(b"exceptions(%d:" % len(code.co_exceptiontable))
    h.update(code.co_exceptiontable)
    h.update(b")")
    _feed_const(h, code.co_consts)
    _feed_names(h, b"names", code.co_names)
    _feed_names(h, b"varnames", code.co_varnames)
    _feed_names(h, b"cellvars", code.co_cellvars)
    _feed_names(h, b"freevars", code.co_freevars)


def digest(code):
    """The SHA-256 (hex) of what `code` does; see the module's docstring."""
    h = hashlib.sha256()
    _feed_code(h, code)
    return h.hexdigest()


def _real(path):
    try:
        return os.path.realpath(path)
    except (TypeError, ValueError, OSError):
        return path


def _covered_roots():
    """(torch's package folder or None, the standard library's folders):
    code under them is covered by the version checks."""
    torch = sys.modules.get("torch")
    torch_file = getattr(torch, "__file__", None)
    torch_root = os.path.dirname(_real(torch_file)) if isinstance(torch_file, str) else None
    paths = sysconfig.get_paths()
    stdlib = [_real(paths[key]) for key in ("stdlib", "platstdlib") if paths.get(key)]
    return torch_root, stdlib


def _under(path, root):
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _is_covered(module, filename, roots):
    torch_root, stdlib = roots
    if module == "torch" or module.startswith("torch."):
        return True
    if filename.startswith("<dync ") and module.startswith("dync_"):
        # dync's own embedded modules (the objects capture makes for values
        # only it holds): part of the dync that made the artifact, which its
        # manifest names, never of the program.
        return True
    if filename.startswith("<"):
        # Frozen standard-library modules; other code without a file is the
        # program's own.
        return module.partition(".")[0] in sys.stdlib_module_names
    path = _real(filename)
    if torch_root and _under(path, torch_root):
        return True
    parts = path.split(os.sep)
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    return any(_under(path, root) for root in stdlib)


def _nested_codes(code, into):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            into.add(id(const))
            _nested_codes(const, into)


def fingerprints(functions):
    """Fingerprints of the functions capture ran.

    `functions` is a sequence of (code, globals, qualname) in the order
    capture first ran them, qualname being the function's __qualname__ (a
    decorator's wrapper or a generated method, such as a dataclass's
    __init__, has one its code's co_qualname does not say). Returns a list
    of (module, qualname, file, first_line, digest) tuples: one per distinct
    code object, leaving out torch's and the standard library's, code whose
    globals are not an imported module's, and code nested in another listed
    function's code (its digest covers it)."""
    roots = _covered_roots()
    listed = []
    seen = set()
    for code, globals_, qualname in functions:
        if id(code) in seen:
            continue
        seen.add(id(code))
        module = globals_.get("__name__") if isinstance(globals_, dict) else None
        if not isinstance(module, str):
            module = ""
        if _is_covered(module, code.co_filename, roots):
            continue
        if module not in sys.modules:
            # Code generated with globals of no module (a namedtuple's
            # __new__, made by eval): no process can look it up by name, so
            # listing it would only keep the entry from ever being served.
            continue
        listed.append((code, module, qualname or code.co_qualname))
    listed = [(code, _reachable_from(code, module, qualname, listed), qualname)
              for code, module, qualname in listed]
    nested = set()
    for code, _, _ in listed:
        _nested_codes(code, nested)
    return [(module, qualname, code.co_filename, code.co_firstlineno, digest(code))
            for code, module, qualname in listed if id(code) not in nested]


def _reachable_from(code, module, qualname, listed):
    """The module whose namespace reaches `code` by `qualname`. That is the
    module of the code's globals, except for a decorator's wrapper that
    functools.wraps renamed after the function it wraps: its code lives in
    the decorator's module while the name leads there from the wrapped
    function's module (transformers' `@can_return_tuple` on
    `GPT2LMHeadModel.forward`). The modules of the other functions capture
    ran are tried first, then every imported module; the globals' module
    when none reaches it (the check then says it is missing)."""
    def reaches(name):
        candidate = sys.modules.get(name)
        if not isinstance(candidate, types.ModuleType):
            return False
        found = _function_codes(_walk(candidate, qualname.split(".")), qualname)
        return any(live is code for live in found)
    if qualname == code.co_qualname or reaches(module):
        return module
    others = [other for _, other, _ in listed if other != module]
    for name in others + [name for name in list(sys.modules) if name not in others]:
        if reaches(name):
            return name
    return module


def _walk(root, parts):
    """The object at `parts` below `root`, read through each object's
    __dict__ (no descriptor or __getattr__ runs); None when a part is
    missing."""
    obj = root
    for part in parts:
        namespace = getattr(obj, "__dict__", None)
        if not isinstance(namespace, (dict, types.MappingProxyType)) or part not in namespace:
            return None
        obj = namespace[part]
    return obj


def _function_codes(obj, qualname):
    """The code objects of the functions `obj` names whose __qualname__ or
    co_qualname is `qualname`: staticmethods and classmethods unwrapped,
    decorator wrappers followed through __wrapped__ (a functools.wraps
    wrapper and the function it wraps both count), a property's getter
    (capture runs it, named by the property's qualname), and a function an
    object of a decorator class holds among its attributes (a lazy
    property's wrapped function, whose __get__ capture runs)."""
    codes = []
    for _ in range(100):
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(obj, property):
            obj = obj.fget
        if isinstance(obj, types.FunctionType) and qualname in (obj.__qualname__,
                                                                obj.__code__.co_qualname):
            codes.append(obj.__code__)
        elif not isinstance(obj, (types.FunctionType, type)):
            held = getattr(obj, "__dict__", None)
            for value in list(held.values()) if isinstance(held, dict) else ():
                if isinstance(value, types.FunctionType) and qualname in (
                        value.__qualname__, value.__code__.co_qualname):
                    codes.append(value.__code__)
        obj = getattr(obj, "__wrapped__", None)
        if obj is None:
            break
    return codes


def _codes_named(code, qualname, into):
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_qualname == qualname:
                into.append(const)
            _codes_named(const, qualname, into)


def find_live_code(module, qualname):
    """The live code objects `qualname` names in `module`: those of a
    function reachable through __dict__s (and of the functions it wraps);
    for a local function
    (`f.<locals>.g`) the code objects of that name nested in the live `f`;
    for a lambda of a module or class, the functions of that qualname its
    namespace holds, in containers too.
    Empty when there is none."""
    parts = qualname.split(".")
    if "<locals>" in parts:
        outer = parts[:parts.index("<locals>")]
        found = []
        for code in _function_codes(_walk(module, outer), ".".join(outer)):
            _codes_named(code, qualname, found)
        return found
    found = _function_codes(_walk(module, parts), qualname)
    if found:
        return found
    owner = _walk(module, parts[:-1])
    return _codes_held_by(owner, qualname) if owner is not None else []


# How far into plain containers, and over how many objects, a function
# with no name of its own is looked for.
_HELD_DEPTH = 3
_HELD_BUDGET = 20000


def _codes_held_by(owner, qualname):
    """The code of the functions named `qualname` that `owner` (a module or
    class) holds in its namespace, directly or inside plain containers
    (dict values, list, tuple and set items) a few levels deep, a
    staticmethod, classmethod or functools.partial unwrapped: a lambda
    has no name of its own to be reached by, and is often kept in a table
    (`LOSSES = {"token": lambda logits, labels: ...}`)."""
    namespace = getattr(owner, "__dict__", None)
    if not isinstance(namespace, (dict, types.MappingProxyType)):
        return []
    found = []
    seen = set()
    budget = [_HELD_BUDGET]

    def visit(value, depth):
        if id(value) in seen or budget[0] <= 0:
            return
        seen.add(id(value))
        budget[0] -= 1
        if isinstance(value, (staticmethod, classmethod)):
            value = value.__func__
        if isinstance(value, functools.partial):
            value = value.func
        if isinstance(value, types.FunctionType):
            if qualname in (value.__qualname__, value.__code__.co_qualname):
                found.append(value.__code__)
            return
        if depth == 0:
            return
        if isinstance(value, dict):
            items = list(value.values())
        elif isinstance(value, (list, tuple, set, frozenset)):
            items = list(value)
        else:
            return
        for item in items:
            visit(item, depth - 1)

    for value in list(namespace.values()):
        visit(value, _HELD_DEPTH)
    return found


def module_named(name, filename):
    """The imported module `name`, else the imported module loaded from
    `filename` (a program run as __main__ holds its functions there); None
    when neither is imported. Nothing is imported."""
    module = sys.modules.get(name)
    if isinstance(module, types.ModuleType):
        return module
    target = _real(filename)
    for candidate in list(sys.modules.values()):
        if not isinstance(candidate, types.ModuleType):
            continue
        file = candidate.__dict__.get("__file__")
        if isinstance(file, str) and _real(file) == target:
            return candidate
    return None


def check(functions, module_for=module_named):
    """Checks fingerprints (as `fingerprints` returns them) against the live
    functions. `module_for(name, file)` finds the module a fingerprint names.
    Returns (fingerprint, problem) pairs, problem being "changed" (the live
    code differs), "missing" (no such function) or "not-imported" (its
    module is not imported); empty when every function is the code capture
    ran."""
    problems = []
    for fingerprint in functions:
        module_name, qualname, filename, _, expected = fingerprint
        module = module_for(module_name, filename)
        if module is None:
            problems.append((fingerprint, "not-imported"))
            continue
        codes = find_live_code(module, qualname)
        if not codes:
            problems.append((fingerprint, "missing"))
        elif not any(digest(code) == expected for code in codes):
            problems.append((fingerprint, "changed"))
    return problems
