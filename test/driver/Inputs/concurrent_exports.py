"""Runs the `dync export` commands given after `--`, one per argument
(each a single string, split on spaces), all at once, and fails when any
of them fails; prints each one's stderr, in the order given."""
import subprocess
import sys

commands = [arg.split() for arg in sys.argv[sys.argv.index("--") + 1:]]
running = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
           for c in commands]
failed = False
for process in running:
    _, err = process.communicate()
    sys.stdout.write(err)
    failed |= process.returncode != 0
sys.exit(1 if failed else 0)
