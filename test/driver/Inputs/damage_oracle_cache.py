"""Damages every entry of the oracle's call cache under argv[1]: one byte
changed in the middle of the first, the second cut short, the third
replaced by another entry's contents (a valid entry for another key), and
so on in turn."""
import os
import sys

root = sys.argv[1]
paths = sorted(
    os.path.join(folder, name)
    for folder, _, names in os.walk(root)
    for name in names
)
assert len(paths) >= 3, paths
originals = {}
for path in paths:
    with open(path, "rb") as f:
        originals[path] = f.read()
for i, path in enumerate(paths):
    data = originals[path]
    if i % 3 == 0:
        middle = len(data) // 2
        data = data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1:]
    elif i % 3 == 1:
        data = data[: len(data) // 2]
    else:
        data = originals[paths[(i + 1) % len(paths)]]
    with open(path, "wb") as f:
        f.write(data)
