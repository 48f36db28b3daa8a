"""Tests for the placer: requests, colocation, resource/ref edges, heuristics, soft
placement, defaults and TF's error messages."""

from __future__ import annotations

import logging

import pytest

import common.ops  # noqa: F401  (registers the ops used below)
from common.dtypes import DataType
from common.errors import Code, OpError
from common.graph import algorithm
from common.graph.graph import Graph
from common.placer import place
from common.subgraph import attr_type, parse_tensor_name
from protos import attr_value_pb2

F = DataType.DT_FLOAT


def dev(task: int, k: int = 0, kind: str = "CPU", job: str = "worker") -> str:
    return f"/job:{job}/replica:0/task:{task}/device:{kind}:{k}"


DEVICES = [dev(1, 1), dev(1, 0), dev(0, 1), dev(0, 0)]  # deliberately unsorted
_ATTRS = {
    "Const": {"dtype": attr_type(F)},
    "AddV2": {"T": attr_type(F)},
    "Identity": {"T": attr_type(F)},
    "VariableV2": {"dtype": attr_type(F)},
    "Assign": {"T": attr_type(F)},
    "VarHandleOp": {"dtype": attr_type(F)},
    "ReadVariableOp": {"dtype": attr_type(F)},
    "Shape": {"T": attr_type(F), "out_type": attr_type(DataType.DT_INT32)},
    "NoOp": {},
}


def build(spec: list[tuple]) -> Graph:
    """Nodes (name, op, inputs, requested device[, colocation names])."""
    g = Graph()
    for name, op, _, device, *coloc in spec:
        attrs = dict(_ATTRS[op])
        if coloc:
            attrs["_class"] = attr_value_pb2.AttrValue(
                list=attr_value_pb2.AttrValue.ListValue(s=[f"loc:@{c}".encode() for c in coloc])
            )
        g.add_node(name, op, attrs, device)
    for name, _, inputs, *_ in spec:
        dst, slot = g.node(name), 0
        for inp in inputs:
            src, idx = parse_tensor_name(inp)
            if idx < 0:
                g.add_control_edge(g.node(src), dst)
            else:
                g.add_edge(g.node(src), idx, dst, slot)
                slot += 1
    algorithm.fixup_source_and_sink_edges(g)
    return g


def placed(g: Graph) -> dict[str, str]:
    return {n.name: n.assigned_device for n in g.op_nodes()}


def cpu_only(op: str, device_type: str) -> bool:
    return device_type == "CPU"


def test_explicit_full_and_partial_requests():
    g = build(
        [
            ("a", "Const", [], dev(1, 1)),
            ("b", "Const", [], "/job:worker/task:1"),
            ("c", "Const", [], "/device:CPU:1"),
            ("d", "Const", [], "/cpu:0"),
            ("e", "AddV2", ["a", "b"], ""),
        ]
    )
    place(g, DEVICES, has_kernel=cpu_only)
    assert placed(g) == {
        "a": dev(1, 1),
        "b": dev(1, 0),  # first device of the matching task
        "c": dev(0, 1),  # first matching device in sorted order
        "d": dev(0, 0),
        "e": dev(0, 0),  # unconstrained: the first device
    }


def test_default_device_for_unconstrained_and_partial_nodes():
    g = build(
        [
            ("a", "Const", [], ""),
            ("b", "Const", [], "/device:CPU:1"),
            ("c", "AddV2", ["a", "b"], ""),
            ("d", "NoOp", [], "/job:worker/task:0"),
        ]
    )
    place(g, DEVICES, default_device="/job:worker/task:1", has_kernel=cpu_only)
    assert placed(g) == {"a": dev(1, 0), "b": dev(1, 1), "c": dev(1, 0), "d": dev(0, 0)}


