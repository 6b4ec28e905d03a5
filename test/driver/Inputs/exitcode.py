"""Runs a command and prints its exit status last, so that FileCheck can
check the exact code (lit's `not` only tells zero from non-zero)."""
import subprocess
import sys

status = subprocess.call(sys.argv[1:])
sys.stdout.flush()
print(f"exit code: {status}")
