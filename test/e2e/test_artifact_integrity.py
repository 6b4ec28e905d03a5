"""An artifact is trusted only as export wrote it, and -o writes only where it
is safe to.

One model is exported once; copies of the artifact with one byte changed (in
an entry's rewritten code, in descriptor strings, in the manifest's guards),
or cut short, must be refused by dync.load with ArtifactError kind 'corrupt'
(or 'truncated' where the ELF headers already show it) and by dync inspect
with exit status 1, in processes that do not crash. The offsets are found in
the artifact itself, from what the intact copy's loaded descriptor says it
holds. `-o` must not replace a file that is not an artifact, must replace an
earlier artifact, and must not shadow a module of its folder.
"""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import PACKAGE_DIR

torch = pytest.importorskip("torch")

SOURCE = textwrap.dedent("""
    import torch

    def scaled_sum(x, y):
        return torch.tanh(x) * 2 + y

    def example_inputs():
        return (torch.randn(3, 5), torch.randn(3, 5))
""")


def run_script(source):
    """Runs `source` in a fresh interpreter, which must exit cleanly (a
    crash while loading is what these tests exist to rule out); returns the
    JSON of its last stdout line."""
    done = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
    assert done.returncode == 0, f"exit {done.returncode}\n{done.stderr}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def load_each(folder, paths):
    """In one fresh interpreter: loads each of `paths` with dync.load and, if
    it loads, calls the entry once and compares with eager. Returns, per
    path, [kind, message] of the ArtifactError or ["loaded", result-equal]."""
    return run_script(textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {PACKAGE_DIR!r}); sys.path.insert(0, {str(folder)!r})
        import torch, dync
        import model
        results = {{}}
        for path in {[str(p) for p in paths]!r}:
            try:
                art = dync.load(path)
            except dync.ArtifactError as error:
                assert error.path == path, (error.path, path)
                results[path] = [error.kind, str(error)]
                continue
            x, y = model.example_inputs()
            expected = torch.tanh(x) * 2 + y
            got = model.scaled_sum(x, y)
            hits = art.stats()["scaled_sum"]["hits"]
            art.unload()
            # float32's usual tolerances: the compiled tanh may differ from
            # eager's by an ulp, which a sum near zero makes large relatively.
            same = torch.allclose(got, expected, rtol=1.3e-6, atol=1e-5)
            results[path] = ["loaded", bool(same) and hits == 1]
        print(json.dumps(results))
    """))


@pytest.fixture(scope="module")
def exported(tmp_path_factory, dync_binary):
    folder = tmp_path_factory.mktemp("integrity")
    (folder / "model.py").write_text(SOURCE)
    artifact = folder / "model.dync.so"
    done = subprocess.run([dync_binary, "export", f"{folder}/model.py:scaled_sum", "-o",
                           str(artifact)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    # What the intact artifact holds, read through the runtime: the bytes the
    # changed copies are located by.
    facts = run_script(textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {PACKAGE_DIR!r}); sys.path.insert(0, {str(folder)!r})
        import torch, dync, model
        art = dync.load({str(artifact)!r})
        entry = art.manifest["entries"][0]
        print(json.dumps({{"code": art._native.entry_code(0).hex(),
                          "torch": art.manifest["torch_version"],
                          "source_sha256": art.manifest["source_sha256"],
                          "graph": entry["graphs"][0]["name"],
                          "qualname": entry["qualified_name"]}}))
    """))
    return folder, artifact, facts


def changed_copy(folder, data, name, at):
    """A copy of `data` with the byte at `at` changed."""
    path = folder / f"{name}.dync.so"
    path.write_bytes(data[:at] + bytes([data[at] ^ 0x5a]) + data[at + 1:])
    return path


def unique_offset(data, needle):
    at = data.find(needle)
    assert at >= 0 and data.find(needle, at + 1) < 0, f"{needle!r} is not in the artifact once"
    return at


def test_changed_bytes_are_corrupt(exported, run_dync):
    folder, artifact, facts = exported
    data = artifact.read_bytes()
    code = bytes.fromhex(facts["code"])
    nul = b"\0"
    copies = {
        # The middle of the entry's marshalled code, which dync.load would
        # unmarshal and run.
        "code": unique_offset(data, code) + len(code) // 2,
        # Descriptor strings (NUL-terminated; the manifest's copies end in a
        # newline): torch's version, which the loader decodes, the source's
        # hash, the graph's global name and the entry's qualified name.
        "torch": unique_offset(data, facts["torch"].encode() + nul) + 1,
        "source_sha256": unique_offset(data, facts["source_sha256"].encode() + nul) + 7,
        "graph": unique_offset(data, facts["graph"].encode() + nul) + 2,
        "qualname": unique_offset(data, nul + facts["qualname"].encode() + nul) + 1,
        # The manifest's guards text and its format version line.
        "guards": unique_offset(data, b"\nguards @") + 3,
        "manifest": unique_offset(data, b"# dync artifact\nformat_version ") + 2,
        # The ELF header and the seal itself.
        "elf_type": 16,
        "seal": len(data) - 20,
    }
    paths = {name: changed_copy(folder, data, name, at) for name, at in copies.items()}
    results = load_each(folder, [artifact, *paths.values()])
    assert results[str(artifact)] == ["loaded", True]
    for name, path in paths.items():
        kind, message = results[str(path)]
        assert kind == "corrupt", (name, kind, message)
        assert message.startswith(f"{path}: corrupt artifact: its bytes do not match"), message
    for name in ("code", "guards"):
        done = run_dync("inspect", paths[name])
        assert done.returncode == 1, done.stderr
        assert done.stdout == ""
        assert done.stderr.strip() == (
            f"dync: error: {paths[name]}: corrupt artifact: its bytes do not match the SHA-256 "
            "sealed into it at export (the file was changed or damaged since); export it again")


