"""Small C files some kernels compile once per machine and load with ctypes, where the
exact numbers are a C library's (the C library's logf for random normals, libjpeg-turbo
for cropped JPEG decodes). Each is built with the system C compiler into a per-user cache
named by the source's hash; without a compiler, headers or the library, `build` returns
None and the kernel falls back to a numpy path (see each caller for what then differs).
Thread-safe: concurrent builders write a temporary file and rename it into place.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "flowrt"


def build(source: Path, flags: Sequence[str] = (), libs: Sequence[str] = ()) -> ctypes.CDLL | None:
    """`source` compiled as a shared library with `flags`, linked with `libs`, and
    loaded; None if it cannot be built or loaded."""
    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        return None
    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    target = cache_dir() / f"{source.stem}-{digest}.so"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent)
        os.close(fd)
        cmd = [cc, "-O2", *flags, "-shared", "-fPIC", str(source), "-o", tmp, *libs]
        try:
            subprocess.run(cmd, check=True, capture_output=True, timeout=60)
            os.replace(tmp, target)  # atomic: concurrent builders all see a whole file
        except (OSError, subprocess.SubprocessError):
            Path(tmp).unlink(missing_ok=True)
            return None
    try:
        return ctypes.CDLL(str(target))
    except OSError:
        return None
