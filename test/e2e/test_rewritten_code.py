"""The rewritten bytecode against the original function.

For each case, `dync export --emit=code` gives the rewritten code object. It
runs here the way the runtime runs it, as a function with the original's
globals, defaults and closure, with the graph global bound to a stand-in that
records the inputs it is given and computes the graph's results by running
the original function eagerly and taking the tensors of its result,
depth-first. Then:

- the rewritten function's result equals the original's in structure, types
  and values (ints rebuilt from sizes included, also for other sizes when
  they are dynamic);
- the stand-in received exactly the objects the graph's input sources name,
  tensors first, then ints;
- `--emit=bytecode` prints what `dis.dis` prints for the code;
- co_stacksize is the depth a walk with `dis.stack_effect` finds, and the code
  survives a marshal round trip.
"""
import contextlib
import dis
import importlib.util
import inspect
import io
import marshal
import os
import re
import subprocess
import types

import pytest
import torch

from conftest import REPO

EXAMPLES = os.path.join(REPO, "examples")
RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs", "results.py")


def with_batch(size):
    """Variant arguments: the first argument with its dimension 0 resized."""
    def variant(args):
        first = args[0]
        return (torch.randn(size, *first.shape[1:], dtype=first.dtype),) + tuple(args[1:])
    return variant


def with_shape(*shape):
    def variant(args):
        return (torch.randn(*shape),) + tuple(args[1:])
    return variant


# (file, entry, --dynamic specs, --example, variants: more argument lists to
# call the rewritten code with, made from the example's)
CASES = [
    (os.path.join(EXAMPLES, "mlp/model.py"), "MLP.forward", [], None, []),
    (os.path.join(EXAMPLES, "mlp/model.py"), "MLP.forward", ["x:0=batch[1,1024]"], None,
     [with_batch(5), with_batch(77)]),
    (os.path.join(EXAMPLES, "cnn/model.py"), "model.forward", ["images:0=n[1,8]"], None,
     [with_batch(3)]),
    (os.path.join(EXAMPLES, "transformer/model.py"), "EncoderBlock.forward",
     ["x:0=b[1,64]", "x:1=seq[1,512]"], None, [with_shape(3, 24, 128)]),
    (RESULTS, "single", [], None, []),
    (RESULTS, "returns_input", [], None, []),
    (RESULTS, "returns_tuple", [], None, []),
    (RESULTS, "one_tuple", [], None, []),
    (RESULTS, "nested_list_with_none", [], None, []),
    (RESULTS, "constants", [], None, []),
    (RESULTS, "sizes", [], None, []),
    (RESULTS, "sizes", ["x:0=n[2,64]", "x:1=m[2,64]"], None,
     [with_shape(7, 5), with_shape(2, 9)]),
    (RESULTS, "keyword_only", [], None, []),
    (RESULTS, "star_args", [], "two_inputs", []),
    (RESULTS, "cell_argument", [], None, []),
    (RESULTS, "shifted", [], None, []),
    (RESULTS, "only_ints", ["x:0=n[2,64]"], None, [with_shape(9, 3)]),
]


def case_id(case):
    path, entry, dynamic, _, _ = case
    return f"{os.path.basename(os.path.dirname(path))}:{entry}{'-dynamic' if dynamic else ''}"


