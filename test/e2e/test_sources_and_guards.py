"""Sources mean what they say: for each example, every graph input's source
and every guard's source, evaluated against the real frame with exactly the
semantics ir/Source.h gives them (`.name` is a key of the instance __dict__,
`[i]` an item of an exact list or tuple, `['k']` a str key of an exact dict),
reaches a value; tensor inputs are the very objects the module holds; and
every guard holds on the example inputs capture ran with. Guard-only
sources are read as their text says too: `M['name']` from sys.modules,
`type(SRC).name` through the class's MRO, `SRC.__closure__[i].cell_contents`
from the function's closure."""
import ast
import collections
import importlib.util
import inspect
import math
import os
import platform
import re
import sys

import pytest

from conftest import REPO

torch = pytest.importorskip("torch")

EXAMPLES = os.path.join(REPO, "examples")

# (file, entry, --init, --dynamic specs)
CASES = [
    ("mlp/model.py", "MLP.forward", None, []),
    ("mlp/model.py", "MLP.forward", None, ["x:0=batch[1,1024]"]),
    ("cnn/model.py", "CNN.forward", None, []),
    ("cnn/model.py", "model.forward", None, ["images:0=n[1,8]"]),
    ("transformer/model.py", "EncoderBlock.forward", None, []),
    ("transformer/model.py", "EncoderBlock.forward", None, ["x:0=b[1,64]", "x:1=seq[1,512]"]),
    ("transformer/model.py", "SelfAttention.forward", "SelfAttention(128, 4)", []),
    ("transformer/model.py", "SelfAttention.forward", "SelfAttention(128, 4)",
     ["x:0=batch[1,1024]"]),
]

DTYPES = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
          "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32, "i16": torch.int16,
          "i8": torch.int8, "u8": torch.uint8, "bool": torch.bool, "c64": torch.complex64,
          "c128": torch.complex128}


# --- The frame capture ran with -------------------------------------------

def load_frame(path, entry, init):
    """(L, G, function): the entry's arguments bound as capture binds them
    (self as capture finds it, example_inputs(), defaults), the module's
    globals, and the entry's function."""
    spec = importlib.util.spec_from_file_location("model", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["model"] = module
    spec.loader.exec_module(module)
    owner_name, method = entry.rsplit(".", 1)
    owner = getattr(module, owner_name)
    if isinstance(owner, type):
        if init:
            self = eval(init, vars(module))
        else:
            instances = [v for v in vars(module).values() if type(v) is owner]
            self = instances[0] if instances else owner()
        function = getattr(owner, method)
    else:
        self = owner
        function = getattr(type(owner), method)
    bound = inspect.signature(function).bind(self, *module.example_inputs())
    bound.apply_defaults()
    return dict(bound.arguments), vars(module), function


# --- Sources, evaluated as ir/Source.h defines them -----------------------

class SourceError(Exception):
    pass


def evaluate(source, L, G):
    """The value at `source`, reading dictionaries only."""
    def walk(node):
        if isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.UnaryOp) and isinstance(key.op, ast.USub):
                index = -key.operand.value
            else:
                index = key.value
            if isinstance(node.value, ast.Name):
                assert type(index) is str and node.value.id in ("L", "G", "M"), source
                frame = {"L": L, "G": G, "M": sys.modules}[node.value.id]
                if index not in frame:
                    raise SourceError(f"{source}: no {node.value.id}[{index!r}]")
                return frame[index]
            base = walk(node.value)
            if type(index) is int:
                if type(base) not in (list, tuple):
                    raise SourceError(f"{source}: [{index}] of a {type(base).__name__}")
                return base[index]
            if type(base) is not dict:
                raise SourceError(f"{source}: [{index!r}] of a {type(base).__name__}")
            return base[index]
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Call):
            # type(BASE).name: the class attribute as the MRO finds it, as
            # stored.
            assert node.value.func.id == "type", source
            for cls in type(walk(node.value.args[0])).__mro__:
                if node.attr in vars(cls):
                    return vars(cls)[node.attr]
            raise SourceError(f"{source}: no class has {node.attr!r}")
        if (isinstance(node, ast.Attribute) and node.attr == "cell_contents"
                and isinstance(node.value, ast.Subscript)
                and isinstance(node.value.value, ast.Attribute)
                and node.value.value.attr == "__closure__"):
            function = walk(node.value.value.value)
            if type(function) is not type(walk):
                raise SourceError(f"{source}: not a function")
            return function.__closure__[node.value.slice.value].cell_contents
        if isinstance(node, ast.Attribute):
            base = walk(node.value)
            # Fields of functions and properties that live in C slots, not
            # in an instance dict.
            slots = {type(walk): ("__defaults__", "__kwdefaults__"), property: ("fget",)}
            if node.attr in slots.get(type(base), ()):
                return getattr(base, node.attr)
            try:
                namespace = vars(base)
            except TypeError:
                raise SourceError(f"{source}: {type(base).__name__} has no __dict__")
            if node.attr not in namespace:
                raise SourceError(f"{source}: {node.attr!r} is not in the instance dict")
            return namespace[node.attr]
        raise SourceError(f"{source}: not a source")
    return walk(ast.parse(source, mode="eval").body)


