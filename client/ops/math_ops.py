"""Client, graph building: math ops (tf.add ... tf.reduce_sum, tf.matmul, tf.cast) and the
Tensor operator overloads, with TF's op types and names."""

from __future__ import annotations

import builtins
import collections
from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.ops import array_ops


def _out(op: Any, i: int = 0) -> Any:
    return op.outputs[i]


def _binary(op_type: str):
    def fn(x: Any, y: Any, name: str | None = None) -> Any:
        return _out(apply_op(op_type, [x, y], {}, name))

    fn.__name__ = op_type
    return fn


def _unary(op_type: str):
    def fn(x: Any, name: str | None = None) -> Any:
        return _out(apply_op(op_type, [x], {}, name))

    fn.__name__ = op_type
    return fn


def add(x: Any, y: Any, name: str | None = None) -> Any:
    """tf.add: AddV2 under the name "Add", as TF's math_ops.add names it."""
    with _ops.name_scope(name, "Add", [x, y]) as scope:
        return _out(apply_op("AddV2", [x, y], {}, scope))


subtract = _binary("Sub")
multiply = _binary("Mul")
realdiv = _binary("RealDiv")
floor_div = _binary("FloorDiv")


def floordiv(x: Any, y: Any, name: str | None = None) -> Any:
    """tf.math.floordiv: FloorDiv under the name "floordiv" (tf.math.floor_div is the raw
    op, named "FloorDiv")."""
    with _ops.name_scope(name, "floordiv", [x, y]) as scope:
        return floor_div(x, y, name=scope)


floormod = mod = _binary("FloorMod")
truncatediv = _binary("TruncateDiv")
maximum = _binary("Maximum")
minimum = _binary("Minimum")
pow = _binary("Pow")
squared_difference = _binary("SquaredDifference")
equal = _binary("Equal")
not_equal = _binary("NotEqual")
less = _binary("Less")
less_equal = _binary("LessEqual")
greater = _binary("Greater")
greater_equal = _binary("GreaterEqual")
logical_and = _binary("LogicalAnd")
logical_or = _binary("LogicalOr")


def div_no_nan(x: Any, y: Any, name: str | None = None) -> Any:
    """tf.math.div_no_nan: DivNoNan under the scope "div_no_nan", as TF names it."""
    with _ops.name_scope(name, "div_no_nan", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype, name="y")
        return _out(apply_op("DivNoNan", [x, y], {}, scope))


atan2 = _binary("Atan2")
sub = subtract
mul = multiply

neg = negative = _unary("Neg")
exp = _unary("Exp")
log = _unary("Log")
log1p = _unary("Log1p")
sqrt = _unary("Sqrt")
rsqrt = _unary("Rsqrt")
square = _unary("Square")
sigmoid = _unary("Sigmoid")
tanh = _unary("Tanh")
sign = _unary("Sign")
floor = _unary("Floor")
ceil = _unary("Ceil")
round = _unary("Round")
reciprocal = _unary("Reciprocal")
sin = _unary("Sin")
cos = _unary("Cos")
logical_not = _unary("LogicalNot")
is_nan = _unary("IsNan")
is_inf = _unary("IsInf")
is_finite = _unary("IsFinite")
erf = _unary("Erf")
tan = _unary("Tan")
asin = _unary("Asin")
acos = _unary("Acos")
atan = _unary("Atan")
sinh = _unary("Sinh")
cosh = _unary("Cosh")
expm1 = _unary("Expm1")
erfc = _unary("Erfc")
lgamma = _unary("Lgamma")
digamma = _unary("Digamma")
rint = _unary("Rint")
truncatemod = _binary("TruncateMod")
xlogy = _binary("Xlogy")
xdivy = _binary("Xdivy")


