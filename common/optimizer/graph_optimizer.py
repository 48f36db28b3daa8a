"""Graph optimization stage: what the master (and the in-process Session) runs on a
client graph after the feed/fetch rewrite and before placement (TensorFlow's
GraphOptimizer::Optimize).

Entry point, for common.session.Session._build and master.master_session:

    stats = optimize_graph(graph, options=OptimizerOptions proto | None, keep=target_names)

`graph` is a Graph already rewritten by `common.subgraph.rewrite_graph_for_execution`
(fetches are _Retval/_Send nodes, feeds _Arg/_Recv nodes). It is mutated in place.
First, always (TensorFlow has no switch for it either), functional If/Case/While marked
`_lower_using_switch_merge` are lowered to v1 control flow with inlined bodies, and
function calls (PartitionedCall, StatefulPartitionedCall, plain calls) are inlined
(common.optimizer.lower_functional), so each body node is placed on its own.
`keep` names nodes that must survive by name: the step's target nodes (and anything else
the caller will look up later). _Send/_Recv/_Arg/_Retval, stateful ops and control-flow
ops are always kept. The passes loop until nothing changes or `MAX_ROUNDS` rounds:

    dead-node removal -> Identity removal -> dependency optimization (Identity and NoOp
    nodes that only order others; off when RewriterConfig turns dependency_optimization
    OFF) -> constant folding (+ dead-node removal) -> common-subexpression elimination

and then elementwise fusion (common.optimizer.fuse_elementwise): on by default, as
TensorFlow's remapper; off with RewriterConfig.remapping OFF or disable_meta_optimizer
(`rewrite_options`) or OptimizerOptions.global_jit_level OFF (disabled_options()).

Options follow TensorFlow's OptimizerOptions: opt_level L1 (0, the proto default) turns
on CSE and constant folding; L0 (-1) leaves only what do_common_subexpression_elimination
/ do_constant_folding ask for. Identity and dead-node removal run whenever CSE or
constant folding does. max_folded_constant_in_bytes (0 = 10 MiB) bounds each folded
Const. Stateless and not thread-safe for one Graph; independent graphs may be optimized
concurrently.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable
from typing import Any

from common.graph.graph import Graph
from common.optimizer import dependency
from common.optimizer import fuse_elementwise as fusion
from common.optimizer.constant_folding import DEFAULT_MAX_CONSTANT_BYTES, constant_fold
from common.optimizer.cse import eliminate_common_subexpressions
from common.optimizer.lower_functional import lower_functional_ops
from common.optimizer.simplify import remove_dead_nodes, remove_identity_nodes

MAX_ROUNDS = 10  # TF's kMaxRounds
L1, L0 = 0, -1  # OptimizerOptions.Level


@dataclasses.dataclass(frozen=True)
class Passes:
    """Which passes run, resolved from OptimizerOptions."""

    cse: bool = True
    constant_folding: bool = True
    max_constant_bytes: int = DEFAULT_MAX_CONSTANT_BYTES
    fuse_elementwise: bool = False

    @property
    def any(self) -> bool:
        return self.cse or self.constant_folding


@dataclasses.dataclass
class OptimizeStats:
    """What one optimize_graph call did."""

    rounds: int = 0
    functional_lowered: int = 0
    cse_removed: int = 0
    constants_folded: int = 0
    identities_removed: int = 0
    dead_removed: int = 0
    fused_removed: int = 0
    dependencies_removed: int = 0

    @property
    def changed(self) -> bool:
        return bool(
            self.cse_removed
            + self.constants_folded
            + self.identities_removed
            + self.dead_removed
            + self.dependencies_removed
        )


def resolve_passes(options: Any = None, rewrite_options: Any = None) -> Passes:
    """The passes an OptimizerOptions proto (or None: the defaults, L1) and a RewriterConfig
    ask for."""
    fuse = fusion.enabled(options, rewrite_options)
    if options is None:
        return Passes(fuse_elementwise=fuse)
    level = int(getattr(options, "opt_level", L1))
    on = level >= L1
    max_bytes = int(getattr(options, "max_folded_constant_in_bytes", 0) or 0)
    return Passes(
        cse=on or bool(getattr(options, "do_common_subexpression_elimination", False)),
        constant_folding=on or bool(getattr(options, "do_constant_folding", False)),
        max_constant_bytes=max_bytes if max_bytes > 0 else DEFAULT_MAX_CONSTANT_BYTES,
        fuse_elementwise=fuse,
    )


def options_from_config(config: Any) -> Any:
    """The OptimizerOptions of a ConfigProto (config.graph_options.optimizer_options)."""
    return config.graph_options.optimizer_options


def disabled_options() -> Any:
    """OptimizerOptions with every pass off (opt_level L0, global_jit_level OFF: no fusion)."""
    from protos import config_pb2

    return config_pb2.OptimizerOptions(
        opt_level=config_pb2.OptimizerOptions.L0,
        global_jit_level=config_pb2.OptimizerOptions.OFF,
    )


def optimize_graph(
    graph: Graph,
    *,
    options: Any = None,
    keep: Iterable[str] = (),
    rewrite_options: Any = None,
    intra_op_threads: int = 0,
) -> OptimizeStats:
    """Optimize `graph` in place (see the module docstring); returns what was done.
    `intra_op_threads` is the session's ConfigProto.intra_op_parallelism_threads: folded
    kernels whose numbers depend on how TF shards them shard for that pool."""
    passes = resolve_passes(options, rewrite_options)
    keep = frozenset(keep)
    stats = OptimizeStats(functional_lowered=lower_functional_ops(graph, keep))
    if not passes.any:
        if passes.fuse_elementwise:
            stats.fused_removed = fusion.fuse_elementwise(graph, keep)
        return stats
    names = itertools.count()  # folded Const names stay unique across rounds
    dependencies = dependency.enabled(rewrite_options)
    for _ in range(MAX_ROUNDS):
        stats.rounds += 1
        changed = False
        n = remove_dead_nodes(graph, keep)
        stats.dead_removed += n
        n2 = remove_identity_nodes(graph, keep)
        stats.identities_removed += n2
        changed |= bool(n or n2)
        if dependencies:
            n = dependency.optimize_dependencies(graph, keep)
            stats.dependencies_removed += n
            changed |= bool(n)
        if passes.constant_folding:
            n = constant_fold(
                graph,
                max_constant_bytes=passes.max_constant_bytes,
                counter=names,
                intra_op_threads=intra_op_threads,
            )
            if n:
                stats.constants_folded += n
                stats.dead_removed += remove_dead_nodes(graph, keep)
                changed = True
        if passes.cse:
            n = eliminate_common_subexpressions(graph, keep)
            stats.cse_removed += n
            changed |= bool(n)
        if not changed:
            break
    if passes.fuse_elementwise:  # last: the other passes know the original ops only
        stats.fused_removed = fusion.fuse_elementwise(graph, keep)
    return stats
