"""Executor stage, registration: a Graph compiled once into the executor's indexed form.

When a graph is registered on a device, every op node gets a dense index and its kernel is
created once. What the scheduler needs per node is kept in flat lists indexed by node
(compute function, async/expensive flags, input count and offset, out-edges as
precomputed tuples, pending counts), so the hot loop does no attribute lookups on Graph
objects. Control flow is resolved statically as TensorFlow's BuildControlFlowInfo does:
every node is assigned the (static) frame it takes its inputs in, and each frame gets its
own dense numbering of pending counters and input slots.
Built once, then read-only: safe to share between concurrent steps.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from typing import Any

from common.dtypes import DataType
from common.errors import InternalError, InvalidArgumentError, OpError
from common.graph.graph import Graph, Node
from common.hashing import hash64, hash64_combine  # noqa: F401  (re-exported)
from common.ops import registry
from common.ops.registry import KernelConstruction, KernelDef

# Node kinds the propagator treats specially (everything else is NORMAL).
NORMAL, ENTER, EXIT, NEXT_ITERATION = 0, 1, 2, 3

_KINDS = {
    "Enter": ENTER,
    "RefEnter": ENTER,
    "Exit": EXIT,
    "RefExit": EXIT,
    "NextIteration": NEXT_ITERATION,
    "RefNextIteration": NEXT_ITERATION,
}
_MERGE_OPS = frozenset({"Merge", "RefMerge"})
# Transfer nodes run even when dead: _Send forwards the deadness to its peer.
_TRANSFER_OPS = frozenset({"_Send", "_HostSend", "_Recv", "_HostRecv"})

KernelLookup = Callable[[Node, str], KernelDef]

# Bookkeeping kernels the executor does itself, with no context and no kernel call
# (GraphView.trivial): what the registered kernel of these ops computes, done in place.
TRIVIAL_FORWARD, TRIVIAL_CONST, TRIVIAL_NO_OUTPUT, TRIVIAL_MERGE, TRIVIAL_SWITCH = 1, 2, 3, 4, 5
# LoopCond: forwards a scalar (a non-scalar goes to its kernel, which reports it).
TRIVIAL_LOOP_COND = 6
_TRIVIAL_OPS = {
    "Identity": TRIVIAL_FORWARD,
    "RefIdentity": TRIVIAL_FORWARD,
    "StopGradient": TRIVIAL_FORWARD,
    "Snapshot": TRIVIAL_FORWARD,
    "Enter": TRIVIAL_FORWARD,
    "RefEnter": TRIVIAL_FORWARD,
    "Exit": TRIVIAL_FORWARD,
    "RefExit": TRIVIAL_FORWARD,
    "NextIteration": TRIVIAL_FORWARD,
    "RefNextIteration": TRIVIAL_FORWARD,
    "Const": TRIVIAL_CONST,
    "NoOp": TRIVIAL_NO_OUTPUT,
    "ControlTrigger": TRIVIAL_NO_OUTPUT,
    "LoopCond": TRIVIAL_LOOP_COND,
    "Merge": TRIVIAL_MERGE,
    "RefMerge": TRIVIAL_MERGE,
    "Switch": TRIVIAL_SWITCH,
    "RefSwitch": TRIVIAL_SWITCH,
}


class FrameInfo:
    """Static facts about one loop frame (by frame name); the root frame is index 0."""

    def __init__(self, index: int, name: str, parent: int) -> None:
        self.index = index
        self.name = name
        self.name_hash = hash64(name.encode())
        self.parent = parent  # static index of the enclosing frame (-1 for the root)
        self.nodes: list[int] = []
        self.pending: list[int] = []  # initial pending count per local pending id
        self.total_inputs = 0
        self.input_count = 0  # Enter nodes feeding the frame
        self.parallel_iterations = 1


def default_kernel_lookup(node: Node, device_type: str) -> KernelDef:
    op = node.op
    if registry.find_op(op) is None and node.op_def is not None:
        # A library function called as an op: the generic call kernel (functional_ops).
        op = "_FunctionCall"
    return registry.lookup_kernel(op, device_type, node.attr("_kernel", ""), node.name)


def kernel_attrs(node: Node) -> dict[str, Any]:
    """The node's attrs as Python values, with the op's defaults filled in."""
    attrs = dict(node.attrs)
    if node.op_def is not None:
        for a in node.op_def.attrs:
            if a.has_default and a.name not in attrs:
                attrs[a.name] = a.default
    return attrs


class GraphView:
    """The indexed form of a graph on one device (TensorFlow's ImmutableExecutorState)."""

    def __init__(
        self,
        graph: Graph,
        device_name: str,
        device_type: str,
        kernel_lookup: KernelLookup | None,
        flib: Any,
        scope: Any = None,
        allocation_limit: int = 0,
    ) -> None:
        self.allocation_limit = allocation_limit
        self.nodes: list[Node] = list(graph.op_nodes())
        index = {n.id: i for i, n in enumerate(self.nodes)}
        self.index = index
        n = len(self.nodes)
        self.names = [nd.name for nd in self.nodes]
        self.kinds = [_KINDS.get(nd.op, NORMAL) for nd in self.nodes]
        self.is_merge = [nd.op in _MERGE_OPS for nd in self.nodes]
        self.is_control_trigger = [nd.op == "ControlTrigger" for nd in self.nodes]
        self.run_dead = [nd.op in _TRANSFER_OPS for nd in self.nodes]
        self.num_inputs = [nd.num_inputs for nd in self.nodes]
        # What a node's input slots are reset to once its kernel has them: the step then
        # holds no reference to a consumed value (its memory is freed as soon as nothing
        # else needs it, and an unshared variable value can be updated in place).
        self.nones = [(None,) * k for k in self.num_inputs]
        self.num_outputs = [nd.num_outputs for nd in self.nodes]
        self.in_ids: list[list[tuple[int, int]]] = [[] for _ in range(n)]  # (src, dst_slot)
        self.out_ids: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]
        self.ctrl_out_ids: list[list[int]] = [[] for _ in range(n)]
        self.num_control_in = [0] * n
        self.deref: list[tuple[int, ...]] = [()] * n
        self._collect_edges(index)
        self._assign_frames()
        self._layout_frames()
        self._build_edge_tuples()
        self._create_kernels(
            device_name, device_type, kernel_lookup or default_kernel_lookup, flib, scope
        )
        # Running time estimates of the expensive kernels (seconds; None until timed), which
        # decide whether one is worth the thread pool. Shared by every step and updated
        # without a lock: a lost update only delays the estimate.
        self.cost_estimates: list[float | None] = [None] * n
        self.timed_runs = [0] * n  # how often each has run (one run in 16 is timed)
        # The executor's shortest path when live: a sync, cheap kernel, no input to
        # dereference, only plain consumers (fast).
        self.plain = [
            self.fast[i] and not self.is_async[i] and not self.expensive[i] and not self.deref[i]
            for i in range(n)
        ]
        self.build_plans()

    def build_plans(self) -> None:
        """What the scheduling loop reads (again after a copy changes computes or trivial,
        as the traced view does). plans[i] packs node i's static facts in one tuple, read
        with one index and one unpack where separate lists cost one index each:
        (trivial kind, plain, first input slot, end of its input slots, compute,
        number of outputs, name, its inputs' reset value, single edge)."""
        self.plans = [
            (
                self.trivial[i],
                self.plain[i],
                self.input_start[i],
                self.input_start[i] + self.num_inputs[i],
                self.computes[i],
                self.num_outputs[i],
                self.names[i],
                self.nones[i],
                self.single_edge[i],
            )
            for i in range(len(self.nodes))
        ]
        # The rest of the loop's per-node lists, unpacked once per loop entry.
        self.loop_tables = (
            self.plans,
            self.is_async,
            self.expensive,
            self.run_dead,
            self.deref,
            self.fast,
            self.out_edges,
            self.ctrl_out,
            self.consts,
            self.cost_estimates,
        )

    # -- structure -----------------------------------------------------------------------
    def _collect_edges(self, index: dict[int, int]) -> None:
        has_in = [False] * len(self.nodes)
        for i, nd in enumerate(self.nodes):
            deref = []
            for e in nd.in_edges:
                if not e.src.is_op:
                    continue
                src = index[e.src.id]
                has_in[i] = True
                if e.is_control:
                    self.num_control_in[i] += 1
                    self.ctrl_out_ids[src].append(i)
                    continue
                self.in_ids[i].append((src, e.dst_input))
                self.out_ids[src].append((e.src_output, i, e.dst_input))
                src_type = e.src.output_types[e.src_output]
                if src_type >= 100 and nd.input_types[e.dst_input] < 100:
                    deref.append(e.dst_input)
            self.deref[i] = tuple(sorted(deref))
        self.roots = [i for i in range(len(self.nodes)) if not has_in[i]]
        for lst in self.out_ids:
            lst.sort()

    def _assign_frames(self) -> None:
        """BFS from the roots as TF's BuildControlFlowInfo: a node's frame is the frame
        its inputs come from; Enter outputs go to a child frame, Exit outputs to the
        parent."""
        root = FrameInfo(0, "", -1)
        self.frames: list[FrameInfo] = [root]
        by_name: dict[str, FrameInfo] = {}
        n = len(self.nodes)
        frame_of = [-1] * n
        self.enter_frame = [-1] * n
        self.is_constant_enter = [False] * n
        queue = collections.deque(self.roots)
        for i in self.roots:
            frame_of[i] = 0
        while queue:
            i = queue.popleft()
            out_frame = self._output_frame(i, frame_of[i], by_name)
            for dst in [d for _, d, _ in self.out_ids[i]] + self.ctrl_out_ids[i]:
                if frame_of[dst] == -1:
                    frame_of[dst] = out_frame
                    queue.append(dst)
                elif frame_of[dst] != out_frame:
                    raise InvalidArgumentError(
                        f"The node '{self.names[dst]}' has inputs from different frames. "
                        f"The input '{self.names[i]}' is in frame "
                        f"'{self.frames[out_frame].name}'. Another input is in frame "
                        f"'{self.frames[frame_of[dst]].name}'.",
                        self.names[dst],
                    )
        self.frame_of = [max(f, 0) for f in frame_of]

    def _output_frame(self, i: int, frame: int, by_name: dict[str, FrameInfo]) -> int:
        kind = self.kinds[i]
        if kind == ENTER:
            nd = self.nodes[i]
            name = nd.attr("frame_name")
            info = by_name.get(name)
            if info is None:
                info = FrameInfo(len(self.frames), name, frame)
                info.parallel_iterations = int(nd.attr("parallel_iterations", 10))
                by_name[name] = info
                self.frames.append(info)
            info.input_count += 1
            self.enter_frame[i] = info.index
            self.is_constant_enter[i] = bool(nd.attr("is_constant", False))
            return info.index
        if kind == EXIT:
            parent = self.frames[frame].parent
            if parent < 0:
                raise InvalidArgumentError(
                    f"Exit node '{self.names[i]}' is not inside a frame (no matching Enter)",
                    self.names[i],
                )
            return parent
        return frame

    def _layout_frames(self) -> None:
        """Dense per-frame numbering: pending id and first input slot of each node."""
        n = len(self.nodes)
        self.pending_id = [0] * n
        self.input_start = [0] * n
        for i in range(n):
            info = self.frames[self.frame_of[i]]
            self.pending_id[i] = len(info.pending)
            self.input_start[i] = info.total_inputs
            info.nodes.append(i)
            info.total_inputs += self.num_inputs[i]
            if self.is_merge[i]:
                # TF's scheme: bit 0 = still waiting for a live data input; each control
                # input counts 2. Data inputs (including the back edge) are not counted.
                info.pending.append(1 + 2 * self.num_control_in[i])
            else:
                info.pending.append(len(self.in_ids[i]) + self.num_control_in[i])

    def _build_edge_tuples(self) -> None:
        """out_edges[i]: (src_slot, dst, dst input location, dst pending id) per data edge."""
        n = len(self.nodes)
        pid, start = self.pending_id, self.input_start
        self.out_edges = [
            tuple((s, d, start[d] + slot, pid[d]) for s, d, slot in self.out_ids[i])
            for i in range(n)
        ]
        self.ctrl_out = [tuple((d, pid[d]) for d in self.ctrl_out_ids[i]) for i in range(n)]
        # Any consumer needing the slow activation path (Merge / ControlTrigger).
        special = [self.is_merge[i] or self.is_control_trigger[i] for i in range(n)]
        self.slow = [
            any(special[d] for _, d, _ in self.out_ids[i])
            or any(special[d] for d in self.ctrl_out_ids[i])
            for i in range(n)
        ]
        self.fast = [self.kinds[i] == NORMAL and not self.slow[i] for i in range(n)]
        # The one out-edge of a fast node with one data consumer and no control consumers.
        self.single_edge = [
            self.out_edges[i][0]
            if self.fast[i] and len(self.out_edges[i]) == 1 and not self.ctrl_out[i]
            else None
            for i in range(n)
        ]

    # -- kernels -------------------------------------------------------------------------
    def _create_kernels(
        self, device_name: str, device_type: str, lookup: KernelLookup, flib: Any, scope: Any
    ) -> None:
        self.computes: list[Callable[..., Any]] = []
        self.is_async: list[bool] = []
        self.expensive: list[bool] = []
        # trivial[i]: a TRIVIAL_* kind when node i runs the registered kernel of one of
        # _TRIVIAL_OPS (no other label, no input to dereference): the executor then does
        # the kernel's work itself. consts[i]: a trivial Const's outputs.
        self.trivial = [0] * len(self.nodes)
        self.consts: list[tuple[Any, ...] | None] = [None] * len(self.nodes)
        for i, nd in enumerate(self.nodes):
            try:
                kdef = lookup(nd, device_type)
                kc = KernelConstruction(
                    node_name=nd.name,
                    op=nd.op,
                    attrs=kernel_attrs(nd),
                    input_types=tuple(DataType(t) for t in nd.input_types),
                    output_types=tuple(DataType(t) for t in nd.output_types),
                    device=device_name,
                    device_type=device_type,
                    flib=flib,
                    scope=scope,
                    allocation_limit=self.allocation_limit,
                )
                compute = kdef.factory(kc)
            except OpError as e:
                if e.node_name is None:
                    e.node_name = nd.name
                raise
            except Exception as e:  # a kernel factory bug: still name the node
                raise InternalError(
                    f"{nd.name}: creating the {nd.op} kernel failed: {type(e).__name__}: {e}",
                    nd.name,
                ) from e
            self.computes.append(compute)
            self.is_async.append(kdef.is_async)
            self.expensive.append(kdef.expensive)
            kind = _TRIVIAL_OPS.get(nd.op, 0)
            if kind and not self.deref[i] and kdef is registry.find_kernel(nd.op, device_type):
                self.trivial[i] = kind
                if kind == TRIVIAL_CONST:
                    self.consts[i] = tuple(compute(None, []))  # Const ignores its context
