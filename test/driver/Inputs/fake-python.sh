#!/bin/sh
# Stands in for a Python interpreter: answers dync's probe the way
# FAKE_PROBE says, to test how dync treats interpreters it cannot use.
case "$FAKE_PROBE" in
pypy)
  printf 'dync-probe-1\npypy\n3.10.13\n/opt/pypy3/bin/pypy3\n/opt/pypy3\n/opt/pypy3\n' ;;
cpython312)
  printf 'dync-probe-1\ncpython\n3.12.1\n/opt/py312/bin/python3.12\n/opt/py312\n/opt/py312\n' ;;
other-install)
  printf 'dync-probe-1\ncpython\n3.11.2\n/opt/py311/bin/python3\n/opt/py311\n/opt/py311\n' ;;
wrong-prefix)
  # The real installation, but a prefix it does not have.
  python3 -I -S -c 'import sys; print("dync-probe-1\ncpython\n%d.%d.%d" % sys.version_info[:3]); print(sys.executable); print("/nonexistent/venv"); print(sys.base_prefix)' ;;
fails)
  echo "Unknown option: -I" >&2
  exit 2 ;;
garbage)
  echo "hello, I am not Python" ;;
crash)
  kill -SEGV $$ ;;
esac
