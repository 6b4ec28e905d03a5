"""The conformance samples of utils/dynamic: PyTorch's own test inputs with a
batch dimension, each exported once with that dimension declared dynamic
and called at every size of a grid over the range.

A sample of module_db or op_db (loaded as utils/conformance loads them:
float32, CPU, modules in eval mode) has a batch dimension when its first
tensor has two dimensions or more and eager runs it with dimension 0 of
that tensor, and of every other tensor of the same leading size, at the
range's two ends (rows of the sample's own tensors picked again, so the
values stay in what the op accepts: class indices, probabilities, positive
variances). Samples of one batch and the same number of such tensors are
written as entries of one module (utils/conformance's Writer), the batch
tensors named b0, b1, ..., and exported once with `--dynamic
'bI:0=batch[LO,HI]'` for each. A fresh process loads the artifact and calls
each entry at every size of the grid on rows of its example, comparing with
eager on copies of the same inputs (values, and the inputs after the call);
a call that did not run the compiled graph is a miss, with its reason.

Every sample is exported at batch 4 (rows of its own picked again), so
that many share one export. By default one sample per module of module_db
and per op of a list of op_db ops (NAMED); `--all` takes every sample that
has a batch dimension.
"""
import importlib.machinery
import importlib.util
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RANGE = (1, 16)
EXAMPLE_BATCH = 4  # the size every sample is exported at
BATCH_SIZE = 60  # entries per export


def conformance():
    """utils/conformance as a module (its file has no .py suffix)."""
    if "dync_conformance" in sys.modules:
        return sys.modules["dync_conformance"]
    loader = importlib.machinery.SourceFileLoader("dync_conformance",
                                                  os.path.join(HERE, "conformance"))
    spec = importlib.util.spec_from_loader("dync_conformance", loader)
    module = importlib.util.module_from_spec(spec)
    sys.modules["dync_conformance"] = module
    loader.exec_module(module)
    return module


def map_tensors(value, fn):
    """`value` with each tensor the Writer makes a parameter replaced by
    fn(tensor): it looks inside exact tuples, lists and str-keyed dicts."""
    import torch

    if isinstance(value, torch.Tensor):
        return fn(value)
    if type(value) in (tuple, list):
        return type(value)(map_tensors(v, fn) for v in value)
    if type(value) is dict and all(isinstance(k, str) for k in value):
        return {k: map_tensors(v, fn) for k, v in value.items()}
    return value


def tensors_in(value):
    found = []
    map_tensors(value, lambda t: found.append(t) or t)
    return found


def rows(tensor, size, batch):
    """`size` rows of `tensor` (whose dimension 0 is `batch`): its own rows
    in order, then again from the first."""
    import torch

    return tensor[torch.arange(size) % batch].contiguous()


def at_size(sample, size, batch):
    """The sample's arguments with every tensor of leading size `batch` cut
    or grown to `size` rows; one tensor passed twice stays one tensor."""
    import torch

    made = {}

    def resize(t):
        if t.dim() >= 1 and t.shape[0] == batch:
            if id(t) not in made:
                made[id(t)] = rows(t, size, batch).requires_grad_(t.requires_grad)
            return made[id(t)]
        return t

    with torch.no_grad():
        return map_tensors(sample.args, resize), map_tensors(sample.kwargs, resize)


def leading_batch(sample):
    """The sample's batch size: dimension 0 of its first tensor, when that
    tensor has two dimensions or more; else None."""
    tensors = tensors_in((sample.args, sample.kwargs))
    if not tensors or tensors[0].dim() < 2:
        return None
    return tensors[0].shape[0]


def callable_of(sample):
    import torch

    if sample.module:
        cls, cargs, ckwargs = sample.module
        torch.manual_seed(0)
        return cls(*cargs, **ckwargs).eval()
    return sample.fn


def eager_runs(sample, batch, sizes):
    import torch

    try:
        fn = callable_of(sample)
        for size in sizes:
            args, kwargs = at_size(sample, size, batch)
            torch.manual_seed(0)
            with torch.no_grad():
                fn(*args, **kwargs)
        return True
    except Exception:
        return False


