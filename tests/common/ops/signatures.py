"""Op signature checks shared by the op family tests: the ops whose kernels a module
registers, and our OpDef compared field by field with TensorFlow's."""

from __future__ import annotations

import numpy as np
import pytest

from common.ops import registry


def module_ops(*modules: str) -> list[str]:
    """The ops with a kernel registered by one of `modules` (e.g. "common.ops.grad_ops")."""
    return sorted(
        op.name
        for op in registry.all_ops()
        if any(k.factory.__module__ in modules for k in registry.kernels_for(op.name))
    )


def _tf_default(attr, value):
    which = value.WhichOneof("value")
    if which == "list":
        lst = value.list
        if attr.type == "list(int)":
            return list(lst.i)
        if attr.type == "list(type)":
            return [int(t) for t in lst.type]
        if attr.type == "list(float)":
            return [float(np.float32(f)) for f in lst.f]
        return [s.decode() for s in lst.s]
    if which == "type":
        return int(value.type)
    if which == "shape":
        if value.shape.unknown_rank:
            return None
        return tuple(None if d.size == -1 else d.size for d in value.shape.dim)
    if which == "s":
        return value.s.decode()
    if which == "f":
        return float(np.float32(value.f))
    return getattr(value, which)


def _ours_default(attr):
    v = attr.default
    if attr.type == "type":
        return int(v)
    if attr.type == "float":
        return float(np.float32(v))
    if attr.type == "list(float)":
        return [float(np.float32(f)) for f in v]
    return v


def assert_signature_matches_tensorflow(name: str) -> None:
    op_def_registry = pytest.importorskip("tensorflow.python.framework.op_def_registry")
    theirs = op_def_registry.get(name)
    assert theirs is not None, f"TensorFlow has no op {name}"
    ours = registry.lookup_op(name)
    for our_args, tf_args in (
        (ours.input_args, theirs.input_arg),
        (ours.output_args, theirs.output_arg),
    ):
        assert [
            (a.name, int(a.type), a.type_attr, a.number_attr, a.type_list_attr, a.is_ref)
            for a in our_args
        ] == [
            (a.name, a.type, a.type_attr, a.number_attr, a.type_list_attr, a.is_ref)
            for a in tf_args
        ], name
    assert [a.name for a in ours.attrs] == [a.name for a in theirs.attr], name
    for tf_attr in theirs.attr:
        a = ours.attr(tf_attr.name)
        where = f"{name}.{a.name}"
        assert a.type == tf_attr.type, where
        assert (a.has_minimum, a.minimum) == (tf_attr.has_minimum, tf_attr.minimum), where
        assert a.has_default == tf_attr.HasField("default_value"), where
        if a.has_default:
            assert _ours_default(a) == _tf_default(tf_attr, tf_attr.default_value), where
        allowed = tf_attr.allowed_values.list
        if tf_attr.type in ("type", "list(type)") and allowed.type:
            assert [int(t) for t in a.allowed_values] == list(allowed.type), where
        elif allowed.s:
            assert list(a.allowed_values) == [s.decode() for s in allowed.s], where
        else:
            assert a.allowed_values is None, where
    assert ours.is_commutative == theirs.is_commutative, name
    assert ours.is_aggregate == theirs.is_aggregate, name
    assert ours.is_stateful == theirs.is_stateful, name
    assert ours.allows_uninitialized_input == theirs.allows_uninitialized_input, name
