"""Placer: assign every op node of a graph to one device (TensorFlow's Placer and
ColocationGraph).

Constraints, as TensorFlow gathers them:
  * a node's requested device (full or partial spec; a node already assigned, such as a
    client feed/fetch node, keeps its device);
  * colocation groups: the `_class` attr ("loc:@name") puts nodes into a named group; every
    node starts in the group of its own name;
  * resource and ref edges: a consumer of a DT_RESOURCE output, or of a ref-typed input
    (Assign on a VariableV2), is colocated with the producer; when the consumer's
    request conflicts with the producer's, the producer's wins (TF ignores the consumer's
    device specification, logging it), while conflicting `_class` requests are errors;
  * kernels: a group may only go to a device type every member has a kernel for;
  * functional ops left unlowered (If/While/Case without `_lower_using_switch_merge`, calls
    kept for XLA or marked `_noinline`: see common.optimizer.lower_functional and
    inline_calls; other calls are inlined) run their bodies on their own device, so one
    with DT_RESOURCE inputs joins the group of the resources (traced back through
    Identity/Enter/Switch...) unless its own request conflicts; resources on different
    tasks are an InvalidArgumentError naming the node and the tasks;
  * tf.data: a dataset op (TF's IsDatasetOp) joins each consumer's group when their
    requests agree, since a dataset variant cannot leave its process; after placement, a
    dataset edge between two tasks is an InvalidArgumentError naming both nodes.
Groups are kept in a union-find (path halving, union by size), so building them is
O(N α(N)). Each group's merged spec picks a device from the sorted device list,
preferring devices that also match `default_device`. Two TF heuristics then refine
unconstrained choices: metadata ops (Shape, Size, Rank) follow their input, and
generators (no inputs, one non-ref output) follow their consumers when those agree.

Pure: mutates only `node.assigned_device`. Not thread-safe for one Graph.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable

from common import device_name
from common.device_name import DeviceName
from common.dtypes import DataType
from common.errors import InvalidArgumentError, OpError
from common.graph.algorithm import gc_paused
from common.graph.graph import Edge, Graph, Node
from common.ops import registry

log = logging.getLogger(__name__)

HasKernel = Callable[[str, str], bool]

_COLOCATION_ATTR = "_class"
_COLOCATION_PREFIX = b"loc:@"
_METADATA_OPS = frozenset({"Shape", "ShapeN", "Size", "Rank"})
_DATASET_OP = re.compile(r"Dataset(V\d+)?$")
# Ops that forward resource/ref inputs instead of dereferencing them, and so are not
# colocated with the resource (TF's REGISTER_INPUT_COLOCATION_EXEMPTION). Identity and the
# v1 control-flow ops (Enter, Switch, Merge, Exit, NextIteration) are not among them: TF
# colocates them, and their consumers, with the handle they carry.
_RESOURCE_COLOCATION_EXEMPT = frozenset(
    {
        "IdentityN",
        "PartitionedCall",
        "StatefulPartitionedCall",
        "If",
        "While",
        "StatelessIf",
        "StatelessWhile",
    }
)
_TYPE_PRIORITY = {"GPU": 210, "CPU": 100}
# Functional ops whose bodies run on the op's device (when not lowered).
_FUNCTIONAL_OPS = frozenset(
    {
        "If",
        "StatelessIf",
        "While",
        "StatelessWhile",
        "Case",
        "StatelessCase",
        "PartitionedCall",
        "StatefulPartitionedCall",
    }
)
# Ops that pass a resource handle through: input 0 (IdentityN: the same index).
_FORWARDING_OPS = frozenset(
    {"Identity", "IdentityN", "Switch", "Merge", "Enter", "Exit", "NextIteration"}
)
_TASK_FIELDS = ("job", "replica", "task")


def _device_sort_key(name: str) -> tuple:
    dn = device_name.parse(name)
    return (
        -_TYPE_PRIORITY.get(dn.type or "", 0),
        dn.job or "",
        dn.replica or 0,
        dn.task or 0,
        dn.type or "",
        dn.id or 0,
    )


class _Group:
    """A colocation group's merged constraints (kept on the union-find root)."""

    __slots__ = ("possible", "spec", "spec_node", "types")

    def __init__(self, spec: DeviceName, spec_node: Node | None, types: frozenset[str]):
        self.spec = spec  # merged requested/assigned spec of all members
        self.spec_node = spec_node  # the member whose request set the spec (for messages)
        self.types = types  # device types every member has a kernel for
        self.possible: list[str] | None = None  # candidate devices, best first


