"""File confinement of one process (`--file-root` of master and worker): every op that
touches the filesystem (SaveV2/RestoreV2/MergeV2Checkpoints bundles, record readers and
writers, ReadFile/WriteFile/MatchingFiles, PrintV2's output_stream files, summary
writers' logdirs) resolves its
path here. With a root set, a relative path is taken under the root and any path whose
real location (symlinks followed) lies outside it is refused with PermissionDenied naming
the path; without one (the default, and in-process sessions) paths are used as given.

The root is process-wide, set once at start-up; `resolve` is safe from any thread.
"""

from __future__ import annotations

import os

from common.errors import PermissionDeniedError

_root: str | None = None


def set_root(path: str | None) -> None:
    """Confine file access to `path` (created if missing); None lifts it."""
    global _root
    if path is None:
        _root = None
        return
    os.makedirs(path, exist_ok=True)
    _root = os.path.realpath(path)


def root() -> str | None:
    return _root


def resolve(path: str | bytes, what: str = "file") -> str:
    """The path to use for `path`; PermissionDenied if it leaves the file root."""
    text = os.fsdecode(path)
    if _root is None:
        return text
    full = os.path.realpath(os.path.join(_root, text))
    if full != _root and not full.startswith(_root + os.sep):
        raise PermissionDeniedError(
            f"{what} {text} is outside this task's file root {_root} (--file-root)"
        )
    return full
