"""Where the call cache keeps its entries across processes: pack files.

A cold capture stores most of its calls, and creating one file per entry
was the largest of the cache's own costs on a loaded machine (the file
system's creations, not the bytes). So a process keeps the entries it
stores in memory, where its own later calls find them, and writes them all
at once when it exits: one pack file, written to a temporary name and
renamed into place, so that no reader ever sees a pack partly written.

A pack is a magic line, the SHA-256 of its index and the index's length,
the index (a row per entry: the key's SHA-256, the payload's offset and
length, the payload's SHA-256) and the payloads, each the marshalled key
text and entry. A reader lists the folder once, reads each pack's index
and reads a payload only when its key is looked up; an index or payload
whose hash does not match, or that points outside its file, is a miss,
and so is a payload holding another key. Nothing in a pack is trusted
beyond the types it decodes to.

The folder is $DYNC_CACHE_DIR/oracle-calls/ (else $XDG_CACHE_HOME/dync,
else ~/.cache/dync); DYNC_ORACLE_CACHE_MAX_MB bounds it (default 256).

Packs are never changed once written. When a process finds more than
_MAX_PACKS of them after writing its own, it merges them into one (the
newest first, up to half the size limit; older ones are removed), writes
that one as it writes its own, and removes the packs it read. Two
processes merging at once each write a merged pack and remove the ones
they read: entries may be held twice until a later merge, never lost
except the ones the size limit drops. A reader that listed a pack another
process removed since finds it gone, or still reads it through the file it
opened: a miss or the entry, never a mixture.
"""

import atexit
import hashlib
import marshal
import os
import struct
import time

_MAGIC = b"dync-oracle-calls pack 1\n"
_ROW = struct.Struct("<32sQQ32s")  # key digest, payload offset, length, payload digest
_HEAD = len(_MAGIC) + 32 + 8
# More packs than this after a process wrote its own: they are merged.
_MAX_PACKS = 8


def _directory():
    root = os.environ.get("DYNC_CACHE_DIR")
    if not root:
        xdg = os.environ.get("XDG_CACHE_HOME")
        home = os.environ.get("HOME")
        if xdg:
            root = os.path.join(xdg, "dync")
        elif home:
            root = os.path.join(home, ".cache", "dync")
        else:
            return None
    return os.path.join(root, "oracle-calls")


DIRECTORY = _directory()


def _limit():
    try:
        return max(1, int(os.environ.get("DYNC_ORACLE_CACHE_MAX_MB", "256"))) << 20
    except ValueError:
        return 256 << 20


def _is_pack(name):
    return name.startswith("pack-") and name.endswith(".pack")


# Reading ---------------------------------------------------------------------


class _Pack:
    """A pack opened for reading: its file stays open, so that a pack
    another process removes meanwhile is still read whole."""

    __slots__ = ("path", "fd", "size")

    def __init__(self, path, fd, size):
        self.path, self.fd, self.size = path, fd, size


_GONE = "gone"


