"""Client, graph building: TF's resource-variables switch (resource_variables_toggle's
_DEFAULT_USE_RESOURCE). On, as in TensorFlow 2.x, tf.Variable and get_variable build
resource variables (VarHandleOp); off, after tf.compat.v1.disable_resource_variables() or
disable_v2_behavior(), reference variables (VariableV2). A use_resource argument, or a
variable scope's, wins over it. Process-wide, as TensorFlow's flag."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

_default_use_resource = True


# The current variable scope's use_resource (None: not set); client.ops.variable_scope
# installs its lookup when imported (it imports variables, which read this switch).
def _no_scope() -> Any:
    return None


_scope_use_resource: Callable[[], Any] = _no_scope


def set_scope_lookup(lookup: Callable[[], Any]) -> None:
    global _scope_use_resource
    _scope_use_resource = lookup


def enable_resource_variables() -> None:
    global _default_use_resource
    _default_use_resource = True


def disable_resource_variables() -> None:
    global _default_use_resource
    _default_use_resource = False


def resource_variables_enabled() -> bool:
    return _default_use_resource


def use_resource(explicit: Any = None) -> bool:
    """TF's default_variable_creator: the argument, else the variable scope's
    use_resource, else the process-wide default."""
    if explicit is not None:
        return bool(explicit)
    scoped = _scope_use_resource()
    return _default_use_resource if scoped is None else bool(scoped)
