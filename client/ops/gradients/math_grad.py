"""Client, gradients: math ops (TensorFlow's math_grad.py) -- broadcasting binary ops
(BroadcastGradientArgs + Sum + Reshape), unary ops, MatMul with transposes, reductions,
Cast, ClipByValue, AddN, and the second-order gradients of SigmoidGrad/TanhGrad/SqrtGrad."""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.gradient_registry import RegisterGradient
from client.framework.indexed_slices import IndexedSlices
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.framework.shape_fns import constant_value
from client.ops import array_ops, math_ops
from client.ops.gradients.util import op1, reduce_to


@RegisterGradient("AddN")
def _add_n_grad(op: Any, grad: Any) -> Any:
    return [grad] * len(op.inputs)


def _shapes_equal(x: Any, y: Any, grad: Any) -> bool:
    sx, sy, sg = x.shape, y.shape, grad.shape
    return sx.is_fully_defined() and sx == sy and sx == sg


def _broadcast(op: Any) -> tuple[Any, Any, Any, Any]:
    x, y = op.inputs[0], op.inputs[1]
    sx, sy = array_ops.shape(x), array_ops.shape(y)
    rx, ry = apply_op("BroadcastGradientArgs", [sx, sy]).outputs
    return sx, sy, rx, ry


def _reduction_axes(x_shape: Any, y_shape: Any) -> tuple[Any, Any]:
    """TF's _InferGradientReductionAxes: the axes each side was broadcast along, from
    static shapes, or (None, None) when that depends on the data."""
    if x_shape.ndims is None or y_shape.ndims is None:
        return None, None
    xs, ys = x_shape.as_list(), y_shape.as_list()
    rank = max(len(xs), len(ys))
    xs = [1] * (rank - len(xs)) + xs
    ys = [1] * (rank - len(ys)) + ys
    x_axes, y_axes = [], []
    for axis, (xd, yd) in enumerate(zip(xs, ys)):
        if xd == 1 and yd != 1:
            x_axes.append(axis)
        elif yd == 1 and xd != 1:
            y_axes.append(axis)
        elif xd is None or yd is None:
            return None, None
    return x_axes, y_axes


def _reduce_gradient_args(x: Any, y: Any, gx: Any, gy: Any) -> tuple[Any, Any]:
    """TF's _ReduceGradientArgs (SmartBroadcastGradientArgs): both Shapes, then
    BroadcastGradientArgs only when static shapes cannot tell the broadcast axes; a side
    is summed (keepdims) and reshaped only when it was broadcast."""
    if gx is None and gy is None:
        return gx, gy
    sx, sy = array_ops.shape(x), array_ops.shape(y)
    x_axes, y_axes = _reduction_axes(x.shape, y.shape)
    if x_axes is None or y_axes is None:
        x_axes, y_axes = apply_op("BroadcastGradientArgs", [sx, sy]).outputs
        x_reduce = y_reduce = True
    else:
        x_reduce = bool(x_axes) or x.shape.ndims < y.shape.ndims
        y_reduce = bool(y_axes) or y.shape.ndims < x.shape.ndims

    def reduce(g: Any, axes: Any, s: Any, must: bool) -> Any:
        if g is None or not must:
            return g
        return array_ops.reshape(math_ops.reduce_sum(g, axes, keepdims=True), s)

    return reduce(gx, x_axes, sx, x_reduce), reduce(gy, y_axes, sy, y_reduce)


@RegisterGradient("AddV2")
@RegisterGradient("Add")
def _add_grad(op: Any, grad: Any) -> Any:
    x, y = op.inputs
    if _shapes_equal(x, y, grad):
        return grad, grad
    return _reduce_gradient_args(x, y, grad, grad)


@RegisterGradient("Sub")
def _sub_grad(op: Any, grad: Any) -> Any:
    x, y = op.inputs
    if _shapes_equal(x, y, grad):
        return grad, -grad
    return _reduce_gradient_args(x, y, grad, -grad)