def test_colocation_class_attr_merges_requests():
    g = build(
        [
            ("v", "Const", [], "/job:worker/task:1"),
            ("w", "Const", [], "/device:CPU:1", "v"),
            ("x", "Const", [], "", "v"),
            ("y", "Const", [], "", "nonexistent"),
            ("z", "Const", [], dev(0, 1), "nonexistent"),
        ]
    )
    place(g, DEVICES, has_kernel=cpu_only)
    assert placed(g) == {
        "v": dev(1, 1),
        "w": dev(1, 1),
        "x": dev(1, 1),
        "y": dev(0, 1),
        "z": dev(0, 1),
    }


def test_ref_and_resource_consumers_follow_the_variable():
    g = build(
        [
            ("init", "Const", [], dev(0, 1)),
            ("var", "VariableV2", [], dev(1, 1)),
            ("assign", "Assign", ["var", "init"], ""),
            ("read", "Identity", ["var"], dev(0, 0)),  # Identity dereferences: not colocated
            ("h", "VarHandleOp", [], dev(1, 0)),
            ("r", "ReadVariableOp", ["h"], ""),
            ("r2", "ReadVariableOp", ["h"], "/device:CPU:0"),
        ]
    )
    place(g, DEVICES, has_kernel=cpu_only)
    p = placed(g)
    assert p["assign"] == dev(1, 1)
    assert p["read"] == dev(0, 0)
    assert p["r"] == p["r2"] == dev(1, 0)


def test_metadata_op_follows_its_input():
    g = build(
        [
            ("a", "Const", [], dev(1, 1)),
            ("b", "Identity", ["a"], dev(1, 0)),
            ("s", "Shape", ["b"], ""),
        ]
    )
    place(g, DEVICES, has_kernel=cpu_only)
    assert placed(g)["s"] == dev(1, 0)


def test_generator_follows_consumers_when_they_agree():
    g = build(
        [
            ("c1", "Const", [], ""),
            ("c2", "Const", [], ""),
            ("x", "Identity", ["c1"], dev(1, 1)),
            ("y", "Identity", ["c1"], dev(1, 1)),
            ("z", "Identity", ["c2"], dev(1, 0)),
            ("u", "Identity", ["c2"], dev(0, 1)),
        ]
    )
    place(g, DEVICES, has_kernel=cpu_only)
    p = placed(g)
    assert p["c1"] == dev(1, 1)  # both consumers on one device
    assert p["c2"] == dev(0, 0)  # consumers disagree: the first device


def test_preassigned_node_keeps_device_and_pulls_its_group():
    g = build([("a", "Const", [], ""), ("b", "Const", [], "", "a")])
    g.node("a").assigned_device = dev(1, 1)
    place(g, DEVICES, has_kernel=cpu_only)
    assert placed(g) == {"a": dev(1, 1), "b": dev(1, 1)}


def test_soft_placement_falls_back_to_same_task_then_default():
    g = build(
        [
            ("a", "Const", [], "/job:worker/task:1/device:GPU:0"),
            ("b", "Const", [], "/job:ps/task:0"),
        ]
    )
    place(
        g,
        DEVICES,
        allow_soft_placement=True,
        default_device="/job:worker/task:0/cpu:1",
        has_kernel=cpu_only,
    )
    assert placed(g) == {"a": dev(1, 0), "b": dev(0, 1)}


def test_soft_placement_skips_device_without_kernel():
    g = build([("a", "Const", [], "/device:GPU:0")])
    place(g, DEVICES + [dev(0, 0, "GPU")], allow_soft_placement=True, has_kernel=cpu_only)
    assert placed(g) == {"a": dev(0, 0)}


def test_error_no_matching_device():
    g = build([("a", "Const", [], "/device:GPU:0")])
    with pytest.raises(OpError) as info:
        place(g, [dev(0, 1), dev(0, 0)], has_kernel=cpu_only)
    assert info.value.code == Code.INVALID_ARGUMENT
    assert info.value.node_name == "a"
    assert info.value.message == (
        "Cannot assign a device for operation a: {{node a}} was explicitly assigned to "
        "/device:GPU:0 but available devices are [ /job:worker/replica:0/task:0/device:CPU:0, "
        "/job:worker/replica:0/task:0/device:CPU:1 ]. Make sure the device specification "
        "refers to a valid device. The requested device appears to be a GPU, but CUDA is "
        "not enabled."
    )


