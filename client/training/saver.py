"""Client, training: tf.train.Saver, building the save and restore graph TensorFlow's
Saver (BulkSaverBuilder, V2 format) builds, then running it and keeping the `checkpoint`
state file.

Save: SaveV2 of every variable's value under its name (the VarHandleOp's name, slice spec
"") to the fed prefix; sharded, one SaveV2 per device into `<prefix>_temp/part-NNNNN-of-M`
(ShardedFilename), then MergeV2Checkpoints into `<prefix>` on the last device, deleting the
temporary directory. Restore: RestoreV2 on CPU:0 (of each device when sharded), an
Identity and an AssignVariableOp on each variable's device, grouped per device into
`restore_all`. With no var_list, the SAVEABLE_OBJECTS collection is saved too: a mutable
lookup table's export as `<name>-keys` / `<name>-values`, restored by LookupTableImportV2
(client/training/saveable_object.py). Node names, devices and constants match TensorFlow's,
so the same script run with TensorFlow or with this client reads and writes the same
checkpoints.

The kernels touch the filesystem of the task running them; the state file and deletion of
old checkpoints happen in the client's process, so a cluster saving outside the client's
host needs a shared filesystem (as TensorFlow). `saver_def` is TensorFlow's SaverDef proto;
a Saver made from one (`Saver(saver_def=...)`, `import_meta_graph`) runs the named ops of
a graph built elsewhere. `save` writes `<prefix>.meta` (the meta graph, with this Saver's
SaverDef) unless `write_meta_graph=False`, as TensorFlow. A partitioned variable's shards
are saved as slices of one tensor named as the whole variable (restored by any layout
whose slices cover them). Not supported: the V1 format, custom builders. Not thread-safe
(one Saver per training loop, as TensorFlow's).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Iterator
from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.ops import array_ops
from client.ops.lookup_ops import MutableHashTable
from client.ops.partitioned_variables import PartitionedVariable
from client.ops.variables import Variable, global_variables, prepend_name_scope, strip_name_scope
from client.training import checkpoint_management, meta_graph
from client.training.saveable_object import SaveableObject, SaveSpec, TableSaveable
from common import device_name as _device_name
from common.errors import (
    FailedPreconditionError,
    InvalidArgumentError,
    NotFoundError,
    OpError,
)
from protos.saver_pb2 import SaverDef

_log = logging.getLogger(__name__)
V2 = SaverDef.V2  # the only checkpoint format written or read here


@dataclasses.dataclass(frozen=True)
class _SaveSpec:
    """One variable to save: its checkpoint key, slice spec ("" for a whole variable, else
    the shard's "<full shape> <offset,size:...>") and the variable (its value and device)."""

    name: str
    variable: Variable
    slice_spec: str = ""

    @property
    def device(self) -> str:
        return _canonical(self.variable.device)

    @property
    def specs(self) -> list[SaveSpec]:
        tensor = self.variable._as_graph_element()
        if self.slice_spec and not self.variable._is_resource_variable:
            # TF's ReferenceVariableSaveable of a shard saves the variable object, which
            # converts to its "read" snapshot; a whole one saves the ref itself.
            tensor = self.variable.value()
        return [SaveSpec(tensor, self.slice_spec, self.name)]

    def restore(self, restored_tensors: list[Any], reshape: bool) -> Any:
        """TF's ResourceVariableSaveable.restore: an Identity on the variable's device,
        then AssignVariableOp."""
        var, (restored,) = self.variable, restored_tensors
        if not var._is_resource_variable:
            return self._restore_ref(restored, reshape)
        if reshape:
            restored = array_ops.reshape(restored, var.shape.as_list())
        with _ops.get_default_graph().device(var.device):
            restored = array_ops.identity(restored)
            if not var.shape.is_compatible_with(restored.shape):
                raise ValueError(
                    f"Received incompatible tensor with shape {restored.shape} when "
                    f"attempting to restore variable with shape {var.shape} and name "
                    f"{self.name}."
                )
            return apply_op("AssignVariableOp", [var.handle, restored], {})

    def _restore_ref(self, restored: Any, reshape: bool) -> Any:
        """TF's ReferenceVariableSaveable.restore: an Assign to the ref (colocated with
        it), shape-checked unless reshaping."""
        var = self.variable
        if reshape:
            restored = array_ops.reshape(restored, var.shape.as_list())
        validate = not reshape and var.shape.is_fully_defined()
        return apply_op("Assign", [var, restored], {"validate_shape": validate})


# A variable to save, or another saveable (a mutable lookup table's).
_Saveable = _SaveSpec | SaveableObject


# -- devices -------------------------------------------------------------------------------
def _canonical(device: str) -> str:
    return _device_name.to_string(_device_name.parse(device)) if device else ""


def _set_cpu0(device: str) -> str:
    """TF's saveable_object_util.set_cpu0: the same task's /device:CPU:0."""
    parsed = _device_name.parse(device) if device else _device_name.DeviceName()
    return _device_name.to_string(dataclasses.replace(parsed, type="CPU", id=0))


# -- what to save --------------------------------------------------------------------------
def _specs(var_list: Any) -> list[_Saveable]:
    """TF's op_list_to_dict + validate_and_slice_inputs: specs sorted by checkpoint key; a
    list keys each variable by its op name, and the shards of a partitioned variable by the
    whole variable's name (one spec per shard, with its slice), a SaveableObject by its
    name; a dict keys by its keys (a SaveableObject in it keeps its own names)."""
    if isinstance(var_list, dict):
        named = {name: _shards_or_variable(var, name) for name, var in var_list.items()}
    elif isinstance(var_list, (list, tuple, set)):
        named = {}
        for var in sorted(_flatten(var_list), key=lambda v: v.name):
            if isinstance(var, MutableHashTable):
                # TF 2.21 names a table given in a list "" (its keys "-keys").
                var = TableSaveable(var, "", var._name)
            info = (
                None if isinstance(var, SaveableObject) else _variable(var)._get_save_slice_info()
            )
            if info is not None:
                shards = named.setdefault(info.full_name, [])
                if not isinstance(shards, list):
                    raise ValueError(
                        f"Mixing slices and non-slices with the same name: {info.full_name}"
                    )
                shards.append(var)
                continue
            name = var.name if isinstance(var, SaveableObject) else var.op.name
            if name in named:
                raise ValueError(f"At least two variables have the same name: {name}")
            named[name] = var
    else:
        raise TypeError(f"Variables to save should be passed in a dict or a list. Got {var_list}")
    specs: list[_Saveable] = []
    seen: set[int] = set()
    for name, var in sorted(named.items(), key=lambda kv: kv[0]):
        if not isinstance(name, str):
            raise TypeError(
                "names_to_saveables must be a dict mapping string names to trackable "
                f"operations. Name is not a string: {name}"
            )
        if isinstance(var, SaveableObject):
            if id(var) in seen:
                raise ValueError(f"The same saveable will be restored with two names: {name}")
            seen.add(id(var))
            specs.append(var)
            continue
        for variable, slice_spec in _with_slices(var):
            if id(variable) in seen:
                raise ValueError(f"The same saveable will be restored with two names: {name}")
            seen.add(id(variable))
            specs.append(_SaveSpec(name, variable, slice_spec))
    return specs


def _shards_or_variable(var: Any, name: str) -> Any:
    if isinstance(var, MutableHashTable):
        return TableSaveable(var, name, var._name)
    return list(var) if isinstance(var, PartitionedVariable) else var


def _with_slices(var: Any) -> Iterator[tuple[Variable, str]]:
    """A variable, whole (""), or a partitioned variable's shards, each with its slice."""
    if not isinstance(var, list):
        yield _variable(var), ""
        return
    for shard in var:
        info = _variable(shard)._get_save_slice_info()
        if info is None:
            raise ValueError(f"Slices must all have slice_info: {shard.name}")
        yield shard, info.spec


def _flatten(values: Any) -> Iterator[Any]:
    for v in values:
        if isinstance(v, (list, tuple, PartitionedVariable)):
            yield from _flatten(v)
        else:
            yield v


def _variable(var: Any) -> Variable:
    if not isinstance(var, Variable):
        raise TypeError(f"Variable to save is not a Variable: {var}")
    return var


# -- graph building ------------------------------------------------------------------------
def _group_by_device(ops: list[Any], name: str) -> Any:
    """TF's control_flow_ops.group: one NoOp per device (sorted), under a root NoOp `name`;
    a single device's NoOp is the root itself."""
    with _ops.name_scope(name, "group_deps") as scope:
        by_device: dict[str, list[Any]] = {}
        for op in ops:
            by_device.setdefault(op.device, []).append(op)
        if len(by_device) <= 1:
            device = next(iter(by_device), "")
            return _no_op_on(device, ops, scope)
        deps = [_no_op_on(d, by_device[d], None) for d in sorted(by_device)]
        with _ops.control_dependencies(deps):
            return apply_op("NoOp", [], {}, scope)


def _no_op_on(device: str, deps: list[Any], name: str | None) -> Any:
    g = _ops.get_default_graph()
    with _ops.control_dependencies(deps), g.device(device):
        return apply_op("NoOp", [], {}, name)


def _save_op(filename: Any, saveables: list[_Saveable]) -> Any:
    """SaveV2 of the saveables' tensors to `filename`; the filename again, after the save."""
    specs = [spec for s in saveables for spec in s.specs]
    save = apply_op(
        "SaveV2",
        [
            filename,
            [s.name for s in specs],
            [s.slice_spec for s in specs],
            [s.tensor for s in specs],
        ],
        {},
        "SaveV2",
    )
    with _ops.name_scope("control_dependency") as scope, _ops.control_dependencies([save]):
        return array_ops.identity(filename, name=scope)


def _sharded_save_op(prefix: Any, per_device: list[tuple[str, list[_Saveable]]]) -> Any:
    """TF's _AddShardedSaveOpsForV2: a SaveV2 per device into `<prefix>_temp/part-*`,
    merged into `prefix` on the last device; returns `prefix` after the merge."""
    g = _ops.get_default_graph()
    with g.device("/device:CPU:*"):
        is_s3 = apply_op("StaticRegexFullMatch", [prefix], {"pattern": "^s3://.*"}).outputs[0]
        suffix = apply_op(
            "Select",
            [
                is_s3,
                convert_to_tensor(".part", name="Const"),
                convert_to_tensor(os.path.normpath("_temp/part"), name="Const"),
            ],
        ).outputs[0]
        tmp_prefix = apply_op("StringJoin", [[prefix, suffix]], {}).outputs[0]
    num_shards = convert_to_tensor(len(per_device), dtype=dtypes.int32, name="num_shards")
    saves, shard_prefixes = [], []
    for shard, (device, specs) in enumerate(per_device):
        with g.device(_set_cpu0(device)):
            shard_prefix = apply_op(
                "ShardedFilename",
                [tmp_prefix, shard, num_shards],
            ).outputs[0]
            shard_prefixes.append(shard_prefix)
            saves.append(_save_op(shard_prefix, specs))
    with _ops.control_dependencies([s.op for s in saves]), g.device(_set_cpu0(per_device[-1][0])):
        merge = apply_op("MergeV2Checkpoints", [shard_prefixes, prefix], {"delete_old_dirs": True})
        with _ops.control_dependencies([merge]):
            return array_ops.identity(prefix)


def _restore_ops(filename: Any, saveables: list[_Saveable], reshape: bool, name: str) -> Any:
    """BulkSaverBuilder's restore: one RestoreV2 on CPU:0, then each saveable's restore
    (a variable's Identity and AssignVariableOp on its device), grouped as `name`."""
    g = _ops.get_default_graph()
    specs = [spec for s in saveables for spec in s.specs]
    with g.device("/device:CPU:0"):
        restore = apply_op(
            "RestoreV2",
            [filename, [s.name for s in specs], [s.slice_spec for s in specs]],
            {"dtypes": [s.dtype for s in specs]},
        )
    assigns, restored = [], iter(restore.outputs)
    for saveable in saveables:
        tensors = [next(restored) for _ in saveable.specs]
        assigns.append(saveable.restore(tensors, reshape))
    return _group_by_device(assigns, name)


def _sharded_restore_ops(
    filename: Any, per_device: list[tuple[str, list[_Saveable]]], reshape: bool
) -> Any:
    g = _ops.get_default_graph()
    restores = []
    for device, specs in per_device:
        with g.device(device):
            restores.append(_restore_ops(filename, specs, reshape, "restore_shard"))
    return _group_by_device(restores, "restore_all")


def _group_specs_by_device(specs: list[_Saveable]) -> list[tuple[str, list[_Saveable]]]:
    per_device: dict[str, list[_Saveable]] = {}
    for spec in specs:
        per_device.setdefault(_canonical(spec.device), []).append(spec)
    return sorted(per_device.items(), key=lambda kv: kv[0])


def build_saver_graph(
    specs: list[_Saveable],
    *,
    reshape: bool,
    sharded: bool,
    max_to_keep: int,
    keep_checkpoint_every_n_hours: float,
    name: str | None,
    filename: str | None,
) -> SaverDef:
    """TF's BaseSaverBuilder._build_internal in graph mode."""
    with _ops.name_scope(name, "save"):
        filename_tensor = array_ops.placeholder_with_default(
            filename or "model", shape=(), name="filename"
        )
        filename_tensor = array_ops.placeholder_with_default(
            filename_tensor, shape=(), name="Const"
        )
        if sharded:
            per_device = _group_specs_by_device(specs)
            save_tensor = _sharded_save_op(filename_tensor, per_device)
            restore_op = _sharded_restore_ops(filename_tensor, per_device, reshape)
        else:
            save_tensor = _save_op(filename_tensor, specs)
            restore_op = _restore_ops(filename_tensor, specs, reshape, "restore_all")
    return SaverDef(
        filename_tensor_name=filename_tensor.name,
        save_tensor_name=save_tensor.name,
        restore_op_name=restore_op.name,
        max_to_keep=max_to_keep,
        sharded=sharded,
        keep_checkpoint_every_n_hours=keep_checkpoint_every_n_hours,
        version=V2,
    )


def _prepend_scope(saver_def: SaverDef, scope: str) -> SaverDef:
    """`saver_def` with its tensor and op names under `scope` (an import scope)."""
    scoped = SaverDef()
    scoped.CopyFrom(saver_def)
    scoped.filename_tensor_name = prepend_name_scope(saver_def.filename_tensor_name, scope)
    scoped.save_tensor_name = prepend_name_scope(saver_def.save_tensor_name, scope)
    scoped.restore_op_name = prepend_name_scope(saver_def.restore_op_name, scope)
    return scoped


# -- the Saver -----------------------------------------------------------------------------
class Saver:
    """tf.compat.v1.train.Saver over resource variables (V2 checkpoints)."""

    def __init__(
        self,
        var_list: Any = None,
        reshape: bool = False,
        sharded: bool = False,
        max_to_keep: int | None = 5,
        keep_checkpoint_every_n_hours: float = 10000.0,
        name: str | None = None,
        restore_sequentially: bool = False,
        saver_def: Any = None,
        builder: Any = None,
        defer_build: bool = False,
        allow_empty: bool = False,
        write_version: int = V2,
        pad_step_number: bool = False,
        save_relative_paths: bool = False,
        filename: str | None = None,
    ) -> None:
        if defer_build and var_list:
            raise ValueError(
                "If `var_list` is provided then build cannot be deferred. Either set "
                "defer_build=False or var_list=None."
            )
        if builder is not None:
            raise NotImplementedError(
                "Saver(builder=...): a custom saver builder is not supported; this client's "
                "Saver always builds TensorFlow's V2 SaveV2/RestoreV2 graph itself"
            )
        if write_version != V2:
            raise ValueError("Only the V2 checkpoint format is supported (write_version=2)")
        if saver_def is not None and saver_def.version != V2:
            raise ValueError(
                "Only the V2 checkpoint format is supported: the saver_def has version "
                f"{SaverDef.CheckpointFormatVersion.Name(saver_def.version)}"
            )
        self._var_list = var_list
        self._reshape = reshape
        self._sharded = sharded
        self._max_to_keep = max_to_keep or 0
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._allow_empty = allow_empty
        self._pad_step_number = pad_step_number
        self._save_relative_paths = save_relative_paths
        self._filename = filename
        self.saver_def: SaverDef | None = saver_def
        self._graph: _ops.Graph | None = None
        self._is_built = False
        self._is_empty = False
        self._last_checkpoints: list[tuple[str, float]] = []
        self._checkpoints_to_be_deleted: list[tuple[str, float]] = []
        self._next_checkpoint_time = time.time() + keep_checkpoint_every_n_hours * 3600
        if not defer_build:
            self.build()
        if self.saver_def is not None:
            self._check_saver_def()

    def build(self) -> None:
        """Add the save and restore ops to the default graph (once); a Saver given a
        SaverDef adds none, its names taken under `name` (the import scope) if set."""
        if self._is_built:
            return
        self._is_built = True
        if self.saver_def is not None:
            if self._name:
                self.saver_def = _prepend_scope(self.saver_def, self._name)
            self._check_saver_def()
            self._next_checkpoint_time = (
                time.time() + self.saver_def.keep_checkpoint_every_n_hours * 3600
            )
            return
        var_list = self._var_list
        if var_list is None:  # TF's variables._all_saveable_objects()
            var_list = global_variables() + _ops.get_collection(_ops.GraphKeys.SAVEABLE_OBJECTS)
        if not var_list:
            if self._allow_empty:
                self._is_empty = True
                return
            raise ValueError("No variables to save")
        self._graph = _ops.get_default_graph()
        self.saver_def = build_saver_graph(
            _specs(var_list),
            reshape=self._reshape,
            sharded=self._sharded,
            max_to_keep=self._max_to_keep,
            keep_checkpoint_every_n_hours=self._keep_checkpoint_every_n_hours,
            name=self._name,
            filename=self._filename,
        )

    def _check_saver_def(self) -> None:
        if not isinstance(self.saver_def, SaverDef):
            raise ValueError(f"saver_def must be a saver_pb2.SaverDef: {self.saver_def}")
        if not self.saver_def.save_tensor_name:
            raise ValueError(f"saver_def must specify the save_tensor_name: {self.saver_def}")
        if not self.saver_def.restore_op_name:
            raise ValueError(f"saver_def must specify the restore_op_name: {self.saver_def}")

    def as_saver_def(self) -> SaverDef | None:
        return self.saver_def

    def to_proto(self, export_scope: str | None = None) -> SaverDef | None:
        """This Saver's SaverDef with `export_scope` stripped from its names (None when
        they are outside it)."""
        if export_scope is None or self.saver_def is None:
            return self.saver_def
        names = (
            self.saver_def.filename_tensor_name,
            self.saver_def.save_tensor_name,
            self.saver_def.restore_op_name,
        )
        if not all(n.startswith(export_scope) for n in names):
            return None
        saver_def = SaverDef()
        saver_def.CopyFrom(self.saver_def)
        saver_def.filename_tensor_name = strip_name_scope(names[0], export_scope)
        saver_def.save_tensor_name = strip_name_scope(names[1], export_scope)
        saver_def.restore_op_name = strip_name_scope(names[2], export_scope)
        return saver_def

    @staticmethod
    def from_proto(saver_def: SaverDef, import_scope: str | None = None) -> Saver:
        return Saver(saver_def=saver_def, name=import_scope)

    def export_meta_graph(
        self,
        filename: str | os.PathLike[str] | None = None,
        collection_list: Any = None,
        as_text: bool = False,
        export_scope: str | None = None,
        clear_devices: bool = False,
        clear_extraneous_savers: bool = False,
        strip_default_attrs: bool = False,
        save_debug_info: bool = False,
    ) -> meta_graph.MetaGraphDef:
        """The default graph's meta graph with this Saver's SaverDef (TF's
        Saver.export_meta_graph)."""
        return export_meta_graph(
            filename=filename,
            graph_def=meta_graph.graph_def_with_shapes(_ops.get_default_graph()),
            saver_def=self.saver_def,
            collection_list=collection_list,
            as_text=as_text,
            export_scope=export_scope,
            clear_devices=clear_devices,
            clear_extraneous_savers=clear_extraneous_savers,
            strip_default_attrs=strip_default_attrs,
            save_debug_info=save_debug_info,
        )

    @property
    def last_checkpoints(self) -> list[str]:
        """Checkpoint prefixes not yet deleted, oldest first."""
        return [p for p, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints: list[str]) -> None:
        self._last_checkpoints = [(s, float("inf")) for s in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time: list[Any]) -> None:
        self._last_checkpoints = [(str(p), float(t)) for p, t in last_checkpoints_with_time]

    def recover_last_checkpoints(self, checkpoint_paths: list[str]) -> None:
        """Resume deletion bookkeeping from the prefixes (those still on disk) a previous
        run recorded, with their index files' mtimes."""
        self._last_checkpoints = [
            (p, os.path.getmtime(p + ".index"))
            for p in checkpoint_paths
            if os.path.exists(p + ".index")
        ]

    def save(
        self,
        sess: Any,
        save_path: str | os.PathLike[str],
        global_step: Any = None,
        latest_filename: str | None = None,
        meta_graph_suffix: str = "meta",
        write_meta_graph: bool = True,
        write_state: bool = True,
        strip_default_attrs: bool = False,
        save_debug_info: bool = False,
    ) -> str | None:
        """Run the save ops, then write `<prefix>.<meta_graph_suffix>` (the meta graph of
        `sess.graph`) if `write_meta_graph`; the checkpoint prefix written (None for an
        empty Saver)."""
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        latest_filename = latest_filename or "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        save_path = os.fsdecode(save_path)
        checkpoint_file = self._checkpoint_file(sess, save_path, global_step, latest_filename)
        model_checkpoint_path = self._save_checkpoint(
            sess, save_path, checkpoint_file, latest_filename, meta_graph_suffix, write_state
        )
        if write_meta_graph:
            filename = checkpoint_management.meta_graph_filename(checkpoint_file, meta_graph_suffix)
            with sess.graph.as_default():
                self.export_meta_graph(filename, strip_default_attrs=strip_default_attrs)
        return model_checkpoint_path

    def _save_checkpoint(
        self,
        sess: Any,
        save_path: str,
        checkpoint_file: str,
        latest_filename: str,
        meta_graph_suffix: str,
        write_state: bool,
    ) -> str | None:
        if self._is_empty or self.saver_def is None:
            return None
        parent = os.path.dirname(save_path)
        try:
            prefix = sess.run(
                self.saver_def.save_tensor_name,
                {self.saver_def.filename_tensor_name: checkpoint_file},
            )
        except (FailedPreconditionError, NotFoundError) as e:
            if parent and not os.path.isdir(parent):
                raise ValueError(
                    f"Parent directory of {save_path} doesn't exist, can't save."
                ) from e
            raise
        model_checkpoint_path = os.fsdecode(np.asarray(prefix, dtype=object).item())
        if write_state:
            self._record_last_checkpoint(model_checkpoint_path)
            checkpoint_management.update_checkpoint_state(
                parent,
                model_checkpoint_path,
                self.last_checkpoints,
                latest_filename,
                self._save_relative_paths,
            )
            self._maybe_delete_old_checkpoints(meta_graph_suffix)
        return model_checkpoint_path

    def _checkpoint_file(
        self, sess: Any, save_path: str, global_step: Any, latest_filename: str
    ) -> str:
        if global_step is None:
            if os.path.basename(save_path) == latest_filename and not self._sharded:
                raise ValueError(
                    f"'latest_filename' collides with 'save_path': '{latest_filename}' and "
                    f"'{save_path}'"
                )
            return save_path
        step = global_step if isinstance(global_step, int) else int(sess.run(global_step))
        return f"{save_path}-{step:08d}" if self._pad_step_number else f"{save_path}-{step}"

    def _record_last_checkpoint(self, path: str) -> None:
        """TF's _RecordLastCheckpoint: newest last; the oldest beyond max_to_keep queued."""
        assert self.saver_def is not None
        if not self.saver_def.max_to_keep:
            return
        self._last_checkpoints = [p for p in self._last_checkpoints if p[0] != path]
        self._last_checkpoints.append((path, time.time()))
        if len(self._last_checkpoints) > self.saver_def.max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self, meta_graph_suffix: str) -> None:
        """Delete the queued checkpoint unless keep_checkpoint_every_n_hours keeps it."""
        if not self._checkpoints_to_be_deleted:
            return
        assert self.saver_def is not None
        path, written = self._checkpoints_to_be_deleted.pop(0)
        if written > self._next_checkpoint_time:
            self._next_checkpoint_time += self.saver_def.keep_checkpoint_every_n_hours * 3600
            return
        try:
            checkpoint_management.remove_checkpoint(path, meta_graph_suffix)
        except OSError as e:
            _log.warning("Ignoring: %s", e)

    def restore(self, sess: Any, save_path: str | os.PathLike[str] | None) -> None:
        """Run the restore ops: every variable gets its value in the checkpoint."""
        if self._is_empty or self.saver_def is None:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        prefix = os.fsdecode(save_path)
        if not checkpoint_management.checkpoint_exists(prefix):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {prefix}")
        _log.info("Restoring parameters from %s", prefix)
        try:
            sess.run(self.saver_def.restore_op_name, {self.saver_def.filename_tensor_name: prefix})
        except NotFoundError as e:
            raise _restore_error(e, "a Variable name or other graph key that is missing") from e
        except InvalidArgumentError as e:
            raise _restore_error(e, "a mismatch between the current graph and the graph") from e


