"""Checks or sets up the layout of the oracle's call cache under argv[2].

`packs`: every file directly under the folder is a pack (pack-*.pack),
exactly argv[3] of them; no folder, no temporary file.

`older`: adds what older builds wrote, a folder per digest prefix and a
file per entry named by its digest, 2 MB of entries in all, last used a
day ago.

`pruned`: the older builds' entries are gone (their folder empty or
removed), and argv[3] packs are left.

`copies`: adds argv[3] copies of the packs there, under names of their own.
"""
import os
import re
import sys
import time

what, root = sys.argv[1], sys.argv[2]
names = os.listdir(root)
packs = [n for n in names if re.fullmatch(r"pack-[0-9]+-[0-9a-f]{12}\.pack", n)]
if what == "packs":
    assert sorted(packs) == sorted(names), names
    assert all(os.path.isfile(os.path.join(root, n)) for n in packs)
    assert len(packs) == int(sys.argv[3]), packs
elif what == "older":
    folder = os.path.join(root, "ab")
    os.mkdir(folder)
    day_ago = time.time() - 86400
    for path in (os.path.join(folder, f"{0:062x}"), os.path.join(root, f"{1:064x}")):
        with open(path, "wb") as f:
            f.write(b"\0" * (1 << 20))
        os.utime(path, (day_ago, day_ago))
elif what == "pruned":
    folder = os.path.join(root, "ab")
    assert not os.path.exists(folder) or os.listdir(folder) == []
    assert not os.path.exists(os.path.join(root, f"{1:064x}"))
    assert len(packs) == int(sys.argv[3]), packs
elif what == "copies":
    import shutil

    for i in range(int(sys.argv[3])):
        source = os.path.join(root, packs[i % len(packs)])
        shutil.copyfile(source, os.path.join(root, f"pack-{i}-{i:012x}.pack"))
else:
    sys.exit(f"unknown check {what}")