# The op_db ops of the default selection: ops a model applies to a batch
# (elementwise, reductions over other dimensions, matrix products, shape
# and indexing ops, normalization), the first sample of each that has a
# batch dimension; --all takes every sample of every op.
NAMED = {"add", "mul", "sub", "div", "exp", "tanh", "sigmoid", "abs", "pow", "where",
         "clamp", "matmul", "bmm", "mm", "addmm", "baddbmm", "einsum", "softmax",
         "log_softmax", "cat", "stack", "reshape", "view", "transpose", "permute", "flatten",
         "unsqueeze", "squeeze", "expand", "gather", "index_select", "masked_fill", "narrow",
         "split", "chunk", "flip", "roll", "sort", "topk", "argmax", "max", "mean", "sum",
         "var", "std", "norm", "cumsum", "tril", "repeat", "nn.functional.pad",
         "nn.functional.linear", "nn.functional.layer_norm", "nn.functional.group_norm",
         "nn.functional.gelu", "nn.functional.relu", "nn.functional.silu",
         "nn.functional.conv2d", "nn.functional.embedding", "nn.functional.cross_entropy",
         "nn.functional.scaled_dot_product_attention", "nn.functional.interpolate"}


def selected(sample):
    return sample.suite == "module_db" or sample.name.split(".")[0] in NAMED or \
        sample.name in NAMED or any(sample.name.startswith(n + ".") for n in NAMED
                                    if n.startswith("nn."))


class Options:
    """What utils/conformance's samplers read from their arguments."""

    def __init__(self, only=None):
        self.only = only
        self.limit = None


def collect(take_all, only, progress):
    """The samples with a batch dimension: [(sample, batch)]."""
    import warnings

    warnings.filterwarnings("ignore")
    c = conformance()
    chosen = []
    for suite, sampler in (("module_db", c.module_samples), ("op_db", c.op_samples)):
        other = "op_db" if suite == "module_db" else "module_db"
        if only and all(o.startswith(other) for o in only):
            continue  # `--only op_db.add` samples no module
        progress(f"{suite}: collecting samples")
        # The default selection samples the ops it names only.
        samples, _ = sampler(Options(None if take_all or suite == "module_db" else set(NAMED)))
        taken = set()
        for sample in samples:
            key = (sample.suite, sample.name)
            if only and not any(o in f"{sample.suite}.{sample.name}" for o in only):
                continue
            if not take_all and (key in taken or not selected(sample)):
                continue
            batch = leading_batch(sample)
            if batch is None or not eager_runs(sample, batch, RANGE):
                continue
            if batch != EXAMPLE_BATCH:
                # One example size for all, so that samples share exports;
                # not 1, which torch specializes.
                sample.args, sample.kwargs = at_size(sample, EXAMPLE_BATCH, batch)
                batch = EXAMPLE_BATCH
            taken.add(key)
            chosen.append((sample, batch))
    return chosen


class BatchWriter:
    """utils/conformance's Writer, naming the tensors of the batch b0, b1,
    ... and the others c0, c1, ..."""

    def __new__(cls, batch):
        import torch

        base = conformance().Writer

        class Writer(base):
            def expr(self, value, params):
                if isinstance(value, torch.Tensor):
                    batched = value.dim() >= 1 and value.shape[0] == batch
                    prefix = "b" if batched else "c"
                    name = f"{prefix}{sum(p.startswith(prefix) for p, _ in params)}"
                    # One tensor passed twice stays one parameter.
                    for p, t in params:
                        if t is value:
                            return p
                    params.append((name, value))
                    return name
                return super().expr(value, params)

        return Writer()


def write_module(directory, stem, group):
    """One module for `group` ([(sample, batch)] of one batch size and
    count of batch tensors): returns its path and [(sample, entry)]."""
    import pickle

    writer = BatchWriter(group[0][1])
    entries = []
    for i, (sample, _) in enumerate(group):
        state = (len(writer.constants), len(writer.lines))
        try:
            entries.append((sample, writer.entry(sample, i)))
        except Exception:
            del writer.constants[state[0]:], writer.lines[state[1]:]
    data = os.path.join(directory, stem + ".pkl")
    with open(data, "wb") as f:
        pickle.dump((writer.constants, writer.tensors), f)
    path = os.path.join(directory, stem + ".py")
    with open(path, "w") as f:
        f.write("import pickle\nimport torch\nimport torch.nn.functional\n")
        f.write(f"with open({data!r}, 'rb') as _f:\n    _C, _T = pickle.load(_f)\n\n")
        f.write("def _op(key):\n"
                "    from torch.testing._internal.common_methods_invocations import op_db\n"
                "    return next(op.op for op in op_db if (op.name, op.variant_test_name) == key)\n\n")
        f.write("\n".join(writer.lines) + "\n")
    return path, entries


