"""The Python runtime end to end: `import dync`, load the hand-written test
artifacts of test/runtime/Inputs/PyRuntimeArtifact.c, and call the functions
they serve.

Each served function's rewritten code returns something the original does
not (scale doubles instead of returning x * 1), so every assertion on a value
also says which of the two ran.
"""
import importlib.util
import os
import shutil
import sys
import threading
import warnings

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DYNC_BUILD_DIR", os.path.join(REPO, "build"))
PACKAGE_DIR = os.path.join(BUILD, "python")
ARTIFACTS = os.path.join(BUILD, "test", "runtime", "artifacts")
INPUTS = os.path.join(REPO, "test", "runtime", "Inputs")

torch = pytest.importorskip("torch")
if not os.path.isdir(os.path.join(PACKAGE_DIR, "dync")):
    pytest.fail(f"the dync package is not built in {PACKAGE_DIR}", pytrace=False)
sys.path.insert(0, PACKAGE_DIR)
import dync  # noqa: E402


def artifact(name):
    path = os.path.join(ARTIFACTS, name + ".so")
    assert os.path.exists(path), f"{path} is not built"
    return path


def fresh_module(name):
    """Imports Inputs/<name>.py anew, so each test serves new code objects."""
    spec = importlib.util.spec_from_file_location(name, os.path.join(INPUTS, name + ".py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_quietly(path, **kwargs):
    # pyrt_model has a generator entry, which loading reports as a warning.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dync.ArtifactWarning)
        return dync.load(path, **kwargs)


@pytest.fixture
def model():
    module = fresh_module("pyrt_model")
    yield module
    sys.modules.pop("pyrt_model", None)


@pytest.fixture
def loaded(model):
    art = load_quietly(artifact("pyrt_model"))
    yield art
    art.unload()


@pytest.fixture(autouse=True)
def no_artifact_left():
    yield
    assert not dync._dync.hook_installed(), "a test left an artifact loaded"


def entry_stats(art, name):
    return dync.stats()[art.path][name]


def test_hit_runs_rewritten_code(model, loaded):
    x = torch.ones(2, 3)
    assert torch.equal(model.scale(x), x * 2)
    s = entry_stats(loaded, "scale")
    assert (s["calls"], s["hits"], s["misses"]) == (1, 1, 0)
    assert s["last_miss_reason"] is None


@pytest.mark.parametrize("value,reason", [
    (torch.ones(2, 3, dtype=torch.float64), "L['x'].dtype == torch.float32"),
    (torch.ones(3), "L['x'].dim() == 2"),
    (3, "isinstance(L['x'], torch.Tensor)"),
])
def test_miss_runs_original_and_records_reason(model, loaded, value, reason):
    result = model.scale(value)
    if isinstance(value, torch.Tensor):
        assert torch.equal(result, value)
    else:
        assert result == value
    s = entry_stats(loaded, "scale")
    assert (s["calls"], s["hits"], s["misses"]) == (1, 0, 1)
    assert s["last_miss_reason"] == reason
    assert s["miss_reasons"] == {reason: 1}


def test_miss_reasons_are_counted_per_guard(model, loaded):
    model.scale(torch.ones(3))
    model.scale(torch.ones(4))
    model.scale("text")
    model.scale(torch.ones(2, 2))
    s = entry_stats(loaded, "scale")
    assert (s["calls"], s["hits"], s["misses"]) == (4, 1, 3)
    assert s["miss_reasons"] == {"L['x'].dim() == 2": 2, "isinstance(L['x'], torch.Tensor)": 1}
    assert s["last_miss_reason"] == "isinstance(L['x'], torch.Tensor)"
    assert loaded.stats()["scale"] == s
    dync.reset_stats()
    assert entry_stats(loaded, "scale")["calls"] == 0


def test_strict_mode_raises_guard_error(model):
    with load_quietly(artifact("pyrt_model"), strict=True):
        x = torch.ones(2, 2)
        assert torch.equal(model.scale(x), x * 2)
        with pytest.raises(dync.GuardError, match=r"scale: guard failed: L\['x'\]\.dim\(\) == 2") \
                as info:
            model.scale(torch.ones(5))
        assert info.value.entry == "scale"
        assert info.value.reason == "L['x'].dim() == 2"


def test_unload_restores_plain_execution(model):
    art = load_quietly(artifact("pyrt_model"))
    x = torch.ones(2, 2)
    assert torch.equal(model.scale(x), x * 2)
    assert dync._dync.hook_installed()
    art.unload()
    assert not art.loaded
    assert not dync._dync.hook_installed()
    assert torch.equal(model.scale(x), x)
    assert "__dync_graph_linear_0" not in vars(model)
    art.unload()  # idempotent
    assert art.path not in dync.stats()


def test_context_manager(model):
    with load_quietly(artifact("pyrt_model")) as art:
        assert art.loaded
        assert torch.equal(model.Model()(torch.ones(2, 2)), torch.full((2, 2), 2.0))
    assert not art.loaded
    assert torch.equal(model.Model()(torch.ones(2, 2)), torch.ones(2, 2))


def test_graph_called_through_module_global(model, loaded):
    x, w, b = torch.randn(4, 3), torch.randn(3, 5), torch.randn(5)
    expected = torch.relu(torch.addmm(b, x, w))
    assert isinstance(vars(model)["__dync_graph_linear_0"], dync._dync.Graph)
    assert torch.equal(model.linear(x, w, b), expected)
    assert entry_stats(loaded, "linear")["hits"] == 1
    # Sizes that do not fit addmm miss and run the original, which raises
    # torch's own error.
    with pytest.raises(RuntimeError):
        model.linear(x, torch.randn(4, 5), b)
    assert entry_stats(loaded, "linear")["last_miss_reason"] == "L['x'].size(1) == L['w'].size(0)"


def test_arguments_of_every_kind_are_passed_on(model, loaded):
    a = torch.ones(2, 2)
    result = model.mixed(a, "b", 1, 2, c=4, extra=5)
    assert result[0] == "rewritten"
    assert result[1] is a
    assert result[2:] == ("b", (1, 2), 4, {"extra": 5})
    # Defaults bound by the original call are passed on too.
    assert model.mixed(a, "b")[2:] == ("b", (), 3, {})
    # A keyword with a positional-only parameter's name lands in **kw.
    assert model.mixed(a, "b", a=1)[2:] == ("b", (), 3, {"a": 1})
    assert model.mixed(1, "b")[0] == "original"


def test_recursive_calls_each_go_through_the_hook(model, loaded):
    x = torch.zeros(2)
    assert torch.equal(model.countdown(x, 3), x + 100)
    s = entry_stats(loaded, "countdown")
    assert (s["calls"], s["hits"]) == (4, 4)


def test_method_entry(model, loaded):
    m = model.Model()
    assert torch.equal(m(torch.ones(2, 2)), torch.full((2, 2), 2.0))
    assert torch.equal(m(torch.ones(3)), torch.ones(3))
    s = entry_stats(loaded, "Model.forward")
    assert (s["hits"], s["misses"], s["last_miss_reason"]) == (1, 1, "L['x'].dim() == 2")


def test_generator_entry_is_left_to_the_default_evaluator(model):
    with pytest.warns(dync.ArtifactWarning, match="numbers is a generator"):
        art = dync.load(artifact("pyrt_model"))
    with art:
        assert "numbers" in art.skipped
        assert torch.equal(next(model.numbers(torch.ones(1))), torch.ones(1))
        assert "numbers" not in art.stats()


def test_manifest(loaded):
    m = loaded.manifest
    assert m["format_version"] == 2
    assert m["python"] == "CPython 3.11"
    assert m["torch_version"].split("+")[0] == torch.__version__.split("+")[0]
    assert m["source_path"] == os.path.join(INPUTS, "pyrt_model.py")
    assert len(m["source_sha256"]) == 64
    names = [e["qualified_name"] for e in loaded.entries]
    assert names == ["scale", "linear", "mixed", "countdown", "Model.forward", "numbers"]
    linear = loaded.entries[1]
    assert linear["graphs"] == [{"name": "__dync_graph_linear_0", "num_inputs": 3,
                                 "num_int_inputs": 0, "num_outputs": 1}]


def test_two_artifacts_at_once(model):
    other = fresh_module("pyrt_other")
    try:
        first = load_quietly(artifact("pyrt_model"))
        second = dync.load(artifact("pyrt_other"))
        x = torch.ones(2, 2)
        assert torch.equal(model.scale(x), x * 2)
        assert torch.equal(other.triple(x), x * 3)
        assert set(dync.stats()) == {first.path, second.path}
        first.unload()
        assert dync._dync.hook_installed()
        assert torch.equal(model.scale(x), x)
        assert torch.equal(other.triple(x), x * 3)
        second.unload()
        assert torch.equal(other.triple(x), x)
    finally:
        sys.modules.pop("pyrt_other", None)


def test_same_entry_twice_is_refused(model, loaded):
    with pytest.raises(dync.ArtifactError, match="already served") as info:
        load_quietly(artifact("pyrt_model"))
    assert info.value.kind == "entry-in-use"
    # The failed load left the first one working.
    assert torch.equal(model.scale(torch.ones(2, 2)), torch.full((2, 2), 2.0))


def test_calls_from_four_threads(model, loaded):
    x2 = torch.ones(2, 2)
    x1 = torch.ones(3)
    w, b = torch.randn(2, 4), torch.randn(4)
    expected = torch.relu(torch.addmm(b, x2, w))
    errors = []

    def work():
        try:
            for _ in range(200):
                assert torch.equal(model.scale(x2), x2 * 2)
                assert torch.equal(model.scale(x1), x1)
                assert torch.equal(model.linear(x2, w, b), expected)
        except BaseException as e:  # reported below, from the main thread
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    s = entry_stats(loaded, "scale")
    assert (s["calls"], s["hits"], s["misses"]) == (1600, 800, 800)
    assert entry_stats(loaded, "linear")["hits"] == 800


def test_unload_while_other_threads_call(model):
    art = load_quietly(artifact("pyrt_model"))
    x, w, b = torch.ones(2, 2), torch.randn(2, 4), torch.randn(4)
    expected = torch.relu(torch.addmm(b, x, w))
    stop = threading.Event()
    errors = []

    def work():
        try:
            while not stop.is_set():
                # Either path gives the same value for linear.
                assert torch.allclose(model.linear(x, w, b), expected, rtol=1.3e-6, atol=1e-5)
        except NameError:
            # The graph global was unbound between the guard and the call.
            pass
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    art.unload()
    stop.set()
    for t in threads:
        t.join()
    assert not errors, errors


def test_missing_file(model):
    with pytest.raises(dync.ArtifactError, match="cannot open") as info:
        dync.load(os.path.join(ARTIFACTS, "no_such.so"))
    assert info.value.kind == "file-not-found"


def test_truncated_library_is_an_error_not_a_crash(model, tmp_path):
    data = open(artifact("pyrt_model"), "rb").read()
    path = tmp_path / "truncated.so"
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(dync.ArtifactError, match="truncated") as info:
        dync.load(path)
    assert info.value.kind == "truncated"
    assert info.value.path == str(path)


def test_corrupt_library_is_an_error_not_a_crash(model, tmp_path):
    path = tmp_path / "garbage.so"
    path.write_bytes(b"\x7fELF" + bytes(range(256)) * 8)
    with pytest.raises(dync.ArtifactError) as info:
        dync.load(path)
    assert info.value.kind in ("not-elf", "truncated")
    path.write_bytes(b"not a library at all")
    with pytest.raises(dync.ArtifactError, match="not an ELF file"):
        dync.load(path)


def test_library_that_is_not_an_artifact(model):
    with pytest.raises(dync.ArtifactError, match="not a dync artifact") as info:
        dync.load(artifact("not_an_artifact"))
    assert info.value.kind == "not-an-artifact"


def test_wrong_python_magic(model):
    with pytest.raises(dync.ArtifactError,
                       match="bytecode built for CPython 3.12, but this interpreter is "
                             "CPython 3.11") as info:
        dync.load(artifact("pyrt_model_py312"))
    assert info.value.kind == "python-mismatch"
    assert not dync._dync.hook_installed()


def test_changed_source_is_a_warning(model):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        art = dync.load(artifact("pyrt_model_stale"))
    messages = [str(w.message) for w in caught if w.category is dync.ArtifactWarning]
    assert any("pyrt_model.py changed since it was exported" in m for m in messages), messages
    with art:
        assert torch.equal(model.scale(torch.ones(2, 2)), torch.full((2, 2), 2.0))


def test_code_that_is_not_a_code_object(model):
    with pytest.raises(dync.ArtifactError, match="scale: the rewritten code is a int") as info:
        load_quietly(artifact("pyrt_model_bad_code"))
    assert info.value.kind == "bad-code"
    assert torch.equal(model.scale(torch.ones(2, 2)), torch.ones(2, 2))


def test_module_must_be_imported():
    sys.modules.pop("pyrt_model", None)
    with pytest.raises(dync.ArtifactError, match="no imported module was loaded from") as info:
        load_quietly(artifact("pyrt_model"))
    assert info.value.kind == "module-not-found"


def test_module_given_explicitly(tmp_path):
    # A deployed artifact's source path need not exist: name the module.
    copy = tmp_path / "deployed_model.py"
    shutil.copy(os.path.join(INPUTS, "pyrt_model.py"), copy)
    spec = importlib.util.spec_from_file_location("deployed_model", copy)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with load_quietly(artifact("pyrt_model"), module=module):
        assert torch.equal(module.scale(torch.ones(2, 2)), torch.full((2, 2), 2.0))


def test_entry_moved_to_another_line(tmp_path):
    source = open(os.path.join(INPUTS, "pyrt_model.py")).read()
    copy = tmp_path / "moved_model.py"
    copy.write_text("\n\n" + source)
    spec = importlib.util.spec_from_file_location("moved_model", copy)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(dync.ArtifactError, match="scale in moved_model starts at line") as info:
        load_quietly(artifact("pyrt_model"), module=module)
    assert info.value.kind == "entry-mismatch"


def test_refuses_to_load_under_another_frame_evaluator(model):
    # TorchDynamo's evaluator, installed the way a torch.compile'd region
    # installs it (False: run cached code only, never compile).
    from torch._C._dynamo.eval_frame import set_eval_frame
    previous = set_eval_frame(False)
    try:
        with pytest.raises(dync.ArtifactError, match="another PEP 523 frame evaluator") as info:
            load_quietly(artifact("pyrt_model"))
    finally:
        set_eval_frame(previous)
    assert info.value.kind == "frame-hook-busy"
    assert torch.equal(model.scale(torch.ones(2, 2)), torch.ones(2, 2))


def test_torch_compile_still_works_with_an_artifact_loaded(model):
    other = fresh_module("pyrt_other")
    try:
        with dync.load(artifact("pyrt_other")):
            compiled = torch.compile(lambda t: other.triple(t) + 1, backend="eager")
            x = torch.ones(3)
            # TorchDynamo traces the original bytecode of triple into its own
            # graph; dync's hook does not see those calls.
            assert torch.equal(compiled(x), x * 1 + 1)
            assert torch.equal(compiled(x), x * 1 + 1)
            assert dync.stats()[artifact("pyrt_other")]["triple"]["calls"] == 0
            # Outside the compiled region the hook serves calls again.
            assert dync._dync.hook_installed()
            assert torch.equal(other.triple(x), x * 3)
    finally:
        sys.modules.pop("pyrt_other", None)


def test_a_bare_file_name_is_the_file_in_the_working_directory(model, tmp_path, monkeypatch):
    # dlopen searches the library path for a name without a slash; load()
    # opens the file the name means, as open() would.
    shutil.copy(artifact("pyrt_model"), tmp_path / "model.so")
    monkeypatch.chdir(tmp_path)
    art = load_quietly("model.so")
    try:
        x = torch.ones(2, 3)
        assert torch.equal(model.scale(x), x * 2)
    finally:
        art.unload()