class _Placer:
    def __init__(
        self,
        graph: Graph,
        devices: list[str],
        default_device: str | None,
        allow_soft_placement: bool,
        has_kernel: HasKernel,
    ) -> None:
        self.graph = graph
        self.devices = sorted(devices, key=_device_sort_key)
        self.device_types = frozenset(device_name.parse(d).type or "" for d in self.devices)
        self.default_spec = device_name.parse(default_device or "")
        self.soft = allow_soft_placement
        self.has_kernel = has_kernel
        n = graph.num_node_ids
        self.parent = list(range(n))
        self.size = [1] * n
        self.groups: dict[int, _Group] = {}
        self._op_types: dict[str, frozenset[str]] = {}
        self._matching: dict[DeviceName, list[str]] = {}
        self._resolved: dict[tuple[DeviceName, frozenset[str]], list[str]] = {}

    # -- union-find ----------------------------------------------------------------------
    def find(self, i: int) -> int:
        parent = self.parent
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(self, a: Node, b: Node, a_wins: bool = False) -> None:
        """Merge the groups of a and b. With `a_wins` (resource and ref edges, a being
        the producer), a conflicting device request of b's group yields to a's."""
        ra, rb = self.find(a.id), self.find(b.id)
        if ra == rb:
            return
        ga, gb = self.groups[ra], self.groups[rb]
        try:
            device_name.merge(ga.spec, gb.spec, allow_soft_placement=self.soft)
        except InvalidArgumentError:
            if a_wins:
                self._ignore_request(a, b, ga, gb)
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
            ga, gb = gb, ga
        types = ga.types & gb.types
        if not types:
            raise InvalidArgumentError(
                f"Cannot colocate nodes {{{{colocation_node {a.name}}}}} and "
                f"{{{{colocation_node {b.name}}}}} because no device type supports both of "
                "those nodes and the other nodes colocated with them.",
                a.name,
            )
        try:
            spec = device_name.merge(ga.spec, gb.spec, allow_soft_placement=self.soft)
        except InvalidArgumentError as e:
            raise InvalidArgumentError(
                f"Cannot colocate nodes {{{{colocation_node {a.name}}}}} and "
                f"{{{{colocation_node {b.name}}}}}: {e.message}",
                a.name,
            ) from None
        ga.spec, ga.types = spec, types
        if ga.spec_node is None:
            ga.spec_node = gb.spec_node
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]
        del self.groups[rb]

    @staticmethod
    def _ignore_request(src: Node, dst: Node, src_group: _Group, dst_group: _Group) -> None:
        """TF ColocateResourceOrRefEdge: the consumer's request yields to the resource's."""
        log.debug(
            "Ignoring device specification %s for node '%s' because the input edge from "
            "'%s' is a reference connection and already has a device field set to %s",
            device_name.to_string(dst_group.spec),
            dst.name,
            src.name,
            device_name.to_string(src_group.spec),
        )
        dst_group.spec = src_group.spec
        dst_group.spec_node = src_group.spec_node

    # -- constraints -----------------------------------------------------------------------
    def supported_types(self, node: Node) -> frozenset[str]:
        cached = self._op_types.get(node.op)
        if cached is None:
            flib = self.graph.flib
            if flib is not None and flib.find_op(node.op) is not None:
                cached = self.device_types  # function calls run on any device
            else:
                cached = frozenset(t for t in self.device_types if self.has_kernel(node.op, t))
            self._op_types[node.op] = cached
        return cached

    def init_groups(self, nodes: list[Node]) -> None:
        for node in nodes:
            request = node.assigned_device or node.requested_device
            try:
                spec = device_name.parse(request)
            except InvalidArgumentError as e:
                raise InvalidArgumentError(
                    f"Malformed device specification '{request}' in node: {node.name}",
                    node.name,
                ) from e
            types = self.supported_types(node)
            if not types:
                raise InvalidArgumentError(
                    f"No OpKernel was registered to support Op '{node.op}' used by "
                    f"{{{{node {node.name}}}}}\nRegistered devices: "
                    f"[{', '.join(sorted(self.device_types))}]",
                    node.name,
                )
            self.groups[node.id] = _Group(spec, node if request else None, types)

    def colocate_by_class(self, nodes: list[Node]) -> None:
        """TF ColocateAllNodes: `loc:@x` joins the group named x (every node names one)."""
        by_name: dict[bytes, Node] = {}
        for node in nodes:
            by_name.setdefault(node.name.encode(), node)
        for node in nodes:
            attr = node.attr_protos.get(_COLOCATION_ATTR)
            if attr is None:
                continue
            for spec in attr.list.s:
                if spec.startswith(_COLOCATION_PREFIX):
                    key = spec[len(_COLOCATION_PREFIX) :]
                    root = by_name.setdefault(key, node)
                    if root is not node:
                        self.union(node, root)

    def colocate_resource_and_ref_edges(self, nodes: list[Node]) -> None:
        for dst in nodes:
            for e in dst.in_edges:
                if e.src_output < 0 or not e.src.is_op:
                    continue
                is_ref = dst.input_types[e.dst_input] > 100
                is_resource = e.src.output_types[e.src_output] == DataType.DT_RESOURCE
                if is_ref or (is_resource and dst.op not in _RESOURCE_COLOCATION_EXEMPT):
                    self.union(e.src, dst, a_wins=True)

    def colocate_functional_ops(self, nodes: list[Node]) -> None:
        """An unlowered functional op joins the group of its resource inputs (its body
        runs where it runs); resources of different tasks are an InvalidArgumentError."""
        for node in nodes:
            if node.op not in _FUNCTIONAL_OPS:
                continue
            origins = [
                _resource_origin(e)
                for e in node.in_edges
                if e.src_output >= 0 and e.src.output_types[e.src_output] == DataType.DT_RESOURCE
            ]
            if not origins:
                continue
            self._check_one_task(node, origins)
            own = self.groups[self.find(node.id)].spec
            try:
                for o in origins:
                    device_name.merge(own, self.groups[self.find(o.id)].spec)
            except InvalidArgumentError:
                continue  # an explicit conflicting request: the op stays where it asked
            for o in origins:
                self.union(o, node)

    def _check_one_task(self, node: Node, origins: list[Node]) -> None:
        first: Node | None = None
        for o in origins:
            spec = self.groups[self.find(o.id)].spec
            if all(getattr(spec, f) is None for f in _TASK_FIELDS):
                continue
            if first is None:
                first = o
                continue
            a = self.groups[self.find(first.id)].spec
            if any(
                getattr(a, f) is not None
                and getattr(spec, f) is not None
                and getattr(a, f) != getattr(spec, f)
                for f in _TASK_FIELDS
            ):
                raise InvalidArgumentError(
                    f"Cannot place {{{{node {node.name}}}}} ({node.op}): its resource inputs "
                    f"live on different tasks, {{{{node {first.name}}}}} on "
                    f"{_task_string(a)} and {{{{node {o.name}}}}} on {_task_string(spec)}, "
                    "but its function bodies run on one device. Lower it to v1 control "
                    "flow (attr _lower_using_switch_merge=true, as tf.cond/tf.while_loop v2 "
                    "set) or keep its resources on one task.",
                    node.name,
                )

    def colocate_dataset_edges(self, nodes: list[Node]) -> None:
        """A dataset op joins its consumer's group unless their requests conflict (then
        `check_dataset_edges` judges the placement)."""
        for src in nodes:
            if not _is_dataset_op(src):
                continue
            for e in src.out_edges:
                if e.src_output != 0 or not e.dst.is_op:
                    continue
                a = self.groups[self.find(src.id)].spec
                b = self.groups[self.find(e.dst.id)].spec
                try:
                    device_name.merge(a, b)
                except InvalidArgumentError:
                    continue
                self.union(src, e.dst)

    # -- device choice ---------------------------------------------------------------------
    def matching(self, spec: DeviceName) -> list[str]:
        found = self._matching.get(spec)
        if found is None:
            found = [d for d in self.devices if device_name.matches(spec, d)]
            preferred = [d for d in found if device_name.matches(self.default_spec, d)]
            found = preferred + [d for d in found if d not in preferred]
            self._matching[spec] = found
        return found

    def possible_devices(self, node: Node) -> list[str]:
        group = self.groups[self.find(node.id)]
        if group.possible is None:
            key = (group.spec, group.types)
            found = self._resolved.get(key)
            if found is None:
                found = self._resolve(node, group)
                if group.spec_node is None or group.spec_node is node:
                    self._resolved[key] = found  # errors name the node: cache only successes
            group.possible = found
        return group.possible

    def _resolve(self, node: Node, group: _Group) -> list[str]:
        types = group.types
        candidates = [d for d in self.matching(group.spec) if device_name.parse(d).type in types]
        if candidates:
            return candidates
        if not self.soft:
            raise self._unsatisfiable(node, group)
        spec = group.spec
        for fallback in (
            DeviceName(job=spec.job, replica=spec.replica, task=spec.task),
            DeviceName(),
        ):
            candidates = [d for d in self.matching(fallback) if device_name.parse(d).type in types]
            if candidates:
                return candidates
        raise self._unsatisfiable(node, group)

    def _unsatisfiable(self, node: Node, group: _Group) -> OpError:
        spec_node = group.spec_node or node
        name = _user_name(node)
        request = spec_node.assigned_device or spec_node.requested_device
        prefix = f"Cannot assign a device for operation {name}: "
        if not self.matching(group.spec) and spec_node is node:
            available = ", ".join(sorted(self.devices))
            gpu = (
                " The requested device appears to be a GPU, but CUDA is not enabled."
                if (group.spec.type or "").lower() == "gpu"
                else ""
            )
            reason = (
                f"{{{{node {name}}}}} was explicitly assigned to {request} but "
                f"available devices are [ {available} ]. Make sure the device "
                f"specification refers to a valid device.{gpu}"
            )
        elif spec_node is not node:
            reason = (
                f"Could not satisfy explicit device specification "
                f"'{node.requested_device}' because the node "
                f"{{{{colocation_node {name}}}}} was colocated with a group of "
                f"nodes that required incompatible device "
                f"'{device_name.to_string(group.spec)}'. "
            )
        else:
            reason = (
                f"Could not satisfy explicit device specification '{request}' because "
                f"no supported kernel for {group.spec.type} devices is available."
            )
        return InvalidArgumentError(prefix + reason, name)

    def assign(self, node: Node, device: str) -> None:
        node.assigned_device = device
        group = self.groups[self.find(node.id)]
        group.possible = [device]