def batch_tensors(group):
    """How many tensors of each sample are in the batch (b0, b1, ...)."""
    sample, batch = group
    seen = []
    for t in tensors_in((sample.args, sample.kwargs)):
        if t.dim() >= 1 and t.shape[0] == batch and not any(t is s for s in seen):
            seen.append(t)
    return len(seen)


def run_group(dync, directory, stem, group, sizes):
    """Exports one group and calls its entries at `sizes`: returns
    {sample name: (ok, hits, calls, lines)}."""
    path, entries = write_module(directory, stem, group)
    count = batch_tensors(group[0])
    artifact = os.path.join(directory, f"{stem}-artifact.dync.so")
    command = [dync, "export", "--keep-going", "-o", artifact]
    for _, name in entries:
        command += [f"{path}:{name}", "--example", f"{name}=ex{name[1:]}"]
    for i in range(count):
        command += ["--dynamic", f"b{i}:0=batch[{RANGE[0]},{RANGE[1]}]"]
    exported = subprocess.run(command, capture_output=True, text=True)
    # Each diagnostic and note, by the entry it names (`eN:`) or the line it
    # points at (the entry's def and return lines).
    text = open(path).read().splitlines()
    spans = {}
    for n, line in enumerate(text, 1):
        m = re.match(r"def (e\d+)\(", line)
        if m:
            spans[m.group(1)] = (n, n + 1)
    said = {}
    current = None
    unplaced = []  # error lines that name no entry and no line of one
    for line in exported.stderr.splitlines():
        named = re.search(r"\b(e\d+)\b", line)
        placed = re.match(r"\S+?\.py:(\d+):\d+: ", line)
        owner = None
        if placed:
            owner = next((n for n, (a, b) in spans.items() if a <= int(placed.group(1)) <= b),
                         None)
        if owner is None and named and named.group(1) in spans:
            owner = named.group(1)
        if owner is None and line.startswith(" "):
            owner = current  # a diagnostic's continuation
        if owner:
            current = owner
            said.setdefault(owner, []).append(line.strip())
        elif "error:" in line and "no entry was captured" not in line:
            current = None
            unplaced.append(line.strip())
    # Export captures the entries in order and says one error for each it
    # leaves out: the errors no entry claimed go, in order, to the entries
    # left out without one, when there are as many.
    loaded = set()
    if os.path.exists(artifact):
        listed = subprocess.run([dync, "inspect", artifact], capture_output=True, text=True)
        loaded = set(re.findall(r"^entry (e\d+) ", listed.stdout, re.M))
    silent = [name for _, name in entries
              if name not in loaded and not any("error" in l for l in said.get(name, []))]
    if len(silent) == len(unplaced):
        for name, line in zip(silent, unplaced):
            said.setdefault(name, []).append(line)
    results = {}
    if not os.path.exists(artifact):
        for sample, name in entries:
            why = next((l for l in said.get(name, []) if "error" in l), None)
            results[sample] = (False, 0, 0, said.get(name, []) +
                               [f"FAIL export: {why or 'no artifact written'}"[:300]])
        return results
    child = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", path, artifact,
         json.dumps(sizes)] + [name for _, name in entries],
        capture_output=True, text=True, env=conformance().runtime_environment(dync))
    reports = {}
    for line in child.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            reports[record["entry"]] = record
    for sample, name in entries:
        lines = list(said.get(name, []))
        record = reports.get(name)
        if record is None:
            errors = [l for l in lines if "error" in l]
            if errors:
                lines.append(f"FAIL export: {errors[0][:300]}")
            else:
                died = (child.stderr.strip().splitlines() or ["?"])[-1]
                lines.append(f"FAIL the calls did not report: {died[:300]}")
            results[sample] = (False, 0, 0, lines)
            continue
        if record.get("error"):
            lines.append(f"FAIL {record['error'][:300]}")
            results[sample] = (False, 0, 0, lines)
            continue
        ok = True
        hits = 0
        for size, hit, reason, error in record["calls"]:
            hits += hit
            if not hit:
                ok = False
                lines.append(f"miss at batch={size}: {reason}")
            if error:
                ok = False
                lines.append(f"MISMATCH at batch={size}: {error}")
        results[sample] = (ok, hits, len(record["calls"]), lines)
    return results


