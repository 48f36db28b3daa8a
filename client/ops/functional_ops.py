"""Client, graph building: TF1's higher-order functions over the first dimension of
tensors — tf.map_fn, tf.foldl, tf.foldr, tf.scan — as TF builds them with v1 control
flow: the elements unstacked into TensorArrays, one while_loop reading element i, and
(map_fn, scan) the results written to TensorArrays and stacked."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.nest import flatten as _flatten
from client.framework.nest import is_nested as _is_nested
from client.framework.nest import pack_sequence_as as _pack_as
from client.framework.op_builder import constant, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, control_flow_ops
from client.ops import variable_scope as vs
from client.ops.tensor_array_ops import TensorArray

# -- nest, as TF's: lists, tuples (namedtuples) and dicts (sorted keys) are structure ------


def _assert_same_structure(a: Any, b: Any) -> None:
    def shape_of(s: Any) -> Any:
        if isinstance(s, dict):
            return ("dict", tuple((k, shape_of(s[k])) for k in sorted(s)))
        if isinstance(s, (list, tuple)):
            return ("seq", tuple(shape_of(v) for v in s))
        return "."

    if shape_of(a) != shape_of(b):
        raise ValueError(f"The two structures don't have the same nested structure: {a} vs {b}")


class _CachingDeviceScope:
    """TF's higher-order functions read variables made inside fn on the reading op's
    device (caching_device = op.device) unless the variable scope sets one."""

    def __enter__(self) -> None:
        self._scope = vs.get_variable_scope()
        self._set = self._scope.caching_device is None
        if self._set:
            self._scope.set_caching_device(lambda op: op.device)

    def __exit__(self, *exc: Any) -> None:
        if self._set:
            self._scope.set_caching_device(None)


def _static_length(elems_flat: list[Any]) -> TensorShape:
    """The elements' common leading dimension, as a rank-1 shape (its dim may be None)."""
    n_static = TensorShape([elems_flat[0].shape.with_rank_at_least(1)[0]])
    for t in elems_flat[1:]:
        n_static.assert_is_compatible_with(TensorShape([t.shape.with_rank_at_least(1)[0]]))
    return n_static


def _length(elems_flat: list[Any]) -> tuple[TensorShape, Any]:
    n_static = _static_length(elems_flat)
    return n_static, n_static[0] or array_ops.shape(elems_flat[0])[0]


def _check_callable(fn: Any) -> None:
    if not callable(fn):
        raise TypeError(f"{fn!r} is not callable. Please provide a callable function.")


def map_fn(
    fn: Callable[..., Any], elems: Any, dtype: Any = None, parallel_iterations: int | None = None,
    back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True,
    name: str | None = None, fn_output_signature: Any = None,
) -> Any:  # fmt: skip
    """fn applied to each slice elems[i] (a structure of tensors sliced alike); the
    results stacked. dtype / fn_output_signature give fn's output dtypes when they
    differ from elems'."""
    if fn_output_signature is None:
        fn_output_signature = dtype
    if not callable(fn):
        raise TypeError(f"The provided function {fn!r} is not callable.fn must be callable.")
    parallel_iterations = parallel_iterations or 10
    elems_flat = _flatten(elems)
    if not elems_flat:
        raise ValueError(
            "elems must be a Tensor or (possibly nested) sequence of Tensors. "
            f"Got {elems}, which does not contain any Tensors."
        )
    with _ops.name_scope(name, "map", elems_flat), _CachingDeviceScope():
        elems_flat = [convert_to_tensor(t, name="elem") for t in elems_flat]
        if elems_flat[0].shape.ndims is not None and elems_flat[0].shape.ndims < 1:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
        n_static, n = _length(elems_flat)
        # TF's result signature is each element's most general spec: any shape.
        if fn_output_signature is None:
            out_structure = elems
            out_dtypes = [t.dtype.base_dtype for t in elems_flat]
        else:
            out_structure = fn_output_signature
            out_dtypes = [dtypes.as_dtype(d) for d in _flatten(out_structure)]
        elems_ta = [
            TensorArray(dtype=t.dtype, size=n, dynamic_size=False, infer_shape=True)
            for t in elems_flat
        ]
        elems_ta = [ta.unstack(t) for ta, t in zip(elems_ta, elems_flat)]
        i = constant(0)
        any_shape = TensorShape(None)
        result_ta = [
            TensorArray(
                dtype=d,
                size=n,
                dynamic_size=False,
                infer_shape=infer_shape,
                element_shape=any_shape,
            )  # fmt: skip
            for d in out_dtypes
        ]

        def compute(i: Any, tas: Any) -> Any:
            value = _pack_as(elems, [ta.read(i) for ta in elems_ta])
            result = fn(value)
            _assert_same_structure(out_structure, result)
            flat = [convert_to_tensor(r) for r in _flatten(result)]
            tas = [ta.write(i, v) for ta, v in zip(tas, flat)]
            return (i + 1, tas)

        _, r_a = control_flow_ops.while_loop(
            lambda i, _: i < n, compute, (i, result_ta),
            parallel_iterations=parallel_iterations, back_prop=back_prop,
            swap_memory=swap_memory, maximum_iterations=n,
        )  # fmt: skip
        results = [r.stack() for r in r_a]
        for r in results:
            r.set_shape(n_static.concatenate(r.shape[1:]))
        return _pack_as(out_structure, results)


