"""Tests of the wire contract in protos/: generated code is current, every message
mirrors TensorFlow's field for field, and TensorFlow's bytes round-trip through ours.

TensorFlow is the oracle: its Python modules expose the framework and config
descriptors; master.proto and worker.proto are not shipped as Python modules, so
their serialized descriptors are read out of libtensorflow_cc.so when present.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pathlib
import re
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import grpc
import numpy as np
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, unknown_fields
from google.protobuf.message import Message

from protos import (
    attr_value_pb2,
    config_pb2,
    device_attributes_pb2,
    error_codes_pb2,
    graph_pb2,
    master_pb2,
    tensor_pb2,
    tensorflow_server_pb2,
    types_pb2,
    worker_pb2,
)
from rpc import service_paths

REPO = pathlib.Path(__file__).resolve().parent.parent
OUR_PACKAGE = "dataflow"
TF_PACKAGE = "tensorflow"

# TensorFlow modules whose every message and enum we mirror.
TF_MODULES = (
    [
        f"tensorflow.core.framework.{name}_pb2"
        for name in [
            "allocation_description",
            "attr_value",
            "cost_graph",
            "device_attributes",
            "full_type",
            "function",
            "graph",
            "graph_debug_info",
            "node_def",
            "op_def",
            "resource_handle",
            "step_stats",
            "summary",
            "tensor",
            "tensor_description",
            "tensor_shape",
            "tensor_slice",
            "types",
            "variable",
            "versions",
        ]
    ]
    + [
        f"tensorflow.core.protobuf.{name}_pb2"
        for name in [
            "cluster",
            "config",
            "debug",
            "device_filters",
            "error_codes",
            "meta_graph",
            "named_tensor",
            "rewriter_config",
            "rpc_options",
            "saved_object_graph",
            "saver",
            "struct",
            "tensor_bundle",
            "tensorflow_server",
            "trackable_object_graph",
            "verifier_config",
        ]
    ]
    + [
        "tensorflow.core.util.event_pb2",
        "tensorflow.python.training.checkpoint_state_pb2",
        "tensorflow.core.example.example_pb2",
        "tensorflow.core.example.feature_pb2",
    ]
)
# Files TensorFlow keeps under xla/tsl and re-exports; found through the pool.
TF_POOL_FILES = [
    "xla/tsl/protobuf/error_codes.proto",
    "xla/tsl/protobuf/rpc_options.proto",
    "xla/tsl/protobuf/coordination_config.proto",
    "xla/tsl/protobuf/histogram.proto",
]
TF_SO_FILES = ["tensorflow/core/protobuf/master.proto", "tensorflow/core/protobuf/worker.proto"]


# --------------------------------------------------------------------------- codegen


def test_generated_code_is_current() -> None:
    pytest.importorskip("grpc_tools")
    result = subprocess.run(
        [sys.executable, str(REPO / "tools" / "gen_protos.py"), "--check"],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr


def test_every_proto_has_generated_module() -> None:
    for proto in (REPO / "protos").glob("*.proto"):
        importlib.import_module(f"protos.{proto.stem}_pb2")


def test_enum_values() -> None:
    assert types_pb2.DT_FLOAT == 1 and types_pb2.DT_FLOAT4_E2M1FN == 33
    for value in types_pb2.DataType.values():
        if value == types_pb2.DT_INVALID or value > 100:
            continue
        ref_name = types_pb2.DataType.Name(value) + "_REF"
        assert types_pb2.DataType.Value(ref_name) == value + 100
    assert "DT_INVALID_REF" not in types_pb2.DataType.keys()  # noqa: SIM118 (EnumTypeWrapper)
    assert error_codes_pb2.Code.DESCRIPTOR.full_name == "dataflow.error.Code"
    assert [error_codes_pb2.Code.Value(n) for n in ("OK", "ABORTED", "UNAUTHENTICATED")] == [
        0,
        10,
        16,
    ]
    assert all(c.value[0] == error_codes_pb2.Code.Value(c.name) for c in grpc.StatusCode)


# ------------------------------------------------------------------ descriptor helpers


def _load_tf() -> Any:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    return pytest.importorskip("tensorflow")


def _read_descriptor_bytes(data: bytes, start: int) -> bytes:
    """Cut one serialized FileDescriptorProto out of a binary, starting at `start`.

    Walks top-level tags and stops at the first one that cannot belong to a
    FileDescriptorProto (field numbers 1-15), e.g. the NUL ending the C array.
    """
    pos = start

    def varint() -> int:
        nonlocal pos
        shift = result = 0
        while True:
            byte = data[pos]
            pos += 1
            result |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return result

    end = start
    while pos < len(data):
        tag = varint()
        field, wire_type = tag >> 3, tag & 7
        if not 1 <= field <= 15 or wire_type not in (0, 2):
            break
        if wire_type == 2:
            length = varint()  # read before advancing: varint() moves pos itself
            pos += length
        else:
            varint()
        end = pos
    return data[start:end]


def _tf_so_file_protos() -> list[descriptor_pb2.FileDescriptorProto]:
    """master.proto / worker.proto as compiled into TensorFlow's C++ library."""
    spec = importlib.util.find_spec("tensorflow")
    assert spec is not None and spec.origin is not None
    lib = pathlib.Path(spec.origin).parent / "libtensorflow_cc.so.2"
    if not lib.exists():
        return []
    data = lib.read_bytes()
    found = []
    for name in TF_SO_FILES:
        encoded = name.encode()
        match = re.search(re.escape(b"\n" + bytes([len(encoded)]) + encoded), data)
        if match:
            proto = descriptor_pb2.FileDescriptorProto.FromString(
                _read_descriptor_bytes(data, match.start())
            )
            found.append(proto)
    return found


