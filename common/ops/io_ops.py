"""Ops (executor stage): checkpoint I/O, TensorFlow's io_ops family as tf.train.Saver's
graphs use it: SaveV2, RestoreV2, MergeV2Checkpoints, ShardedFilename, ShardedFilespec.

The files are TensorFlow's V2 checkpoint (tensor bundle) format, written and read by
common.checkpoint, so checkpoints move between this runtime and TensorFlow both ways.
A kernel touches the filesystem of the process running it: the process of the device the
SaveV2/RestoreV2 node is placed on. Kernels keep no state and are safe from any thread;
two saves to one prefix at once are not (as in TensorFlow).

A partitioned variable is saved as slices ("shape_and_slices" specs such as "10 4 0,5:-")
and restored from any set of stored slices that covers the one asked for. Not supported
(an error, never a silent wrong answer): the V1 format (Save, Restore, SaveSlices,
RestoreSlice, and RestoreV2's fallback to V1 files).
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from common import dtypes
from common.checkpoint import bundle
from common.checkpoint.slices import Extent
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.tensor_shape import shape_string

# ---------------------------------------------------------------------------------------
# Input checks and slice specs
# ---------------------------------------------------------------------------------------


def _string_scalar(x: np.ndarray) -> str:
    """A path from a one-element string tensor."""
    value = np.asarray(x, dtype=object).reshape(-1)[0]
    return os.fsdecode(value if isinstance(value, bytes | str) else bytes(value))


def _strings(x: np.ndarray) -> list[bytes]:
    return [v if isinstance(v, bytes) else str(v).encode() for v in np.asarray(x).reshape(-1)]


def _validate(prefix: np.ndarray, names: np.ndarray, slices: np.ndarray) -> None:
    """ValidateInputs of save_restore_v2_ops.cc, shared by SaveV2 and RestoreV2."""
    prefix, names, slices = np.asarray(prefix), np.asarray(names), np.asarray(slices)
    if prefix.size != 1:
        raise InvalidArgumentError(
            f"Input prefix should have a single element, got {prefix.size} instead."
        )
    if names.ndim != 1 or slices.ndim != 1:
        raise InvalidArgumentError(
            "Input tensor_names and shape_and_slices should be an 1-D tensors, got "
            f"{shape_string(names.shape)} and {shape_string(slices.shape)} instead."
        )
    if names.size != slices.size:
        raise InvalidArgumentError(
            "tensor_names and shape_and_slices have different number of elements: "
            f"{names.size} vs. {slices.size}"
        )


def parse_shape_and_slice(spec: str) -> tuple[tuple[int, ...], list[Extent]]:
    """A shape-and-slice spec "d0 d1 ... slice" (checkpoint::ParseShapeAndSlice): the full
    shape and, per dimension, (start, length), length None for the whole dimension ("-")."""
    parts = spec.split(" ")
    if len(parts) < 2:
        raise InvalidArgumentError(
            f"Expected a shape and a slice specification separated by a space: {spec}"
        )
    try:
        shape = tuple(int(d) for d in parts[:-1])
        extents: list[Extent] = []
        for extent in parts[-1].split(":"):
            if extent == "-":
                extents.append((0, None))
            else:
                begin, size = extent.split(",")
                extents.append((int(begin), int(size)))
    except ValueError:
        raise InvalidArgumentError(f"Invalid shape and slice specification: {spec}") from None
    if len(extents) != len(shape) or any(d < 0 for d in shape):
        raise InvalidArgumentError(
            f"Expected {len(shape)} dimensions in the slice specification: {spec}"
        )
    for (first, length), dim in zip(extents, shape):
        if first < 0 or (length is not None and (length < 0 or first + length > dim)):
            raise InvalidArgumentError(f"Slice {spec} is out of the shape's bounds")
    return shape, extents


# ---------------------------------------------------------------------------------------
# SaveV2 / RestoreV2
# ---------------------------------------------------------------------------------------


def _save_v2(kc: KernelConstruction) -> Callable:
    types = [DataType(t) for t in kc.attr("dtypes")]

    def compute(ctx, inputs: list) -> list:
        prefix, names, specs = inputs[0], inputs[1], inputs[2]
        _validate(prefix, names, specs)
        tensors = inputs[3:]
        if np.asarray(names).size != len(tensors):
            raise InvalidArgumentError(
                f"Got {np.asarray(names).size} tensor names but {len(tensors)} tensors."
            )
        writer = bundle.BundleWriter(_string_scalar(prefix))
        try:
            for name, spec, dtype, tensor in zip(_strings(names), _strings(specs), types, tensors):
                _add(writer, name, spec.decode(), dtype, tensor)
            writer.finish()
        except BaseException:
            writer.abort()
            raise
        return []

    return compute


def _add(writer: bundle.BundleWriter, name: bytes, spec: str, dtype: DataType, tensor) -> None:
    if not spec:
        writer.add(name, dtype, tensor)
        return
    full_shape, extents = parse_shape_and_slice(spec)
    sliced = tuple(d if n is None else n for (_, n), d in zip(extents, full_shape))
    if sliced != np.shape(tensor):
        raise InvalidArgumentError(
            "Slice in shape_and_slice specification does not match the shape of the tensor "
            f"to  save: {spec}, tensor: {shape_string(np.shape(tensor))}"
        )
    writer.add_slice(name, dtype, full_shape, extents, tensor)


def _restore_v2(kc: KernelConstruction) -> Callable:
    types = [DataType(t) for t in kc.attr("dtypes")]

    def compute(ctx, inputs: list) -> list:
        prefix, names, specs = inputs
        if np.asarray(names).size != len(types):
            raise InvalidArgumentError(
                f"Got {np.asarray(names).size} tensor names, but {len(types)} expected dtypes."
            )
        _validate(prefix, names, specs)
        reader = bundle.BundleReader(_string_scalar(prefix))
        return [
            _restore_one(reader, name, spec.decode(), dtype)
            for name, spec, dtype in zip(_strings(names), _strings(specs), types)
        ]

    return compute


def _restore_one(
    reader: bundle.BundleReader, name: bytes, spec: str, dtype: DataType
) -> np.ndarray:
    entry = reader.entry(name)
    if entry.dtype != dtype:
        raise InvalidArgumentError(
            f"tensor_name = {name.decode()}; expected dtype {dtypes.tf_name(dtype)} does not "
            f"equal original dtype {dtypes.tf_name(entry.dtype)}"
        )
    if not spec:
        return reader.lookup(name)[1]
    shape, extents = parse_shape_and_slice(spec)
    stored = reader.shape_of(entry, name.decode())
    if shape != stored:
        raise InvalidArgumentError(
            f"tensor_name = {name.decode()}; shape in shape_and_slice spec "
            f"{shape_string(shape)} does not match the shape stored in checkpoint: "
            f"{shape_string(stored)}"
        )
    return reader.lookup_slice(name, extents)


# ---------------------------------------------------------------------------------------
# MergeV2Checkpoints and file names
# ---------------------------------------------------------------------------------------


def _merge_v2_checkpoints(kc: KernelConstruction) -> Callable:
    delete_old_dirs = bool(kc.attr("delete_old_dirs"))
    allow_missing = bool(kc.attr("allow_missing_files"))

    def compute(ctx, inputs: list) -> list:
        prefixes, destination = np.asarray(inputs[0]), np.asarray(inputs[1])
        if prefixes.ndim != 1:
            raise InvalidArgumentError(
                "Input checkpoint_prefixes should be an 1-D tensor, got "
                f"{shape_string(prefixes.shape)} instead."
            )
        if destination.ndim != 0:
            raise InvalidArgumentError(
                "Input destination_prefix should be a scalar tensor, got "
                f"{shape_string(destination.shape)} instead."
            )
        sources = [os.fsdecode(p) for p in _strings(prefixes)]
        merged = _string_scalar(destination)
        bundle.merge_bundles(sources, merged, allow_missing)
        if delete_old_dirs:
            _delete_old_dirs(sources, merged)
        return []

    return compute


def _delete_old_dirs(sources: list[str], merged: str) -> None:
    """Remove the (now empty) directories the shards were written to: best effort, as
    TensorFlow (only the first removal of a shared directory succeeds)."""
    merged_dir = os.path.dirname(merged)
    for source in sources:
        directory = os.path.dirname(source)
        if directory == merged_dir:
            continue
        try:
            os.rmdir(directory)
        except OSError:
            pass


def _int_scalar(x: np.ndarray) -> int:
    return int(np.asarray(x).reshape(-1)[0])


def _sharded_filename(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        basename = _strings(inputs[0])[0]
        shard, num_shards = _int_scalar(inputs[1]), _int_scalar(inputs[2])
        return [np.array(b"%s-%05d-of-%05d" % (basename, shard, num_shards), dtype=object)]

    return compute


def _sharded_filespec(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        basename, num_shards = _strings(inputs[0])[0], _int_scalar(inputs[1])
        return [np.array(b"%s-?????-of-%05d" % (basename, num_shards), dtype=object)]

    return compute


# ---------------------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------------------


def _register() -> None:
    io = ["prefix: string", "tensor_names: string", "shape_and_slices: string"]
    register_op("SaveV2", [*io, "tensors: dtypes"], [], ["dtypes: list(type) >= 1"], stateful=True)
    register_kernel("SaveV2", expensive=True)(_save_v2)
    register_op("RestoreV2", io, ["tensors: dtypes"], ["dtypes: list(type) >= 1"], stateful=True)
    register_kernel("RestoreV2", expensive=True)(_restore_v2)
    register_op(
        "MergeV2Checkpoints",
        ["checkpoint_prefixes: string", "destination_prefix: string"],
        [],
        ["delete_old_dirs: bool = true", "allow_missing_files: bool = false"],
        stateful=True,
    )
    register_kernel("MergeV2Checkpoints", expensive=True)(_merge_v2_checkpoints)
    register_op(
        "ShardedFilename",
        ["basename: string", "shard: int32", "num_shards: int32"],
        ["filename: string"],
    )
    register_kernel("ShardedFilename")(_sharded_filename)
    register_op("ShardedFilespec", ["basename: string", "num_shards: int32"], ["filename: string"])
    register_kernel("ShardedFilespec")(_sharded_filespec)


_register()
