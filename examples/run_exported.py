"""Runs an exported model from its artifact and compares it with eager PyTorch.

    python3 examples/run_exported.py examples/mlp/model.py:MLP mlp.dync.so

imports the model file, takes the model the way `dync export` did (the
module-level instance of the class if there is one, else `Class()`), calls it
on the module's `example_inputs()` eagerly, then loads the artifact with
`dync.load` and calls it again: the second call runs the compiled graph when
its guards hold. Prints both results' difference and the runtime's counters,
and exits non-zero if the results differ or the compiled path did not run.
"""
import argparse
import importlib.util
import os
import sys

import torch

import dync


def load_module(path):
    name = os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def instance_of(module, class_name):
    cls = getattr(module, class_name)
    for value in vars(module).values():
        if type(value) is cls:
            return value
    return cls()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="FILE.py:Class, the model the artifact was exported from")
    parser.add_argument("artifact", help="the shared library written by 'dync export -o'")
    args = parser.parse_args()
    path, _, class_name = args.model.partition(":")
    module = load_module(path)
    model = instance_of(module, class_name)
    inputs = module.example_inputs()

    expected = model(*inputs)
    with dync.load(args.artifact) as artifact:
        actual = model(*inputs)
        stats = artifact.stats()
    torch.testing.assert_close(actual, expected)
    difference = max((a - e).abs().max().item()
                     for a, e in zip(torch.utils._pytree.tree_leaves(actual),
                                     torch.utils._pytree.tree_leaves(expected))
                     if isinstance(a, torch.Tensor))
    print(f"eager and {os.path.basename(args.artifact)} agree (max abs difference {difference:.3g})")
    for entry, counts in stats.items():
        print(f"{entry}: {counts['hits']} compiled, {counts['misses']} fell back"
              + (f" ({counts['last_miss_reason']})" if counts["last_miss_reason"] else ""))
    if not any(counts["hits"] for counts in stats.values()):
        sys.exit("the compiled path did not run")


if __name__ == "__main__":
    main()
