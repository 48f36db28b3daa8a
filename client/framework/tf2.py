"""Client, graph building: TensorFlow's tf2 switch (tensorflow/python/tf2.py). On by
default, as in TensorFlow 2.x; disable_v2_behavior() turns it off. tf_keras reads it to
pick its v1 initializers ("glorot_uniform" becomes the stateful
tf.compat.v1.glorot_uniform_initializer) in a TF1 program. Process-wide, as TF's."""

from __future__ import annotations

_enabled = True


def enable() -> None:
    global _enabled
    _enabled = True


def disable() -> None:
    global _enabled
    _enabled = False


def enabled() -> bool:
    return _enabled