def export(dync_binary, path, entry, dynamic, example, kinds):
    """stdout of `dync export --emit=KIND` for one entry, as bytes, for each
    of kinds; the runs overlap, each in its own interpreter."""
    runs = []
    for kind in kinds:
        args = [dync_binary, "export", f"{path}:{entry}", f"--emit={kind}"]
        for spec in dynamic:
            args += ["--dynamic", spec]
        if example:
            args += ["--example", example]
        runs.append(subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    outputs = []
    for run in runs:
        stdout, stderr = run.communicate()
        assert run.returncode == 0, stderr.decode()
        outputs.append(stdout)
    return outputs


_modules = {}


def load_module(path):
    """The file imported here, once, under a name of its own."""
    if path not in _modules:
        name = "rewritten_case_" + re.sub(r"\W", "_", os.path.relpath(path, REPO))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _modules[path] = module
    return _modules[path]


def resolve(module, qualname):
    """The entry's plain function and the self capture binds it to (None for
    a function), the way dync resolves entries."""
    *path, name = qualname.split(".")
    if not path:
        return getattr(module, name), None
    owner = module
    for part in path:
        owner = getattr(owner, part)
    if isinstance(owner, type):
        instances = [v for v in vars(module).values() if type(v) is owner]
        return vars(owner)[name], instances[0] if instances else owner()
    return vars(type(owner))[name], owner


def tensor_leaves(value):
    """The tensors of a result, depth-first, left to right."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in tensor_leaves(item)]
    return []


def assert_same(actual, expected, path="result"):
    assert type(actual) is type(expected), f"{path}: {type(actual)} is not {type(expected)}"
    if isinstance(expected, torch.Tensor):
        torch.testing.assert_close(actual, expected, msg=lambda m: f"{path}: {m}")
    elif isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected), f"{path}: {actual!r} is not {expected!r}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_same(a, e, f"{path}[{i}]")
    else:
        assert actual == expected, f"{path}: {actual!r} is not {expected!r}"


def graph_inputs(graph_text):
    """(type, source) of each input of the printed graph, in graph order."""
    header = graph_text.split(" {\n", 1)[0].split("\n    symbols")[0]
    inputs = []
    for line in header.splitlines():
        match = re.search(r"%[\w.$]+: (.*?) = (.*?)[,)]$", line)
        if match:
            inputs.append((match.group(1), match.group(2)))
    return inputs


def max_stack_depth(code):
    """The deepest stack over every path of code, from dis.stack_effect."""
    instructions = list(dis.get_instructions(code))
    index = {ins.offset: k for k, ins in enumerate(instructions)}
    depth_at = {0: 0}
    work = [0]
    while work:
        k = work.pop()
        ins = instructions[k]
        depth = depth_at[k]
        arg = ins.arg if ins.opcode >= dis.HAVE_ARGUMENT else None
        edges = []
        if ins.opcode in dis.hasjrel or ins.opcode in dis.hasjabs:
            edges.append((index[ins.argval], dis.stack_effect(ins.opcode, arg, jump=True)))
            if "JUMP_FORWARD" != ins.opname and "JUMP_BACKWARD" not in ins.opname:
                edges.append((k + 1, dis.stack_effect(ins.opcode, arg, jump=False)))
        elif ins.opname != "RETURN_VALUE":
            edges.append((k + 1, dis.stack_effect(ins.opcode, arg)))
        for target, effect in edges:
            assert depth + effect >= 0, f"stack underflow at {ins.offset}"
            if target in depth_at:
                assert depth_at[target] == depth + effect, f"paths disagree at {target}"
            else:
                depth_at[target] = depth + effect
                work.append(target)
    return max(depth_at.values())


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_rewritten_code_matches_original(dync_binary, case):
    path, entry, dynamic, example, variants = case
    blob, listing, graph_text = export(dync_binary, path, entry, dynamic, example,
                                       ["code", "bytecode", "graph"])
    code = marshal.loads(blob)
    listing, graph_text = listing.decode(), graph_text.decode()

    module = load_module(path)
    function, self = resolve(module, entry)
    original_code = function.__code__
    for field in ("co_argcount", "co_posonlyargcount", "co_kwonlyargcount", "co_flags",
                  "co_varnames", "co_cellvars", "co_freevars", "co_name", "co_qualname",
                  "co_firstlineno"):
        assert getattr(code, field) == getattr(original_code, field), field

    # The listing is dis's; the stack depth is the compiler's count.
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        dis.dis(code)
    assert listing == printed.getvalue()
    assert code.co_stacksize == max_stack_depth(code)
    assert marshal.loads(marshal.dumps(code)) == code
    assert code.co_exceptiontable == b""
    assert {line for _, _, line in code.co_lines()} == {original_code.co_firstlineno}

    graphs = [name for name in code.co_names if name.startswith("__dync_graph_")]
    assert len(graphs) == 1, code.co_names
    received = []
    current = {}

    def stand_in(*inputs):
        received.append(inputs)
        torch.manual_seed(0)
        return tuple(tensor_leaves(function(*current["args"])))

    namespace = dict(function.__globals__, **{graphs[0]: stand_in})
    rewritten = types.FunctionType(code, namespace, function.__name__, function.__defaults__,
                                   function.__closure__)
    rewritten.__kwdefaults__ = function.__kwdefaults__

    example_args = tuple(getattr(module, example or "example_inputs")())
    inputs = graph_inputs(graph_text)
    ordered = ([source for type_, source in inputs if type_.startswith("tensor")] +
               [source for type_, source in inputs if type_.startswith("int")])
    assert len(ordered) == len(inputs), inputs
    for args in [example_args] + [variant(example_args) for variant in variants]:
        args = ((self,) if self is not None else ()) + tuple(args)
        current["args"] = args
        received.clear()
        result = rewritten(*args)
        torch.manual_seed(0)
        assert_same(result, function(*args))

        # What the graph was given is what its sources name in this frame.
        bound = inspect.signature(function).bind(*args)
        bound.apply_defaults()
        frame = {"L": dict(bound.arguments), "G": function.__globals__}
        assert len(received) == 1
        assert len(received[0]) == len(ordered)
        for source, value in zip(ordered, received[0]):
            expected = eval(source, {"__builtins__": {}}, frame)
            if isinstance(expected, torch.Tensor):
                assert value is expected, source
            else:
                assert type(value) is int and value == expected, source


def test_exported_code_is_one_entry(run_dync):
    done = run_dync("export", f"{RESULTS}:single", f"{RESULTS}:one_tuple", "--emit=code")
    assert done.returncode == 2
    assert "--emit=code writes one code object" in done.stderr