def abs(x: Any, name: str | None = None) -> Any:
    """tf.abs: ComplexAbs (with the real dtype out) for complex tensors, as TF's."""
    with _ops.name_scope(name, "Abs", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.is_complex:
            tout = x.dtype.real_dtype.as_datatype_enum
            return _out(apply_op("ComplexAbs", [x], {"Tout": tout}, scope))
        return _out(apply_op("Abs", [x], {}, scope))


def logical_xor(x: Any, y: Any, name: str = "LogicalXor") -> Any:
    with _ops.name_scope(name) as scope:
        return logical_and(logical_or(x, y), logical_not(logical_and(x, y)), name=scope)


def divide(x: Any, y: Any, name: str | None = None) -> Any:
    """TF's divide: with a name, truediv under it; without, `x` becomes a tensor in the
    caller's scope (a variable read there, a Python number a Const of y's dtype) and
    `x / y` divides it."""
    if name is not None:
        return truediv(x, y, name=name)
    if not isinstance(x, _ops.Tensor):
        x = convert_to_tensor(x, dtype=y.dtype.base_dtype if isinstance(y, _ops.Tensor) else None)
    return x / y


def truediv(x: Any, y: Any, name: str | None = None) -> Any:
    """TF's truediv: integers are cast to float (int32 -> float64) before RealDiv."""
    with _ops.name_scope(name, "truediv", [x, y]) as scope:
        # TF names a converted Python operand "x"/"y" inside the scope.
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        if x.dtype.is_integer:
            dt = dtypes.float64 if x.dtype.size >= 4 else dtypes.float32
            x, y = cast(x, dt), cast(y, dt)
        return _out(apply_op("RealDiv", [x, y], {}, scope))


def div(x: Any, y: Any, name: str | None = None) -> Any:
    """tf.compat.v1.div (TF's _div_python2): RealDiv for floats, FloorDiv for integers,
    under the name scope "div"."""
    with _ops.name_scope(name, "div", [x, y]) as scope:
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
        op_type = "RealDiv" if x.dtype.is_floating or x.dtype.is_complex else "FloorDiv"
        return _out(apply_op(op_type, [x, y], {}, scope))


def cast(x: Any, dtype: Any, name: str | None = None) -> Any:
    dtype = dtypes.as_dtype(dtype).base_dtype  # as TF: a ref dtype casts to its base
    if getattr(x, "_is_resource_variable", False) and x.dtype.base_dtype == dtype:
        return x  # as TF: the consumer reads it, under its own scope
    if isinstance(x, _ops.Tensor) and x.dtype.base_dtype == dtype:
        return x
    # Anything else (a variable of another dtype too) is read under the Cast's own scope
    # ("Cast/ReadVariableOp"), as TF converts it.
    with _ops.name_scope(name, "Cast", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.base_dtype == dtype:
            return x
        return _out(apply_op("Cast", [x], {"DstT": dtype, "Truncate": False}, scope))


def to_float(x: Any, name: str = "ToFloat") -> Any:
    return cast(x, dtypes.float32, name=name)


def to_int32(x: Any, name: str = "ToInt32") -> Any:
    return cast(x, dtypes.int32, name=name)


def to_int64(x: Any, name: str = "ToInt64") -> Any:
    return cast(x, dtypes.int64, name=name)


def to_double(x: Any, name: str = "ToDouble") -> Any:
    return cast(x, dtypes.float64, name=name)


def log_sigmoid(x: Any, name: str | None = None) -> Any:
    """TF's log_sigmoid: -softplus(-x)."""
    with _ops.name_scope(name, "LogSigmoid", [x]) as scope:
        x = convert_to_tensor(x)
        return negative(_out(apply_op("Softplus", [negative(x)], {})), name=scope)


def matmul(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    transpose_b: bool = False,
    adjoint_a: bool = False,
    adjoint_b: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    output_type: Any = None,
    name: str | None = None,
) -> Any:
    with _ops.name_scope(name, "MatMul", [a, b]) as scope:
        a = convert_to_tensor(a)
        b = convert_to_tensor(b, dtype=a.dtype if not isinstance(b, _ops.Tensor) else None)
        ta, tb = transpose_a or adjoint_a, transpose_b or adjoint_b
        ra, rb = a.shape.ndims, b.shape.ndims
        if ra is None or ra > 2 or rb is None or rb > 2:  # TF: unknown rank -> batch
            # BatchMatMul only adjoints: a transposed complex side is conjugated first.
            a = _conj(a) if transpose_a else a
            b = _conj(b) if transpose_b else b
            return _out(apply_op("BatchMatMulV2", [a, b], {"adj_x": ta, "adj_y": tb}, scope))
        # MatMul only transposes: an adjointed complex side is conjugated first.
        a = _conj(a) if adjoint_a else a
        b = _conj(b) if adjoint_b else b
        return _out(apply_op("MatMul", [a, b], {"transpose_a": ta, "transpose_b": tb}, scope))


def matvec(
    a: Any,
    b: Any,
    transpose_a: bool = False,
    adjoint_a: bool = False,
    a_is_sparse: bool = False,
    b_is_sparse: bool = False,
    name: str | None = None,
) -> Any:
    """tf.linalg.matvec: a @ b[..., None] squeezed back, under a "MatVec" scope as TF's."""
    with _ops.name_scope(name, "MatVec", [a, b]):
        output = matmul(
            a,
            array_ops.expand_dims(b, axis=-1),
            transpose_a=transpose_a,
            adjoint_a=adjoint_a,
            a_is_sparse=a_is_sparse,
            b_is_sparse=b_is_sparse,
        )
        return array_ops.squeeze(output, axis=-1)


def _conj(x: Any) -> Any:
    """math_ops.conj as TF's matmul calls it: a Conj node for complex, else x itself."""
    if not x.dtype.is_complex:
        return x
    with _ops.name_scope(None, "Conj", [x]) as scope:
        return _out(apply_op("Conj", [x], {}, scope))


def add_n(inputs: Any, name: str | None = None) -> Any:
    inputs = list(inputs)
    if len(inputs) == 1:
        return _ops_identity(inputs[0], name)
    return _out(apply_op("AddN", [inputs], {}, name))


def _ops_identity(x: Any, name: str | None) -> Any:
    return _out(apply_op("Identity", [x], {}, name))


def _reduction_axes(x: Any, axis: Any) -> Any:
    if axis is None:
        rank = x.shape.ndims
        # TF's _ReductionDims tests `if x_rank:`, so a scalar gets Rank + Range too.
        if rank:
            return constant(np.arange(rank, dtype=np.int32))
        return range(0, array_ops.rank(x), 1)
    return axis


def _reducer(op_type: str, default_name: str):
    def fn(
        input_tensor: Any,
        axis: Any = None,
        keepdims: Any = None,
        name: str | None = None,
        reduction_indices: Any = None,
        keep_dims: Any = None,
    ) -> Any:
        axis = reduction_indices if axis is None else axis
        keep = bool(keepdims if keepdims is not None else (keep_dims or False))
        # A variable is read by the reduction's own node, under its scope ("Sum/
        # ReadVariableOp"), as in TF; anything else is converted here.
        x = (
            input_tensor
            if hasattr(input_tensor, "_as_graph_element")
            else convert_to_tensor(input_tensor)
        )
        axes = _reduction_axes(x, axis) if axis is None else axis
        # An empty Python list goes to apply_op as it is: TF converts it as float32 first
        # and leaves that Const in the graph ("Sum/reduction_indices", then "..._1").
        if not isinstance(axes, _ops.Tensor) and not (isinstance(axes, (list, tuple)) and not axes):
            axes = np.asarray(axes, dtype=np.int32)
        # A Python axis becomes the op's "<name>/reduction_indices" Const, as in TF.
        out = _out(apply_op(op_type, [x, axes], {"keep_dims": keep}, name))
        if axis is None and not keep:
            out.set_shape([])  # TF's _may_reduce_to_scalar
        return out

    fn.__name__ = default_name
    return fn


reduce_sum = _reducer("Sum", "Sum")
reduce_mean = _reducer("Mean", "Mean")
reduce_max = _reducer("Max", "Max")
reduce_min = _reducer("Min", "Min")
reduce_prod = _reducer("Prod", "Prod")
reduce_any = _reducer("Any", "Any")
reduce_all = _reducer("All", "All")


def _arg_reduction(op_type: str) -> Any:
    """tf.argmax / tf.argmin: the index of the extreme value along `axis` (default 0)."""

    def fn(
        input: Any,
        axis: Any = None,
        name: str | None = None,
        dimension: Any = None,
        output_type: Any = dtypes.int64,
    ) -> Any:
        axis = dimension if axis is None else axis
        if not isinstance(axis, _ops.Tensor):  # the Const "<op>/dimension", as in TF
            axis = np.asarray(0 if axis is None else axis, dtype=np.int32)
        return _out(apply_op(op_type, [input, axis], {"output_type": output_type}, name))

    fn.__name__ = fn.__qualname__ = op_type.lower()
    return fn


argmax = _arg_reduction("ArgMax")
argmin = _arg_reduction("ArgMin")


def _gen_arg(op_type: str) -> Any:
    """tf.arg_max / tf.arg_min: the raw ArgMax/ArgMin op (dimension required)."""

    def fn(
        input: Any, dimension: Any, output_type: Any = dtypes.int64, name: str | None = None
    ) -> Any:
        return _out(apply_op(op_type, [input, dimension], {"output_type": output_type}, name))

    fn.__name__ = op_type
    return fn


arg_max = _gen_arg("ArgMax")
arg_min = _gen_arg("ArgMin")


_RANGE_DTYPES = [
    dtypes.int32,
    dtypes.int64,
    dtypes.float16,
    dtypes.bfloat16,
    dtypes.float32,
    dtypes.float64,
]


def range(
    start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None, name: str = "range"
) -> Any:
    if limit is None:
        start, limit = 0, start
    with _ops.name_scope(name, "Range", [start, limit, delta]) as scope:
        want = None if dtype is None else dtypes.as_dtype(dtype)
        # TF converts all three before casting any (Consts first, then the Casts); with no
        # dtype each converts on its own and the widest of TF's hierarchy wins.
        start, limit, delta = [
            x if isinstance(x, _ops.Tensor) else convert_to_tensor(x, dtype=want, name=arg)
            for x, arg in ((start, "start"), (limit, "limit"), (delta, "delta"))
        ]
        dt = want or builtins.max(
            (x.dtype.base_dtype for x in (start, limit, delta)), key=_RANGE_DTYPES.index
        )
        start, limit, delta = (cast(x, dt) for x in (start, limit, delta))
        return _out(apply_op("Range", [start, limit, delta], {}, scope))


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any, name: str | None = None) -> Any:
    with _ops.name_scope(name, "clip_by_value", [t]) as scope:
        t = convert_to_tensor(t)
        t_min = minimum(t, clip_value_max)
        return _out(apply_op("Maximum", [t_min, clip_value_min], {}, scope))


def cumsum(
    x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Any:
    return _out(
        apply_op(
            "Cumsum",
            [x, axis],
            {"exclusive": exclusive, "reverse": reverse},
            name,
        )
    )


def cumprod(
    x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False, name: str | None = None
) -> Any:
    return _out(
        apply_op(
            "Cumprod",
            [x, axis],
            {"exclusive": exclusive, "reverse": reverse},
            name,
        )
    )


def reduce_logsumexp(
    input_tensor: Any, axis: Any = None, keepdims: bool = False, name: str | None = None
) -> Any:
    """TF's reduce_logsumexp: the max is shifted out, 0 where it is not finite (so an
    all -inf slice gives -inf, not nan), and reshaped back when the axes are dropped."""
    with _ops.name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        raw_max = reduce_max(input_tensor, axis=axis, keepdims=True)
        finite = is_finite(raw_max)
        my_max = array_ops.stop_gradient(_out(apply_op("SelectV2", [finite, raw_max, 0], {})))
        result = log(reduce_sum(exp(subtract(input_tensor, my_max)), axis=axis, keepdims=keepdims))
        if not keepdims:
            # A Shape op even for a static shape: TF calls gen_array_ops.shape here.
            shape = _out(apply_op("Shape", [result], {"out_type": dtypes.int32}))
            my_max = array_ops.reshape(my_max, shape)
        result = add(result, my_max, name=scope)
        if axis is None and not keepdims:
            result.set_shape([])  # TF's _may_reduce_to_scalar
        return result


def count_nonzero(
    input_tensor: Any,
    axis: Any = None,
    keepdims: bool = False,
    dtype: Any = dtypes.int64,
    name: str | None = None,
) -> Any:
    """TF's count_nonzero: a bool input is its own predicate; others compare with a
    scalar zero (NotEqual broadcasts)."""
    with _ops.name_scope(name, "count_nonzero", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input")
        if x.dtype.base_dtype == dtypes.bool:
            nz = x
        else:
            nz = not_equal(x, array_ops.zeros([], dtype=x.dtype.base_dtype))
        return cast(reduce_sum(cast(nz, dtypes.int64), axis=axis, keepdims=keepdims), dtype)


def _binary_op_wrapper(fn: Any, op_name: str, reverse: bool = False):
    """TF's binary_op_wrapper: op named `op_name`, the Python operand a Const named "y"
    (or "x" when reflected) under that scope."""

    def method(self: Any, other: Any) -> Any:
        with _ops.name_scope(None, op_name, [self, other]) as name:
            x = convert_to_tensor(self)
            try:
                other_t = convert_to_tensor(
                    other, dtype=x.dtype.base_dtype, name="x" if reverse else "y"
                )
            except TypeError:
                if isinstance(other, _ops.Tensor) or hasattr(other, "_as_graph_element"):
                    raise
                return NotImplemented
            return fn(other_t, x, name=name) if reverse else fn(x, other_t, name=name)

    return method


def _overload_operators(cls: Any) -> None:
    """Tensor operators as TF defines them (math_ops._OverrideBinaryOperatorHelper)."""
    table = {
        "add": add,
        "sub": subtract,
        "mul": multiply,
        "truediv": truediv,
        "floordiv": floordiv,
        "mod": floormod,
        "pow": pow,
        "matmul": matmul,
        "and": logical_and,
        "or": logical_or,
        "xor": logical_xor,
    }
    for name, fn in table.items():
        setattr(cls, f"__{name}__", _binary_op_wrapper(fn, name))
        setattr(cls, f"__r{name}__", _binary_op_wrapper(fn, name, reverse=True))
    cls.__lt__ = lambda self, other: less(self, other)
    cls.__le__ = lambda self, other: less_equal(self, other)
    cls.__gt__ = lambda self, other: greater(self, other)
    cls.__ge__ = lambda self, other: greater_equal(self, other)
    cls.__neg__ = lambda self: neg(self)
    cls.__abs__ = lambda self: abs(self)
    cls.__invert__ = lambda self: logical_not(self)

    def getitem(self: Any, key: Any) -> Any:
        return array_ops._slice_helper(self, key)

    cls.__getitem__ = getitem


_overload_operators(_ops.Tensor)


def _segment(op_type: str, unsorted: bool):
    if unsorted:

        def fn(data: Any, segment_ids: Any, num_segments: Any, name: str | None = None) -> Any:
            return _out(apply_op(op_type, [data, segment_ids, num_segments], {}, name))

    else:

        def fn(data: Any, segment_ids: Any, name: str | None = None) -> Any:  # type: ignore[misc]
            return _out(apply_op(op_type, [data, segment_ids], {}, name))

    fn.__name__ = op_type
    return fn


segment_sum = _segment("SegmentSum", False)
segment_mean = _segment("SegmentMean", False)
segment_max = _segment("SegmentMax", False)
segment_min = _segment("SegmentMin", False)
segment_prod = _segment("SegmentProd", False)
unsorted_segment_sum = _segment("UnsortedSegmentSum", True)
unsorted_segment_max = _segment("UnsortedSegmentMax", True)
unsorted_segment_min = _segment("UnsortedSegmentMin", True)
unsorted_segment_prod = _segment("UnsortedSegmentProd", True)


def scalar_mul(scalar: Any, x: Any, name: str | None = None) -> Any:
    x = convert_to_tensor(x)
    return multiply(convert_to_tensor(scalar, dtype=x.dtype, name="scalar"), x, name=name)


def linspace(start: Any, stop: Any, num: Any, name: str | None = None) -> Any:
    return _out(apply_op("LinSpace", [start, stop, num], {}, name))


lin_space = linspace


# TF's generated ops return these namedtuples (tf.unique(x).y, .idx ...).
Unique = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])
ListDiff = collections.namedtuple("ListDiff", ["out", "idx"])


def unique(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> Any:
    op = apply_op("Unique", [x], {"out_idx": out_idx}, name)
    return Unique(*op.outputs)


def unique_with_counts(x: Any, out_idx: Any = dtypes.int32, name: str | None = None) -> Any:
    op = apply_op("UniqueWithCounts", [x], {"out_idx": out_idx}, name)
    return UniqueWithCounts(*op.outputs)


def setdiff1d(x: Any, y: Any, index_dtype: Any = dtypes.int32, name: str | None = None) -> Any:
    """tf.setdiff1d: the values of x not in y (ListDiff), with their indices in x."""
    op = apply_op("ListDiff", [x, y], {"out_idx": index_dtype}, name)
    return ListDiff(*op.outputs)


def invert_permutation(x: Any, name: str | None = None) -> Any:
    return _out(apply_op("InvertPermutation", [x], {}, name))


def saturate_cast(value: Any, dtype: Any, name: str | None = None) -> Any:
    """tf.saturate_cast: `value` clamped (ClipByValue "clamp") to what `dtype` holds, then
    cast. The limits are those of TensorFlow 2.21 (forward-compatible since 2024-11):
    both types' bounds, nudged toward zero where the input type rounds them outward."""
    with _ops.name_scope(name, "saturate_cast", [value]) as scope:
        value = convert_to_tensor(value, name="value")
        dtype = dtypes.as_dtype(dtype).base_dtype
        in_dtype = value.dtype.base_dtype
        if in_dtype.is_complex or dtype.is_complex:
            raise TypeError(
                f"saturate_cast from {in_dtype.name} to {dtype.name}: complex types are not "
                "supported by this client (TensorFlow clamps real and imaginary parts)"
            )
        np_in = in_dtype.as_numpy_dtype
        try:
            promoted = np.promote_types(np_in, dtype.as_numpy_dtype)
        except TypeError:
            promoted = np.dtype(float)
        low = np_in(np.maximum(in_dtype.min, dtype.min))
        if np.array([low, dtype.min], dtype=promoted)[0] < np.array(dtype.min, dtype=promoted):
            low = np.nextafter(low, np_in(0), dtype=np_in)
        high = np_in(np.minimum(float(in_dtype.max), float(dtype.max)))
        if np.array([high, dtype.max], dtype=promoted)[0] > np.array(dtype.max, dtype=promoted):
            high = np.nextafter(high, np_in(0), dtype=np_in)
        clamped = apply_op(
            "ClipByValue",
            [
                value,
                convert_to_tensor(low, dtype=in_dtype),
                convert_to_tensor(high, dtype=in_dtype),
            ],
            {},
            "clamp",
        ).outputs[0]
        return cast(clamped, dtype, name=scope)


def _sparse_segment(op_type: str):
    def fn(data: Any, indices: Any, segment_ids: Any, name: str | None = None,
           num_segments: Any = None, sparse_gradient: bool = False) -> Any:  # fmt: skip
        attrs = {"sparse_gradient": sparse_gradient}
        if num_segments is not None:
            inputs = [data, indices, segment_ids, num_segments]
            return _out(apply_op(op_type + "WithNumSegments", inputs, attrs, name))
        return _out(apply_op(op_type, [data, indices, segment_ids], attrs, name))

    fn.__name__ = op_type
    return fn


# tf.sparse.segment_sum / segment_mean / segment_sqrt_n (tf.sparse_segment_* in TF1).
sparse_segment_sum = _sparse_segment("SparseSegmentSum")
sparse_segment_mean = _sparse_segment("SparseSegmentMean")
sparse_segment_sqrt_n = _sparse_segment("SparseSegmentSqrtN")


def _shape_without_out_type(t: Any) -> Any:
    """TF's shape_internal(t) with no out_type: a known shape is the Const
    "Shape/shape_as_tensor" (TensorShape's conversion), else a Shape op."""
    with _ops.name_scope(None, "Shape", [t]) as scope:
        if t.shape.is_fully_defined():
            return constant(t.shape.as_list(), dtype=dtypes.int32, name="shape_as_tensor")
        return _out(apply_op("Shape", [t], {"out_type": dtypes.int32}, scope))


def _unsorted_segment_n(data: Any, segment_ids: Any, num_segments: Any) -> Any:
    """TF's _unsorted_segment_N: each segment's entry count (at least 1), shaped to
    broadcast against the segment sums."""
    num_segments = convert_to_tensor(num_segments)
    ones_tensor = array_ops.ones(_shape_without_out_type(segment_ids), dtype=data.dtype)
    n = unsorted_segment_sum(ones_tensor, segment_ids, num_segments)
    broadcastable_shape = array_ops.concat(
        [
            num_segments[array_ops.newaxis],
            array_ops.ones(
                [array_ops.rank(data) - array_ops.rank(segment_ids)], dtype=num_segments.dtype
            ),
        ],
        axis=0,
    )
    return maximum(array_ops.reshape(n, broadcastable_shape), 1)


def unsorted_segment_mean(
    data: Any, segment_ids: Any, num_segments: Any, name: str | None = None
) -> Any:
    with _ops.name_scope(name, "UnsortedSegmentMean"):
        data, segment_ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
        n = _unsorted_segment_n(data, segment_ids, num_segments)
        return unsorted_segment_sum(data, segment_ids, num_segments) / n


def unsorted_segment_sqrt_n(
    data: Any, segment_ids: Any, num_segments: Any, name: str | None = None
) -> Any:
    with _ops.name_scope(name, "UnsortedSegmentSqrtN"):
        data, segment_ids = convert_to_tensor(data), convert_to_tensor(segment_ids)
        n = _unsorted_segment_n(data, segment_ids, num_segments)
        return unsorted_segment_sum(data, segment_ids, num_segments) / sqrt(n)