def _user_name(node: Node) -> str:
    """The name of the node a user wrote, for a Const that constant folding made from its
    output ("<producer>/_<n>__cf__<n>", common.optimizer.constant_folding): TensorFlow
    places before it folds, so its placement errors name the producer."""
    if "__cf__" in node.name and "/_" in node.name:
        return node.name.rsplit("/_", 1)[0]
    return node.name


def _resource_origin(e: Edge) -> Node:
    """The node a resource handle on edge `e` comes from, through forwarding ops."""
    src, out = e.src, e.src_output
    for _ in range(10_000):  # bounded: a loop's Merge may lead back to itself
        if src.op not in _FORWARDING_OPS:
            break
        slot = out if src.op == "IdentityN" else 0
        found = next((x for x in src.in_edges if x.dst_input == slot and x.src.is_op), None)
        if found is None:
            break
        src, out = found.src, found.src_output
    return src


def _task_string(spec: DeviceName) -> str:
    return device_name.to_string(DeviceName(job=spec.job, replica=spec.replica, task=spec.task))


def _first_data_input(node: Node) -> Node | None:
    for e in node.in_edges:
        if e.src_output >= 0:
            return e.src
    return None


def _is_dataset_op(node: Node) -> bool:
    """TF's DatasetOpKernel::IsDatasetOp: one DT_VARIANT output, named *Dataset(V<n>)."""
    return (
        node.num_outputs == 1
        and node.output_types[0] == DataType.DT_VARIANT
        and _DATASET_OP.search(node.op) is not None
    )