def _file_proto(file_descriptor: Any) -> descriptor_pb2.FileDescriptorProto:
    proto = descriptor_pb2.FileDescriptorProto()
    file_descriptor.CopyToProto(proto)
    return proto


@pytest.fixture(scope="module")
def tf_files() -> list[descriptor_pb2.FileDescriptorProto]:
    _load_tf()
    files = [_file_proto(importlib.import_module(m).DESCRIPTOR) for m in TF_MODULES]
    pool = descriptor_pool.Default()
    files += [_file_proto(pool.FindFileByName(name)) for name in TF_POOL_FILES]
    return files + _tf_so_file_protos()


@pytest.fixture(scope="module")
def tf_master_worker(tf_files: list[descriptor_pb2.FileDescriptorProto]) -> dict[str, Any]:
    """TensorFlow's own master/worker message classes, built in a private pool."""
    so_files = [f for f in tf_files if f.name in TF_SO_FILES]
    if len(so_files) != len(TF_SO_FILES):
        pytest.skip("master.proto/worker.proto descriptors not found in libtensorflow_cc")
    pool = descriptor_pool.DescriptorPool()
    added: set[str] = set()

    def add(proto: descriptor_pb2.FileDescriptorProto) -> None:
        if proto.name in added:
            return
        for dep in proto.dependency:
            add(_file_proto(descriptor_pool.Default().FindFileByName(dep)))
        pool.Add(proto)
        added.add(proto.name)

    for proto in so_files:
        add(proto)
    classes = {}
    for proto in so_files:
        for message in proto.message_type:
            full_name = f"{TF_PACKAGE}.{message.name}"
            classes[message.name] = message_factory.GetMessageClass(
                pool.FindMessageTypeByName(full_name)
            )
    return classes


Entry = descriptor_pb2.DescriptorProto | descriptor_pb2.EnumDescriptorProto


def _index(
    files: list[descriptor_pb2.FileDescriptorProto], package: str
) -> dict[str, tuple[Entry, str]]:
    """Every message and enum (nested included) by name relative to `package`.

    TensorFlow's `tensorflow.error.Code` becomes `error.Code`, as does our
    `dataflow.error.Code`. Values are (descriptor proto, file syntax).
    """
    index: dict[str, tuple[Entry, str]] = {}

    def walk_message(prefix: str, message: descriptor_pb2.DescriptorProto, syntax: str) -> None:
        name = prefix + message.name
        index[name] = (message, syntax)
        for nested in message.nested_type:
            walk_message(name + ".", nested, syntax)
        for enum in message.enum_type:
            index[f"{name}.{enum.name}"] = (enum, syntax)

    for file in files:
        assert file.package == package or file.package.startswith(package + "."), file.name
        prefix = file.package[len(package) + 1 :]
        prefix = prefix + "." if prefix else ""
        for message in file.message_type:
            walk_message(prefix, message, file.syntax)
        for enum in file.enum_type:
            index[prefix + enum.name] = (enum, file.syntax)
    return index