def _open_pack(path):
    """(pack, rows) of the pack at `path`, or None: short, of another
    format, or with an index that does not match its hash; _GONE when no
    file has that name."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return _GONE
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        head = os.pread(fd, _HEAD, 0)
        if len(head) != _HEAD or not head.startswith(_MAGIC):
            raise ValueError()
        check = head[len(_MAGIC):len(_MAGIC) + 32]
        (length,) = struct.unpack("<Q", head[len(_MAGIC) + 32:])
        if length % _ROW.size or _HEAD + length > size:
            raise ValueError()
        index = os.pread(fd, length, _HEAD)
        if len(index) != length or hashlib.sha256(index).digest() != check:
            raise ValueError()
        start = _HEAD + length
        rows = []
        for digest, offset, count, payload_check in _ROW.iter_unpack(index):
            if start + offset + count > size:
                raise ValueError()
            rows.append((digest, start + offset, count, payload_check))
        return _Pack(path, fd, size), rows
    except (OSError, ValueError, struct.error):
        os.close(fd)
        return None


# digest -> [(pack, offset, length, payload digest)], the newest pack first;
# None until the folder is first read.
_index = None
# The verified payloads this process has read or stored, by digest: a
# model's repeated layers look the same keys up, and the entries this
# process stores are found here until it writes them.
_payloads = {}


def _read_index():
    global _index
    _index = {}
    if DIRECTORY is None:
        return
    # A pack listed but gone when opened was merged meanwhile: the merged
    # one was renamed into place before it went, so a second listing finds
    # its entries.
    for _ in range(3):
        packs, vanished = _open_packs()
        if not vanished:
            break
        for pack, _, _ in packs:
            os.close(pack.fd)
    packs.sort(key=lambda p: -p[2])
    for pack, rows, _ in packs:
        for digest, offset, length, check in rows:
            _index.setdefault(digest, []).append((pack, offset, length, check))


def _open_packs():
    """([(pack, rows, mtime)] of the folder's readable packs, whether a
    listed one was gone)."""
    try:
        paths = [e.path for e in os.scandir(DIRECTORY) if _is_pack(e.name)]
    except OSError:
        return [], False
    packs, vanished = [], False
    for path in paths:
        opened = _open_pack(path)
        if opened is _GONE:
            vanished = True
        elif opened is not None:
            try:
                packs.append((opened[0], opened[1], os.fstat(opened[0].fd).st_mtime_ns))
            except OSError:
                os.close(opened[0].fd)
    return packs, vanished


def _payload(digest):
    """The checked payload stored under `digest`, and its pack (None for
    one this process stored), or (None, None)."""
    payload = _payloads.get(digest)
    if payload is not None:
        return payload, None
    if _index is None:
        _read_index()
    for pack, offset, length, check in _index.get(digest, ()):
        try:
            payload = os.pread(pack.fd, length, offset)
        except OSError:
            continue
        if len(payload) == length and hashlib.sha256(payload).digest() == check:
            _payloads[digest] = payload
            _packs_of[digest] = pack
            return payload, pack
    return None, None


# digest -> the pack its payload was read from (for touch).
_packs_of = {}


def load(digest, key_text):
    """The entry stored under `digest` (a key's SHA-256) for `key_text`, or
    None: a missing, damaged or foreign entry is a miss."""
    if DIRECTORY is None:
        return None
    payload, _ = _payload(digest)
    if payload is None:
        return None
    try:
        # Decoded afresh each time: no caller shares a mutable entry.
        stored_key, entry = marshal.loads(payload)
        if stored_key != key_text or type(entry) is not tuple or len(entry) != 3:
            return None
        return entry
    except Exception:
        return None


_touched = set()


def touch(digest):
    """Marks the pack a hit's entry came from as used, for the size limit:
    once per pack and process."""
    pack = _packs_of.get(digest)
    if pack is None or pack.path in _touched:
        return
    _touched.add(pack.path)
    try:
        os.utime(pack.path)
    except OSError:
        pass


# Writing ---------------------------------------------------------------------

# The entries this process stored, to be written when it exits: digest ->
# payload, in the order stored.
_pending = {}


def store(digest, key_text, entry):
    """Keeps the entry for this process and for the pack it writes at exit."""
    if DIRECTORY is None:
        return False
    try:
        payload = marshal.dumps((key_text, entry))
    except ValueError:
        return False
    _payloads[digest] = payload
    _pending[digest] = payload
    return True


def _pack_bytes(items):
    rows, offset = [], 0
    for digest, payload in items:
        rows.append(_ROW.pack(digest, offset, len(payload), hashlib.sha256(payload).digest()))
        offset += len(payload)
    index = b"".join(rows)
    return b"".join([_MAGIC, hashlib.sha256(index).digest(), struct.pack("<Q", len(index)), index,
                     *(payload for _, payload in items)])


def _write_pack(data):
    """Writes `data` as a new pack: to a temporary file, renamed into place
    whole. Its path, or None."""
    suffix = f"{os.getpid()}-{os.urandom(6).hex()}"
    temporary = os.path.join(DIRECTORY, f".tmp-{suffix}")
    path = os.path.join(DIRECTORY, f"pack-{suffix}.pack")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    try:
        try:
            fd = os.open(temporary, flags, 0o600)
        except FileNotFoundError:
            os.makedirs(DIRECTORY, exist_ok=True)
            fd = os.open(temporary, flags, 0o600)
    except OSError:
        return None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        return None
    return path


def _merge(packs):
    """Merges `packs` ([(mtime, size, path)], the newest first) into one of
    at most half the size limit; removes them all."""
    budget = _limit() // 2
    merged, taken = {}, 0
    for _, size, path in packs:
        opened = _open_pack(path) if taken + size <= budget else None
        if opened is None or opened is _GONE:
            continue
        pack, rows = opened
        try:
            for digest, offset, length, check in rows:
                if digest in merged:
                    continue
                payload = os.pread(pack.fd, length, offset)
                if len(payload) == length and hashlib.sha256(payload).digest() == check:
                    merged[digest] = payload
        except OSError:
            pass
        finally:
            os.close(pack.fd)
        taken += size
    if merged and _write_pack(_pack_bytes(list(merged.items()))) is None:
        return
    for _, _, path in packs:
        try:
            os.unlink(path)
        except OSError:
            pass


# A temporary file this old was left by a process that died writing it.
_STALE_SECONDS = 3600


def _listing():
    """[(mtime, size, path, is_pack)] of the folder's files: packs, and an
    older build's entries (files named by their digest, or folders of
    them, never read again). Stale temporary files are removed."""
    rows = []
    now = None
    for entry in os.scandir(DIRECTORY):
        if entry.name.startswith(".tmp-"):
            if now is None:
                now = time.time()
            try:
                if entry.stat().st_mtime < now - _STALE_SECONDS:
                    os.unlink(entry.path)
            except OSError:
                pass
            continue
        if entry.is_dir():
            files = list(os.scandir(entry.path))
            for file in files:
                st = file.stat()
                rows.append((st.st_mtime, st.st_size, file.path, False))
            if not files:
                try:
                    os.rmdir(entry.path)
                except OSError:
                    pass
        else:
            st = entry.stat()
            rows.append((st.st_mtime, st.st_size, entry.path, _is_pack(entry.name)))
    return rows


def _tidy():
    """After a pack was written: merges the packs when there are too many,
    and keeps the folder under its limit, removing the oldest files first
    (an older build's entries among them)."""
    try:
        rows = _listing()
        packs = [row[:3] for row in rows if row[3]]
        if len(packs) > _MAX_PACKS:
            packs.sort(reverse=True)
            _merge(packs)
            rows = _listing()
    except OSError:
        return
    limit = _limit()
    total = sum(row[1] for row in rows)
    if total <= limit:
        return
    rows.sort()
    for _, size, path, _ in rows:
        if total <= limit * 3 // 4:
            break
        try:
            os.unlink(path)
        except OSError:
            pass
        total -= size


def flush():
    """Writes the entries this process stored as one pack (at exit)."""
    if not _pending or DIRECTORY is None:
        return
    items = list(_pending.items())
    _pending.clear()
    if _write_pack(_pack_bytes(items)) is not None:
        _tidy()


atexit.register(flush)
