"""`dync inspect` resolves every kind of entry in a real import of the user's
file, and runs that file in the interpreter `python3` on PATH is: a
virtualenv's included."""
import os
import re
import shutil
import subprocess
import textwrap

import pytest

MODEL = textwrap.dedent('''\
    import sys

    # The module is registered before its body runs, as importlib does.
    assert sys.modules[__name__].__dict__ is globals()
    print("imported as", __name__, "torch loaded:", "torch" in sys.modules)


    def scale(x):
        return x * 2


    class Model:
        def forward(self, x):
            return scale(x)

        class Head:
            def project(self, x):
                return x + 1


    class Encoder:
        def __init__(self):
            self.block = Model()


    class Net:
        def __init__(self):
            self.encoder = Encoder()


    net = Net()
    model = Model()

    if __name__ == "__main__":
        print("the __main__ block ran")
    ''')

# (qualname, how the header describes it, the line the function starts on)
ENTRIES = [
    ("scale", "function", 8),
    ("Model.forward", "method of class Model", 13),
    ("Model.Head.project", "method of class Model.Head", 17),
    ("model.forward", "bound method of 'model', an instance of Model", 13),
    ("net.encoder.block.forward", "bound method of 'net.encoder.block', an instance of Model", 13),
]


@pytest.fixture
def model_dir(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def header(stdout):
    """The '# key: value' lines dync prints above the listing."""
    return dict(re.findall(r"^# ([a-z ]+): (.*)$", stdout, flags=re.MULTILINE))


def verbose_report(stderr):
    """The 'dync: key: value' lines that --verbose prints."""
    return dict(re.findall(r"^dync: ([a-z_.]+): (.*)$", stderr, flags=re.MULTILINE))


@pytest.mark.parametrize("qualname,kind,first_line", ENTRIES)
def test_entry_kinds(run_dync, model_dir, qualname, kind, first_line):
    result = run_dync("inspect", f"model.py:{qualname}", cwd=model_dir)
    assert result.returncode == 0, result.stderr
    fields = header(result.stdout)
    assert fields["entry"] == f"model.py:{qualname} ({kind})"
    assert fields["file"] == str(model_dir / "model.py")
    assert fields["first line"] == str(first_line)


def test_module_is_imported_by_stem_without_torch(run_dync, model_dir):
    result = run_dync("inspect", "model.py:scale", cwd=model_dir)
    assert result.returncode == 0, result.stderr
    # The module's own output comes first and unchanged; nothing imported
    # torch on its behalf; its __main__ block did not run.
    assert result.stdout.startswith("imported as model torch loaded: False\n")
    assert "__main__ block" not in result.stdout


def test_entry_given_by_absolute_path(run_dync, model_dir, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    result = run_dync("inspect", f"{model_dir / 'model.py'}:Model.forward", cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    assert header(result.stdout)["first line"] == "13"


def test_already_imported_standard_module_is_reused(run_dync):
    # functools is imported while Python starts; naming its file reuses that
    # module instead of refusing the name or running the file twice.
    import functools
    result = run_dync("inspect", f"{functools.__file__}:lru_cache")
    assert result.returncode == 0, result.stderr
    assert header(result.stdout)["entry"].endswith("functools.py:lru_cache (function)")


def test_pythonpath_is_honoured(run_dync, model_dir, tmp_path_factory):
    extra = tmp_path_factory.mktemp("extra")
    (extra / "settings_from_pythonpath.py").write_text("DEPTH = 3\n")
    (model_dir / "uses_path.py").write_text(
        "import settings_from_pythonpath\n\ndef depth():\n"
        "    return settings_from_pythonpath.DEPTH\n")
    env = dict(os.environ, PYTHONPATH=str(extra))
    result = run_dync("inspect", "uses_path.py:depth", cwd=model_dir, env=env)
    assert result.returncode == 0, result.stderr


@pytest.fixture
def venv(tmp_path_factory):
    """A virtualenv made by `python3` on PATH, seeing the system site-packages,
    with a module that only it has."""
    path = tmp_path_factory.mktemp("venv")
    python3 = shutil.which("python3")
    subprocess.run([python3, "-m", "venv", "--system-site-packages", "--without-pip", str(path)],
                   check=True)
    site_packages = subprocess.run(
        [str(path / "bin" / "python3"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True, capture_output=True, text=True).stdout.strip()
    with open(os.path.join(site_packages, "only_in_this_venv.py"), "w") as f:
        f.write("ANSWER = 42\n")
    return path


def same_path(a, b):
    return os.path.realpath(a) == os.path.realpath(b)


def test_virtualenv_first_on_path_is_used(run_dync, model_dir, venv):
    (model_dir / "uses_venv.py").write_text(
        "import only_in_this_venv\n\ndef answer():\n    return only_in_this_venv.ANSWER\n")
    env = dict(os.environ, PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    env.pop("DYNC_PYTHON", None)
    result = run_dync("inspect", "uses_venv.py:answer", "--verbose", cwd=model_dir, env=env)
    assert result.returncode == 0, result.stderr
    report = verbose_report(result.stderr)
    assert same_path(report["sys.prefix"], venv)
    assert not same_path(report["sys.base_prefix"], venv)
    assert report["python"].startswith(str(venv / "bin"))


def test_dync_python_names_the_interpreter(run_dync, model_dir, venv):
    env = dict(os.environ, DYNC_PYTHON=str(venv / "bin" / "python3"))
    result = run_dync("inspect", "model.py:scale", "--verbose", cwd=model_dir, env=env)
    assert result.returncode == 0, result.stderr
    report = verbose_report(result.stderr)
    assert same_path(report["sys.prefix"], venv)
    assert "from DYNC_PYTHON" in report["python"]


def test_version_verbose_reports_the_interpreter(run_dync, venv):
    env = dict(os.environ, PATH=f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}")
    env.pop("DYNC_PYTHON", None)
    result = run_dync("--version", "--verbose", env=env)
    assert result.returncode == 0, result.stderr
    prefix = re.search(r"^  sys\.prefix: (.*)$", result.stdout, flags=re.MULTILINE).group(1)
    assert same_path(prefix, venv)
