"""Client, graph building: TF's control-flow-v2 switch (control_flow_util.ENABLE_CONTROL_FLOW_V2).
On, as in TensorFlow 2.x, tf.Assert guards its data with a functional If (cond_v2); off,
after tf.compat.v1.disable_control_flow_v2() or disable_v2_behavior(), with a v1 cond of
Switch/Merge. tf.cond and tf.while_loop build v1 control flow either way (the runtime
lowers If/While to the same Switch/Merge frames). Process-wide, as TensorFlow's flag."""

from __future__ import annotations

_enabled = True


def enable_control_flow_v2() -> None:
    global _enabled
    _enabled = True


def disable_control_flow_v2() -> None:
    global _enabled
    _enabled = False


def control_flow_v2_enabled() -> bool:
    return _enabled