@RegisterGradient("Mul")
def _mul_grad(op: Any, grad: Any) -> Any:
    x, y = op.inputs
    if _shapes_equal(x, y, grad) and grad.dtype in (dtypes.int32, dtypes.float32):
        return math_ops.multiply(grad, y), math_ops.multiply(grad, x)
    gx, gy = math_ops.multiply(grad, _conj(y)), math_ops.multiply(_conj(x), grad)
    return _reduce_gradient_args(x, y, gx, gy)


def _quotient_grad(op: Any, grad: Any, div: Any) -> Any:
    """x / y for a division op `div`: (grad / y, grad * (-x / y) / y), each reduced to its
    input's broadcast shape."""
    x, y = op.inputs
    gx = div(grad, y)
    gy = grad * div(div(-x, y), y)
    return _reduce_gradient_args(x, y, gx, gy)


@RegisterGradient("RealDiv")
def _real_div_grad(op: Any, grad: Any) -> Any:
    return _quotient_grad(op, grad, math_ops.realdiv)


@RegisterGradient("Div")
def _div_grad(op: Any, grad: Any) -> Any:
    return _quotient_grad(op, grad, lambda a, b: a / b)  # TF's math_ops.divide


@RegisterGradient("DivNoNan")
def _div_no_nan_grad(op: Any, grad: Any) -> Any:
    return _quotient_grad(op, grad, math_ops.div_no_nan)


@RegisterGradient("FloorMod")
def _floor_mod_grad(op: Any, grad: Any) -> Any:
    x, y = op.inputs
    floor_xy = math_ops.floor_div(x, y)
    return _reduce_gradient_args(x, y, grad, grad * -floor_xy)


def _min_max_grad(op: Any, grad: Any, selector: Any) -> Any:
    x, y = op.inputs
    zeros = array_ops.zeros_like(grad)
    xmask = selector(x, y)
    xgrad = array_ops.where_v2(xmask, grad, zeros)
    ygrad = array_ops.where_v2(xmask, zeros, grad)
    return _reduce_gradient_args(x, y, xgrad, ygrad)


@RegisterGradient("Maximum")
def _maximum_grad(op: Any, grad: Any) -> Any:
    return _min_max_grad(op, grad, math_ops.greater_equal)


@RegisterGradient("Minimum")
def _minimum_grad(op: Any, grad: Any) -> Any:
    return _min_max_grad(op, grad, math_ops.less_equal)


@RegisterGradient("Pow")
def _pow_grad(op: Any, grad: Any) -> Any:
    x, y = op.inputs
    z = op.outputs[0]
    gx = grad * y * math_ops.pow(x, y - 1)
    mask = x > 0
    safe_x = array_ops.where(mask, x, array_ops.ones_like(x))
    log_x = array_ops.where(mask, math_ops.log(safe_x), array_ops.zeros_like(x))
    gy = grad * z * log_x
    return _reduce_gradient_args(x, y, gx, gy)


@RegisterGradient("SquaredDifference")
def _squared_difference_grad(op: Any, grad: Any) -> Any:
    x, y = op.inputs
    with _ops.control_dependencies([grad]):
        two = convert_to_tensor(2.0, dtype=grad.dtype, name="scalar")
        x_grad = math_ops.multiply(two, grad) * (x - y)
    if _shapes_equal(x, y, grad):
        return x_grad, -x_grad
    return _reduce_gradient_args(x, y, x_grad, -x_grad)


@RegisterGradient("Select")
def _select_grad(op: Any, grad: Any) -> Any:
    c = op.inputs[0]
    zeros = array_ops.zeros_like(op.inputs[1])
    return None, array_ops.where(c, grad, zeros), array_ops.where(c, zeros, grad)


@RegisterGradient("SelectV2")
def _select_v2_grad(op: Any, grad: Any) -> Any:
    c, x, y = op.inputs
    z = op.outputs[0]
    zeros = array_ops.zeros([], dtype=grad.dtype)
    gx = array_ops.where_v2(c, grad, zeros)
    gy = array_ops.where_v2(c, zeros, grad)
    gx, _ = _reduce_gradient_args(x, z, gx, None)
    gy, _ = _reduce_gradient_args(y, z, gy, None)
    return None, gx, gy


