"""Checks or sets up the layout of the oracle's call cache under argv[2].

`flat`: every entry is a file directly under the folder, named by 64 hex
digits (its key's SHA-256), and there are at least argv[3] of them; no
folder, no temporary file.

`older`: adds what an older build wrote, a folder per digest prefix holding
2 MB of entries, last used a day ago.

`pruned`: the older build's entries are gone, and at least argv[3] entries
of this layout are left.
"""
import os
import re
import sys
import time

what, root = sys.argv[1], sys.argv[2]
names = os.listdir(root)
entries = [n for n in names if re.fullmatch("[0-9a-f]{64}", n)]
if what == "flat":
    assert sorted(entries) == sorted(names), names
    assert all(os.path.isfile(os.path.join(root, n)) for n in entries)
    assert len(entries) >= int(sys.argv[3]), entries
elif what == "older":
    folder = os.path.join(root, "ab")
    os.mkdir(folder)
    day_ago = time.time() - 86400
    for i in range(2):
        path = os.path.join(folder, f"{i:062x}")
        with open(path, "wb") as f:
            f.write(b"\0" * (1 << 20))
        os.utime(path, (day_ago, day_ago))
elif what == "pruned":
    assert os.listdir(os.path.join(root, "ab")) == []
    assert len(entries) >= int(sys.argv[3]), entries
else:
    sys.exit(f"unknown check {what}")
