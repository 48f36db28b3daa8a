"""Test helpers (ops stage): run one kernel without an executor, compare an op's
signature and results with TensorFlow's (the oracle, when installed)."""

from __future__ import annotations

import types
from typing import Any

import numpy as np

from common import dtypes
from common.ops import registry
from common.ops.registry import KernelConstruction, OpKernelContext
from common.resource_mgr import ResourceMgr

DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


def fake_step(resource_mgr: ResourceMgr | None = None) -> types.SimpleNamespace:
    return types.SimpleNamespace(
        step_id=1, device=DEVICE, resource_mgr=resource_mgr or ResourceMgr()
    )


def construction(op: str, inputs: list, attrs: dict | None = None, node_name: str = "n"):
    """A KernelConstruction with defaults filled and type attrs inferred from inputs."""
    op_def = registry.lookup_op(op)
    explicit = dict(attrs or {})
    full = {a.name: a.default for a in op_def.attrs if a.has_default}
    full.update(explicit)
    pos = 0
    for arg in op_def.input_args:
        if arg.number_attr:
            n = full.setdefault(arg.number_attr, len(inputs) - len(op_def.input_args) + 1)
            chunk = inputs[pos : pos + n]
        elif arg.type_list_attr:
            chunk = inputs[pos:]
            if arg.type_list_attr not in explicit:
                full[arg.type_list_attr] = [_dtype_of(x) for x in chunk]
        else:
            chunk = inputs[pos : pos + 1]
        pos += len(chunk)
        if arg.type_attr and chunk and not arg.is_ref and arg.type_attr not in explicit:
            full[arg.type_attr] = _dtype_of(chunk[0])
    return KernelConstruction(node_name, op, full, (), (), DEVICE)


def _dtype_of(x: Any) -> dtypes.DataType:
    arr = np.asarray(x)
    if arr.dtype == object and arr.size and not isinstance(arr.flat[0], bytes):
        return dtypes.DataType.DT_RESOURCE
    return dtypes.from_numpy(arr.dtype)


def run(op: str, inputs: list, attrs: dict | None = None, step: Any = None, node_name: str = "n"):
    """Construct the kernel and run it once; returns the list of outputs."""
    k = construction(op, inputs, attrs, node_name)
    compute = registry.lookup_kernel(op, "CPU", "", node_name).factory(k)
    ctx = OpKernelContext(step if step is not None else fake_step(), (0, 0), node_name)
    return compute(ctx, list(inputs))


def run1(op: str, *inputs, **attrs):
    return run(op, list(inputs), attrs)[0]


# ---------------------------------------------------------------------------------------
# TensorFlow oracle
# ---------------------------------------------------------------------------------------


def _py_default(attr_value: Any, tf_dtype_enum=int) -> Any:
    which = attr_value.WhichOneof("value")
    if which == "s":
        return attr_value.s.decode()
    if which in ("i", "f", "b"):
        return getattr(attr_value, which)
    if which == "type":
        return dtypes.DataType(attr_value.type)
    if which == "shape":
        if attr_value.shape.unknown_rank:
            return None
        return tuple(None if d.size == -1 else d.size for d in attr_value.shape.dim)
    if which == "list":
        lst = attr_value.list
        for field in ("s", "i", "f", "b", "type", "shape"):
            if len(getattr(lst, field)):
                raise NotImplementedError(field)
        return []
    raise NotImplementedError(which)


