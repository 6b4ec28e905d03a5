"""Entries resolve where their function is defined, and code that changed
since export is never served.

One export (a module-scoped fixture) writes an artifact from `wrapper.py`
holding two entries whose functions are defined elsewhere: `lib.Net.forward`
(wrapper.py builds `lib.Net()` without importing the name Net) and torch's
own `nn.Sequential.forward`. Net.forward calls `helpers.act`, defined in a
third module. Each test copies the folder, edits a file or not, and runs a
fresh interpreter that imports the wrapper, loads the artifact and calls
both models, comparing with eager results computed in the same process.
"""
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import BUILD

torch = pytest.importorskip("torch")
PACKAGE_DIR = os.path.join(BUILD, "python")

HELPERS = textwrap.dedent("""\
    import torch


    def act(x):
        # The activation.
        return torch.tanh(x) * 2
""")

LIB = textwrap.dedent("""\
    import torch

    import helpers


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 3)

        def forward(self, x):
            # Scaled activation of a linear layer.
            return helpers.act(self.fc(x))
""")

WRAPPER = textwrap.dedent("""\
    import torch

    import lib

    torch.manual_seed(0)
    model = lib.Net()
    seq = torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.ReLU(), torch.nn.Linear(5, 2))


    def head(x):
        return model(x).sum(dim=1)


    def example_inputs():
        return (torch.randn(3, 4),)
""")