@RegisterGradient("Neg")
def _neg_grad(op: Any, grad: Any) -> Any:
    return -grad


@RegisterGradient("Abs")
def _abs_grad(op: Any, grad: Any) -> Any:
    return grad * math_ops.sign(op.inputs[0])


@RegisterGradient("Exp")
def _exp_grad(op: Any, grad: Any) -> Any:
    y = op.outputs[0]
    with _ops.control_dependencies([grad]):
        return grad * y


@RegisterGradient("Log")
def _log_grad(op: Any, grad: Any) -> Any:
    x = op.inputs[0]
    with _ops.control_dependencies([grad]):
        return grad * math_ops.reciprocal(x)


@RegisterGradient("Log1p")
def _log1p_grad(op: Any, grad: Any) -> Any:
    x = op.inputs[0]
    with _ops.control_dependencies([grad]):
        return grad * math_ops.reciprocal(1 + x)


@RegisterGradient("Sqrt")
def _sqrt_grad(op: Any, grad: Any) -> Any:
    return op1("SqrtGrad", [op.outputs[0], grad])


@RegisterGradient("Rsqrt")
def _rsqrt_grad(op: Any, grad: Any) -> Any:
    return op1("RsqrtGrad", [op.outputs[0], grad])


@RegisterGradient("Reciprocal")
def _reciprocal_grad(op: Any, grad: Any) -> Any:
    return op1("ReciprocalGrad", [op.outputs[0], grad])


@RegisterGradient("Square")
def _square_grad(op: Any, grad: Any) -> Any:
    x = op.inputs[0]
    with _ops.control_dependencies([grad]):
        y = constant(2.0, dtype=x.dtype)
        return math_ops.multiply(grad, math_ops.multiply(x, y))


@RegisterGradient("Sigmoid")
def _sigmoid_grad(op: Any, grad: Any) -> Any:
    return op1("SigmoidGrad", [op.outputs[0], grad])


@RegisterGradient("Tanh")
def _tanh_grad(op: Any, grad: Any) -> Any:
    return op1("TanhGrad", [op.outputs[0], grad])


@RegisterGradient("Sin")
def _sin_grad(op: Any, grad: Any) -> Any:
    with _ops.control_dependencies([grad]):
        return grad * math_ops.cos(op.inputs[0])


@RegisterGradient("Cos")
def _cos_grad(op: Any, grad: Any) -> Any:
    with _ops.control_dependencies([grad]):
        return -grad * math_ops.sin(op.inputs[0])


@RegisterGradient("SigmoidGrad")
def _sigmoid_grad_grad(op: Any, grad: Any) -> Any:
    with _ops.control_dependencies([grad]):
        a, b = op.inputs
        gb = grad * b
        return gb - 2.0 * gb * a, op1("SigmoidGrad", [a, grad])


@RegisterGradient("TanhGrad")
def _tanh_grad_grad(op: Any, grad: Any) -> Any:
    with _ops.control_dependencies([grad]):
        a, b = op.inputs
        return grad * -2.0 * b * a, op1("TanhGrad", [a, grad])


@RegisterGradient("SqrtGrad")
def _sqrt_grad_grad(op: Any, grad: Any) -> Any:
    a, b = op.inputs
    y = op.outputs[0]
    with _ops.control_dependencies([grad]):
        ga = grad / a
        return -ga * y, 0.5 * ga