def _fold(
    fn: Callable[..., Any], elems: Any, initializer: Any, parallel_iterations: int,
    back_prop: bool, swap_memory: bool, name: str | None, default_name: str, reverse: bool,
) -> Any:  # fmt: skip
    _check_callable(fn)
    with _ops.name_scope(name, default_name, [elems]), _CachingDeviceScope():
        elems_flat = [convert_to_tensor(e, name="elem") for e in _flatten(elems)]
        n = elems_flat[0].shape[0] if elems_flat[0].shape.ndims else None
        n = n if n is not None else array_ops.shape(elems_flat[0])[0]
        tas = [
            TensorArray(dtype=e.dtype, size=n, dynamic_size=False, infer_shape=True).unstack(e)
            for e in elems_flat
        ]

        def read(idx: Any) -> Any:
            return _pack_as(elems, [ta.read(idx) for ta in tas])

        if reverse:
            if initializer is None:
                i = n - 1
                a = read(i)
            else:
                i, a = n, initializer

            def compute(i: Any, a: Any) -> Any:
                i -= 1
                return [i, fn(a, read(i))]

            cond = lambda i, a: i > 0  # noqa: E731
        else:
            if initializer is None:
                a = read(0)
                i = constant(1)
            else:
                a, i = initializer, constant(0)

            def compute(i: Any, a: Any) -> Any:
                a = fn(a, read(i))
                return [i + 1, a]

            cond = lambda i, a: i < n  # noqa: E731
        _, r_a = control_flow_ops.while_loop(
            cond, compute, [i, a], parallel_iterations=parallel_iterations,
            back_prop=back_prop, swap_memory=swap_memory, maximum_iterations=n,
        )  # fmt: skip
        return r_a


def foldl(
    fn: Callable[..., Any], elems: Any, initializer: Any = None, parallel_iterations: int = 10,
    back_prop: bool = True, swap_memory: bool = False, name: str | None = None,
) -> Any:  # fmt: skip
    """fn(...fn(fn(initializer, elems[0]), elems[1])..., elems[n-1]); without an
    initializer the fold starts from elems[0]."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name,
                 "foldl", reverse=False)  # fmt: skip


def foldr(
    fn: Callable[..., Any], elems: Any, initializer: Any = None, parallel_iterations: int = 10,
    back_prop: bool = True, swap_memory: bool = False, name: str | None = None,
) -> Any:  # fmt: skip
    """foldl from the last element to the first."""
    return _fold(fn, elems, initializer, parallel_iterations, back_prop, swap_memory, name,
                 "foldr", reverse=True)  # fmt: skip


def scan(
    fn: Callable[..., Any], elems: Any, initializer: Any = None, parallel_iterations: int = 10,
    back_prop: bool = True, swap_memory: bool = False, infer_shape: bool = True,
    reverse: bool = False, name: str | None = None,
) -> Any:  # fmt: skip
    """Every intermediate accumulator of foldl (or, reverse=True, foldr), stacked."""
    _check_callable(fn)
    in_nested = _is_nested(elems)
    out_struct = elems if initializer is None else initializer
    out_nested = _is_nested(out_struct)

    def pack_in(x: list[Any]) -> Any:
        return _pack_as(elems, x) if in_nested else x[0]

    def pack_out(x: list[Any]) -> Any:
        return _pack_as(out_struct, x) if out_nested else x[0]

    elems_flat = _flatten(elems)
    with _ops.name_scope(name, "scan", elems_flat), _CachingDeviceScope():
        elems_flat = [convert_to_tensor(e, name="elem") for e in elems_flat]
        n = elems_flat[0].shape[0] if elems_flat[0].shape.ndims else None
        n = n if n is not None else array_ops.shape(elems_flat[0])[0]
        elems_ta = [
            TensorArray(
                dtype=e.dtype,
                size=n,
                dynamic_size=False,
                element_shape=e.shape[1:],
                infer_shape=True,
            )  # fmt: skip
            for e in elems_flat
        ]
        elems_ta = [ta.unstack(e) for ta, e in zip(elems_ta, elems_flat)]
        if initializer is None:
            a_flat = [ta.read(n - 1 if reverse else 0) for ta in elems_ta]
            i = 1
        else:
            a_flat = [convert_to_tensor(x) for x in _flatten(initializer)]
            i = 0
        accs_ta = [
            TensorArray(
                dtype=a.dtype,
                size=n,
                element_shape=a.shape if infer_shape else None,
                dynamic_size=False,
                infer_shape=infer_shape,
            )  # fmt: skip
            for a in a_flat
        ]
        if initializer is None:
            accs_ta = [ta.write(n - 1 if reverse else 0, a) for ta, a in zip(accs_ta, a_flat)]

        def compute(i: Any, a_flat: Any, tas: Any) -> Any:
            packed_elems = pack_in([ta.read(i) for ta in elems_ta])
            a_out = fn(pack_out(a_flat), packed_elems)
            _assert_same_structure(out_struct, a_out)
            flat_out = _flatten(a_out) if out_nested else [a_out]
            tas = [ta.write(i, v) for ta, v in zip(tas, flat_out)]
            return (i - 1 if reverse else i + 1, flat_out, tas)

        if reverse:
            initial_i = n - 1 - i
            cond = lambda i, _1, _2: i >= 0  # noqa: E731
        else:
            initial_i = i
            cond = lambda i, _1, _2: i < n  # noqa: E731
        _, _, r_a = control_flow_ops.while_loop(
            cond, compute, (initial_i, a_flat, accs_ta),
            parallel_iterations=parallel_iterations, back_prop=back_prop,
            swap_memory=swap_memory, maximum_iterations=n,
        )  # fmt: skip
        results = [r.stack() for r in r_a]
        n_static = _static_length(elems_flat)
        for r in results:
            r.set_shape(n_static.concatenate(r.shape[1:]))
        return pack_out(results)
