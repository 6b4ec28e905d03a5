"""Shared fixtures for the end-to-end tests: where the built tools are and how
to run them."""
import os
import subprocess

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("DYNC_BUILD_DIR", os.path.join(REPO, "build"))


@pytest.fixture(scope="session")
def dync_binary():
    path = os.path.join(BUILD, "bin", "dync")
    if not os.path.exists(path):
        pytest.fail(f"dync is not built at {path}; run utils/bootstrap")
    return path


@pytest.fixture(scope="session")
def run_dync(dync_binary):
    """Runs dync with the given arguments; returns the CompletedProcess."""

    def run(*args, cwd=None, env=None, check=False):
        return subprocess.run([dync_binary, *map(str, args)], cwd=cwd, env=env, check=check,
                              capture_output=True, text=True)

    return run