@RegisterGradient("MatMul")
def _matmul_grad(op: Any, grad: Any) -> Any:
    ta, tb = op.get_attr("transpose_a"), op.get_attr("transpose_b")
    a, b = _conj(op.inputs[0]), _conj(op.inputs[1])  # as TF's: a no-op for reals

    def mm(x: Any, y: Any, transpose_a: bool = False, transpose_b: bool = False) -> Any:
        return op1("MatMul", [x, y], {"transpose_a": transpose_a, "transpose_b": transpose_b})

    if not ta and not tb:
        return mm(grad, b, transpose_b=True), mm(a, grad, transpose_a=True)
    if not ta and tb:
        return mm(grad, b), mm(grad, a, transpose_a=True)
    if ta and not tb:
        return mm(b, grad, transpose_b=True), mm(a, grad)
    return mm(b, grad, transpose_a=True, transpose_b=True), mm(
        grad, a, transpose_a=True, transpose_b=True
    )


@RegisterGradient("BatchMatMulV2")
def _batch_matmul_grad(op: Any, grad: Any) -> Any:
    x, y = op.inputs
    ax, ay = op.get_attr("adj_x"), op.get_attr("adj_y")

    def bmm(a: Any, b: Any, adj_x: bool = False, adj_y: bool = False) -> Any:
        # TF's math_ops.matmul, under its scope name "MatMul"
        return op1("BatchMatMulV2", [a, b], {"adj_x": adj_x, "adj_y": adj_y}, "MatMul")

    if not ax:
        gx = bmm(grad, y, False, True) if not ay else bmm(grad, y, False, False)
    else:
        gx = bmm(y, grad, False, True) if not ay else bmm(y, grad, True, True)
    if not ay:
        gy = bmm(x, grad, True, False) if not ax else bmm(x, grad, False, False)
    else:
        gy = bmm(grad, x, True, False) if not ax else bmm(grad, x, True, True)
    sx_static, sy_static = x.shape, y.shape
    may_batch = (sx_static.ndims is None or sx_static.ndims > 2) or (
        sy_static.ndims is None or sy_static.ndims > 2
    )
    if not may_batch or (
        sx_static.ndims is not None
        and sy_static.ndims is not None
        and sx_static[:-2].is_fully_defined()
        and sy_static[:-2].is_fully_defined()
        and sx_static[:-2] == sy_static[:-2]
    ):
        return gx, gy
    sx, sy = array_ops.shape(x), array_ops.shape(y)
    rx, ry = apply_op("BroadcastGradientArgs", [sx[:-2], sy[:-2]]).outputs
    return reduce_to(gx, rx, sx), reduce_to(gy, ry, sy)


def _kept_dims_shape(x: Any, axes: Any, input_shape: Any = None, as_array: bool = False) -> Any:
    """The reduced shape with reduced dims kept as 1: TF's math_ops.reduced_shape
    (a constant when shape and axes are known, else DynamicStitch of the input shape --
    `input_shape` when the caller has taken it -- and ones at the reduced axes)."""
    static = x.shape
    ax = constant_value(axes)
    if static.is_fully_defined() and ax is not None:
        dims = np.array(static.as_list(), np.int32)
        dims[np.reshape(ax, [-1]).astype(np.int32)] = 1
        return dims if as_array else constant(dims)
    if input_shape is None:
        input_shape = array_ops.shape(x)
    input_rank = array_ops.size(input_shape)
    axes = (math_ops.cast(axes, dtypes.int32) + input_rank) % input_rank
    axes_shape = array_ops.shape(axes)
    ones = array_ops.ones(axes_shape, dtype=dtypes.int32)
    return op1("DynamicStitch", [[math_ops.range(input_rank), axes], [input_shape, ones]])


def _broadcast_back(x: Any, grad: Any, axes: Any) -> Any:
    kept = _kept_dims_shape(x, axes)
    grad = array_ops.reshape(grad, kept)
    shape = (
        constant(np.array(x.shape.as_list(), np.int32))
        if x.shape.is_fully_defined()
        else array_ops.shape(x)
    )
    return array_ops.broadcast_to(grad, shape)


_REDUCED_SHAPE_CACHE: weakref.WeakKeyDictionary[Any, dict[Any, Any]] = weakref.WeakKeyDictionary()


