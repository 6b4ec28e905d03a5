#!/usr/bin/env python3
"""Fails when a source includes a header from a folder its layer may not use.

The layers come from the build (cmake/DyncLayers.cmake writes them, one a
line: NAME FOLDER,... DEPENDENCY,... SOURCE,..., "-" for an empty field). A
layer's sources may include from its own folders and from those of the layers
it depends on, transitively; an include of any other declared folder is
reported as `file:line: error: ...` and the exit status is 1. Includes outside
every declared folder (LLVM, Python, generated files, tests) are not checked.
A library also lists its sources: a .cpp file in its folders that the list
leaves out is reported too, since it would silently not be built.
"""
import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_SUFFIXES = (".cpp", ".h", ".c", ".def", ".inc")


def read_layers(path):
    layers = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if not parts:
                continue
            name = parts[0]
            fields = [[x for x in (parts[i].split(",") if len(parts) > i else []) if x and x != "-"]
                      for i in (1, 2, 3)]
            layers[name] = tuple(fields)
    return layers


def closure(layers, name, seen=None):
    seen = set() if seen is None else seen
    if name in seen:
        return seen
    seen.add(name)
    for dep in layers.get(name, ((), (), ()))[1]:
        closure(layers, dep, seen)
    return seen


def owner(folder_of, path):
    """The layer whose declared folder holds path (the longest such folder)."""
    best = None
    for folder, layer in folder_of.items():
        if path.startswith(folder + "/") and (best is None or len(folder) > len(best[0])):
            best = (folder, layer)
    return best[1] if best else None


def check(root, layers):
    folder_of = {}
    for name, (folders, _, _) in layers.items():
        for folder in folders:
            folder_of[folder] = name
    errors = []
    for name, (folders, _, sources) in sorted(layers.items()):
        allowed = closure(layers, name)
        for folder in folders:
            base = os.path.join(root, folder)
            for entry in sorted(os.listdir(base)) if os.path.isdir(base) else []:
                rel = f"{folder}/{entry}"
                if not entry.endswith(SOURCE_SUFFIXES) or owner(folder_of, rel) != name:
                    continue
                if sources and entry.endswith(".cpp") and rel not in sources:
                    errors.append(
                        f"{rel}: error: {rel} is in {folder}, a folder of {name}, but not in "
                        f"{name}'s SOURCES ({folder}/CMakeLists.txt): list it there, or it is "
                        f"not built")
                with open(os.path.join(root, rel), errors="replace") as f:
                    for number, text in enumerate(f, 1):
                        match = INCLUDE.match(text)
                        if not match:
                            continue
                        target = owner(folder_of, match.group(1))
                        if target is not None and target not in allowed:
                            errors.append(
                                f"{rel}:{number}: error: {name} includes {match.group(1)} of "
                                f"{target}, which it does not depend on; include only from "
                                f"{', '.join(sorted(allowed))}, or declare the dependency where "
                                f"{name} is declared if the layering allows it "
                                f"(docs/design.md, \"Layering\")")
    return errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", required=True, help="the source tree")
    parser.add_argument("--layers", required=True, help="the layers file the build wrote")
    args = parser.parse_args()
    errors = check(args.root, read_layers(args.layers))
    for error in errors:
        print(error, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
