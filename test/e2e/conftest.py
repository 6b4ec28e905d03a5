"""Shared fixtures for the end-to-end tests: where the built tools are and how
to run them."""
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DYNC_BUILD_DIR", os.path.join(REPO, "build"))
PACKAGE_DIR = os.path.join(BUILD, "python")
INPUTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs")


@pytest.fixture(scope="session", autouse=True)
def private_object_cache(tmp_path_factory):
    """Exports in the tests compile into a cache of the run's own, not the
    user's (a test that needs a particular cache sets DYNC_CACHE_DIR itself).
    pytest-xdist's workers share it: each worker's temporary folder is one of
    the run's, and the cache takes concurrent writers, so a kernel or an
    oracle call one worker stored serves the other."""
    if "DYNC_CACHE_DIR" not in os.environ:
        run_folder = tmp_path_factory.getbasetemp()
        if os.environ.get("PYTEST_XDIST_WORKER"):
            run_folder = run_folder.parent
        cache = run_folder / "dync-cache"
        cache.mkdir(exist_ok=True)
        os.environ["DYNC_CACHE_DIR"] = str(cache)
    yield


@pytest.fixture(scope="session")
def dync_binary():
    path = os.path.join(BUILD, "bin", "dync")
    if not os.path.exists(path):
        pytest.fail(f"dync is not built at {path}; run utils/bootstrap")
    return path


@pytest.fixture(scope="session")
def run_dync(dync_binary):
    """Runs dync with the given arguments; returns the CompletedProcess."""

    def run(*args, cwd=None, env=None, check=False):
        return subprocess.run([dync_binary, *map(str, args)], cwd=cwd, env=env, check=check,
                              capture_output=True, text=True)

    return run


def graphs_by_name(listing):
    """The bodies of the `graph @NAME(...) {...}` blocks of a printed module
    (`--emit=graph`, `--emit=optimized-graph`), by NAME."""
    graphs = {}
    for chunk in ("\n" + listing).split("\ngraph @")[1:]:
        name, _, body = chunk.partition("(")
        graphs[name] = body.split("\n}\n")[0]
    return graphs


def entry_with_kernels(listing, entry):
    """The graph of `entry` in a printed module (`--emit=optimized-graph` of
    an export of several entries), after the bodies of the kernels it calls:
    what the listing of an export of that entry alone holds, but for the
    kernels' numbers."""
    kernels = {}
    for chunk in ("\n" + listing).split("\nkernel @")[1:]:
        kernels[chunk.partition("(")[0]] = "kernel @" + chunk.split("\n}\n")[0] + "\n}\n"
    graph = "graph @" + entry + "(" + graphs_by_name(listing)[entry] + "\n}\n"
    called = dict.fromkeys(re.findall(r"= @(k\d+)\(", graph))
    return "".join(kernels[name] for name in called) + graph


def run_reporting_script(source):
    """Runs the Python `source` in a fresh interpreter, which must succeed;
    returns the JSON it prints on its last line."""
    ran = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout.strip().splitlines()[-1])


def export_entries(run_dync, path, entries, artifact, *options, examples=None):
    """Exports the `entries` (`name` or `Class.forward`) of the module file
    `path`, with `examples` ({entry: example function}, each an `--example
    entry=function`) and the other `options`, into `artifact`; the export
    must succeed. Returns `artifact`."""
    flags = [a for e, f in (examples or {}).items() for a in ("--example", f"{e}={f}")]
    done = run_dync("export", *[f"{path}:{e}" for e in entries], *flags, *options,
                    "-o", artifact)
    assert done.returncode == 0, done.stderr
    return artifact


def export_source(run_dync, folder, source, entries, *options, module="model", examples=None):
    """Writes `source` to `folder`/MODULE.py and exports its `entries` into
    MODULE.dync.so there (export_entries). Returns the artifact's path."""
    path = folder / f"{module}.py"
    path.write_text(source)
    return export_entries(run_dync, path, entries, folder / f"{module}.dync.so", *options,
                          examples=examples)


def report_of(runner, artifact, folder=None, /, **fields):
    """Runs `runner`, a template with {package}, {inputs} (test/e2e/Inputs,
    where exact_values.py is), {artifact}, {folder} and the other `fields`,
    in a fresh interpreter; returns the JSON report it prints
    (run_reporting_script)."""
    fields.setdefault("inputs", INPUTS)
    return run_reporting_script(runner.format(package=PACKAGE_DIR, folder=str(folder),
                                              artifact=str(artifact), **fields))


def export_and_report(run_dync, folder, source, entries, runner, /, *options, module="model",
                      examples=None, **fields):
    """export_source, then report_of the `runner` on the artifact (`fields`
    may be named as the positional parameters are: `entries=...`)."""
    artifact = export_source(run_dync, folder, source, entries, *options, module=module,
                             examples=examples)
    return report_of(runner, artifact, folder, **fields)


def compiled_and_eager_reports(run_dync, folder, module, models, program):
    """Exports `models`' forwards of `module` into one artifact in `folder`,
    which must compile the calls with grad mode on, then runs `program` (a
    template with {package}, {inputs}, {artifact} and {models}, printing a
    JSON report; an empty {artifact} means eager) once through the artifact
    and once eagerly. Returns the two reports."""
    artifact = folder / (os.path.splitext(os.path.basename(module))[0] + ".dync.so")
    done = run_dync("export", *[f"{module}:{name}.forward" for name in models], "-o", artifact,
                    "-v")
    assert done.returncode == 0, done.stderr
    assert "calls with grad mode on are not compiled" not in done.stderr, done.stderr

    def run(path):
        return run_reporting_script(
            program.format(package=PACKAGE_DIR, inputs=INPUTS, artifact=path, models=models))

    return run(str(artifact)), run("")


def check_state_changes(program, artifact, misses):
    """Runs `program` (a template with {package}, {inputs} and {artifact}) in
    fresh interpreters, once with the artifact loaded and once eagerly; each
    prints a list of {what, hit, reason, out}, one per change of state made
    after export. A change named in `misses` must miss with that text in its
    reason, every other call must hit, and every output must equal eager's.
    Returns eager's results."""
    import torch

    def run(path):
        return run_reporting_script(program.format(package=PACKAGE_DIR, inputs=INPUTS,
                                                   artifact=path))
    results, expected = run(str(artifact)), run("")
    assert [r["what"] for r in results] == [r["what"] for r in expected]
    for result, want in zip(results, expected):
        if result["what"] in misses:
            assert not result["hit"], result["what"]
            assert misses[result["what"]] in (result["reason"] or ""), \
                (result["what"], result["reason"])
        else:
            assert result["hit"], (result["what"], result["reason"])
        torch.testing.assert_close(torch.tensor(result["out"]), torch.tensor(want["out"]),
                                   msg=result["what"])
    return expected


def compare_with_eager(folder, artifact, setup):
    """Runs `setup` in a fresh interpreter whose path holds the built `dync`
    package, test/e2e/Inputs and `folder` (where the model module is), then
    `eager_comparison.compare` on `artifact` with the `calls` that `setup`
    defines; returns its report, {entry: [error, hits, misses, reason]}."""
    source = "\n".join([
        "import json, sys",
        *(f"sys.path.insert(0, {path!r})" for path in (PACKAGE_DIR, INPUTS, str(folder))),
        "import dync",
        "import eager_comparison",
        textwrap.dedent(setup),
        f"print(json.dumps(eager_comparison.compare(dync, {str(artifact)!r}, calls)))",
    ])
    return run_reporting_script(source)