def _reduced_shape(input_shape: Any, axes: Any) -> Any:
    """TF's math_ops.reduced_shape: the shape with reduced dims kept as 1, a numpy array
    when shape and axes are constant, else DynamicStitch of the shape and ones."""
    shape_value, axes_value = constant_value(input_shape), constant_value(axes)
    if shape_value is not None and axes_value is not None:
        dims = np.array(shape_value, np.int32)
        dims[np.array(axes_value, np.int32)] = 1
        return dims
    axes = convert_to_tensor(axes)
    input_rank = array_ops.size(input_shape, out_type=axes.dtype)
    axes = (axes + input_rank) % input_rank
    axes_shape = array_ops.shape(axes)
    positions = math_ops.range(input_rank)
    ones = array_ops.ones(axes_shape, dtype=input_shape.dtype)
    return op1("DynamicStitch", [[positions, axes], [input_shape, ones]])


@RegisterGradient("Sum")
def _sum_grad(op: Any, grad: Any) -> Any:
    """TF's _SumGrad, node for node: Reshape + Tile when the reduced rank and axes are
    known statically, else Reshape to the reduced shape + BroadcastTo."""
    x = op.inputs[0]
    if x.shape.ndims is not None:
        axes = constant_value(op.inputs[1])
        dims = x.shape.as_list()
        if axes is not None and np.array_equal(axes, np.arange(len(dims))):
            grad = array_ops.reshape(grad, [1] * len(dims))
            if None not in dims:
                multiples = constant(np.array(dims, np.int32))
            else:
                multiples = array_ops.shape(x)
            return array_ops.tile(grad, multiples), None
        if axes is not None and None not in dims:
            key = (tuple(dims), tuple(np.reshape(axes, [-1]).tolist()))
            cache = _REDUCED_SHAPE_CACHE.setdefault(_ops.get_default_graph(), {})
            if key not in cache:
                kept = np.array(dims, np.int32)
                kept[np.array(axes, np.int32)] = 1
                # TF's _SafeShapeDiv on the static shapes leaves its Maximum and floordiv
                # nodes in the graph (once per graph, shape and axes: TF caches them);
                # their values are used as constants.
                math_ops.floordiv(tuple(dims), math_ops.maximum(kept, 1), name="floordiv")
                cache[key] = (kept, np.array(dims, np.int32) // np.maximum(kept, 1))
            kept, scaling = cache[key]
            grad = array_ops.reshape(grad, tuple(int(d) for d in kept))
            return array_ops.tile(grad, tuple(int(d) for d in scaling)), None
    input_shape = array_ops.shape(x)
    if not op.get_attr("keep_dims"):
        grad = array_ops.reshape(grad, _reduced_shape(input_shape, op.inputs[1]))
    return array_ops.broadcast_to(grad, input_shape), None


@RegisterGradient("Mean")
def _mean_grad(op: Any, grad: Any) -> Any:
    x = op.inputs[0]
    sum_grad = _sum_grad(op, grad)[0]
    n_in, n_out = x.shape.num_elements(), op.outputs[0].shape.num_elements()
    if n_in is not None and n_out is not None:
        factor = constant(max(n_in // max(n_out, 1), 1), dtype=sum_grad.dtype)
        return math_ops.truediv(sum_grad, factor), None
    input_shape = array_ops.shape(x)
    input_rank = array_ops.size(input_shape)
    axes = math_ops.cast(op.inputs[1], input_rank.dtype)
    axes = (axes + input_rank) % input_rank
    count = math_ops.reduce_prod(array_ops.gather(input_shape, axes))
    return math_ops.truediv(sum_grad, math_ops.cast(count, sum_grad.dtype)), None


def _min_or_max_grad(op: Any, grad: Any) -> Any:
    """TF's _MinOrMaxGrad, node for node."""
    x = op.inputs[0]
    input_shape = array_ops.shape(x)
    y = op.outputs[0]
    if not op.get_attr("keep_dims"):
        kept = _reduced_shape(input_shape, op.inputs[1])
        y = array_ops.reshape(y, kept)
        grad = array_ops.reshape(grad, kept)
    else:
        kept = array_ops.shape(y)
    indicators = math_ops.cast(math_ops.equal(y, x), grad.dtype)
    num_selected = array_ops.reshape(math_ops.reduce_sum(indicators, op.inputs[1]), kept)
    return [math_ops.divide(indicators, num_selected) * grad, None]


RegisterGradient("Max")(_min_or_max_grad)


RegisterGradient("Min")(_min_or_max_grad)


@RegisterGradient("Prod")
def _prod_grad(op: Any, grad: Any) -> Any:
    """TF's _ProdGrad: the product of the other entries as exclusive cumprods from both
    ends over the reduced dims (packed into one), so zeros in the input are exact."""
    x = op.inputs[0]
    input_shape = array_ops.shape(x)
    reduction_indices = array_ops.reshape(op.inputs[1], [-1])
    if not op.get_attr("keep_dims"):
        kept = _kept_dims_shape(x, op.inputs[1], input_shape, as_array=True)
        grad = array_ops.reshape(grad, kept)
    grad = array_ops.broadcast_to(grad, input_shape)
    rank = array_ops.rank(x)
    reduced = (math_ops.cast(reduction_indices, rank.dtype) + rank) % rank
    idx = math_ops.range(0, rank)
    other = apply_op("ListDiff", [idx, reduced], {"out_idx": reduced.dtype}).outputs[0]
    perm = array_ops.concat([reduced, other], 0)
    reduced_num = math_ops.reduce_prod(array_ops.gather(input_shape, reduced))
    other_num = math_ops.reduce_prod(array_ops.gather(input_shape, other))
    permuted = array_ops.transpose(x, perm)
    axes = constant_value(op.inputs[1])
    if x.shape.is_fully_defined() and axes is not None:
        # TF's C++ shape refiner evaluates the constant perm (ListDiff, FloorMod, ...),
        # so the permuted shape is static there and Shape folds to a Const.
        dims = x.shape.as_list()
        first = [int(a) % len(dims) for a in np.reshape(axes, [-1])]
        order = first + [d for d in range(len(dims)) if d not in first]
        permuted.set_shape([dims[d] for d in order])
    permuted_shape = array_ops.shape(permuted)
    reshaped = array_ops.reshape(permuted, (reduced_num, other_num))
    left = math_ops.cumprod(reshaped, axis=0, exclusive=True)
    right = math_ops.cumprod(reshaped, axis=0, exclusive=True, reverse=True)
    y = array_ops.reshape(_conj(left) * _conj(right), permuted_shape)
    out = grad * array_ops.transpose(y, math_ops.invert_permutation(perm))
    return array_ops.reshape(out, input_shape), None


def _conj(x: Any) -> Any:
    """math_ops.conj: a Conj node for complex tensors; real ones pass through."""
    return op1("Conj", [x]) if x.dtype.is_complex else x


@RegisterGradient("Cumsum")
def _cumsum_grad(op: Any, grad: Any) -> Any:
    return [
        math_ops.cumsum(
            grad,
            op.inputs[1],
            exclusive=op.get_attr("exclusive"),
            reverse=not op.get_attr("reverse"),
        ),
        None,
    ]


@RegisterGradient("Cast")
def _cast_grad(op: Any, grad: Any) -> Any:
    src = op.inputs[0].dtype.base_dtype
    dst = grad.dtype.base_dtype
    if not ((src.is_floating or src.is_complex) and (dst.is_floating or dst.is_complex)):
        return None
    if isinstance(grad, IndexedSlices):
        return IndexedSlices(math_ops.cast(grad.values, src), grad.indices, grad.dense_shape)
    return math_ops.cast(grad, src)


@RegisterGradient("ClipByValue")
def _clip_grad(op: Any, grad: Any) -> Any:
    x, lo, hi = op.inputs
    keep = math_ops.logical_and(x >= lo, x <= hi)
    return array_ops.where(keep, grad, array_ops.zeros_like(grad)), None, None