_SCALAR_PACKABLE = {
    getattr(descriptor_pb2.FieldDescriptorProto, f"TYPE_{t}")
    for t in [
        "DOUBLE",
        "FLOAT",
        "INT64",
        "UINT64",
        "INT32",
        "FIXED64",
        "FIXED32",
        "BOOL",
        "UINT32",
        "ENUM",
        "SFIXED32",
        "SFIXED64",
        "SINT32",
        "SINT64",
    ]
}


def _packed(field: descriptor_pb2.FieldDescriptorProto, syntax: str) -> bool:
    if field.label != field.LABEL_REPEATED or field.type not in _SCALAR_PACKABLE:
        return False
    if field.options.HasField("packed"):
        return field.options.packed
    return syntax == "proto3"


def _type_name(name: str) -> str:
    for package in (TF_PACKAGE, OUR_PACKAGE):
        if name.startswith(f".{package}."):
            return name[len(package) + 2 :]
    return name


def _compare_field(
    where: str,
    ours: descriptor_pb2.FieldDescriptorProto,
    theirs: descriptor_pb2.FieldDescriptorProto,
    our_msg: descriptor_pb2.DescriptorProto,
    their_msg: descriptor_pb2.DescriptorProto,
    syntaxes: tuple[str, str],
) -> Iterator[str]:
    if ours.name != theirs.name:
        yield f"{where}: name {ours.name!r} != TF {theirs.name!r}"
    if ours.type != theirs.type:
        yield f"{where}: type {ours.type} != TF {theirs.type}"
    if ours.label != theirs.label:
        yield f"{where}: label {ours.label} != TF {theirs.label}"
    if _type_name(ours.type_name) != _type_name(theirs.type_name):
        yield f"{where}: type {ours.type_name} != TF {theirs.type_name}"
    if ours.proto3_optional != theirs.proto3_optional:
        yield f"{where}: proto3 optional {ours.proto3_optional} != TF {theirs.proto3_optional}"
    if _packed(ours, syntaxes[0]) != _packed(theirs, syntaxes[1]):
        yield f"{where}: packed encoding differs from TF"
    our_oneof = our_msg.oneof_decl[ours.oneof_index].name if ours.HasField("oneof_index") else None
    their_oneof = (
        their_msg.oneof_decl[theirs.oneof_index].name if theirs.HasField("oneof_index") else None
    )
    if our_oneof != their_oneof:
        yield f"{where}: oneof {our_oneof} != TF {their_oneof}"


def _compare(name: str, ours: tuple[Entry, str], theirs: tuple[Entry, str]) -> Iterator[str]:
    our_entry, their_entry = ours[0], theirs[0]
    if type(our_entry) is not type(their_entry):
        yield f"{name}: message/enum kind differs from TF"
        return
    if isinstance(our_entry, descriptor_pb2.EnumDescriptorProto):
        assert isinstance(their_entry, descriptor_pb2.EnumDescriptorProto)
        our_values = {v.name: v.number for v in our_entry.value}
        their_values = {v.name: v.number for v in their_entry.value}
        for value in sorted(our_values.keys() | their_values.keys()):
            if our_values.get(value) != their_values.get(value):
                got, want = our_values.get(value), their_values.get(value)
                yield f"{name}.{value}: {got} != TF {want}"
        return
    assert isinstance(our_entry, descriptor_pb2.DescriptorProto)
    assert isinstance(their_entry, descriptor_pb2.DescriptorProto)
    if our_entry.options.map_entry != their_entry.options.map_entry:
        yield f"{name}: map-entry flag differs from TF"
    our_fields = {f.number: f for f in our_entry.field}
    their_fields = {f.number: f for f in their_entry.field}
    for number in sorted(our_fields.keys() | their_fields.keys()):
        where = f"{name}.{(our_fields.get(number) or their_fields[number]).name}(#{number})"
        if number not in our_fields:
            yield f"{where}: missing in ours"
        elif number not in their_fields:
            yield f"{where}: not in TF"
        else:
            yield from _compare_field(
                where,
                our_fields[number],
                their_fields[number],
                our_entry,
                their_entry,
                (ours[1], theirs[1]),
            )


def _our_files() -> list[descriptor_pb2.FileDescriptorProto]:
    return [
        _file_proto(importlib.import_module(f"protos.{p.stem}_pb2").DESCRIPTOR)
        for p in sorted((REPO / "protos").glob("*.proto"))
    ]


# ----------------------------------------------------------------- descriptor walk


