"""Every module imports on its own, whichever is imported first (no import cycles).

Import cycles only show when a cycle's member is the first of our modules a process
imports, so each module is imported first in a fresh module table, in one subprocess.
"Fresh" means: no module of its own package, or of any package above it, is loaded. The
layers below stay loaded: tests/test_layering.py holds that a package imports only its own
and lower layers, so a cycle through a module runs inside its package, and re-importing
common/ for each of the 300 modules above it made this test take six minutes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.test_layering import MAY_IMPORT

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("common", "rpc", "master", "worker", "client", "deploy", "bench", "protos", "server")

_PROBE = r"""
import importlib, sys, traceback
ours = {PACKAGES!r}
below = {BELOW!r}
failed = []
for name in sys.argv[1:]:
    keep = below[name.split(".")[0]]
    for loaded in [m for m in sys.modules if m.split(".")[0] in ours]:
        if loaded.split(".")[0] not in keep:
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
    # package -> the packages strictly below it, which stay loaded between modules
    below = {p: sorted(MAY_IMPORT[p] - {p}) for p in PACKAGES}
    probe = _PROBE.replace("{PACKAGES!r}", repr(PACKAGES)).replace("{BELOW!r}", repr(below))
    proc = subprocess.run(
        [sys.executable, "-c", probe, *modules],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, f"modules that fail to import first:\n{proc.stdout}{proc.stderr}"
