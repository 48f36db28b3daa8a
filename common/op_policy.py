"""Which ops a process accepts (`--deny-ops` of master and worker): a graph or function
library naming a denied op is refused at registration (CreateSession, ExtendSession,
RegisterGraph) with PermissionDenied naming the op and the node.

`--deny-ops safe` denies the ops that touch the filesystem (profile SAFE below): a cluster
whose clients must not read or write files on the tasks. Without the flag nothing is
denied (TensorFlow's behaviour: checkpoints and input files work); `--file-root` confines
those ops instead. Process-wide, set once at start-up; checks are safe from any thread.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from common.errors import InvalidArgumentError, PermissionDeniedError, ResourceExhaustedError

# Ops that read, write or list files on the task.
SAFE = frozenset(
    {
        "ReadFile",
        "WriteFile",
        "MatchingFiles",
        "Save",
        "SaveSlices",
        "SaveV2",
        "Restore",
        "RestoreSlice",
        "RestoreV2",
        "MergeV2Checkpoints",
        "TFRecordDataset",
        "TFRecordDatasetV2",
        "TextLineDataset",
        "TextLineDatasetV2",
        "FixedLengthRecordDataset",
        "FixedLengthRecordDatasetV2",
        "TFRecordReader",
        "TFRecordReaderV2",
        "TextLineReader",
        "TextLineReaderV2",
        "WholeFileReader",
        "WholeFileReaderV2",
        "FixedLengthRecordReader",
        "FixedLengthRecordReaderV2",
        "FixedUnigramCandidateSampler",
        "PrintV2",
        "CreateSummaryFileWriter",
        "WriteSummary",
        "WriteScalarSummary",
        "WriteHistogramSummary",
        "WriteRawProtoSummary",
        "WriteGraphSummary",
        "ImportEvent",
        "FlushSummaryWriter",
        "CloseSummaryWriter",
    }
)
PROFILES = {"safe": SAFE, "none": frozenset()}

_denied: frozenset[str] = frozenset()
# Nodes a graph (with its functions' bodies) may have: planning cost grows with it.
DEFAULT_MAX_GRAPH_NODES = 2_000_000
_max_nodes = DEFAULT_MAX_GRAPH_NODES


def parse(spec: str) -> frozenset[str]:
    """ "safe", "none", or comma-separated op names (profiles may be mixed in)."""
    out: set[str] = set()
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        if item in PROFILES:
            out |= PROFILES[item]
        elif item.isidentifier():
            out.add(item)
        else:
            raise InvalidArgumentError(f"--deny-ops: {item!r} is not an op name or profile")
    return frozenset(out)


def set_denied(ops: Iterable[str]) -> None:
    global _denied
    _denied = frozenset(ops)


def denied() -> frozenset[str]:
    return _denied


def set_max_graph_nodes(n: int) -> None:
    global _max_nodes
    _max_nodes = n


def check_graph_def(graph_def: Any) -> None:
    """PermissionDenied if a node of the graph or of a library function uses a denied op;
    ResourceExhausted if the graph has more nodes than the limit (--max-graph-nodes)."""
    nodes = len(graph_def.node) + sum(len(f.node_def) for f in graph_def.library.function)
    if nodes > _max_nodes:
        raise ResourceExhaustedError(
            f"The graph has {nodes} nodes (functions included), more than this task accepts "
            f"({_max_nodes}, --max-graph-nodes)"
        )
    if not _denied:
        return
    for node in graph_def.node:
        _check(node, "")
    for fdef in graph_def.library.function:
        for node in fdef.node_def:
            _check(node, f" in function {fdef.signature.name}")


def _check(node: Any, where: str) -> None:
    if node.op in _denied:
        raise PermissionDeniedError(
            f"Op {node.op} (node {node.name}{where}) is denied on this cluster (--deny-ops)",
            node.name,
        )