def test_descriptors_match_tensorflow(tf_files: list[descriptor_pb2.FileDescriptorProto]) -> None:
    """Every TF message/enum we mirror exists in ours with identical fields and values."""
    theirs = _index(tf_files, TF_PACKAGE)
    ours = _index(_our_files(), OUR_PACKAGE)
    problems = [f"{name}: missing in ours" for name in sorted(theirs.keys() - ours.keys())]
    for name in sorted(theirs.keys() & ours.keys()):
        problems.extend(_compare(name, ours[name], theirs[name]))
    assert not problems, "\n".join(problems)


def test_descriptor_walk_reports_mismatches(
    tf_files: list[descriptor_pb2.FileDescriptorProto],
) -> None:
    """The comparison itself notices a renumbered field, a type change and an enum value."""
    theirs = _index(tf_files, TF_PACKAGE)
    ours = _index(_our_files(), OUR_PACKAGE)
    message = descriptor_pb2.DescriptorProto()
    message.CopyFrom(ours["DeviceAttributes"][0])
    incarnation = next(f for f in message.field if f.name == "incarnation")
    incarnation.type = incarnation.TYPE_UINT64
    next(f for f in message.field if f.name == "name").number = 3
    problems = list(_compare("DeviceAttributes", (message, "proto3"), theirs["DeviceAttributes"]))
    assert any("incarnation(#6): type" in p for p in problems), problems
    assert any("(#3): not in TF" in p for p in problems), problems
    assert any("(#1): missing in ours" in p for p in problems), problems
    enum = descriptor_pb2.EnumDescriptorProto()
    enum.CopyFrom(ours["DataType"][0])
    enum.value[1].number = 99
    assert list(_compare("DataType", (enum, "proto3"), theirs["DataType"]))


def test_descriptor_walk_covers_master_and_worker(
    tf_files: list[descriptor_pb2.FileDescriptorProto],
) -> None:
    names = {f.name for f in tf_files}
    missing = [n for n in TF_SO_FILES if n not in names]
    if missing:
        pytest.skip(f"not found in libtensorflow_cc: {missing}")
    theirs = _index(tf_files, TF_PACKAGE)
    for name in ("RunStepRequest", "RunGraphRequest", "RecvTensorResponse", "ExecutorOpts"):
        assert name in theirs


def test_ours_has_nothing_tensorflow_lacks(
    tf_files: list[descriptor_pb2.FileDescriptorProto],
) -> None:
    theirs = _index(tf_files, TF_PACKAGE)
    if not any(f.name in TF_SO_FILES for f in tf_files):
        pytest.skip("master/worker descriptors unavailable")
    ours = _index(_our_files(), OUR_PACKAGE)
    # The payload container lives in a TF file that is not introspectable from Python.
    extra = sorted(
        n for n in ours.keys() - theirs.keys() if not n.startswith("distributed_runtime.")
    )
    assert not extra, extra


def test_service_methods_follow_tensorflow() -> None:
    assert list(service_paths.MASTER_METHODS) == [
        "CreateSession",
        "ExtendSession",
        "PartialRunSetup",
        "RunStep",
        "CloseSession",
        "ListDevices",
        "Reset",
        "MakeCallable",
        "RunCallable",
        "ReleaseCallable",
    ]
    # Order of TensorFlow's GrpcWorkerMethod enum.
    assert list(service_paths.WORKER_METHODS) == [
        "GetStatus",
        "CreateWorkerSession",
        "DeleteWorkerSession",
        "RegisterGraph",
        "DeregisterGraph",
        "RunGraph",
        "CleanupGraph",
        "CleanupAll",
        "RecvTensor",
        "RecvBuf",
        "Logging",
        "Tracing",
        "CompleteGroup",
        "CompleteInstance",
        "GetStepSequence",
        "MarkRecvFinished",
    ]
    for name, (request, response) in service_paths.MASTER_METHODS.items():
        assert request.DESCRIPTOR.name == f"{name}Request"
        assert response.DESCRIPTOR.name == f"{name}Response"
    for name, (request, response) in service_paths.WORKER_METHODS.items():
        assert request.DESCRIPTOR.name == f"{name}Request"
        assert response.DESCRIPTOR.name == f"{name}Response"


# ------------------------------------------------------------------ byte round trips


