"""Static checks (the team style guide): mypy on the runtime packages and ruff lint, as subprocesses.

Both read their settings from pyproject.toml ([tool.mypy], [tool.ruff]); a test is skipped
when its tool is not installed (both are in the `dev` extra). mypy keeps its incremental
cache in .mypy_cache/ (gitignored), so a warm run takes seconds.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
MYPY_PACKAGES = ["common", "rpc", "worker", "master", "client", "server"]
# The whole tree: pyproject.toml excludes the generated protos/*_pb2 files.
RUFF_PATHS = ["."]
TIMEOUT_S = 240  # a cold mypy run on a loaded 2-core machine; warm runs take a few seconds


def _run(cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )


def _ruff() -> list[str] | None:
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    exe = shutil.which("ruff")
    return [exe] if exe else None


def test_mypy_is_clean() -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e .[dev])")
    proc = _run([sys.executable, "-m", "mypy", *MYPY_PACKAGES])
    assert proc.returncode == 0, f"mypy {' '.join(MYPY_PACKAGES)}:\n{proc.stdout}{proc.stderr}"


def test_ruff_check_is_clean() -> None:
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e .[dev])")
    proc = _run([*ruff, "check", "--no-cache", *RUFF_PATHS])
    assert proc.returncode == 0, f"ruff check:\n{proc.stdout}{proc.stderr}"


def test_ruff_format_is_clean() -> None:
    """The tree is in `ruff format`'s layout, so diffs carry changes, not re-wrapping."""
    ruff = _ruff()
    if ruff is None:
        pytest.skip("ruff is not installed (pip install -e .[dev])")
    proc = _run([*ruff, "format", "--check", "--no-cache", *RUFF_PATHS])
    assert proc.returncode == 0, (
        f"ruff format --check (run `ruff format .`):\n{proc.stdout}{proc.stderr}"
    )