def _restore_error(err: OpError, cause: str) -> OpError:
    """TF's _wrap_restore_error_with_msg: the same error class, the likely cause first."""
    message = (
        f"Restoring from checkpoint failed. This is most likely due to {cause} from the "
        "checkpoint. Please ensure that you have not altered the graph expected based on the "
        f"checkpoint. Original error:\n\n{err.message}"
    )
    return type(err)(message, err.node_name)


# -- meta graphs ---------------------------------------------------------------------------
def export_meta_graph(
    filename: str | os.PathLike[str] | None = None,
    meta_info_def: Any = None,
    graph_def: Any = None,
    saver_def: SaverDef | None = None,
    collection_list: Any = None,
    as_text: bool = False,
    graph: _ops.Graph | None = None,
    export_scope: str | None = None,
    clear_devices: bool = False,
    clear_extraneous_savers: bool = False,
    strip_default_attrs: bool = False,
    save_debug_info: bool = False,
    **kwargs: Any,
) -> meta_graph.MetaGraphDef:
    """tf.compat.v1.train.export_meta_graph: the MetaGraphDef of `graph` (default: the
    default graph), written to `filename` (binary, or text if `as_text`) when given."""
    meta_graph_def, _ = meta_graph.export_scoped_meta_graph(
        filename=filename,
        meta_info_def=meta_info_def,
        graph_def=graph_def,
        saver_def=saver_def,
        collection_list=collection_list,
        as_text=as_text,
        graph=graph,
        export_scope=export_scope,
        clear_devices=clear_devices,
        clear_extraneous_savers=clear_extraneous_savers,
        strip_default_attrs=strip_default_attrs,
        save_debug_info=save_debug_info,
        **kwargs,
    )
    return meta_graph_def


