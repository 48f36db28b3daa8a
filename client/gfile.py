"""Client: tf.io.gfile / tf.compat.v1.gfile — files of the client's own filesystem
(TensorFlow's lib/io/file_io.py over the local filesystem; no remote schemes). GFile is
a file object with TensorFlow's methods; the functions raise tf.errors.NotFoundError as
TensorFlow's do. A GFile is used by one thread at a time, as a Python file.
"""

from __future__ import annotations

import glob as _glob
import os
import shutil
from collections.abc import Iterator
from typing import Any

from client import errors


def _path(name: Any) -> str:
    return os.fsdecode(name)


def _not_found(path: str) -> errors.NotFoundError:
    return errors.NotFoundError(f"{path}; No such file or directory")


class GFile:
    """tf.io.gfile.GFile: a file with TensorFlow's read/write/readline/size/seek API;
    text mode unless the mode has "b"."""

    def __init__(self, name: Any, mode: str = "r") -> None:
        self.name = _path(name)
        self.mode = mode
        encoding = None if "b" in mode else "utf-8"
        try:
            self._f = open(self.name, mode, encoding=encoding)  # noqa: SIM115  (closed by close())
        except FileNotFoundError:
            raise _not_found(self.name) from None

    def read(self, n: int = -1) -> Any:
        return self._f.read(n)

    def readline(self) -> Any:
        return self._f.readline()

    def readlines(self) -> list[Any]:
        return self._f.readlines()

    def write(self, data: Any) -> None:
        if "b" in self.mode and isinstance(data, str):
            data = data.encode()
        self._f.write(data)

    def size(self) -> int:
        self._f.flush()
        return os.path.getsize(self.name)

    def seek(self, offset: int = 0, whence: int = 0) -> int:
        return self._f.seek(offset, whence)

    def tell(self) -> int:
        return self._f.tell()

    def flush(self) -> None:
        self._f.flush()

    def close(self) -> None:
        self._f.close()

    def __iter__(self) -> Iterator[Any]:
        return iter(self._f)

    def __next__(self) -> Any:
        return next(self._f)

    def __enter__(self) -> GFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def exists(path: Any) -> bool:
    return os.path.exists(_path(path))


def isdir(path: Any) -> bool:
    return os.path.isdir(_path(path))


def makedirs(path: Any) -> None:
    os.makedirs(_path(path), exist_ok=True)


def mkdir(path: Any) -> None:
    try:
        os.mkdir(_path(path))
    except FileExistsError:
        raise errors.AlreadyExistsError(f"{_path(path)}; File exists") from None


def glob(pattern: Any) -> list[str]:
    patterns = [pattern] if isinstance(pattern, (str, bytes, os.PathLike)) else list(pattern)
    found: set[str] = set()
    for p in patterns:
        found.update(_glob.glob(_path(p)))
    return sorted(found)


def listdir(path: Any) -> list[str]:
    p = _path(path)
    if not os.path.isdir(p):
        raise _not_found(p)
    return sorted(os.listdir(p))


def remove(path: Any) -> None:
    try:
        os.remove(_path(path))
    except FileNotFoundError:
        raise _not_found(_path(path)) from None


def rmtree(path: Any) -> None:
    p = _path(path)
    if not os.path.exists(p):
        raise _not_found(p)
    shutil.rmtree(p)


def rename(src: Any, dst: Any, overwrite: bool = False) -> None:
    if not overwrite and os.path.exists(_path(dst)):
        raise errors.AlreadyExistsError(f"{_path(dst)}; File exists")
    os.replace(_path(src), _path(dst))


def copy(src: Any, dst: Any, overwrite: bool = False) -> None:
    if not overwrite and os.path.exists(_path(dst)):
        raise errors.AlreadyExistsError(f"{_path(dst)}; File exists")
    try:
        shutil.copyfile(_path(src), _path(dst))
    except FileNotFoundError:
        raise _not_found(_path(src)) from None


def walk(top: Any, topdown: bool = True, onerror: Any = None) -> Iterator[Any]:
    for root, dirs, files in os.walk(_path(top), topdown=topdown, onerror=onerror):
        yield root, sorted(dirs), sorted(files)


class _Stat:
    def __init__(self, path: str) -> None:
        st = os.stat(path)
        self.length = st.st_size
        self.mtime_nsec = st.st_mtime_ns
        self.is_directory = os.path.isdir(path)


def stat(path: Any) -> _Stat:
    try:
        return _Stat(_path(path))
    except FileNotFoundError:
        raise _not_found(_path(path)) from None


class _V1:
    """tf.compat.v1.gfile: the same functions under TensorFlow 1's CamelCase names."""

    GFile = GFile
    Open = GFile
    FastGFile = GFile
    Exists = staticmethod(exists)
    IsDirectory = staticmethod(isdir)
    MakeDirs = staticmethod(makedirs)
    MkDir = staticmethod(mkdir)
    Glob = staticmethod(glob)
    ListDirectory = staticmethod(listdir)
    Remove = staticmethod(remove)
    DeleteRecursively = staticmethod(rmtree)
    Rename = staticmethod(rename)
    Copy = staticmethod(copy)
    Walk = staticmethod(walk)
    Stat = staticmethod(stat)


v1 = _V1