# Loads the artifact in a fresh interpreter and calls both models; prints
# {"warnings", "error", "kind", "stale", entry: {"close", "hits", "misses",
# "reason"}}.
RUNNER = textwrap.dedent("""
    import json, sys, warnings
    sys.path[:0] = [{package!r}, {folder!r}]
    import torch
    import dync
    import wrapper

    x = torch.randn(3, 4)
    models = {{"Net.forward": wrapper.model, "Sequential.forward": wrapper.seq,
               "head": wrapper.head}}
    report = {{}}
    # Grad mode as at export, so the guards hold.
    expected = {{name: m(x) for name, m in models.items()}}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            art = dync.load({artifact!r}, strict={strict})
        except dync.ArtifactError as e:
            report["error"], report["kind"] = str(e), e.kind
            art = None
    report["warnings"] = [str(w.message) for w in caught
                          if issubclass(w.category, dync.ArtifactWarning)]
    if art is not None:
        with art:
            for name, m in models.items():
                m(x)
                got = m(x)
                s = art.stats()[name]
                try:
                    torch.testing.assert_close(got, expected[name])
                    close = True
                except AssertionError as e:
                    close = str(e)
                report[name] = {{"close": close, "hits": s["hits"], "misses": s["misses"],
                                "reason": s["last_miss_reason"]}}
            report["stale"] = art.stale
    print(json.dumps(report))
""")


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """The folder with helpers.py, lib.py, wrapper.py and art.so, exported
    once with both entries."""
    folder = tmp_path_factory.mktemp("code-identity")
    (folder / "helpers.py").write_text(HELPERS)
    (folder / "lib.py").write_text(LIB)
    (folder / "wrapper.py").write_text(WRAPPER)
    done = subprocess.run([os.path.join(BUILD, "bin", "dync"), "export",
                           f"{folder}/wrapper.py:model.forward", f"{folder}/wrapper.py:seq.forward",
                           f"{folder}/wrapper.py:head", "-o", str(folder / "art.so")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return folder


def copy_of(exported, tmp_path):
    folder = tmp_path / "copy"
    shutil.copytree(exported, folder)
    return folder


def load_and_call(folder, strict=False):
    source = RUNNER.format(package=PACKAGE_DIR, folder=str(folder),
                           artifact=str(folder / "art.so"), strict=strict)
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def edit(path, old, new):
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_entries_resolve_in_their_defining_module(exported, tmp_path):
    # The wrapper never names Net, and Sequential.forward lives in
    # torch.nn.modules.container: both are found where they are defined.
    report = load_and_call(copy_of(exported, tmp_path))
    assert "error" not in report, report
    assert report["warnings"] == []
    for name in ("Net.forward", "Sequential.forward", "head"):
        assert report[name]["close"] is True, report[name]
        assert (report[name]["hits"], report[name]["misses"]) == (2, 0), report[name]


def test_manifest_records_origin_and_fingerprints(exported):
    source = textwrap.dedent(f"""
        import json, sys
        sys.path[:0] = [{PACKAGE_DIR!r}, {str(exported)!r}]
        import dync, wrapper
        with dync.load({str(exported / "art.so")!r}) as art:
            print(json.dumps({{e["qualified_name"]: [e["module"], e["defining_file"],
                               [(f["module"], f["qualified_name"]) for f in e["functions"]]]
                              for e in art.entries}}))
    """)
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    entries = json.loads(done.stdout.strip().splitlines()[-1])
    assert entries["Net.forward"] == [
        "lib", str(exported / "lib.py"), [["lib", "Net.forward"], ["helpers", "act"]]]
    # torch's own code is covered by the torch version check, not listed.
    module, file, functions = entries["Sequential.forward"]
    assert module == torch.nn.Sequential.__module__
    assert file == torch.nn.Sequential.forward.__code__.co_filename
    assert functions == []


def test_edited_forward_is_not_served(exported, tmp_path):
    folder = copy_of(exported, tmp_path)
    edit(folder / "lib.py", "return helpers.act(self.fc(x))", "return helpers.act(self.fc(x)) + 1")
    report = load_and_call(folder)
    # The original code runs: the new behaviour, equal to eager's.
    net = report["Net.forward"]
    assert net["close"] is True, net
    assert (net["hits"], net["misses"]) == (0, 2)
    assert net["reason"].startswith("stale code: lib.Net.forward (")
    assert "lib.py) changed since export" in net["reason"]
    # head's capture inlined Net.forward: it is not served either.
    assert sorted(report["stale"]) == ["Net.forward", "head"]
    assert report["head"]["close"] is True and report["head"]["hits"] == 0, report["head"]
    assert "lib.Net.forward (" in report["head"]["reason"]
    warning = report["warnings"][0]
    assert len(report["warnings"]) == 2, report["warnings"]
    assert "Net.forward is not served" in warning and "lib.Net.forward" in warning
    assert "lib.py" in warning
    # The other entry's code did not change: still served.
    assert report["Sequential.forward"]["hits"] == 2


def test_edited_forward_with_strict_raises(exported, tmp_path):
    folder = copy_of(exported, tmp_path)
    edit(folder / "lib.py", "return helpers.act(self.fc(x))", "return helpers.act(self.fc(x)) * 3")
    report = load_and_call(folder, strict=True)
    assert report["kind"] == "stale", report
    assert "Net.forward is not served" in report["error"]
    assert "lib.Net.forward" in report["error"]


def test_edited_comments_keep_entries_served(exported, tmp_path):
    # Comments edited and lines added above the functions: the code capture
    # ran is the same, so nothing is reported and both entries are served.
    folder = copy_of(exported, tmp_path)
    edit(folder / "lib.py", "# Scaled activation of a linear layer.", "# Edited after export.")
    edit(folder / "lib.py", "import torch\n", "# A new first line.\n\nimport torch\n")
    edit(folder / "helpers.py", "# The activation.", "# tanh, doubled.")
    edit(folder / "wrapper.py", "import torch\n", "import torch  # the exported file, edited\n")
    report = load_and_call(folder)
    assert report["warnings"] == [], report
    for name in ("Net.forward", "Sequential.forward", "head"):
        assert report[name]["close"] is True, report[name]
        assert report[name]["hits"] == 2, report[name]


def test_edited_helper_in_another_module_is_not_served(exported, tmp_path):
    folder = copy_of(exported, tmp_path)
    edit(folder / "helpers.py", "return torch.tanh(x) * 2", "return torch.tanh(x) * 4")
    report = load_and_call(folder)
    net = report["Net.forward"]
    assert net["close"] is True, net
    assert (net["hits"], net["misses"]) == (0, 2)
    assert "helpers.act (" in net["reason"] and "helpers.py) changed since export" in net["reason"]
    assert report["Sequential.forward"]["hits"] == 2


def test_removed_helper_is_not_served(exported, tmp_path):
    folder = copy_of(exported, tmp_path)
    edit(folder / "helpers.py", "def act(x):", "def act2(x):")
    edit(folder / "lib.py", "helpers.act(", "helpers.act2(")
    report = load_and_call(folder)
    net = report["Net.forward"]
    assert net["close"] is True and net["hits"] == 0, net
    assert "helpers.act (" in net["reason"] and "no longer exists" in net["reason"]


def test_module_argument_stands_for_the_exported_file(exported, tmp_path):
    # A deployed copy whose exported file is imported under another name:
    # module= finds head (defined in the exported file) there; lib's and
    # helpers' functions are still found in their own modules.
    folder = copy_of(exported, tmp_path)
    (folder / "wrapper.py").rename(folder / "deployed.py")
    source = textwrap.dedent(f"""
        import importlib.util, json, sys
        sys.path[:0] = [{PACKAGE_DIR!r}, {str(folder)!r}]
        import torch, dync
        spec = importlib.util.spec_from_file_location("deployed", {str(folder / "deployed.py")!r})
        deployed = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(deployed)
        report = {{}}
        try:
            dync.load({str(folder / "art.so")!r})
        except dync.ArtifactError as e:
            report["without"] = [e.kind, str(e)]
        x = torch.randn(3, 4)
        expected = deployed.head(x)
        with dync.load({str(folder / "art.so")!r}, module=deployed) as art:
            got = deployed.head(x)
            report["hits"] = art.stats()["head"]["hits"]
        report["close"] = bool(torch.allclose(got, expected, rtol=1e-5, atol=1e-6))
        print(json.dumps(report))
    """)
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    kind, message = report["without"]
    assert kind == "module-not-found"
    assert "head is defined in module wrapper" in message and "not imported" in message
    assert report["hits"] == 1 and report["close"] is True, report


def digests(sources, seed):
    """{key: _code_identity.digest of function f compiled from source} for
    {key: source}, in a fresh interpreter with PYTHONHASHSEED=seed. The
    module is loaded from the built package's file alone (it needs no
    torch)."""
    script = textwrap.dedent(f"""
        import importlib.util, json
        spec = importlib.util.spec_from_file_location(
            "code_identity", {os.path.join(PACKAGE_DIR, "dync", "_code_identity.py")!r})
        identity = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(identity)
        result = {{}}
        for key, source in {sources!r}.items():
            namespace = {{}}
            exec(compile(source, "m.py", "exec"), namespace)
            result[key] = identity.digest(namespace["f"].__code__)
        print(json.dumps(result))
    """)
    env = dict(os.environ, PYTHONHASHSEED=seed)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_digest_covers_what_code_does_not_where_it_is():
    base = "def f(x):\n    return x * 2 if x in {'a', 'b', 'c', 1.5} else g(x)\n"
    nested = "def f(x):\n    def g(y):\n        return y + 1\n    return g(x)\n"
    sources = {
        "base": base,
        # Line numbers and comments do not count.
        "moved": "\n\n# moved\n" + base,
        "commented": base.replace("return", "# note\n    return"),
        # What the code does counts: a constant, a name read, a nested
        # function's code.
        "constant": base.replace("x * 2", "x * 3"),
        "float": base.replace("x * 2", "x * 2.0"),
        "name": base.replace("g(x)", "h(x)"),
        "set member": base.replace("'c'", "'d'"),
        "nested": nested,
        "nested edited": nested.replace("y + 1", "y + 2"),
    }
    first = digests(sources, seed="0")
    # The hash seed (a frozenset constant's iteration order) does not count.
    assert digests({"base": base}, seed="12345")["base"] == first["base"]
    assert first["moved"] == first["base"]
    assert first["commented"] == first["base"]
    for changed in ("constant", "float", "name", "set member"):
        assert first[changed] != first["base"], changed
    assert first["nested edited"] != first["nested"]


DECORATORS = textwrap.dedent("""\
    import functools


    def returns_tuple(method):
        # A wrapper renamed after the method it wraps, defined here.
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            return tuple(method(self, *args, **kwargs))
        return wrapper
""")

DECORATED = textwrap.dedent("""\
    import torch

    import decorators


    class Net(torch.nn.Module):
        @decorators.returns_tuple
        def forward(self, x):
            return [x.relu(), x * 2]


    model = Net()


    def example_inputs():
        return (torch.randn(3, 4),)
""")


def test_wrapper_from_another_module_is_found_where_its_name_leads(tmp_path):
    # functools.wraps names the wrapper `Net.forward`, but its code lives in
    # decorators.py: its fingerprint names the module the name resolves in,
    # so the entry is served.
    (tmp_path / "decorators.py").write_text(DECORATORS)
    (tmp_path / "decorated.py").write_text(DECORATED)
    done = subprocess.run([os.path.join(BUILD, "bin", "dync"), "export",
                           f"{tmp_path}/decorated.py:model.forward", "-o",
                           str(tmp_path / "art.so")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    source = textwrap.dedent(f"""
        import json, sys
        sys.path[:0] = [{PACKAGE_DIR!r}, {str(tmp_path)!r}]
        import torch, dync, decorated
        x = torch.randn(3, 4)
        expected = decorated.model(x)
        with dync.load({str(tmp_path / "art.so")!r}, strict=True) as art:
            got = decorated.model(x)
            functions = [(f["module"], f["qualified_name"]) for f in art.entries[0]["functions"]]
            print(json.dumps({{"hits": art.stats()["Net.forward"]["hits"], "functions": functions,
                              "same": all(torch.equal(a, b) for a, b in zip(got, expected))}}))
    """)
    ran = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout.strip().splitlines()[-1])
    assert report["hits"] == 1 and report["same"], report
    assert report["functions"] == [["decorated", "Net.forward"], ["decorated", "Net.forward"]]


TABLED = textwrap.dedent("""\
    import torch

    ACTIVATIONS = {"double": lambda x: x * 2, "shift": (lambda x: x + 1,)}


    class Net(torch.nn.Module):
        steps = [staticmethod(lambda x: x.tanh())]

        def forward(self, x, kind="double"):
            return Net.steps[0].__func__(ACTIVATIONS[kind](x)) + ACTIVATIONS["shift"][0](x)


    model = Net()


    def example_inputs():
        return (torch.randn(3, 4),)
""")


def run_tabled(folder, source):
    (folder / "tabled.py").write_text(source)
    script = textwrap.dedent(f"""
        import json, sys
        sys.path[:0] = [{PACKAGE_DIR!r}, {str(folder)!r}]
        import torch, dync, tabled
        x = torch.randn(3, 4)
        expected = tabled.model(x)
        with dync.load({str(folder / "art.so")!r}) as art:
            got = tabled.model(x)
            print(json.dumps({{"hits": art.stats()["Net.forward"]["hits"],
                              "stale": art.stale.get("Net.forward"),
                              # fused kernels may round tanh an ulp apart
                              "same": torch.allclose(got, expected, rtol=1.3e-6, atol=1e-5)}}))
    """)
    ran = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout.strip().splitlines()[-1])


def test_lambdas_kept_in_tables_are_found_and_checked(tmp_path):
    # Lambdas have no name to be looked up by: the ones a module or class
    # keeps in a dict, tuple or list (a staticmethod unwrapped) are found
    # there, so the entry is served; an edited lambda is not.
    (tmp_path / "tabled.py").write_text(TABLED)
    done = subprocess.run([os.path.join(BUILD, "bin", "dync"), "export",
                           f"{tmp_path}/tabled.py:Net.forward", "-o",
                           str(tmp_path / "art.so")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = run_tabled(tmp_path, TABLED)
    assert report == {"hits": 1, "stale": None, "same": True}, report
    report = run_tabled(tmp_path, TABLED.replace("x * 2", "x * 3"))
    assert report["hits"] == 0 and report["same"], report
    assert "<lambda>" in report["stale"] and "changed since export" in report["stale"], report