def import_meta_graph(
    meta_graph_or_file: Any,
    clear_devices: bool = False,
    import_scope: str | None = None,
    **kwargs: Any,
) -> Saver | None:
    """tf.compat.v1.train.import_meta_graph: the meta graph's nodes and collections added
    to the default graph; a Saver running its SaverDef (or over its variables when it has
    none), None when there is nothing to restore."""
    return _import_meta_graph_with_return_elements(
        meta_graph_or_file, clear_devices, import_scope, **kwargs
    )[0]


def _import_meta_graph_with_return_elements(
    meta_graph_or_file: Any,
    clear_devices: bool = False,
    import_scope: str | None = None,
    return_elements: Any = None,
    **kwargs: Any,
) -> tuple[Saver | None, Any]:
    if isinstance(meta_graph_or_file, meta_graph.MetaGraphDef):
        meta_graph_def = meta_graph_or_file
    else:
        meta_graph_def = meta_graph.read_meta_graph_file(meta_graph_or_file)
    imported_vars, returned = meta_graph.import_scoped_meta_graph_with_return_elements(
        meta_graph_def,
        clear_devices=clear_devices,
        import_scope=import_scope,
        return_elements=return_elements,
        **kwargs,
    )
    return _saver_for_imported(meta_graph_def, import_scope, imported_vars), returned


def _saver_for_imported(
    meta_graph_def: meta_graph.MetaGraphDef,
    import_scope: str | None,
    imported_vars: dict[str, Variable],
) -> Saver | None:
    """TF's _create_saver_from_imported_meta_graph: the scope the import prepended is read
    off a variable's name."""
    if meta_graph_def.HasField("saver_def"):
        scope = import_scope
        if imported_vars:
            key, var = next(iter(imported_vars.items()))
            scope = var.name[: -len(key)]
        return Saver(saver_def=meta_graph_def.saver_def, name=scope)
    if global_variables(scope=import_scope):
        return Saver()
    _log.info("Saver not created because there are no variables in the graph to restore")
    return None


meta_graph.register_proto_function(
    "savers",
    SaverDef,
    lambda saver, export_scope=None: saver.to_proto(export_scope),
    Saver.from_proto,
)
