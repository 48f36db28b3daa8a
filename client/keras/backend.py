"""Client API: tf.keras.backend for TF1 graph programs (tf_keras' backend in graph mode).

Per-graph state, as tf_keras keeps it: the counters that name layers ("dense",
"dense_1" ...), the learning-phase placeholder ("keras_learning_phase", a
PlaceholderWithDefault of False) or the value set_learning_phase fixed, and the session
get_session hands out. Graph building only: not thread-safe.
"""

from __future__ import annotations

import collections
import weakref
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.ops import array_ops

_FLOATX = "float32"
_EPSILON = 1e-7
# graph -> {generic name -> count}: tf_keras' PER_GRAPH_OBJECT_NAME_UIDS.
_OBJECT_NAME_UIDS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
# graph -> learning phase (a bool tensor, or the 0/1 set_learning_phase fixed).
_LEARNING_PHASES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SESSION: dict[str, Any] = {"session": None}


def floatx() -> str:
    return _FLOATX


def set_floatx(value: str) -> None:
    global _FLOATX
    _FLOATX = str(dtypes.as_dtype(value).name)


def epsilon() -> float:
    return _EPSILON


def set_epsilon(value: float) -> None:
    global _EPSILON
    _EPSILON = float(value)


def get_graph() -> Any:
    return _ops.get_default_graph()


def unique_object_name(name: str, zero_based: bool = True) -> str:
    """tf_keras' unique_object_name: "dense", "dense_1" ... per graph (zero_based), or
    "input_1", "input_2" ... (not)."""
    uids = _OBJECT_NAME_UIDS.setdefault(get_graph(), collections.defaultdict(int))
    number = uids[name]
    uids[name] += 1
    if zero_based:
        return name if number == 0 else f"{name}_{number}"
    return f"{name}_{number + 1}"


def reset_uids() -> None:
    _OBJECT_NAME_UIDS.pop(get_graph(), None)


def learning_phase() -> Any:
    """The graph's learning phase: set_learning_phase's value, else a bool
    PlaceholderWithDefault(False) named "keras_learning_phase" at the root scope."""
    graph = get_graph()
    if graph not in _LEARNING_PHASES:
        with graph.name_scope(None), graph.control_dependencies(None):
            _LEARNING_PHASES[graph] = array_ops.placeholder_with_default(
                False, shape=(), name="keras_learning_phase"
            )
    return _LEARNING_PHASES[graph]


def set_learning_phase(value: int) -> None:
    if value not in (0, 1):
        raise ValueError("Expected learning phase to be 0 or 1.")
    _LEARNING_PHASES[get_graph()] = value


def get_session() -> Any:
    """The session set_session gave, else the default session, else a new one on the
    default graph (kept, as tf_keras keeps its own)."""
    from client.session import Session

    default = _ops.get_default_session()
    if default is not None:
        return default
    if _SESSION["session"] is None:
        _SESSION["session"] = Session()
    return _SESSION["session"]


def set_session(session: Any) -> None:
    _SESSION["session"] = session


def clear_session() -> None:
    """tf_keras' clear_session in graph mode: a fresh default graph, fresh name counters
    and learning phase, no kept session."""
    from client.framework.ops import reset_default_graph

    _SESSION["session"] = None
    _OBJECT_NAME_UIDS.clear()
    _LEARNING_PHASES.clear()
    reset_default_graph()


def name_scope(name: str) -> Any:
    return _ops.name_scope(name)


def placeholder(
    shape: Any = None, ndim: int | None = None, dtype: Any = None, name: str | None = None
) -> Any:
    if shape is None and ndim is not None:
        shape = (None,) * ndim
    return array_ops.placeholder(dtype or floatx(), shape, name=name)


def get_value(x: Any) -> Any:
    return get_session().run(x)


def batch_get_value(xs: list[Any]) -> list[Any]:
    return get_session().run(list(xs)) if xs else []


def set_value(x: Any, value: Any) -> None:
    x.load(value, get_session())


def eval(x: Any) -> Any:  # noqa: A001 - tf.keras.backend.eval
    return get_value(x)
