"""Damages every entry of the oracle's call cache under argv[1], kept in
pack files (frontend/oracle/embedded/oracle_call_store.py): in each pack,
one byte of the first entry's payload changed, the second's length cut
short, the third pointed at another entry's payload (a valid entry for
another key), and so on in turn, under an index whose own hash is made
to match again, so that each entry's own checks are what find the damage.
Beside each pack, two copies of it damaged whole: one cut short, one with
a byte of its index changed."""
import hashlib
import os
import struct
import sys

MAGIC = b"dync-oracle-calls pack 1\n"
ROW = struct.Struct("<32sQQ32s")
HEAD = len(MAGIC) + 32 + 8

root = sys.argv[1]
packs = sorted(os.path.join(root, n) for n in os.listdir(root) if n.endswith(".pack"))
assert packs, os.listdir(root)
damaged = 0
for path in packs:
    with open(path, "rb") as f:
        data = bytearray(f.read())
    assert data.startswith(MAGIC), path
    (length,) = struct.unpack("<Q", data[len(MAGIC) + 32:HEAD])
    rows = [list(row) for row in ROW.iter_unpack(bytes(data[HEAD:HEAD + length]))]
    assert len(rows) >= 3, rows
    start = HEAD + length
    originals = [tuple(row) for row in rows]
    for i, row in enumerate(rows):
        if i % 3 == 0:
            data[start + row[1] + row[2] // 2] ^= 0xFF
        elif i % 3 == 1:
            row[2] //= 2
        else:
            other = originals[(i + 1) % len(rows)]
            row[1], row[2], row[3] = other[1], other[2], other[3]
        damaged += 1
    index = b"".join(ROW.pack(*row) for row in rows)
    data[HEAD:HEAD + length] = index
    data[len(MAGIC):len(MAGIC) + 32] = hashlib.sha256(index).digest()
    with open(path, "wb") as f:
        f.write(data)
    with open(path[:-len(".pack")] + "-short.pack", "wb") as f:
        f.write(data[:len(data) // 2])
    data[HEAD + length // 2] ^= 0xFF
    with open(path[:-len(".pack")] + "-index.pack", "wb") as f:
        f.write(data)
print(f"damaged {damaged} entries in {len(packs)} packs")
