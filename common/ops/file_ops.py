"""Ops (executor stage), whole files: ReadFile, WriteFile, MatchingFiles (TensorFlow's
core/kernels/whole_file_read_ops.cc and matching_files_op.cc).

They touch the filesystem of the process running the kernel: the task the node is placed
on. Kernels keep no state; safe from any thread (two writes to one file race, as in
TensorFlow).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Callable

import numpy as np

from common import file_access, record_io
from common.errors import InvalidArgumentError, PermissionDeniedError
from common.ops.registry import KernelConstruction, register_kernel, register_op

register_op("ReadFile", inputs=["filename: string"], outputs=["contents: string"])
register_op("WriteFile", inputs=["filename: string", "contents: string"], stateful=True)
register_op("MatchingFiles", inputs=["pattern: string"], outputs=["filenames: string"])

Compute = Callable[..., list]


def _scalar_string(value: np.ndarray, what: str, node: str) -> bytes:
    arr = np.asarray(value, dtype=object)
    if arr.ndim != 0:
        raise InvalidArgumentError(f"{what} must be scalar, got shape {list(arr.shape)}", node)
    item = arr.item()
    return item if isinstance(item, bytes) else str(item).encode()


@register_kernel("ReadFile")
def _read_file(k: KernelConstruction) -> Compute:
    def compute(ctx, inputs: list) -> list:
        path = os.fsdecode(_scalar_string(inputs[0], "Input filename tensor", k.node_name))
        with record_io.open_file(path) as f:
            return [np.array(f.read(), dtype=object)]

    return compute


@register_kernel("WriteFile")
def _write_file(k: KernelConstruction) -> Compute:
    def compute(ctx, inputs: list) -> list:
        path = os.fsdecode(_scalar_string(inputs[0], "Input filename tensor", k.node_name))
        contents = _scalar_string(inputs[1], "Contents tensor", k.node_name)
        path = file_access.resolve(path)
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)  # TensorFlow creates the parent dirs
        with record_io.open_file(path, "wb") as f:
            f.write(contents)
        return []

    return compute


def matching_files(pattern: str) -> list[str]:
    """The paths matching a glob pattern (*, ?, [...]), sorted as TensorFlow's; under
    a file root, the pattern is resolved there and only paths inside it are listed."""
    if file_access.root() is None:
        return sorted(glob.glob(pattern))
    directory, tail = os.path.split(pattern)
    found = glob.glob(os.path.join(file_access.resolve(directory or ".", "directory"), tail))
    return sorted(p for p in found if _inside(p))


def _inside(path: str) -> bool:
    try:
        file_access.resolve(path)
    except PermissionDeniedError:
        return False
    return True


@register_kernel("MatchingFiles")
def _matching_files(k: KernelConstruction) -> Compute:
    def compute(ctx, inputs: list) -> list:
        patterns = np.asarray(inputs[0], dtype=object)
        if patterns.ndim > 1:
            raise InvalidArgumentError(
                "Input patterns tensor must be scalar or vector, but had shape: "
                f"[{','.join(map(str, patterns.shape))}]", k.node_name
            )  # fmt: skip
        found: list[bytes] = []
        for p in patterns.reshape(-1):
            found.extend(os.fsencode(m) for m in matching_files(os.fsdecode(p)))
        out = np.empty(len(found), dtype=object)
        out[:] = sorted(found)
        return [out]

    return compute
