"""Client, graph building: whole-file ops (tf.io.read_file, write_file, matching_files).
They run on the task their node is placed on, reading that task's filesystem."""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.op_builder import apply_op
from client.framework.tensor_shape import TensorShape


def read_file(filename: Any, name: str | None = None) -> _ops.Tensor:
    return apply_op("ReadFile", [filename], {}, name).outputs[0]


def write_file(filename: Any, contents: Any, name: str | None = None) -> _ops.Operation:
    return apply_op("WriteFile", [filename, contents], {}, name)


def matching_files(pattern: Any, name: str | None = None) -> _ops.Tensor:
    return apply_op("MatchingFiles", [pattern], {}, name).outputs[0]


shape_fns.SHAPE_FNS["ReadFile"] = lambda op: [TensorShape([])]
shape_fns.SHAPE_FNS["MatchingFiles"] = lambda op: [TensorShape([None])]