def check_dataset_edges(nodes: Iterable[Node]) -> None:
    """InvalidArgumentError if a placed dataset op feeds a node of another task."""
    for src in nodes:
        if not _is_dataset_op(src):
            continue
        for e in src.out_edges:
            dst = e.dst
            if e.src_output != 0 or not dst.is_op:
                continue
            if not device_name.is_same_address_space(src.assigned_device, dst.assigned_device):
                raise InvalidArgumentError(
                    f"{{{{node {src.name}}}}} produces a tf.data dataset on "
                    f"{src.assigned_device} that {{{{node {dst.name}}}}} consumes on "
                    f"{dst.assigned_device}: a dataset cannot leave its process; place the "
                    "dataset ops on the task of the iterator that consumes them",
                    src.name,
                )


def _is_generator(node: Node) -> bool:
    return node.num_inputs == 0 and node.num_outputs == 1 and node.output_types[0] < 100


def _consumers_device(node: Node) -> str:
    """The one device all consumers are on, or "" if they differ."""
    devices = {e.dst.assigned_device for e in node.out_edges}
    return devices.pop() if len(devices) == 1 else ""


def place(
    graph: Graph,
    devices: list[str],
    *,
    default_device: str | None = None,
    allow_soft_placement: bool = False,
    log_device_placement: bool = False,
    has_kernel: HasKernel = registry.has_kernel_for,
    explain: dict[str, tuple[str, str]] | None = None,
) -> None:
    """Set `assigned_device` on every op node (TF Placer::Run).

    `devices` are full names. Raises InvalidArgumentError naming the node for an
    unsatisfiable request (without soft placement) or a colocation conflict. With
    `explain`, records per node name why it went where it did (`explain_placement`)."""
    if not devices:
        raise InvalidArgumentError("No devices are registered to place the graph on")
    with gc_paused():
        placer = _Placer(graph, devices, default_device, allow_soft_placement, has_kernel)
        nodes = list(graph.op_nodes())
        placer.init_groups(nodes)
        placer.colocate_by_class(nodes)
        placer.colocate_resource_and_ref_edges(nodes)
        placer.colocate_functional_ops(nodes)
        placer.colocate_dataset_edges(nodes)
        second_pass: list[Node] = []
        followed: dict[str, str] = {}  # node -> the heuristic that chose its device
        for node in nodes:
            possible = placer.possible_devices(node)
            if node.assigned_device:
                placer.assign(node, node.assigned_device)
                continue
            chosen = ""
            if node.op in _METADATA_OPS:  # heuristic B: metadata ops go with their input
                src = _first_data_input(node)
                if src is not None and src.assigned_device in possible:
                    chosen = src.assigned_device
                    followed[node.name] = f"follows its input {src.name}"
            if not chosen and _is_generator(node) and node.out_edges:
                second_pass.append(node)  # heuristic A, once consumers are placed
                continue
            placer.assign(node, chosen or possible[0])
        for node in second_pass:
            possible = placer.possible_devices(node)
            consumers = _consumers_device(node)
            if consumers in possible:
                followed[node.name] = "follows its consumers"
            placer.assign(node, consumers if consumers in possible else possible[0])
        check_dataset_edges(nodes)
        if explain is not None:
            for node in nodes:
                explain[node.name] = explain_placement(placer, node, followed, default_device)
    if log_device_placement:
        _log_placement(nodes)


