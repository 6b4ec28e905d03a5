# lit configuration for dync: text in, text out, checked with FileCheck.
import os
import shutil

import lit.formats

config.name = "dync"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".py", ".test", ".dync"]
# Unit and end-to-end tests have their own runners; Inputs/ hold files that
# tests read, not tests.
config.excludes = ["unit", "e2e", "Inputs", "lit.cfg.py", "lit.site.cfg.py", "conftest.py"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(
    getattr(config, "dync_bin_dir", os.path.dirname(__file__)), "..", "test")

# Run from a clean, predictable environment: no user site customizations that
# could change what the embedded interpreter imports.
for var in ["PYTHONSTARTUP", "PYTHONINSPECT"]:
    config.environment.pop(var, None)
for var in ["PATH", "HOME", "VIRTUAL_ENV", "PYTHONPATH"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
# Exports compile into a cache of the test tree's own, not the user's (tests
# of the cache itself set DYNC_CACHE_DIR per command).
config.environment["DYNC_CACHE_DIR"] = os.path.join(config.test_exec_root, "dync-cache")
# The tensor oracle's call cache lives there too; DYNC_ORACLE_CACHE=check runs
# the suite comparing each cached call with a fresh run (docs/testing.md).
if "DYNC_ORACLE_CACHE" in os.environ:
    config.environment["DYNC_ORACLE_CACHE"] = os.environ["DYNC_ORACLE_CACHE"]
# Likewise DYNC_ORACLE_META_KERNELS=check (or off) for the C++ Meta kernels'
# path (docs/tensor-oracle.md, "C++ Meta kernels").
if "DYNC_ORACLE_META_KERNELS" in os.environ:
    config.environment["DYNC_ORACLE_META_KERNELS"] = os.environ["DYNC_ORACLE_META_KERNELS"]

# Longer names first: lit substitutes in order, and %dync is a prefix of them.
# The source tree and the layering the build declared (cmake/DyncLayers.cmake).
config.substitutions.append(("%dync_src", config.dync_source_root))
config.substitutions.append(
    ("%dync_layers", os.path.join(os.path.dirname(config.dync_bin_dir), "layers.txt")))
config.substitutions.append(("%dync_opt", os.path.join(config.dync_bin_dir, "dync-opt")))
config.substitutions.append(("%dync_llc", os.path.join(config.dync_bin_dir, "dync-llc")))
config.substitutions.append(("%dync_kernel_llc", os.path.join(config.dync_bin_dir, "dync-kernel-llc")))
config.substitutions.append(("%dync", os.path.join(config.dync_bin_dir, "dync")))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%inputs", os.path.join(config.test_source_root, "Inputs")))
config.substitutions.append(("FileCheck", config.filecheck))