MODULE_STEP = re.compile(r"\._(modules|parameters|buffers)\['([^']*)'\]")


def module_path(source):
    """`hidden.0.weight` for L['self']._modules['hidden']._modules['0']
    ._parameters['weight'], as named_parameters() names it; None for a
    source that is not such a path."""
    rest = source[len("L['self']"):] if source.startswith("L['self']") else None
    steps = MODULE_STEP.findall(rest or "")
    if not steps or "".join(f"._{t}['{k}']" for t, k in steps) != rest:
        return None
    return ".".join(k for _, k in steps)


# --- The text dync prints --------------------------------------------------

def export(run_dync, path, entry, init, dynamic, emit):
    args = ["export", f"{path}:{entry}", f"--emit={emit}"]
    if init:
        args += ["--init", init]
    for spec in dynamic:
        args += ["--dynamic", spec]
    result = run_dync(*args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def graph_inputs(text):
    """[(name, type, source)] of the graph's header."""
    header = text[:text.index(" {\n")]
    inputs = []
    for line in header.splitlines():
        match = re.match(r"\s*(?:graph @\S+\()?%(\S+): (.*?) = (.*)$", line)
        if match:
            source = re.sub(r"(,|\))$", "", match.group(3))
            inputs.append((match.group(1), match.group(2), source))
    return inputs


def graph_symbols(text):
    match = re.search(r"symbols \{ (.*?) \}", text)
    ranges = {}
    for name, lo, hi in re.findall(r"(\w+): \[(-?\w+), (-?\w+)\]", match.group(1) if match else ""):
        ranges[name] = (None if "inf" in lo else int(lo), None if "inf" in hi else int(hi))
    return ranges


def split_top(text):
    parts, depth, current = [], 0, ""
    for c in text:
        if c in "[<(":
            depth += 1
        elif c in "]>)":
            depth -= 1
        if c == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += c
    parts.append(current.strip())
    return parts


def ir_string(literal):
    """An IR string literal's value: escapes \\" \\\\ \\n \\t and \\xx bytes."""
    body, out, i = literal[1:-1], bytearray(), 0
    while i < len(body):
        if body[i] == "\\":
            nxt = body[i + 1]
            if nxt in "\"\\":
                out += nxt.encode()
                i += 2
            elif nxt in "nt":
                out += b"\n" if nxt == "n" else b"\t"
                i += 2
            else:
                out.append(int(body[i + 1:i + 3], 16))
                i += 3
        else:
            out += body[i].encode()
            i += 1
    return out.decode()


def ir_constant(text):
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"'):
        return ir_string(text)
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return float(text)


# --- Checking guards --------------------------------------------------------

def check_tensor(value, type_text, symbols, ranges):
    assert type(value) in (torch.Tensor, torch.nn.Parameter), type_text
    assert not value.is_neg() and not value.is_conj(), type_text
    parts = split_top(type_text[len("tensor<"):-1])
    assert value.dtype == DTYPES[parts[0]], type_text
    lists = [p for p in parts[1:] if p.startswith("[")]
    flags = [p for p in parts[1:] if not p.startswith("[")]
    assert value.device == torch.device(next((f for f in flags if f != "requires_grad"), "cpu"))
    assert value.requires_grad == ("requires_grad" in flags), type_text

    def size_of(expr, actual):
        if re.fullmatch(r"[A-Za-z_]\w*", expr) and expr not in symbols:
            symbols[expr] = actual
            lo, hi = ranges[expr]
            assert (lo is None or lo <= actual) and (hi is None or actual <= hi), (expr, actual)
        python = expr.replace("floordiv", "//").replace("mod", "%")
        return eval(python, {"__builtins__": {}, "min": min, "max": max}, dict(symbols))

    sizes = split_top(lists[0][1:-1]) if lists[0] != "[]" else []
    assert len(sizes) == value.dim(), type_text
    for expr, actual in zip(sizes, value.shape):
        assert size_of(expr, actual) == actual, (type_text, expr, actual)
    if len(lists) > 1:
        strides = split_top(lists[1][1:-1])
        assert [size_of(s, a) for s, a in zip(strides, value.stride())] == list(value.stride())
    else:
        assert value.is_contiguous(), type_text


# global_state switches and torch's own getters for them.
SWITCHES = {
    "deterministic_fill": torch._C._get_deterministic_fill_uninitialized_memory,
    "mkldnn": torch._C._get_mkldnn_enabled,
    "mkldnn_deterministic": torch._C._get_mkldnn_deterministic,
    "nnpack": torch._C._get_nnpack_enabled,
    "cpu_fp16_reduction": torch._C._get_cpu_allow_fp16_reduced_precision_reduction,
    "flash_sdp": torch._C._get_flash_sdp_enabled,
    "math_sdp": torch._C._get_math_sdp_enabled,
    "math_sdp_reduction": torch._C._get_math_sdp_allow_fp16_bf16_reduction,
}
# oneDNN's float32 precision per op, as torch resolves it; unset is ieee.
PRECISIONS = {"fp32_precision_" + op: op for op in ("matmul", "conv", "rnn")}


def torch_constant(text):
    """The torch object an equals guard's dtype, device, layout or memory
    format constant names, or None when `text` is none of those."""
    if text in DTYPES:
        return DTYPES[text]
    found = getattr(torch, text, None)
    if isinstance(found, (torch.layout, torch.memory_format)):
        return found
    if re.fullmatch(r"(cpu|cuda|meta)(:\d+)?", text):
        return torch.device(text)
    return None


def check_guard(line, L, G, symbols, ranges):
    kind, rest = line.split(" ", 1)
    if kind == "grad_mode":
        assert torch.is_grad_enabled() == (rest == "true")
        return
    if kind == "default_dtype":
        assert torch.get_default_dtype() == DTYPES[rest]
        return
    if kind == "global_state":
        item, value = rest.split(" ")
        if item == "deterministic_algorithms":
            actual = ("false" if not torch.are_deterministic_algorithms_enabled() else
                      "warn_only" if torch.is_deterministic_algorithms_warn_only_enabled()
                      else "true")
        elif item == "flush_denormal":
            # No getter: a denormal float32 survives unless it is flushed.
            tiny = torch.tensor([1e-39], dtype=torch.float32)
            actual = "true" if float((tiny * 1.0)[0]) == 0.0 else "false"
        elif item == "torch_function_modes":
            actual = str(torch._C._len_torch_function_stack())
        elif item in SWITCHES:
            actual = "true" if SWITCHES[item]() else "false"
        elif item in PRECISIONS:
            actual = torch._C._get_fp32_precision_getter("mkldnn", PRECISIONS[item])
            actual = "ieee" if actual == "none" else actual
        else:
            assert item == "torch_dispatch_modes", line
            actual = str(torch._C._len_torch_dispatch_stack())
        assert actual == value, line
        return
    if kind == "version":
        of, version = rest.split(" ", 1)
        actual = torch.__version__ if of == "torch" else platform.python_version()
        assert ir_string(version) == actual, line
        return
    source, _, operand = rest.partition(" : ")
    if kind == "absent":
        base, _, name = source.rpartition(".")
        assert name not in vars(evaluate(base, L, G)), line
        return
    value = evaluate(source, L, G)
    if kind in ("same", "distinct"):
        assert (value is evaluate(operand, L, G)) == (kind == "same"), line
        return
    if kind == "tensor":
        check_tensor(value, operand, symbols, ranges)
    elif kind == "type":
        module, _, qualname = operand.partition(":")
        module, qualname = (ir_string(p) if p.startswith('"') else p for p in (module, qualname))
        assert (type(value).__module__, type(value).__qualname__) == (module, qualname), line
    elif kind == "equals" and torch_constant(operand) is not None:
        constant = torch_constant(operand)
        assert type(value) is type(constant) and value == constant, line
    elif kind == "equals":
        constant = ir_constant(operand)
        assert type(value) is type(constant), line
        assert value == constant or (isinstance(value, float) and math.isnan(value)
                                     and math.isnan(constant)), line
    elif kind == "none":
        assert value is None, line
    elif kind == "empty":
        assert type(value) in (dict, collections.OrderedDict) and not value, line
    elif kind in ("function", "builtin"):
        names, _, first_line = operand.partition(" line ")
        module, _, qualname = names.partition(":")
        module, qualname = (ir_string(p) if p.startswith('"') else p for p in (module, qualname))
        if kind == "function":
            assert type(value) is type(check_guard), line
            assert (value.__module__, value.__code__.co_qualname,
                    value.__code__.co_firstlineno) == (module, qualname, int(first_line)), line
        else:
            assert type(value) is type(len), line
            assert (value.__module__, value.__name__) == (module, qualname), line
    elif kind == "length":
        assert len(value) == int(operand), line
    elif kind == "keys":
        # Keys are plain names here: no comma inside a key.
        keys = [ir_string(k) for k in split_top(operand[1:-1])] if operand != "[]" else []
        assert type(value) is dict and list(value) == keys, line
    else:
        pytest.fail(f"unknown guard kind in {line!r}")


@pytest.mark.parametrize("path,entry,init,dynamic", CASES,
                         ids=[f"{p.split('/')[0]}:{e}{'-dynamic' if d else ''}"
                              for p, e, _, d in CASES])
def test_sources_evaluate_to_the_frame_values(run_dync, path, entry, init, dynamic):
    path = os.path.join(EXAMPLES, path)
    graph = export(run_dync, path, entry, init, dynamic, "graph")
    guards = export(run_dync, path, entry, init, dynamic, "guards")
    L, G, function = load_frame(path, entry, init)
    self = L.get("self")
    held = {}
    if isinstance(self, torch.nn.Module):
        held.update(self.named_parameters(remove_duplicate=False))
        held.update(self.named_buffers(remove_duplicate=False))

    inputs = graph_inputs(graph)
    assert inputs
    for name, type_text, source in inputs:
        value = evaluate(source, L, G)
        path_in_self = module_path(source)
        if path_in_self is not None:
            assert value is held[path_in_self], source
            assert name == "self_" + path_in_self.replace(".", "_"), (name, source)
        else:
            assert re.fullmatch(r"L\['(\w+)'\]", source), source
            assert value is L[source[3:-2]], source

    block = guards.strip().splitlines()
    header = re.fullmatch(r"guards @(\S+)\((.*)\) \{", block[0])
    assert header and block[-1] == "}", guards
    code = function.__code__
    localsplus = list(code.co_varnames) + [c for c in code.co_cellvars
                                           if c not in code.co_varnames] + list(code.co_freevars)
    assert header.group(2).split(", ") == localsplus
    symbols, ranges = {}, graph_symbols(graph)
    lines = [line.strip() for line in block[1:-1]]
    for line in lines:
        check_guard(line, L, G, symbols, ranges)
    # Every tensor input is guarded, and the symbols bind to the example's
    # sizes within the graph's ranges.
    for _, _, source in inputs:
        assert f"tensor {source}" in "\n".join(lines), source
    assert set(symbols) == set(ranges)