def _assert_no_unknown_fields(message: Message, path: str = "") -> None:
    assert len(unknown_fields.UnknownFieldSet(message)) == 0, f"unknown fields at {path or '.'}"
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            value_field = field.message_type.fields_by_name["value"]
            if value_field.message_type is not None:
                for key, item in value.items():
                    _assert_no_unknown_fields(item, f"{path}.{field.name}[{key!r}]")
        elif field.is_repeated:
            for i, item in enumerate(value):
                _assert_no_unknown_fields(item, f"{path}.{field.name}[{i}]")
        else:
            _assert_no_unknown_fields(value, f"{path}.{field.name}")


def _round_trip(tf_message: Message, our_class: type[Message]) -> Message:
    """Parse TF's bytes with ours, re-serialize, and check TF reads back the same."""
    data = tf_message.SerializeToString()
    ours = our_class.FromString(data)
    _assert_no_unknown_fields(ours)
    back = type(tf_message).FromString(ours.SerializeToString())
    assert back == tf_message
    assert ours.SerializeToString(deterministic=True) == tf_message.SerializeToString(
        deterministic=True
    )
    return ours


def _small_graph(tf: Any) -> Any:
    graph = tf.Graph()
    with graph.as_default():
        scalar = tf.constant(2.5, name="scalar")  # typed float_val
        matrix = tf.constant(np.arange(6, dtype=np.float32).reshape(2, 3), name="matrix")
        tf.constant(["ab", "", "xyz"], name="strings")
        tf.constant(7, shape=[4], dtype=tf.int64, name="splat")
        x = tf.compat.v1.placeholder(tf.float32, shape=[None, 3], name="x")
        total = tf.add(tf.add(x, matrix), scalar, name="total")
        ref_var = tf.compat.v1.Variable(
            np.ones((2, 3), np.float32), name="ref_var", use_resource=False
        )
        res_var = tf.compat.v1.Variable(np.zeros((2,), np.int32), name="res_var")
        tf.compat.v1.global_variables_initializer()

        @tf.function
        def scaled(v: Any) -> Any:
            return v * 3.0 + 1.0

        out = tf.identity(scaled(total) + ref_var, name="out")
        with tf.control_dependencies([out]):
            tf.no_op(name="after")
        del res_var
    return graph


def test_graph_def_round_trip() -> None:
    tf = _load_tf()
    graph_def = _small_graph(tf).as_graph_def()
    assert graph_def.library.function, "expected a function library"
    ours = _round_trip(graph_def, graph_pb2.GraphDef)
    assert isinstance(ours, graph_pb2.GraphDef)
    nodes = {n.name: n for n in ours.node}
    assert nodes["scalar"].attr["value"].tensor.float_val == [2.5]
    matrix = nodes["matrix"].attr["value"].tensor
    assert np.frombuffer(matrix.tensor_content, np.float32).tolist() == [0, 1, 2, 3, 4, 5]
    assert [d.size for d in matrix.tensor_shape.dim] == [2, 3]
    assert nodes["strings"].attr["value"].tensor.string_val == [b"ab", b"", b"xyz"]
    assert nodes["x"].attr["shape"].shape.dim[0].size == -1
    assert nodes["x"].attr["dtype"].type == types_pb2.DT_FLOAT
    assert nodes["ref_var"].op == "VariableV2"
    assert nodes["total"].op == "AddV2"
    assert nodes["after"].input == ["^out"]
    assert ours.versions.producer == graph_def.versions.producer > 0
    call = next(n for n in ours.node if n.op.endswith("PartitionedCall"))
    function_names = {f.signature.name for f in ours.library.function}
    assert call.attr["f"].func.name in function_names


