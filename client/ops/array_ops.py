"""Client, graph building: array ops (tf.reshape, tf.concat, slicing ...), TF's names and
signatures, built through `op_builder.apply_op`."""

from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import (
    _is_tensor_like,
    apply_op,
    constant,
    convert_to_tensor,
    register_autopack,
)
from client.framework.tensor_shape import TensorShape

newaxis = None


def _out(op: Any, i: int = 0) -> Any:
    return op.outputs[i]


def placeholder(dtype: Any, shape: Any = None, name: str | None = None) -> Any:
    return _out(
        apply_op(
            "Placeholder",
            [],
            {
                "dtype": dtypes.as_dtype(dtype),
                "shape": TensorShape(shape).as_tuple() if shape is not None else None,
            },
            name,
        )
    )


def placeholder_with_default(input: Any, shape: Any, name: str | None = None) -> Any:
    return _out(
        apply_op("PlaceholderWithDefault", [input], {"shape": TensorShape(shape).as_tuple()}, name)
    )


def identity(input: Any, name: str | None = None) -> Any:
    return _out(apply_op("Identity", [input], {}, name))


def identity_n(input: Any, name: str | None = None) -> list[Any]:
    return list(apply_op("IdentityN", [list(input)], {}, name).outputs)


def stop_gradient(input: Any, name: str | None = None) -> Any:
    return _out(apply_op("StopGradient", [input], {}, name))


def reshape(tensor: Any, shape: Any, name: str | None = None) -> Any:
    return _out(apply_op("Reshape", [tensor, _int_tensor(shape)], {}, name))


def _int_tensor(v: Any) -> Any:
    if isinstance(v, TensorShape):
        v = v.as_list()
    if isinstance(v, (list, tuple)) and any(isinstance(x, _ops.Tensor) for x in v):
        # Autopacked by the op's builder under the input's name ("Reshape/shape").
        return list(v)
    if isinstance(v, _ops.Tensor):
        return v
    if isinstance(v, np.ndarray):
        return v
    # Python values stay Python: the op's builder makes them a Const named after the
    # input ("Reshape/shape", "transpose/perm"), as TF's op_def_library does.
    if isinstance(v, (list, tuple)) and len(v) == 0:
        return []  # the op's builder converts it as TF does (see op_builder._float_first)
    arr = np.asarray(v)
    if arr.dtype.kind in "iu" and arr.size and (arr.min() < -(2**31) or arr.max() >= 2**31):
        return arr.astype(np.int64)
    return arr.astype(np.int32) if arr.dtype.kind in "iub" or arr.size == 0 else v


def transpose(a: Any, perm: Any = None, name: str = "transpose", conjugate: bool = False) -> Any:
    with _ops.name_scope(name, "transpose", [a]) as scope:
        a = convert_to_tensor(a)
        if perm is None:
            rank = a.shape.ndims
            if rank is not None:
                perm = list(range(rank - 1, -1, -1))
            else:
                r = apply_op("Rank", [a], {}).outputs[0]
                perm = apply_op("Range", [r - 1, -1, -1], {}).outputs[0]
        op_type = "ConjugateTranspose" if conjugate and a.dtype.is_complex else "Transpose"
        return _out(apply_op(op_type, [a, _int_tensor(perm)], {}, scope))


def concat(values: Any, axis: Any, name: str = "concat") -> Any:
    values = list(values)
    if len(values) == 1:  # TF's degenerate case: the axis checked, an Identity "<name>/<name>"
        with _ops.name_scope(name):
            convert_to_tensor(axis, name="concat_dim", dtype=dtypes.int32)
            return identity(values[0], name=name)
    return _out(apply_op("ConcatV2", [values, axis], {}, name))


def stack(values: Any, axis: int = 0, name: str = "stack") -> Any:
    """TF's stack: on axis 0 a list converts as a whole (one Const named `name` when it
    holds no tensors, else autopacked: Consts named by index under `name`)."""
    if axis == 0:
        if isinstance(values, _ops.Tensor):
            return values  # TF converts the value as a whole: a tensor is itself
        return convert_to_tensor(list(values), name=name)
    return _out(apply_op("Pack", [list(values)], {"axis": axis}, name))


