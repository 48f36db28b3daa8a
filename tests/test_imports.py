"""Every module imports on its own, whichever is imported first (no import cycles).

Import cycles only show when a cycle's member is the first of our modules a process
imports, so each module is imported first in a fresh module table, in one subprocess.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("common", "rpc", "master", "worker", "client", "deploy", "bench", "protos", "server")

_PROBE = r"""
import importlib, sys, traceback
ours = {PACKAGES!r}
failed = []
for name in sys.argv[1:]:
    for loaded in [m for m in sys.modules if m.split(".")[0] in ours]:
        del sys.modules[loaded]
    try:
        importlib.import_module(name)
    except Exception:
        failed.append(name + ": " + traceback.format_exc().strip().splitlines()[-1])
print("\n".join(failed))
sys.exit(1 if failed else 0)
"""


def _modules() -> list[str]:
    names = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__main__":
                continue
            names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def test_every_module_imports_first() -> None:
    modules = _modules()
    assert "common.executor" in modules and "master.server" in modules
    probe = _PROBE.replace("{PACKAGES!r}", repr(PACKAGES))
    proc = subprocess.run(
        [sys.executable, "-c", probe, *modules],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"modules that fail to import first:\n{proc.stdout}{proc.stderr}"
