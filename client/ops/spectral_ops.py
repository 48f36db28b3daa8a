"""Client, graph building: tf.signal's real FFTs as TensorFlow's fft_ops wraps them
(rfft, irfft, rfft2d, irfft2d, rfft3d, irfft3d): fft_length inferred from the input's
inner dimensions when not given (irfft: 2 * (n - 1) innermost), the input zero-padded
up to fft_length (irfft: its innermost to fft_length // 2 + 1), and a statically known
fft_length passed as a constant, with TF's node names. Pure graph building; not
thread-safe (as a Graph)."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes, shape_fns
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, math_ops


def _infer_rfft_length(x: Any, rank: int) -> Any:
    inner = x.shape[-rank:]
    if not inner.is_fully_defined():
        return array_ops.shape(x)[-rank:]
    return convert_to_tensor(inner.as_list(), dtypes.int32)


def _infer_irfft_length(x: Any, rank: int) -> Any:
    inner = x.shape[-rank:]
    if not inner.is_fully_defined():
        lengths = array_ops.unstack(array_ops.shape(x)[-rank:])
        lengths[-1] = math_ops.maximum(0, 2 * (lengths[-1] - 1))
        return array_ops.stack(lengths)
    lengths = inner.as_list()
    if lengths:
        lengths[-1] = max(0, 2 * (lengths[-1] - 1))
    return convert_to_tensor(lengths, dtypes.int32)


def _maybe_pad(x: Any, rank: int, fft_length: Any, is_reverse: bool = False) -> Any:
    """x zero-padded on its inner `rank` dims up to fft_length (TF's _maybe_pad_for_rfft)."""
    static = shape_fns.constant_value(fft_length)
    if x.shape.ndims is not None and any(d == 0 for d in x.shape.as_list()):
        return x  # empty tensors are never padded
    if static is not None and x.shape.ndims is not None:
        fft_shape = [int(n) for n in static.reshape(-1)]
        inner = x.shape[-len(fft_shape) :]
        if inner.is_fully_defined():
            if is_reverse:
                fft_shape[-1] = fft_shape[-1] // 2 + 1
            paddings = [[0, max(f - d, 0)] for f, d in zip(fft_shape, inner.as_list())]
            if any(pad > 0 for _, pad in paddings):
                outer = [[0, 0]] * max(x.shape.ndims - len(fft_shape), 0)
                return array_ops.pad(x, outer + paddings)
            return x
    input_rank = array_ops.rank(x)
    inner_shape = array_ops.shape(x)[-rank:]
    outer_dims = math_ops.maximum(0, input_rank - rank)
    outer_paddings = array_ops.zeros([outer_dims], fft_length.dtype)
    if is_reverse:
        fft_length = array_ops.concat([fft_length[:-1], fft_length[-1:] // 2 + 1], 0)
    fft_paddings = math_ops.maximum(0, fft_length - inner_shape)
    paddings = array_ops.concat([outer_paddings, fft_paddings], 0)
    paddings = array_ops.stack([array_ops.zeros_like(paddings), paddings], axis=1)
    return array_ops.pad(x, paddings)


def _static_or_tensor(fft_length: Any) -> Any:
    static = shape_fns.constant_value(fft_length)
    return fft_length if static is None else static


def _rfft(op_type: str, rank: int, default_name: str):
    def fn(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Any:
        with _ops.name_scope(name, default_name, [input_tensor, fft_length]) as scope:
            x = convert_to_tensor(input_tensor, preferred_dtype=dtypes.float32)
            if x.dtype not in (dtypes.float32, dtypes.float64):
                raise ValueError(f"RFFT requires tf.float32 or tf.float64 inputs, got: {x}")
            complex_dtype = dtypes.complex64 if x.dtype == dtypes.float32 else dtypes.complex128
            x.shape.with_rank_at_least(rank)
            if fft_length is None:
                fft_length = _infer_rfft_length(x, rank)
            else:
                fft_length = convert_to_tensor(fft_length, dtypes.int32)
            x = _maybe_pad(x, rank, fft_length)
            attrs = {"Tcomplex": complex_dtype.as_datatype_enum}
            inputs = [x, _static_or_tensor(fft_length)]
            return apply_op(op_type, inputs, attrs, scope).outputs[0]

    fn.__name__ = fn.__qualname__ = default_name
    return fn


def _irfft(op_type: str, rank: int, default_name: str):
    def fn(input_tensor: Any, fft_length: Any = None, name: str | None = None) -> Any:
        with _ops.name_scope(name, default_name, [input_tensor, fft_length]) as scope:
            x = convert_to_tensor(input_tensor, preferred_dtype=dtypes.complex64)
            x.shape.with_rank_at_least(rank)
            if x.dtype not in (dtypes.complex64, dtypes.complex128):
                raise ValueError(f"IRFFT requires tf.complex64 or tf.complex128 inputs, got: {x}")
            if fft_length is None:
                fft_length = _infer_irfft_length(x, rank)
            else:
                fft_length = convert_to_tensor(fft_length, dtypes.int32)
            x = _maybe_pad(x, rank, fft_length, is_reverse=True)
            attrs = {"Treal": x.dtype.real_dtype.as_datatype_enum}
            inputs = [x, _static_or_tensor(fft_length)]
            return apply_op(op_type, inputs, attrs, scope).outputs[0]

    fn.__name__ = fn.__qualname__ = default_name
    return fn


rfft, irfft = _rfft("RFFT", 1, "rfft"), _irfft("IRFFT", 1, "irfft")
rfft2d, irfft2d = _rfft("RFFT2D", 2, "rfft2d"), _irfft("IRFFT2D", 2, "irfft2d")
rfft3d, irfft3d = _rfft("RFFT3D", 3, "rfft3d"), _irfft("IRFFT3D", 3, "irfft3d")


# -- static shapes -------------------------------------------------------------------------
def _real_fft_shape(op: Any) -> list[Any]:
    """TF's RFFT/IRFFT shape fns: inner dims from a constant fft_length (RFFT's innermost
    n // 2 + 1), unknown otherwise."""
    x = op.inputs[0].shape
    rank = {"": 1, "2D": 2, "3D": 3}[op.type.lstrip("IR").replace("FFT", "")]
    if x.ndims is None:
        return [TensorShape(None)]
    lengths = shape_fns.constant_value(op.inputs[1])
    outer = x[:-rank]
    if lengths is None:
        return [outer.concatenate([None] * rank)]
    dims = [int(n) for n in lengths.reshape(-1)]
    if op.type.startswith("RFFT"):
        dims[-1] = dims[-1] // 2 + 1
    return [outer.concatenate(dims)]


for _name in ("RFFT", "IRFFT", "RFFT2D", "IRFFT2D", "RFFT3D", "IRFFT3D"):
    shape_fns.SHAPE_FNS.setdefault(_name, _real_fft_shape)