def explain_placement(
    placer: _Placer, node: Node, followed: dict[str, str], default_device: str | None
) -> tuple[str, str]:
    """(decision, detail) for a placed node: "explicit" (its own request), "colocated"
    (another member of its colocation group set the device), "soft-placed" (the request
    could not be met; allow_soft_placement relaxed it), "heuristic" (a metadata op or a
    generator following its neighbours), or "default" (nothing asked: the default device
    if it matched, else the first device)."""
    device = node.assigned_device
    group = placer.groups[placer.find(node.id)]
    if node.requested_device:
        if device_name.matches(device_name.parse(node.requested_device), device):
            return "explicit", f"requested {node.requested_device}"
        return "soft-placed", f"requested {node.requested_device}, unavailable"
    spec_node = group.spec_node
    if spec_node is not None and spec_node is not node:
        request = spec_node.assigned_device or spec_node.requested_device
        if not device_name.matches(device_name.parse(request), device):
            return "soft-placed", f"colocated with {spec_node.name}, whose {request} is unavailable"
        return "colocated", f"with {spec_node.name} ({request})"
    if node.name in followed:
        return "heuristic", followed[node.name]
    if default_device and device_name.matches(device_name.parse(default_device), device):
        return "default", f"default device {default_device}"
    return "default", "first available device"


def _log_placement(nodes: Iterable[Node]) -> None:
    for node in nodes:
        log.info("%s: (%s): %s", node.name, node.op, node.assigned_device)