def test_error_no_kernel_for_requested_type():
    g = build([("a", "Const", [], "/device:GPU:0")])
    with pytest.raises(OpError) as info:
        place(g, [dev(0, 0), dev(0, 0, "GPU")], has_kernel=cpu_only)
    assert info.value.code == Code.INVALID_ARGUMENT
    assert info.value.message == (
        "Cannot assign a device for operation a: Could not satisfy explicit device "
        "specification '/device:GPU:0' because no supported kernel for GPU devices is "
        "available."
    )


def test_error_conflicting_colocation_requests():
    g = build(
        [
            ("v", "Const", [], "/job:worker/task:0"),
            ("w", "Const", [], "/job:worker/task:1", "v"),
        ]
    )
    with pytest.raises(OpError) as info:
        place(g, DEVICES, has_kernel=cpu_only)
    assert info.value.code == Code.INVALID_ARGUMENT
    assert info.value.message == (
        "Cannot colocate nodes {{colocation_node w}} and {{colocation_node v}}: Cannot merge "
        "devices with incompatible tasks: '/job:worker/task:1' and '/job:worker/task:0'"
    )


def test_error_colocation_without_common_device_type():
    g = build([("v", "Const", [], ""), ("w", "Identity", ["v"], "", "v")])
    with pytest.raises(OpError) as info:
        place(
            g,
            [dev(0, 0), dev(0, 0, "GPU")],
            has_kernel=lambda op, t: (op == "Const") == (t == "GPU"),
        )
    assert info.value.message == (
        "Cannot colocate nodes {{colocation_node w}} and {{colocation_node v}} because no "
        "device type supports both of those nodes and the other nodes colocated with them."
    )


def test_error_op_without_any_kernel():
    g = build([("v", "Const", [], "")])
    with pytest.raises(OpError) as info:
        place(g, DEVICES, has_kernel=lambda op, t: False)
    assert info.value.code == Code.INVALID_ARGUMENT
    assert info.value.message.startswith(
        "No OpKernel was registered to support Op 'Const' used by {{node v}}"
    )


def test_log_device_placement(caplog):
    g = build([("a", "Const", [], dev(1, 0))])
    with caplog.at_level(logging.INFO, logger="common.placer"):
        place(g, DEVICES, log_device_placement=True, has_kernel=cpu_only)
    assert f"a: (Const): {dev(1, 0)}" in caplog.messages


def test_default_kernel_registry_is_used():
    g = build([("a", "Const", [], ""), ("b", "Identity", ["a"], "")])
    place(g, DEVICES)
    assert set(placed(g).values()) == {dev(0, 0)}


def test_ref_consumer_request_yields_to_the_variable(caplog):
    g = build(
        [
            ("var", "VariableV2", [], "/job:ps/task:0"),
            ("init", "Const", [], dev(1)),
            ("assign", "Assign", ["var", "init"], dev(1)),
        ]
    )
    with caplog.at_level(logging.DEBUG, logger="common.placer"):
        place(g, DEVICES + [dev(0, job="ps")], has_kernel=cpu_only)
    p = placed(g)
    assert p["assign"] == p["var"] == dev(0, job="ps")
    assert p["init"] == dev(1)
    assert (
        "Ignoring device specification /job:worker/replica:0/task:1/device:CPU:0 for node "
        "'assign' because the input edge from 'var' is a reference connection and already "
        "has a device field set to /job:ps/task:0"
    ) in caplog.text


