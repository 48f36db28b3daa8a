"""Client API: batch renormalization for tf.compat.v1.layers.BatchNormalization(renorm=True),
as tf_keras builds it in graph mode. Three more non-trainable variables: "moving_stddev"
(what inference's moving_variance is derived from), "renorm_mean" and "renorm_stddev"
(the averages the corrections r and d are taken against, updated by renorm_momentum).
In training the batch is normalized with scale r * gamma and offset d * gamma + beta
(r, d clipped by renorm_clipping, without gradient); inference is plain batch norm."""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.ops import array_ops, control_flow_ops, math_ops, nn_ops, state_ops
from client.ops.ref_variable import is_ref

CLIPPING_KEYS = ("rmax", "rmin", "dmax")


def check_clipping(renorm_clipping: Any) -> dict[str, Any]:
    renorm_clipping = dict(renorm_clipping or {})
    if set(renorm_clipping) - set(CLIPPING_KEYS):
        raise ValueError(
            "Received invalid keys for `renorm_clipping` argument: "
            f"{renorm_clipping}. Supported values: {list(CLIPPING_KEYS)}."
        )
    return renorm_clipping


def add_renorm_weights(layer: Any, shape: list[int], dtype: Any) -> None:
    """moving_stddev, renorm_mean and renorm_stddev, in tf_keras's order; the stddevs start
    at the square root of the moving variance's initial value ("Initializer/Sqrt")."""

    def stddev_initializer(*args: Any, **kwargs: Any) -> Any:
        return math_ops.sqrt(layer.moving_variance_initializer(*args, **kwargs))

    def weight(name: str, initializer: Any) -> Any:
        return layer.add_weight(name, shape, dtype, initializer, trainable=False)

    layer.moving_stddev = weight("moving_stddev", stddev_initializer)
    layer.renorm_mean = weight("renorm_mean", layer.moving_mean_initializer)
    layer.renorm_stddev = weight("renorm_stddev", stddev_initializer)


def correction_and_moments(
    layer: Any, mean: Any, variance: Any, training: Any = True
) -> tuple[Any, Any, Any, Any]:
    """tf_keras's _renorm_correction_and_moments in training: (r, d, mean, variance), the
    last two carrying control dependencies on the renorm averages' updates, which use the
    batch's moments after r and d have read the averages."""
    stddev = math_ops.sqrt(variance + layer.epsilon)
    renorm_stddev = math_ops.maximum(layer.renorm_stddev, math_ops.sqrt(layer.epsilon))
    r = stddev / renorm_stddev
    d = (mean - layer.renorm_mean) / renorm_stddev
    with _ops.control_dependencies([r, d]):
        mean = array_ops.identity(mean)
        stddev = array_ops.identity(stddev)
    clip = layer.renorm_clipping
    if clip.get("rmin") is not None:
        r = math_ops.maximum(r, clip["rmin"])
    if clip.get("rmax") is not None:
        r = math_ops.minimum(r, clip["rmax"])
    if clip.get("dmax") is not None:
        d = math_ops.maximum(d, -clip["dmax"])
        d = math_ops.minimum(d, clip["dmax"])
    if training is not True:  # r = 1, d = 0 when not training; tf_keras' conds
        r_value, d_value = r, d
        r = control_flow_ops.cond(
            training, lambda: r_value, lambda: array_ops.ones_like_v2(r_value)
        )
        d = control_flow_ops.cond(training, lambda: d_value, lambda: array_ops.zeros_like(d_value))
    updates = [
        update_renorm_variable(layer, var, value, training)
        for var, value in ((layer.renorm_mean, mean), (layer.renorm_stddev, stddev))
    ]
    with _ops.control_dependencies(updates):
        return r, d, array_ops.identity(mean), array_ops.identity(variance)


def update_renorm_variable(layer: Any, variable: Any, value: Any, training: Any) -> Any:
    """tf_keras' _update_renorm_variable: the renorm average's update, under a training
    tensor a cond whose false branch is the variable's Identity."""
    value = array_ops.identity(value)
    if training is True:
        return layer._assign_moving_average(variable, value, layer.renorm_momentum)
    return control_flow_ops.cond(
        training,
        lambda: _read_after(
            variable, layer._assign_moving_average(variable, value, layer.renorm_momentum)
        ),
        lambda: array_ops.identity(variable),
    )


def _read_after(variable: Any, update: Any) -> Any:
    """A cond branch's value of an update: TF's _UnreadVariable converted (a read after
    it) for a resource variable, the update's own value for a reference."""
    if is_ref(variable):
        return update
    with _ops.control_dependencies([update]):
        return variable._read_variable_op()


def compose(r: Any, d: Any, scale: Any, offset: Any) -> tuple[Any, Any]:
    """tf_keras's _compose_transforms: x * r + d, then * scale + offset."""
    if scale is not None:
        r, d = r * scale, d * scale
    if offset is not None:
        d = d + offset
    return r, d


def update_variance(layer: Any, new_variance: Any, training: Any = True) -> Any:
    """The moving_variance update of renorm; under a training tensor a cond whose false
    branch reads moving_variance (tf_keras' variance_update)."""
    if training is True:
        return _update_variance(layer, new_variance)
    variable = layer.moving_variance
    return control_flow_ops.cond(
        training,
        lambda: _read_after(variable, _update_variance(layer, new_variance)),
        lambda: convert_to_tensor(variable),
    )


def _update_variance(layer: Any, new_variance: Any) -> Any:
    """moving_stddev moves toward sqrt(variance + epsilon); moving_variance is then set to
    relu(moving_stddev^2 - epsilon) ("AssignNewValue"). Returns that assignment."""
    stddev = layer.moving_stddev
    update = layer._assign_moving_average(
        stddev, math_ops.sqrt(new_variance + layer.epsilon), layer.momentum
    )
    if is_ref(stddev):  # tf_keras' ref path: the AssignSub's value, then an Assign
        value = nn_ops.relu(update * update - layer.epsilon)
        variable = layer.moving_variance
        with _ops.name_scope(None, "AssignNewValue") as scope, _ops.colocate_with(variable):
            return state_ops.assign(variable, value, name=scope)
    # TF's assign_sub returns an unread variable: each use of it reads after the update.
    with _ops.control_dependencies([update]):
        left = stddev._read_variable_op()
    with _ops.name_scope(None, "mul") as scope:
        with _ops.control_dependencies([update]):
            right = stddev._read_variable_op()
        square = apply_op("Mul", [left, right], {}, scope).outputs[0]
    value = nn_ops.relu(square - layer.epsilon)
    variable = layer.moving_variance
    with _ops.name_scope(None, "AssignNewValue") as scope, _ops.colocate_with(variable.handle):
        assign = variable.assign(value, name=scope, read_value=False)
        with _ops.control_dependencies([assign]):
            variable._lazy_read()
    return assign