def test_every_dtype_tensor_round_trip() -> None:
    tf = _load_tf()
    tested = []
    for value in types_pb2.DataType.values():
        if value == types_pb2.DT_INVALID or value > 100:
            continue
        try:
            dtype = tf.dtypes.as_dtype(value)
        except (TypeError, ValueError):
            continue
        if dtype in (tf.resource, tf.variant):
            continue
        forms = []
        if dtype == tf.string:
            forms = [np.array([b"a", b"bc"], dtype=object), b"scalar"]
        else:
            np_type = dtype.as_numpy_dtype
            forms = [np.arange(6).reshape(2, 3).astype(np_type), np.array(1, np_type)]
        for form in forms:
            try:
                proto = tf.make_tensor_proto(form, dtype=dtype)
            except (TypeError, ValueError):
                continue
            ours = _round_trip(proto, tensor_pb2.TensorProto)
            assert isinstance(ours, tensor_pb2.TensorProto)
            assert ours.dtype == value
            tested.append(types_pb2.DataType.Name(value))
    for must in ("DT_FLOAT", "DT_HALF", "DT_BFLOAT16", "DT_COMPLEX128", "DT_STRING", "DT_UINT64"):
        assert must in tested

    # Resource and variant elements are built by hand.
    from tensorflow.core.framework import tensor_pb2 as tf_tensor_pb2

    proto = tf_tensor_pb2.TensorProto(dtype=tf.resource.as_datatype_enum)
    handle = proto.resource_handle_val.add(
        device="/job:w/replica:0/task:0/device:CPU:0", container="c", name="v", hash_code=2**63
    )
    handle.dtypes_and_shapes.add(dtype=1).shape.dim.add(size=3)
    variant = proto.variant_val.add(type_name="T", metadata=b"\x00\x01")
    variant.tensors.add(dtype=3, int_val=[1, 2])
    proto.float8_val = b"\x01\x02"
    ours = _round_trip(proto, tensor_pb2.TensorProto)
    assert isinstance(ours, tensor_pb2.TensorProto)
    assert ours.resource_handle_val[0].hash_code == 2**63


def test_config_proto_round_trip() -> None:
    tf = _load_tf()
    from tensorflow.core.protobuf import config_pb2 as tf_config_pb2
    from tensorflow.core.protobuf import rewriter_config_pb2

    config = tf_config_pb2.ConfigProto(
        device_count={"CPU": 2, "GPU": 0},
        intra_op_parallelism_threads=2,
        inter_op_parallelism_threads=-1,
        allow_soft_placement=True,
        log_device_placement=True,
        operation_timeout_in_ms=12345,
        device_filters=["/job:ps", "/job:worker/task:3"],
        isolate_session_state=True,
        share_cluster_devices_in_session=True,
    )
    config.session_inter_op_thread_pool.add(num_threads=3, global_name="pool")
    config.gpu_options.allow_growth = True
    config.gpu_options.experimental.virtual_devices.add(memory_limit_mb=[1.5], priority=[-1])
    config.graph_options.optimizer_options.opt_level = tf_config_pb2.OptimizerOptions.L0
    config.graph_options.optimizer_options.global_jit_level = tf_config_pb2.OptimizerOptions.OFF
    config.graph_options.infer_shapes = True
    rewrite = config.graph_options.rewrite_options
    rewrite.constant_folding = rewriter_config_pb2.RewriterConfig.OFF
    rewrite.memory_optimization = rewriter_config_pb2.RewriterConfig.SCHEDULING_HEURISTICS
    rewrite.optimizers.append("pruning")
    custom = rewrite.custom_optimizers.add(name="custom")
    custom.parameter_map["k"].i = -3
    rewrite.post_optimization_verifier_config.structure_verifier = 2
    config.rpc_options.compression_algorithm = "gzip"
    config.rpc_options.cache_rpc_response = True
    config.cluster_def.MergeFrom(
        tf.train.ClusterSpec({"worker": ["a:1", "b:2"], "ps": ["c:3"]}).as_cluster_def()
    )
    config.experimental.session_metadata.name = "s"
    config.experimental.session_metadata.version = 7
    config.experimental.mlir_bridge_rollout = 2
    config.experimental.disable_optimize_for_static_graph = True
    config.experimental.coordination_config.service_type = "standalone"
    config.experimental.coordination_config.coordinated_job_list.add(name="worker", num_tasks=2)
    ours = _round_trip(config, config_pb2.ConfigProto)
    assert isinstance(ours, config_pb2.ConfigProto)
    assert dict(ours.device_count) == {"CPU": 2, "GPU": 0}
    assert ours.operation_timeout_in_ms == 12345
    assert ours.inter_op_parallelism_threads == -1
    assert ours.graph_options.optimizer_options.opt_level == config_pb2.OptimizerOptions.L0
    assert ours.graph_options.rewrite_options.custom_optimizers[0].parameter_map["k"].i == -3
    jobs = {job.name: dict(job.tasks) for job in ours.cluster_def.job}
    assert jobs == {"worker": {0: "a:1", 1: "b:2"}, "ps": {0: "c:3"}}

    from tensorflow.core.protobuf import tensorflow_server_pb2 as tf_server_pb2

    server_def = tf_server_pb2.ServerDef(
        cluster=config.cluster_def, job_name="worker", task_index=1, protocol="grpc", port=0
    )
    server_def.default_session_config.CopyFrom(config)
    server_def.cluster_device_filters.jobs.add(name="worker").tasks[1].device_filters.append("x")
    _round_trip(server_def, tensorflow_server_pb2.ServerDef)


