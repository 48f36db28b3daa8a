"""Client, training: the global step (tf.train.get_global_step, create_global_step,
get_or_create_global_step, global_step), as TensorFlow's training_util.py."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.ops import array_ops
from client.ops.variables import Variable, VariableAggregation

GraphKeys = _ops.GraphKeys


def get_global_step(graph: _ops.Graph | None = None) -> Any:
    g = graph or _ops.get_default_graph()
    got = g.get_collection(GraphKeys.GLOBAL_STEP)
    return got[0] if got else None


def create_global_step(graph: _ops.Graph | None = None) -> Any:
    g = graph or _ops.get_default_graph()
    if get_global_step(g) is not None:
        raise ValueError('"global_step" already exists.')
    with g.as_default(), g.name_scope(None):
        # TF's get_variable with zeros_initializer: the initial value is
        # global_step/Initializer/zeros, as a meta graph's VariableDef names it.
        return Variable(
            lambda: array_ops.zeros([], dtypes.int64),
            name="global_step",
            trainable=False,
            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP],
            aggregation=VariableAggregation.ONLY_FIRST_REPLICA,
        )


def get_or_create_global_step(graph: _ops.Graph | None = None) -> Any:
    return get_global_step(graph) or create_global_step(graph)


def global_step(sess: Any, global_step_tensor: Any) -> int:
    """tf.train.global_step: the value of `global_step_tensor` as a Python int."""
    return int(sess.run(global_step_tensor))