def _autopack(values: Any, dtype: Any = None, name: str = "packed") -> Any:
    """TF's _autopacking_helper: tensors as they are, sublists holding tensors packed
    under their index, the rest Consts named by index; one Pack named by the scope."""
    if dtype is None:
        first = next(v for v in _flatten_list(values) if _is_tensor_like(v))
        dtype = convert_to_tensor(first).dtype

    def pack(items: Any, scope_name: str) -> Any:
        # Every sublist opens its name scope, holding tensors or not, as TF's does (so a
        # Const for a plain sublist "1" is named "1_1").
        with _ops.name_scope(scope_name) as scope:
            elems = [
                pack(v, str(i)) if isinstance(v, (list, tuple)) else v for i, v in enumerate(items)
            ]
            if not builtins.any(_is_tensor_like(v) for v in elems):
                return elems
            elems = [
                convert_to_tensor(v, dtype=dtype)
                if _is_tensor_like(v)
                else constant(v, dtype=dtype, name=str(i))
                for i, v in enumerate(elems)
            ]
            return _out(apply_op("Pack", [elems], {"axis": 0}, scope))

    return pack(values, name)


def _flatten_list(v: Any) -> list[Any]:
    if isinstance(v, (list, tuple)):
        return [y for x in v for y in _flatten_list(x)]
    return [v]


register_autopack(_autopack)


def unstack(value: Any, num: int | None = None, axis: int = 0, name: str = "unstack") -> Any:
    value = convert_to_tensor(value)
    if num is None:
        s = value.shape
        if s.ndims is None or s[axis] is None:
            raise ValueError(f"Cannot infer argument `num` from shape {s}")
        num = s[axis]
    return apply_op("Unpack", [value], {"num": num, "axis": axis}, name).outputs


def split(
    value: Any, num_or_size_splits: Any, axis: Any = 0, num: int | None = None, name: str = "split"
) -> Any:
    if isinstance(num_or_size_splits, int):
        return apply_op(
            "Split",
            [axis, value],
            {"num_split": num_or_size_splits},
            name,
        ).outputs
    sizes = convert_to_tensor(num_or_size_splits)
    if num is None:
        num = sizes.shape[0]
    return apply_op("SplitV", [value, sizes, axis], {"num_split": num}, name).outputs


def slice(input_: Any, begin: Any, size: Any, name: str | None = None) -> Any:
    return _out(apply_op("Slice", [input_, begin, size], {}, name))


def gather(
    params: Any,
    indices: Any,
    validate_indices: Any = None,
    name: str | None = None,
    axis: Any = None,
    batch_dims: int = 0,
) -> Any:
    if hasattr(params, "sparse_read") and axis in (None, 0):
        return params.sparse_read(indices, name=name)
    return _out(
        apply_op(
            "GatherV2",
            [params, indices, 0 if axis is None else axis],
            {"batch_dims": batch_dims},
            name,
        )
    )


def tile(input: Any, multiples: Any, name: str | None = None) -> Any:
    return _out(apply_op("Tile", [input, _int_tensor(multiples)], {}, name))


def pad(
    tensor: Any,
    paddings: Any,
    mode: str = "CONSTANT",
    name: str | None = None,
    constant_values: Any = 0,
) -> Any:
    mode = mode.upper()
    if mode == "CONSTANT":
        if not isinstance(constant_values, _ops.Tensor) and constant_values == 0:
            return _out(apply_op("Pad", [tensor, paddings], {}, name))
        return _out(apply_op("PadV2", [tensor, paddings, constant_values], {}, name))
    return _out(apply_op("MirrorPad", [tensor, paddings], {"mode": mode}, name))


def expand_dims(input: Any, axis: Any = None, name: str | None = None, dim: Any = None) -> Any:
    axis = dim if axis is None else axis
    return _out(
        apply_op(
            "ExpandDims",
            [
                input,
                axis if isinstance(axis, _ops.Tensor) else np.asarray(axis, np.int32),
            ],
            {},
            name,
        )
    )


def squeeze(input: Any, axis: Any = None, name: str | None = None, squeeze_dims: Any = None) -> Any:
    axis = squeeze_dims if axis is None else axis
    if isinstance(axis, int):
        axis = [axis]
    return _out(apply_op("Squeeze", [input], {"squeeze_dims": list(axis or [])}, name))