def test_run_options_and_metadata_round_trip() -> None:
    tf = _load_tf()
    from tensorflow.core.protobuf import config_pb2 as tf_config_pb2

    options = tf_config_pb2.RunOptions(
        trace_level=tf_config_pb2.RunOptions.FULL_TRACE,
        timeout_in_ms=5000,
        inter_op_thread_pool=1,
        output_partition_graphs=True,
        report_tensor_allocations_upon_oom=True,
    )
    options.debug_options.debug_tensor_watch_opts.add(
        node_name="n", output_slot=1, debug_ops=["DebugIdentity"], debug_urls=["file:///tmp"]
    )
    options.experimental.collective_graph_key = -9
    options.experimental.run_handler_pool_options.priority = 4
    ours = _round_trip(options, config_pb2.RunOptions)
    assert isinstance(ours, config_pb2.RunOptions)
    assert ours.trace_level == config_pb2.RunOptions.FULL_TRACE

    # A real traced run fills StepStats, tensor and allocation descriptions.
    graph = tf.Graph()
    with graph.as_default():
        a = tf.constant(np.ones((2, 2), np.float32))
        b = tf.matmul(a, a, name="mm")
    metadata = tf_config_pb2.RunMetadata()
    with tf.compat.v1.Session(graph=graph) as session:
        session.run(b, options=options_without_debug(tf_config_pb2), run_metadata=metadata)
    assert metadata.step_stats.dev_stats
    metadata.cost_graph.node.add(name="mm", id=1).output_info.add(size=16, dtype=1)
    metadata.function_graphs.add().pre_optimization_graph.CopyFrom(graph.as_graph_def())
    ours_metadata = _round_trip(metadata, config_pb2.RunMetadata)
    assert isinstance(ours_metadata, config_pb2.RunMetadata)
    assert ours_metadata.partition_graphs


def options_without_debug(tf_config_pb2: Any) -> Message:
    return tf_config_pb2.RunOptions(
        trace_level=tf_config_pb2.RunOptions.FULL_TRACE, output_partition_graphs=True
    )


def test_device_attributes_round_trip() -> None:
    _load_tf()
    from tensorflow.core.framework import device_attributes_pb2 as tf_device_pb2

    attrs = tf_device_pb2.DeviceAttributes(
        name="/job:worker/replica:0/task:1/device:CPU:0",
        device_type="CPU",
        memory_limit=268435456,
        incarnation=0xFEDCBA9876543210,
        physical_device_desc="desc",
        xla_global_id=-1,
    )
    attrs.locality.bus_id = 1
    attrs.locality.links.link.add(device_id=2, type="nvlink", strength=3)
    ours = _round_trip(attrs, device_attributes_pb2.DeviceAttributes)
    assert isinstance(ours, device_attributes_pb2.DeviceAttributes)
    assert ours.incarnation == 0xFEDCBA9876543210
    assert ours.xla_global_id == -1
    # fixed64: tag 0x31 then 8 little-endian bytes.
    data = device_attributes_pb2.DeviceAttributes(incarnation=1).SerializeToString()
    assert data == b"\x31" + (1).to_bytes(8, "little")


