//===- ThreadLocks.h - `with lock:` blocks in captured code -----*- C++ -*-===//
//
// Libraries guard work done once per process (installing hooks on a model's
// first call) with a `threading.Lock` or `RLock`. Capture runs the program
// in one thread, so such a block computes what it computes without the
// lock: capture checks the lock is free (eager would wait for it otherwise)
// and runs the block; the compiled path takes no lock, and the graph holds
// nothing of it (docs/capture.md, "Locks").
//
//===----------------------------------------------------------------------===//
#pragma once

#include <Python.h>

namespace dync::capture {

/// Whether \p object is a `_thread.lock` or `_thread.RLock` (what
/// threading.Lock() and threading.RLock() make), or a method bound to one
/// (the __exit__ a `with` block calls).
bool isThreadLock(PyObject* object);

/// Whether \p object is the `__exit__` of such a lock, which a `with`
/// block capture entered calls at its end: capture never holds the lock
/// over the block, so the call does nothing and returns None.
bool isThreadLockExit(PyObject* object);

} // namespace dync::capture