def _static_shape(input: Any) -> TensorShape | None:
    """The input's shape when it is a Tensor: TF's shape/size/rank (optimize=True) then
    return a Const instead of adding a Shape/Size/Rank node."""
    return input.shape if isinstance(input, _ops.Tensor) else None


def shape(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Any:
    static = _static_shape(input)
    if static is not None and static.is_fully_defined():
        return constant(static.as_list(), dtype=out_type, name=name or "Shape")
    return _out(apply_op("Shape", [input], {"out_type": out_type}, name))


def shape_n(input: Any, out_type: Any = dtypes.int32, name: str | None = None) -> Any:
    return apply_op("ShapeN", [list(input)], {"out_type": out_type}, name).outputs


def size(input: Any, name: str | None = None, out_type: Any = dtypes.int32) -> Any:
    static = _static_shape(input)
    if static is not None and static.is_fully_defined():
        return constant(static.num_elements(), dtype=out_type, name=name or "Size")
    return _out(apply_op("Size", [input], {"out_type": out_type}, name))


def rank(input: Any, name: str | None = None) -> Any:
    static = _static_shape(input)
    if static is not None and static.ndims is not None:
        return constant(static.ndims, dtype=dtypes.int32, name=name or "Rank")
    return _out(apply_op("Rank", [input], {}, name))


def fill(dims: Any, value: Any, name: str | None = None) -> Any:
    return _out(apply_op("Fill", [_int_tensor(dims), value], {}, name))


def _filled(shape: Any, value: Any, dtype: Any, name: str | None, default: str) -> Any:
    """TF's zeros/ones: a Const when the static shape has under 1000 elements, else a
    Fill of the "shape_as_tensor" Const (or of the given shape tensor)."""
    dtype = dtypes.as_dtype(dtype)
    if dtype == dtypes.bool:
        value = bool(value)
    elif dtype == dtypes.string:
        value = ""
    with _ops.name_scope(name, default, []) as scope:
        if not isinstance(shape, _ops.Tensor):
            static = _python_shape(shape)
            if static is not None:
                # TF's constant() refuses an int shape, so ones(3) is a Fill there too.
                if int(np.prod(static)) < 1000 and not isinstance(shape, (int, np.integer)):
                    return constant(value, dtype=dtype, shape=static, name=scope)
                shape = constant(static, dtype=dtypes.int32, name="shape_as_tensor")
            else:
                shape = convert_to_tensor(shape, dtype=dtypes.int32)
        if shape.shape.ndims == 0:
            shape = reshape(shape, [-1])
        return fill(shape, constant(value, dtype=dtype), name=scope)


def _python_shape(shape: Any) -> list[int] | None:
    """A shape given as a list, tuple or TensorShape of ints, or None if it holds
    tensors or unknown dimensions."""
    if isinstance(shape, TensorShape):
        dims = shape.as_list() if shape.ndims is not None else [None]
        return None if None in dims else [int(d) for d in dims if d is not None]
    if isinstance(shape, (int, np.integer)):
        return [int(shape)]
    if isinstance(shape, (list, tuple, np.ndarray)) and not any(
        isinstance(x, _ops.Tensor) for x in shape
    ):
        return [int(d) for d in shape]
    return None


def zeros(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Any:
    return _filled(shape, 0, dtype, name, "zeros")


def ones(shape: Any, dtype: Any = dtypes.float32, name: str | None = None) -> Any:
    return _filled(shape, 1, dtype, name, "ones")


def zeros_like(
    tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True
) -> Any:
    out = _zeros_like(tensor, dtype, name, optimize)
    out._is_zeros_tensor = True  # TF's _tag_zeros_tensor: gradients may skip it
    return out


def _zeros_like(tensor: Any, dtype: Any, name: str | None, optimize: bool) -> Any:
    """TF's zeros_like_impl: zeros of the static shape when it is fully defined, else
    ZerosLike (or zeros of the dynamic Shape for another dtype)."""
    with _ops.name_scope(name, "zeros_like", [tensor]) as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        static = tensor.shape
        if optimize and static.is_fully_defined() and tensor.dtype != dtypes.variant:
            return zeros(static.as_list(), dtype=dtype or tensor.dtype, name=scope)
        if dtype is not None and dtypes.as_dtype(dtype) != tensor.dtype:
            return zeros(shape(tensor), dtype=dtype, name=scope)
        return _out(apply_op("ZerosLike", [tensor], {}, scope))


def ones_like(
    tensor: Any, dtype: Any = None, name: str | None = None, optimize: bool = True
) -> Any:
    """TF's ones_like_impl: ones of shape_internal's shape (the "Shape/shape_as_tensor"
    Const when static, else a Shape op)."""
    with _ops.name_scope(name, "ones_like", [tensor]) as scope:
        tensor = convert_to_tensor(tensor, name="tensor")
        static = tensor.shape
        with _ops.name_scope(None, "Shape", [tensor]) as shape_scope:
            if optimize and static.is_fully_defined():
                dims = constant(static.as_list(), dtype=dtypes.int32, name="shape_as_tensor")
            else:
                dims = _out(apply_op("Shape", [tensor], {"out_type": dtypes.int32}, shape_scope))
        out = ones(dims, dtype=dtype or tensor.dtype, name=scope)
        out.set_shape(static)
        return out


def ones_like_v2(input: Any, dtype: Any = None, name: str | None = None) -> Any:
    """tf.ones_like (TF 2's array_like_impl): ones of the static shape when it is fully
    defined (a Const), else OnesLike (or ones of the dynamic Shape for another dtype)."""
    with _ops.name_scope(name, "ones_like", [input]) as scope:
        tensor = convert_to_tensor(input, name="input")
        static = tensor.shape
        if static.is_fully_defined() and tensor.dtype != dtypes.variant:
            return ones(static.as_list(), dtype=dtype or tensor.dtype, name=scope)
        if dtype is not None and dtypes.as_dtype(dtype) != tensor.dtype:
            return ones(shape(tensor), dtype=dtype, name=scope)
        return _out(apply_op("OnesLike", [tensor], {}, scope))


def one_hot(
    indices: Any,
    depth: Any,
    on_value: Any = None,
    off_value: Any = None,
    axis: Any = None,
    dtype: Any = None,
    name: str | None = None,
) -> Any:
    # As TF: given on/off values are converted unnamed (Const), defaults are named
    # "on_value" / "off_value", and a Python depth becomes the OneHot's "depth" input.
    with _ops.name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        on = None if on_value is None else convert_to_tensor(on_value, dtype=dtype)
        off = None if off_value is None else convert_to_tensor(off_value, dtype=dtype)
        dt = dtypes.as_dtype(
            dtype
            or (on.dtype if on is not None else off.dtype if off is not None else None)
            or dtypes.float32
        )
        if on is None:
            on = convert_to_tensor(1, dtype=dt, name="on_value")
        if off is None:
            off = convert_to_tensor(0, dtype=dt, name="off_value")
        if not isinstance(depth, _ops.Tensor):
            depth = np.asarray(depth, np.int32)
        attrs = {"axis": -1 if axis is None else axis}
        return _out(apply_op("OneHot", [indices, depth, on, off], attrs, scope))


def reverse(tensor: Any, axis: Any, name: str | None = None) -> Any:
    return _out(apply_op("ReverseV2", [tensor, _int_tensor(axis)], {}, name))


reverse_v2 = reverse


def where(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Any:
    if x is None and y is None:
        return _out(apply_op("Where", [condition], {}, name))
    return _out(apply_op("Select", [condition, x, y], {}, name))


def where_v2(condition: Any, x: Any = None, y: Any = None, name: str | None = None) -> Any:
    if x is None and y is None:
        return _out(apply_op("Where", [condition], {}, name))
    return _out(apply_op("SelectV2", [condition, x, y], {}, name))


def broadcast_to(input: Any, shape: Any, name: str | None = None) -> Any:
    return _out(apply_op("BroadcastTo", [input, _int_tensor(shape)], {}, name))


def strided_slice(
    input_: Any,
    begin: Any,
    end: Any,
    strides: Any = None,
    begin_mask: int = 0,
    end_mask: int = 0,
    ellipsis_mask: int = 0,
    new_axis_mask: int = 0,
    shrink_axis_mask: int = 0,
    var: Any = None,
    name: str | None = None,
) -> Any:
    if strides is None:
        strides = [1] * len(begin) if not isinstance(begin, _ops.Tensor) else ones_like(begin)
    return _out(
        apply_op(
            "StridedSlice",
            [input_, _int_tensor(begin), _int_tensor(end), _int_tensor(strides)],
            {
                "begin_mask": begin_mask,
                "end_mask": end_mask,
                "ellipsis_mask": ellipsis_mask,
                "new_axis_mask": new_axis_mask,
                "shrink_axis_mask": shrink_axis_mask,
            },
            name,
        )
    )


def _slice_helper(tensor: Any, slice_spec: Any, var: Any = None) -> Any:
    """Tensor.__getitem__: TF's _slice_helper (StridedSlice with all masks)."""
    if not isinstance(slice_spec, (list, tuple)):
        slice_spec = [slice_spec]
    begin, end, strides = [], [], []
    begin_mask = end_mask = ellipsis_mask = new_axis_mask = shrink_axis_mask = 0
    for i, s in enumerate(slice_spec):
        bit = 1 << i
        if isinstance(s, builtins.slice):
            # As TF: with a tensor bound, the missing bounds are Consts of its dtype.
            bound_types = [
                t.dtype.base_dtype for t in (s.start, s.stop, s.step) if isinstance(t, _ops.Tensor)
            ]
            dtype = next((d for d in (dtypes.int64, dtypes.int32) if d in bound_types), None)

            def default(v: int, dtype: Any = dtype) -> Any:
                return v if dtype is None else constant(v, dtype=dtype)

            begin.append(default(0) if s.start is None else s.start)
            end.append(default(0) if s.stop is None else s.stop)
            strides.append(default(1) if s.step is None else s.step)
            if s.start is None:
                begin_mask |= bit
            if s.stop is None:
                end_mask |= bit
        elif s is Ellipsis:
            begin.append(0)
            end.append(0)
            strides.append(1)
            ellipsis_mask |= bit
        elif s is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            new_axis_mask |= bit
        else:
            begin.append(s)
            end.append(s + 1)
            # As TF: an int64 (or int16) index tensor gets a stride Const of its dtype.
            wide = isinstance(s, _ops.Tensor) and s.dtype.base_dtype in (dtypes.int64, dtypes.int16)
            strides.append(constant(1, dtype=s.dtype.base_dtype) if wide else 1)
            shrink_axis_mask |= bit
    with _ops.name_scope(None, "strided_slice", [tensor]) as scope:
        if not begin:  # an empty key: TF packs one empty Const for all three
            begin_t = end_t = strides_t = constant(np.zeros([0], np.int32))
        else:
            begin_t = _pack_index(begin, "stack")
            end_t = _pack_index(end, "stack_1")
            strides_t = _pack_index(strides, "stack_2")
            # As TF: one int64 part makes all three int64 (a Cast for the others).
            if dtypes.int64 in (begin_t.dtype, end_t.dtype, strides_t.dtype):
                begin_t, end_t, strides_t = (_as_int64(t) for t in (begin_t, end_t, strides_t))
        return strided_slice(
            tensor,
            begin_t,
            end_t,
            strides_t,
            begin_mask=begin_mask,
            end_mask=end_mask,
            ellipsis_mask=ellipsis_mask,
            new_axis_mask=new_axis_mask,
            shrink_axis_mask=shrink_axis_mask,
            name=scope,
        )


def _as_int64(t: Any) -> Any:
    if t.dtype == dtypes.int64:
        return t
    return _out(apply_op("Cast", [t], {"DstT": dtypes.int64, "Truncate": False}))


def _pack_index(xs: list[Any], name: str) -> Any:
    tensors = [x for x in xs if isinstance(x, _ops.Tensor)]
    if tensors:
        # An int64 bound packs the index as int64, as TF's stack of the bounds does.
        wide = any(t.dtype.base_dtype == dtypes.int64 for t in tensors)
        dtype = dtypes.int64 if wide else dtypes.int32
        return stack([convert_to_tensor(x, dtype) for x in xs], name=name)
    return constant(np.array(xs, dtype=np.int32), name=name)


def boolean_mask(tensor: Any, mask: Any, name: str = "boolean_mask", axis: Any = None) -> Any:
    """TF's boolean_mask: the masked dims of `tensor` (from `axis`) are flattened into
    one (Prod of their sizes), the mask to a vector, then Where + Gather pick the rows."""
    from client.framework.shape_fns import constant_value

    with _ops.name_scope(name, values=[tensor, mask]):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        shape_mask = mask.shape
        ndims_mask = shape_mask.ndims
        shape_tensor = tensor.shape
        if ndims_mask == 0:
            raise ValueError("mask cannot be scalar.")
        if ndims_mask is None:
            raise ValueError(
                "Number of mask dimensions must be specified, even if some dimensions"
                " are None.  E.g. shape=[None] is ok, but shape=None is not."
            )
        axis = 0 if axis is None else axis
        axis_value = constant_value(axis) if isinstance(axis, _ops.Tensor) else axis
        if axis_value is not None:
            axis = int(axis_value)
            shape_tensor[axis : axis + ndims_mask].assert_is_compatible_with(shape_mask)
        leading_size = _out(
            apply_op("Prod", [shape(tensor)[axis : axis + ndims_mask], [0]], {"keep_dims": False})
        )
        tensor = reshape(
            tensor,
            concat([shape(tensor)[:axis], [leading_size], shape(tensor)[axis + ndims_mask :]], 0),
        )
        if axis_value is not None:
            first_dim = shape_tensor[axis : axis + ndims_mask].num_elements()
            tensor.set_shape(
                TensorShape(shape_tensor[:axis])
                .concatenate([first_dim])
                .concatenate(shape_tensor[axis + ndims_mask :])
            )
        mask = reshape(mask, [-1])
        # TF's _apply_mask_1d.
        indices = squeeze(where(mask), axis=[1])
        return gather(tensor, indices, axis=axis)


def check_numerics(tensor: Any, message: str, name: str | None = None) -> Any:
    return _out(apply_op("CheckNumerics", [tensor], {"message": message}, name))


def ensure_shape(x: Any, shape: Any, name: str | None = None) -> Any:
    """tf.ensure_shape: an EnsureShape node whose static shape merges x's with `shape`; at
    run time it fails with InvalidArgument unless x's shape is compatible with `shape`."""
    return _out(apply_op("EnsureShape", [x], {"shape": TensorShape(shape)}, name))


def space_to_batch_nd(input: Any, block_shape: Any, paddings: Any, name: str | None = None) -> Any:
    return _out(apply_op("SpaceToBatchND", [input, block_shape, paddings], {}, name))


def batch_to_space_nd(input: Any, block_shape: Any, crops: Any, name: str | None = None) -> Any:
    return _out(apply_op("BatchToSpaceND", [input, block_shape, crops], {}, name))


def _block_size(block_size: Any, block_shape: Any) -> Any:
    """TF1's deprecated_argument_lookup("block_shape", ..., "block_size", ...)."""
    if block_shape is not None:
        if block_size is not None:
            raise ValueError("Cannot specify both 'block_size' and 'block_shape'.")
        return block_shape
    return block_size


def space_to_batch(
    input: Any,
    paddings: Any,
    block_size: Any = None,
    name: str | None = None,
    block_shape: Any = None,
) -> Any:
    """tf.compat.v1.space_to_batch: SpaceToBatchND with a square int64 block, rank 4."""
    size = _block_size(block_size, block_shape)
    result = space_to_batch_nd(input, np.array([size, size], dtype=np.int64), paddings, name=name)
    result.set_shape(result.get_shape().with_rank(4))
    return result


def batch_to_space(
    input: Any, crops: Any, block_size: Any, name: str | None = None, block_shape: Any = None
) -> Any:
    """tf.compat.v1.batch_to_space: BatchToSpaceND with a square int64 block, rank 4."""
    size = _block_size(block_size, block_shape)
    result = batch_to_space_nd(input, np.array([size, size], dtype=np.int64), crops, name=name)
    result.set_shape(result.get_shape().with_rank(4))
    return result


def matrix_transpose(a: Any, name: str = "matrix_transpose", conjugate: bool = False) -> Any:
    """TF's tf.linalg.matrix_transpose for inputs of known rank: swaps the last two axes."""
    with _ops.name_scope(name, values=[a]):
        a = convert_to_tensor(a, name="a")
        ndims = a.shape.ndims
        if ndims is None or ndims < 2:
            raise ValueError(
                f"Argument `a` should be a (batch) matrix with rank >= 2.  Received `a` = {a}"
            )
        perm = list(range(ndims - 2)) + [ndims - 1, ndims - 2]
        return transpose(a, perm=perm, conjugate=conjugate)