def test_master_and_worker_messages_round_trip(tf_master_worker: dict[str, Any]) -> None:
    tf = _load_tf()
    tf_classes = tf_master_worker
    graph_def = _small_graph(tf).as_graph_def()
    tensor = tf.make_tensor_proto(np.arange(4, dtype=np.float32))
    ours_by_name = {**vars(master_pb2), **vars(worker_pb2)}

    def check(message_name: str, /, **fields: Any) -> Message:
        message = tf_classes[message_name]()
        for key, value in fields.items():
            target = getattr(message, key)
            # Classes from the private pool differ from TF's: copy through bytes.
            if isinstance(value, list) and value and isinstance(value[0], Message):
                for item in value:
                    target.add().MergeFromString(item.SerializeToString())
            elif isinstance(value, list):
                target.extend(value)
            elif isinstance(value, Message):
                target.MergeFromString(value.SerializeToString())
            else:
                setattr(message, key, value)
        return _round_trip(message, ours_by_name[message_name])

    from tensorflow.core.protobuf import config_pb2 as tf_config_pb2
    from tensorflow.core.protobuf import named_tensor_pb2 as tf_named_pb2

    named = tf_named_pb2.NamedTensorProto(name="a:0", tensor=tensor)
    check("CreateSessionRequest", graph_def=graph_def, target="grpc://h:1")
    check("CreateSessionResponse", session_handle="47ae172d191badd7", graph_version=3)
    response = check("ExtendSessionResponse", new_graph_version=5)
    assert isinstance(response, master_pb2.ExtendSessionResponse)
    assert response.SerializeToString() == b"\x20\x05"
    request = check(
        "RunStepRequest",
        session_handle="h",
        feed=[named],
        fetch=["c:0"],
        target=["t"],
        options=tf_config_pb2.RunOptions(timeout_in_ms=3),
        store_errors_in_response_body=True,
        request_id=-(2**62),
    )
    assert isinstance(request, master_pb2.RunStepRequest) and request.request_id == -(2**62)
    check("RunStepResponse", tensor=[named], status_code=5, status_error_message="not found")
    check("RunCallableRequest", session_handle="h", handle=1, feed=[tensor], request_id=-1)
    check(
        "RunGraphRequest",
        session_handle="h",
        create_worker_session_called=True,
        graph_handle="g",
        step_id=2**56 + 1,
        send=[named],
        recv_key=["k"],
        is_partial=True,
        request_id=-5,
    )
    check("RunGraphResponse", recv=[named], partition_graph=[graph_def], status_code=10)
    recv = check("RecvTensorResponse", tensor=tensor, is_dead=True, require_ack=True)
    assert isinstance(recv, worker_pb2.RecvTensorResponse) and recv.is_dead
    check("RegisterGraphRequest", session_handle="h", graph_def=graph_def, collective_graph_key=4)
    check("RecvBufRequest", buf_ptr=2**64 - 1, src_incarnation=2**64 - 2, request_id=-3)
    check("CompleteInstanceRequest", name="n", data_type=1, subdiv_offset=[0, -1], step_id=9)


def test_recv_tensor_response_tensor_written_last_parses() -> None:
    """TF writes field 1 after the scalar fields; order must not matter."""
    tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_content=b"\x00\x00\x80?")
    tensor.tensor_shape.dim.add(size=1)
    body = tensor.SerializeToString()
    data = b"\x10\x01\x18\x07" + b"\x0a" + bytes([len(body)]) + body
    response = worker_pb2.RecvTensorResponse.FromString(data)
    assert response.is_dead and response.send_start_micros == 7
    assert np.frombuffer(response.tensor.tensor_content, np.float32).tolist() == [1.0]


# --------------------------------------------------------------- service registration


class _EchoMaster:
    def CreateSession(self, request: Any, context: Any) -> Any:
        return master_pb2.CreateSessionResponse(session_handle=request.target, graph_version=1)


class _EchoWorker:
    def GetStatus(self, request: Any, context: Any) -> Any:
        response = worker_pb2.GetStatusResponse()
        response.device_attributes.add(name="/job:w/replica:0/task:0/device:CPU:0")
        return response


def test_servicers_answer_under_both_service_names() -> None:
    from concurrent import futures

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    service_paths.add_master_servicer(server, _EchoMaster())
    service_paths.add_worker_servicer(server, _EchoWorker())
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            for name in service_paths.MASTER_SERVICE_NAMES:
                stub = service_paths.master_stub(channel, name)
                reply = stub.CreateSession(master_pb2.CreateSessionRequest(target=name), timeout=10)
                assert reply.session_handle == name
            raw = channel.unary_unary("/tensorflow.MasterService/CreateSession")
            reply_bytes = raw(master_pb2.CreateSessionRequest(target="x").SerializeToString())
            assert master_pb2.CreateSessionResponse.FromString(reply_bytes).graph_version == 1
            for name in service_paths.WORKER_SERVICE_NAMES:
                worker = service_paths.worker_stub(channel, name)
                status = worker.GetStatus(worker_pb2.GetStatusRequest(), timeout=10)
                assert status.device_attributes[0].name.endswith("CPU:0")
            with pytest.raises(grpc.RpcError) as raised:
                service_paths.master_stub(channel).RunStep(master_pb2.RunStepRequest(), timeout=10)
            assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED
    finally:
        server.stop(None).wait()


def test_attr_value_oneof() -> None:
    value = attr_value_pb2.AttrValue(i=-1)
    assert value.WhichOneof("value") == "i"
    assert value.SerializeToString() == b"\x18" + b"\xff" * 9 + b"\x01"
