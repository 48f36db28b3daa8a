"""Client, graph building: TF's nest for the structures the client passes around (loop
variables, map_fn elems, RNN states, print_v2's inputs): lists, tuples, namedtuples and
dicts are structure, anything else (a Tensor, a TensorArray, a Python value) a leaf.
Dicts flatten in sorted key order and pack back in their own key order, as TF's nest.
Pure functions."""

from __future__ import annotations

from typing import Any


def is_nested(x: Any) -> bool:
    return isinstance(x, (list, tuple, dict))


def flatten(x: Any) -> list[Any]:
    """nest.flatten: the leaves of `x`, depth first."""
    if isinstance(x, dict):
        return [y for k in sorted(x) for y in flatten(x[k])]
    if isinstance(x, (list, tuple)):
        return [y for v in x for y in flatten(v)]
    return [x]


def pack_sequence_as(structure: Any, flat: list[Any]) -> Any:
    """nest.pack_sequence_as: `flat`'s leaves in `structure`'s shape."""
    it = iter(flat)

    def build(s: Any) -> Any:
        if isinstance(s, dict):
            built = {k: build(s[k]) for k in sorted(s)}
            return type(s)((k, built[k]) for k in s)
        if isinstance(s, tuple) and hasattr(type(s), "_fields"):
            return type(s)(*[build(v) for v in s])
        if isinstance(s, (list, tuple)):
            return type(s)(build(v) for v in s)
        return next(it)

    return build(structure)


def map_structure(fn: Any, structure: Any) -> Any:
    return pack_sequence_as(structure, [fn(x) for x in flatten(structure)])