def op_def_mismatches(op: str) -> list[str]:
    """Differences between our signature of `op` and TensorFlow's OpDef."""
    from tensorflow.python.framework import op_def_registry

    tf_def = op_def_registry.get(op)
    if tf_def is None:
        return [f"TensorFlow has no op {op}"]
    ours = registry.lookup_op(op)
    problems: list[str] = []

    def check(what: str, a: Any, b: Any) -> None:
        if a != b:
            problems.append(f"{op} {what}: ours={a!r} tf={b!r}")

    for kind, mine, theirs in (
        ("input", ours.input_args, tf_def.input_arg),
        ("output", ours.output_args, tf_def.output_arg),
    ):
        check(f"{kind} names", [a.name for a in mine], [a.name for a in theirs])
        for a, t in zip(mine, theirs):
            check(f"{kind} {a.name} type", int(a.type), t.type)
            check(f"{kind} {a.name} type_attr", a.type_attr, t.type_attr)
            check(f"{kind} {a.name} number_attr", a.number_attr, t.number_attr)
            check(f"{kind} {a.name} type_list_attr", a.type_list_attr, t.type_list_attr)
            check(f"{kind} {a.name} is_ref", a.is_ref, t.is_ref)
    check("attr names", [a.name for a in ours.attrs], [a.name for a in tf_def.attr])
    for a, t in zip(ours.attrs, tf_def.attr):
        check(f"attr {a.name} type", a.type, t.type)
        check(f"attr {a.name} has_default", a.has_default, t.HasField("default_value"))
        if a.has_default and t.HasField("default_value"):
            check(f"attr {a.name} default", a.default, _py_default(t.default_value))
        check(f"attr {a.name} has_minimum", a.has_minimum, t.has_minimum)
        check(f"attr {a.name} minimum", a.minimum, t.minimum)
        tf_allowed = None
        if t.HasField("allowed_values"):
            lst = t.allowed_values.list
            tf_allowed = {dtypes.DataType(x) for x in lst.type} or {s.decode() for s in lst.s}
        check(
            f"attr {a.name} allowed",
            set(a.allowed_values) if a.allowed_values is not None else None,
            tf_allowed,
        )
    check("is_stateful", ours.is_stateful, tf_def.is_stateful)
    check(
        "allows_uninitialized_input",
        ours.allows_uninitialized_input,
        tf_def.allows_uninitialized_input,
    )
    return problems


def tf_attr(value: Any) -> Any:
    import tensorflow as tf

    if isinstance(value, dtypes.DataType):
        return tf.dtypes.as_dtype(int(value))
    return value


def tf_outputs(result: Any) -> list[np.ndarray]:
    if result is None:
        return []
    if isinstance(result, (list, tuple)):
        return [np.asarray(r) for r in result]
    return [np.asarray(result)]


def tf_run(op: str, inputs: dict, attrs: dict) -> list[np.ndarray]:
    import tensorflow as tf

    fn = getattr(tf.raw_ops, op)

    def tensor(v: Any) -> Any:  # keep the numpy dtype (raw_ops would apply attr defaults)
        return [tf.constant(x) for x in v] if isinstance(v, list) else tf.constant(v)

    kwargs = {
        **{k: tensor(v) for k, v in inputs.items()},
        **{k: tf_attr(v) for k, v in attrs.items()},
    }
    return tf_outputs(fn(**kwargs))


# tf.raw_ops keyword names that differ from the OpDef's arg and attr names.
PYTHON_NAMES = {
    "ExpandDims": {"axis": "dim"},
    "Split": {"axis": "split_dim"},
    "SplitV": {"axis": "split_dim"},
    "Where": {"condition": "input"},
    "Squeeze": {"axis": "squeeze_dims"},
}


def ours_run(op: str, inputs: dict, attrs: dict) -> list:
    op_def = registry.lookup_op(op)
    rename = PYTHON_NAMES.get(op, {})
    inputs = {rename.get(k, k): v for k, v in inputs.items()}
    attrs = {rename.get(k, k): v for k, v in attrs.items()}
    flat: list = []
    for arg in op_def.input_args:
        v = inputs[arg.name]
        if arg.number_attr and isinstance(v, list):
            attrs.setdefault(arg.number_attr, len(v))  # tf.raw_ops infers it the same way
        if arg.number_attr or arg.type_list_attr:
            flat.extend(np.asarray(x) for x in v)
        else:
            flat.append(np.asarray(v))
    return run(op, flat, attrs)


def assert_same_as_tf(op: str, inputs: dict, attrs: dict | None = None, *, message=True) -> None:
    """Run `op` on TensorFlow (eager raw_ops) and on our kernel; values and dtypes must be
    identical, or both must fail with the same error class (and our message inside TF's)."""
    import tensorflow as tf

    attrs = attrs or {}
    try:
        expected = tf_run(op, inputs, attrs)
    except tf.errors.OpError as e:
        try:
            got = ours_run(op, inputs, attrs)
        except Exception as ours:  # noqa: BLE001  compared below
            assert type(ours).__name__ == type(e).__name__, (op, ours, e.message)
            if message:
                assert str(ours) in e.message, (op, str(ours), e.message)
            return
        raise AssertionError(
            f"{op}: TensorFlow failed ({e.message}) but we returned {got}"
        ) from None
    got = ours_run(op, inputs, attrs)
    assert len(got) == len(expected), (op, len(got), len(expected))
    for g, x in zip(got, expected):
        g = np.asarray(g)
        assert g.dtype == x.dtype, (op, g.dtype, x.dtype)
        assert g.shape == x.shape, (op, g.shape, x.shape)
        np.testing.assert_array_equal(g, x, err_msg=op)