def test_cut_short_is_refused(exported, run_dync):
    folder, artifact, _ = exported
    data = artifact.read_bytes()
    cuts = {"last_byte": len(data) - 1, "seal": len(data) - 40, "half": len(data) // 2}
    paths = {}
    for name, size in cuts.items():
        paths[name] = folder / f"cut_{name}.dync.so"
        paths[name].write_bytes(data[:size])
    results = load_each(folder, list(paths.values()))
    for name in ("last_byte", "seal"):
        kind, message = results[str(paths[name])]
        assert kind == "corrupt", (name, message)
        assert "the seal that ends every artifact is missing" in message
    # Half a file: the ELF headers already say so.
    kind, message = results[str(paths["half"])]
    assert kind == "truncated", message
    for path in paths.values():
        done = run_dync("inspect", path)
        assert done.returncode == 1, done.stderr
        assert done.stderr.startswith(f"dync: error: {path}: "), done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_earlier_format_is_a_version_error(exported):
    """Format 1 had no seal: such a file is told by its manifest."""
    folder, artifact, _ = exported
    data = artifact.read_bytes()[:-40]
    at = unique_offset(data, b"# dync artifact\nformat_version 2\n")
    old = folder / "old.dync.so"
    old.write_bytes(data[:at] + b"# dync artifact\nformat_version 1\n" + data[at + 33:])
    kind, message = load_each(folder, [old])[str(old)]
    assert kind == "unknown-format-version"
    assert "artifact format version 1, but this runtime reads version 2" in message


def test_output_replaces_only_an_artifact(run_dync, tmp_path):
    source = tmp_path / "model.py"
    source.write_text(SOURCE)
    original = source.read_bytes()
    entry = f"{source}:scaled_sum"
    # The source itself, and any other file, are left byte for byte.
    done = run_dync("export", entry, "-o", source)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"dync: error: refusing to overwrite '{source}': it is not a dync artifact (-o replaces "
        "only an artifact an earlier export wrote); choose another output name, or remove the "
        "file first")
    assert source.read_bytes() == original
    notes = tmp_path / "notes.so"
    notes.write_bytes(b"\x7fELF not an artifact")
    assert run_dync("export", entry, "-o", notes).returncode == 1
    assert notes.read_bytes() == b"\x7fELF not an artifact"
    assert run_dync("export", entry, "-o", tmp_path).returncode == 1
    # An earlier artifact, even a damaged one, is replaced by a whole one.
    artifact = tmp_path / "model.dync.so"
    done = run_dync("export", entry, "-o", artifact)
    assert done.returncode == 0, done.stderr
    first = artifact.read_bytes()
    artifact.write_bytes(first[:-1])
    done = run_dync("export", entry, "-o", artifact)
    assert done.returncode == 0, done.stderr
    assert artifact.read_bytes() == first
    assert load_each(tmp_path, [artifact])[str(artifact)] == ["loaded", True]
    # Nothing but the outputs: no temporary file is left behind.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.dync.so", "model.py", "notes.so"]


def test_shadowing_names_are_refused(run_dync, tmp_path):
    source = tmp_path / "model.py"
    source.write_text(SOURCE)
    entry = f"{source}:scaled_sum"
    for name in ("model.so", "model.abi3.so", "model.cpython-311-x86_64-linux-gnu.so"):
        out = tmp_path / name
        done = run_dync("export", entry, "-o", out)
        assert done.returncode == 1, name
        assert done.stderr.strip() == (
            f"dync: error: -o '{out}' would shadow the module '{source}': Python imports "
            f"'{name}' first, so 'import model' from that folder would load the artifact as a "
            f"broken extension module; name it '{tmp_path / 'model.dync.so'}' instead (a dotted "
            "name no import reaches)")
        assert not out.exists()
    # A namespace folder is shadowed too; a regular package is found first.
    (tmp_path / "pkg").mkdir()
    assert run_dync("export", entry, "-o", tmp_path / "pkg.so").returncode == 1
    (tmp_path / "pkg" / "__init__.py").write_text("")
    # The names export accepts, and that `import model` still finds model.py
    # beside them.
    for name in ("pkg.so", "other.so"):
        done = run_dync("export", entry, "-o", tmp_path / name)
        assert done.returncode == 0, (name, done.stderr)
    imported = run_script(textwrap.dedent(f"""
        import json, sys
        sys.path.insert(0, {str(tmp_path)!r})
        import model
        print(json.dumps(model.__file__))
    """))
    assert imported == str(source)
    # CPython's own rule agrees with the one export applies.
    from importlib.machinery import EXTENSION_SUFFIXES
    assert any("model.so".endswith(s) and "model.so"[:-len(s)].isidentifier()
               for s in EXTENSION_SUFFIXES)
    assert not any("model.dync.so".endswith(s) and "model.dync.so"[:-len(s)].isidentifier()
                   for s in EXTENSION_SUFFIXES)