def test_resource_consumer_request_yields_to_the_handle():
    g = build(
        [
            ("h", "VarHandleOp", [], "/job:ps/task:0"),
            ("r", "ReadVariableOp", ["h"], "/job:worker/task:1"),
            ("r2", "ReadVariableOp", ["h"], dev(0, 1)),
            ("use", "Identity", ["r"], "/job:worker/task:1"),
        ]
    )
    place(g, DEVICES + [dev(0, job="ps")], has_kernel=cpu_only)
    p = placed(g)
    assert p["h"] == p["r"] == p["r2"] == dev(0, job="ps")
    assert p["use"] == dev(1, 0)


def test_consumer_without_conflict_still_narrows_the_variable_group():
    g = build(
        [
            ("h", "VarHandleOp", [], "/job:worker"),
            ("r", "ReadVariableOp", ["h"], "/job:worker/task:1/device:CPU:1"),
        ]
    )
    place(g, DEVICES, has_kernel=cpu_only)
    assert placed(g) == {"h": dev(1, 1), "r": dev(1, 1)}


def test_consumer_group_with_class_members_follows_the_variable():
    """As TF's EnsureCompatibilityAcrossResourceEdge: the consumer's whole group yields."""
    g = build(
        [
            ("var", "VariableV2", [], "/job:worker/task:0"),
            ("c", "Const", [], "/job:worker/task:1"),
            ("assign", "Assign", ["var", "c"], "", "c"),
        ]
    )
    place(g, DEVICES, has_kernel=cpu_only)
    assert placed(g) == {"var": dev(0, 0), "c": dev(0, 0), "assign": dev(0, 0)}


def _forwarded_handle(op: str) -> Graph:
    """An unplaced TensorArray whose handle reaches its consumer through `op` on dev(1, 1)."""
    r, i32 = attr_type(DataType.DT_RESOURCE), attr_type(DataType.DT_INT32)
    g = Graph()
    size = g.add_node("size", "Const", {"dtype": i32})
    ta = g.add_node("ta", "TensorArrayV3", {"dtype": attr_type(F)})
    pred = g.add_node("pred", "Const", {"dtype": attr_type(DataType.DT_BOOL)})
    attrs = {"T": r}
    if op == "Enter":
        attrs["frame_name"] = attr_value_pb2.AttrValue(s=b"f")
    if op == "Merge":
        attrs["N"] = attr_value_pb2.AttrValue(i=1)
    if op == "IdentityN":
        attrs = {"T": attr_value_pb2.AttrValue(list=attr_value_pb2.AttrValue.ListValue(type=[20]))}
    fwd = g.add_node("fwd", op, attrs, dev(1, 1))
    use = g.add_node("use", "TensorArraySizeV3", {})
    g.add_edge(size, 0, ta, 0)
    g.add_edge(ta, 0, fwd, 0)
    if op == "Switch":
        g.add_edge(pred, 0, fwd, 1)
    g.add_edge(fwd, 0, use, 0)
    g.add_edge(ta, 1, use, 1)
    algorithm.fixup_source_and_sink_edges(g)
    return g


@pytest.mark.parametrize("op", ["Identity", "Enter", "Switch", "Merge", "Exit", "NextIteration"])
def test_a_handle_forwarded_by_identity_or_control_flow_joins_its_resource(op):
    """TensorFlow (2.21) colocates a resource with the Identity or v1 control-flow op
    carrying its handle: a TensorArray written in a while loop on another device is created
    there (tensor_array_ops_test ...GetsDeviceFromFirstWriteInWhileLoop). Exempting them
    put the TensorArray and its writes on two devices: NotFound for the per-step resource."""
    g = _forwarded_handle(op)
    place(g, DEVICES, default_device=dev(0, 0), has_kernel=cpu_only)
    p = placed(g)
    assert p["ta"] == p["fwd"] == p["use"] == dev(1, 1)


def test_identity_n_is_exempt_from_resource_colocation():
    """As TensorFlow: IdentityN leaves the resource where it would go without it."""
    g = _forwarded_handle("IdentityN")
    place(g, DEVICES, default_device=dev(0, 0), has_kernel=cpu_only)
    p = placed(g)
    assert p["ta"] == dev(0, 0) and p["fwd"] == p["use"] == dev(1, 1)
