"""Client, graph building: complex numbers as TensorFlow's math_ops builds them:
tf.complex, tf.math.real, tf.math.imag (Complex, Real, Imag with the matching Tout; a
real tensor passes through real() and gives zeros from imag()), with TF's node names.
Pure graph building; not thread-safe (as a Graph)."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.ops import array_ops


def complex(real: Any, imag: Any, name: str | None = None) -> Any:  # noqa: A001  (TF's name)
    real = convert_to_tensor(real, name="real")
    imag = convert_to_tensor(imag, name="imag")
    with _ops.name_scope(name, "Complex", [real, imag]) as scope:
        kinds = (real.dtype.base_dtype, imag.dtype.base_dtype)
        if kinds == (dtypes.float64, dtypes.float64):
            tout = dtypes.complex128
        elif kinds == (dtypes.float32, dtypes.float32):
            tout = dtypes.complex64
        else:
            raise TypeError(
                "The `real` and `imag` components have incorrect types: "
                f"{real.dtype.name} {imag.dtype.name}. They must be consistent, and one of "
                f"{[dtypes.float32, dtypes.float64]}"
            )
        attrs = {"Tout": tout.as_datatype_enum}
        return apply_op("Complex", [real, imag], attrs, scope).outputs[0]


def _part(op_type: str, input: Any, name: str | None) -> Any:
    with _ops.name_scope(name, op_type, [input]) as scope:
        input = convert_to_tensor(input, name="input")
        if input.dtype.is_complex:
            attrs = {"Tout": input.dtype.real_dtype.as_datatype_enum}
            return apply_op(op_type, [input], attrs, scope).outputs[0]
        if op_type == "Real":
            return input
        return array_ops.zeros_like(input)


def real(input: Any, name: str | None = None) -> Any:
    return _part("Real", input, name)


def imag(input: Any, name: str | None = None) -> Any:
    return _part("Imag", input, name)


def _complex_shape(op: Any) -> list[Any]:
    return [shape_fns.broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape)]


shape_fns.SHAPE_FNS.setdefault("Complex", _complex_shape)
# tf.transpose(conjugate=True) of a complex tensor: a Transpose's shape.
shape_fns.SHAPE_FNS.setdefault("ConjugateTranspose", shape_fns.SHAPE_FNS["Transpose"])