def run(dync, take_all, only, sizes, progress, keep=False):
    """Runs every selected sample: yields (label, ok, hits, calls, lines, graphs)."""
    chosen = collect(take_all, only, progress)
    groups = {}
    for sample, batch in chosen:
        groups.setdefault((sample.suite, batch, batch_tensors((sample, batch))), []).append(
            (sample, batch))
    progress(f"{len(chosen)} samples with a batch dimension, "
             f"{sum((len(g) + BATCH_SIZE - 1) // BATCH_SIZE for g in groups.values())} exports")
    directory = tempfile.mkdtemp(prefix="dync-dynamic-samples-")
    number = 0
    for (suite, batch, count), members in sorted(groups.items(), key=lambda kv: str(kv[0])):
        for start in range(0, len(members), BATCH_SIZE):
            part = members[start:start + BATCH_SIZE]
            results = run_group(dync, directory, f"{suite}_{number}", part, sizes)
            number += 1
            for sample, _ in part:
                label = f"{suite} {sample.name} #{sample.index} (batch {batch}, {count} tensors)"
                ok, hits, calls, lines = results.get(
                    sample, (False, 0, 0, ["FAIL harness: the sample could not be written"]))
                yield label, ok, hits, calls, lines
    if keep:
        progress(f"the generated modules and artifacts are in {directory}")
    else:
        subprocess.run(["rm", "-rf", directory])


# --- The child: loads one artifact and calls its entries at each size ---


def child(path, artifact, sizes, names):
    import warnings

    import torch

    import dync

    warnings.filterwarnings("ignore")
    c = conformance()
    stem = os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location(stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[stem] = module
    spec.loader.exec_module(module)

    def inputs(name, size):
        fn = getattr(module, name)
        example = getattr(module, "ex" + name[1:])()
        parameters = list(inspect.signature(fn).parameters)
        batch = next(t.shape[0] for p, t in zip(parameters, example) if p.startswith("b"))
        with torch.no_grad():
            return [c.copy_tensor(rows(t, size, batch) if p.startswith("b") else t)
                    for p, t in zip(parameters, example)]

    def call(name, values):
        torch.manual_seed(0)
        return getattr(module, name)(*values)

    expected = {}
    for name in names:
        for size in sizes:
            values = inputs(name, size)
            try:
                expected[name, size] = (call(name, values), values)
            except Exception as e:
                expected[name, size] = e
    try:
        loaded = dync.load(artifact, module=module)
    except Exception as e:
        for name in names:
            print(json.dumps({"entry": name, "error": f"load: {type(e).__name__}: {e}"}))
        return
    qualified = {entry["qualified_name"] for entry in loaded.entries}
    for name in names:
        if name not in qualified:
            print(json.dumps({"entry": name, "error": "export: the entry is not in the artifact"}),
                  flush=True)
            continue
        calls = []
        for size in sizes:
            dync.reset_stats()
            values = inputs(name, size)
            error = None
            try:
                got = call(name, values)
            except Exception as e:
                got, error = None, f"run: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            stats = loaded.stats()[name]
            want = expected[name, size]
            if error is None and isinstance(want, Exception):
                error = "eager failed in this process but the artifact did not"
            if error is None:
                error = (c.compare_values(want[0], got, "result")
                         or c.compare_values(want[1], values, "input after the call"))
            calls.append([size, bool(stats["hits"]), stats["last_miss_reason"], error])
        print(json.dumps({"entry": name, "calls": calls}), flush=True)


if __name__ == "__main__" and len(sys.argv) > 1 and sys.argv[1] == "--child":
    child(sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), sys.argv[5:])
