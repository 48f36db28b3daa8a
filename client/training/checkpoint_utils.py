"""Client API: reading checkpoints outside a session -- tf.train.NewCheckpointReader
(CheckpointReader), load_checkpoint, list_variables and load_variable, as TensorFlow's
py_checkpoint_reader and checkpoint_utils. The bytes are read by common.checkpoint's
BundleReader (TensorFlow's V2 format); partitioned variables read back whole. A reader
holds the index in memory and is safe to share between threads once built.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from client.framework import dtypes
from client.training.checkpoint_management import latest_checkpoint
from common.checkpoint.bundle import BundleReader
from common.errors import DataLossError, NotFoundError
from protos import tensor_bundle_pb2, types_pb2


class CheckpointReader:
    """The variables of one checkpoint (prefix): names, shapes, dtypes and values."""

    def __init__(self, filepattern: str) -> None:
        if os.path.isdir(filepattern):
            # TF falls back to its V1 reader, which fails to open the directory as a table.
            raise DataLossError(
                f"Unable to open table file {filepattern}: FAILED_PRECONDITION: "
                f"{filepattern}; Is a directory: perhaps your file is in a different file "
                "format and you need to use a different restore operator?"
            )
        self._bundle = BundleReader(filepattern)
        self._entries: dict[bytes, tensor_bundle_pb2.BundleEntryProto] = {
            key: self._bundle.entry(key) for key in self._bundle.raw_entries
        }

    def _variables(self) -> dict[str, tensor_bundle_pb2.BundleEntryProto]:
        # Keys of single slices of a partitioned variable start with a 0 byte (TF's
        # EncodeTensorNameSlice); the variable itself has its own full entry.
        return {k.decode(): e for k, e in self._entries.items() if not k.startswith(b"\x00")}

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {name: [d.size for d in e.shape.dim] for name, e in self._variables().items()}

    def get_variable_to_dtype_map(self) -> dict[str, dtypes.DType]:
        return {name: dtypes.as_dtype(e.dtype) for name, e in self._variables().items()}

    def has_tensor(self, tensor_str: str) -> bool:
        return tensor_str.encode() in self._entries

    def get_tensor(self, tensor_str: str) -> Any:
        """A copy of the stored value; a scalar comes back as a numpy scalar, as TF's."""
        if not self.has_tensor(tensor_str):
            raise NotFoundError(f"Key {tensor_str} not found in checkpoint")
        _, value = self._bundle.lookup(tensor_str)
        return np.array(value)[()] if np.ndim(value) == 0 else np.array(value)

    def debug_string(self) -> bytes:
        """One line per stored entry but whole partitioned variables (their slices are
        listed instead), as TF's BundleReader::DebugString."""
        lines = []
        for key, e in sorted(self._entries.items()):
            if e.slices:
                continue
            dims = ",".join(str(d.size) for d in e.shape.dim)
            dtype = types_pb2.DataType.Name(e.dtype)
            lines.append(key + f" ({dtype}) [{dims}]\n".encode())
        return b"".join(lines)


def NewCheckpointReader(filepattern: str) -> CheckpointReader:  # noqa: N802 (TF's name)
    return CheckpointReader(os.fspath(filepattern))


def load_checkpoint(ckpt_dir_or_file: str) -> CheckpointReader:
    """A reader of the checkpoint at a prefix, or of a directory's latest checkpoint."""
    path = os.fspath(ckpt_dir_or_file)
    filename = latest_checkpoint(path) if os.path.isdir(path) else path
    if filename is None:
        raise ValueError(
            f"Couldn't find 'checkpoint' file or checkpoints in given directory {path}"
        )
    return NewCheckpointReader(filename)


def list_variables(ckpt_dir_or_file: str) -> list[tuple[str, list[int]]]:
    """(name, shape) of every variable in the checkpoint, sorted by name."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


def load_variable(ckpt_dir_or_file: str, name: str) -> Any:
    """The value of variable `name` ("w" or "w:0") in the checkpoint."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)
