"""Ops: math beyond coefficient-wise (TensorFlow's math_ops.cc): AddN, Cast, Bitcast,
ClipByValue, Range, LinSpace, Cumsum/Cumprod, ArgMax/ArgMin, MatMul family, Einsum.

Elementwise families live in `cwise_ops`, reductions in `reduction_ops`. Signatures are
TensorFlow's; kernels are stateless numpy functions, safe from any thread. Matrix products
are `expensive` (numpy releases the GIL, so the executor may run them on its pool).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import ml_dtypes
import numpy as np

from common import memory
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops import einsum_equation, parallel, variant_ops
from common.ops import math_util as mu
from common.ops.registry import KernelConstruction, register_kernel, register_op

_NUMBER = (
    "float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
    "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64"
)
_ARG_T = (
    "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64, "
    "qint8, quint8, qint32, qint16, quint16, bool"
)


# ---------------------------------------------------------------------------------------
# AddN, ClipByValue
# ---------------------------------------------------------------------------------------


def _add_n(kc: KernelConstruction) -> Callable:
    variant = kc.output_types[0] == DataType.DT_VARIANT
    out = mu.np_type(kc.output_types[0])

    def compute(ctx, inputs: list) -> list:
        xs = [np.asarray(x) for x in inputs]
        for i, x in enumerate(xs[1:], 1):
            if x.shape != xs[0].shape:
                raise InvalidArgumentError(
                    "Inputs to operation AddN must have the same size and shape.  Input 0: "
                    f"{mu.shape_str(xs[0].shape)} != input {i}: {mu.shape_str(x.shape)}"
                )
        if variant:  # TF's AddNOp<Variant>: the variant's registered ADD, pairwise
            total = xs[0]
            for x in xs[1:]:
                total = variant_ops.add_variants(total, x, kc.node_name)
            return [total]
        if mu.fp_errors_ignored():
            return [mu.as_type(_sum_n(xs), out)]
        with np.errstate(all="ignore"):
            return [mu.as_type(_sum_n(xs), out)]

    return compute


def _sum_n(xs: list[np.ndarray]) -> np.ndarray:
    """x0 + x1 + ... left to right, in the compute type: the first sum into a new buffer,
    the rest added to it in place."""
    if len(xs) == 1:
        return mu.upcast(xs[0]).copy()
    acc = np.asarray(np.add(mu.upcast(xs[0]), mu.upcast(xs[1])))
    for x in xs[2:]:
        acc += mu.upcast(x)
    return acc


def _clip_by_value(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        t, lo, hi = (np.asarray(v) for v in inputs)
        for b in (lo, hi):
            if b.ndim != 0 and b.shape != t.shape:
                raise InvalidArgumentError(
                    "clip_value_min and clip_value_max must be either scalars or have the "
                    f"same shape as the input, got: {mu.shape_str(t.shape)} vs. "
                    f"{mu.shape_str(lo.shape)} vs. {mu.shape_str(hi.shape)}"
                )
        return [mu.as_type(np.minimum(np.maximum(t, lo), hi), t.dtype)]

    return compute


# ---------------------------------------------------------------------------------------
# Cast, Bitcast
# ---------------------------------------------------------------------------------------

# Explicit mantissa bits per float type: Cast(Truncate=true) clears the low source bits
# a narrower destination cannot hold before converting (TF's LSBZeroSetter).
_MANTISSA = {
    np.dtype(np.float64): 52,
    np.dtype(np.float32): 23,
    np.dtype(np.float16): 10,
    np.dtype(ml_dtypes.bfloat16): 7,
}


def cast_array(x: np.ndarray, dst: np.dtype, truncate: bool = False) -> np.ndarray:
    """TensorFlow's Cast of `x` to `dst`: floats truncate toward zero into integers,
    complex to real keeps the real part, anything to bool is `x != 0` (for complex, the
    real part only: TensorFlow casts 0+1j to False)."""
    x = np.asarray(x)
    if x.dtype == dst:
        return x
    if dst.kind == "b":
        return (x.real if x.dtype.kind == "c" else x) != 0
    if x.dtype.kind == "c" and dst.kind != "c":
        x = x.real
    if truncate and x.dtype in _MANTISSA and dst in _MANTISSA:
        drop = _MANTISSA[x.dtype] - _MANTISSA[dst]
        if drop > 0:
            u = np.dtype(f"u{x.dtype.itemsize}")
            mask = np.array(~((1 << drop) - 1) & ((1 << (8 * x.dtype.itemsize)) - 1), u)
            x = (x.view(u) & mask).view(x.dtype)
    with np.errstate(all="ignore"):
        if mu.is_integer(dst) and not mu.is_integer(x.dtype) and x.dtype.kind != "b":
            x = np.trunc(mu.upcast(x))
        return x.astype(dst)


def _cast(kc: KernelConstruction) -> Callable:
    dst = mu.np_type(kc.attrs["DstT"])
    truncate = bool(kc.attrs.get("Truncate", False))

    def compute(ctx, inputs: list) -> list:
        return [cast_array(inputs[0], dst, truncate)]

    return compute


def _bitcast(kc: KernelConstruction) -> Callable:
    dst = mu.np_type(kc.attrs["type"])

    def compute(ctx, inputs: list) -> list:
        x = np.ascontiguousarray(inputs[0])
        src_size, dst_size = x.dtype.itemsize, dst.itemsize
        if src_size == dst_size:
            return [x.view(dst)]
        if src_size > dst_size:
            ratio = src_size // dst_size
            return [x.reshape(x.shape + (1,)).view(dst).reshape(x.shape + (ratio,))]
        ratio = dst_size // src_size
        if x.ndim == 0 or x.shape[-1] != ratio:
            raise InvalidArgumentError(
                f"Cannot bitcast from {x.dtype} to {dst}: shape {mu.shape_str(x.shape)}"
            )
        return [x.view(dst).reshape(x.shape[:-1])]

    return compute


# ---------------------------------------------------------------------------------------
# Range, LinSpace
# ---------------------------------------------------------------------------------------


def _scalar(x, what: str) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 0:
        raise InvalidArgumentError(f"{what} must be a scalar, not shape {mu.shape_str(x.shape)}")
    return x


def _range(kc: KernelConstruction) -> Callable:
    out = mu.np_type(kc.output_types[0])

    def compute(ctx, inputs: list) -> list:
        start, limit, delta = (
            _scalar(v, w).item() for v, w in zip(inputs, ("start", "limit", "delta"))
        )
        if delta == 0:
            raise InvalidArgumentError(f"Requires delta != 0: {delta}")
        if delta > 0 and start > limit:
            raise InvalidArgumentError(f"Requires start <= limit when delta > 0: {start}/{limit}")
        if delta < 0 and start < limit:
            raise InvalidArgumentError(f"Requires start >= limit when delta < 0: {start}/{limit}")
        if mu.is_integer(out):
            size = (abs(limit - start) + abs(delta) - 1) // abs(delta)
        else:
            size = int(np.ceil(abs((limit - start) / delta)))
        memory.check_allocation(kc, [size], np.dtype(out))
        ct = mu.compute_type(out)
        vals = ct.type(start) + np.arange(size, dtype=ct) * ct.type(delta)
        return [mu.as_type(vals, out)]

    return compute


def _lin_space(kc: KernelConstruction) -> Callable:
    out = mu.np_type(kc.output_types[0])

    def compute(ctx, inputs: list) -> list:
        ct = mu.compute_type(out)
        start = ct.type(_scalar(inputs[0], "start"))
        stop = ct.type(_scalar(inputs[1], "stop"))
        num = int(_scalar(inputs[2], "num"))
        if num <= 0:
            raise InvalidArgumentError(f"Requires num > 0: {num}")
        if num == 1:
            return [np.array([start], out)]
        step = (stop - start) / ct.type(num - 1)
        vals = start + np.arange(num, dtype=ct) * step
        vals[-1] = stop
        return [mu.as_type(vals, out)]

    return compute


# ---------------------------------------------------------------------------------------
# Cumsum, Cumprod
# ---------------------------------------------------------------------------------------


def _scan(ufunc: np.ufunc, identity: float) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        exclusive = bool(kc.attrs.get("exclusive", False))
        reverse = bool(kc.attrs.get("reverse", False))

        def compute(ctx, inputs: list) -> list:
            x = np.asarray(inputs[0])
            axis_t = np.asarray(inputs[1])
            if axis_t.ndim != 0:
                raise InvalidArgumentError(
                    f"ScanOp: axis must be a scalar, not {mu.shape_str(axis_t.shape)}"
                )
            axis = axis_t.item()
            if not -x.ndim <= axis < x.ndim:
                # TF reports a negative axis after adding the rank (-4 of 3 dims: "got -1").
                got = axis + x.ndim if axis < 0 else axis
                raise InvalidArgumentError(
                    f"ScanOp: Expected scan axis in the range [{-x.ndim}, {x.ndim}), but got {got}"
                )
            v = mu.upcast(x)
            if reverse:
                v = np.flip(v, axis)
            with np.errstate(all="ignore"):
                r = ufunc.accumulate(v, axis=axis, dtype=v.dtype)
            if exclusive:
                r = np.roll(r, 1, axis=axis)
                first: list[slice | int] = [slice(None)] * x.ndim
                first[axis] = 0
                r[tuple(first)] = identity
            if reverse:
                r = np.flip(r, axis)
            return [mu.as_type(r, x.dtype)]

        return compute

    return factory


# ---------------------------------------------------------------------------------------
# ArgMax, ArgMin
# ---------------------------------------------------------------------------------------


def _arg_reduce(fn: Callable) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        out = mu.np_type(kc.attrs.get("output_type", DataType.DT_INT64))

        def compute(ctx, inputs: list) -> list:
            x = np.asarray(inputs[0])
            axis = _scalar(inputs[1], "dimension").item()
            if not -x.ndim <= axis < max(x.ndim, 1):
                raise InvalidArgumentError(
                    f"Expected dimension in the range [{-x.ndim}, {x.ndim}), but got {axis}"
                )
            axis %= max(x.ndim, 1)
            if x.ndim and x.shape[axis] == 0:
                raise InvalidArgumentError(
                    f"Reduction axis {axis} is empty in shape {mu.shape_str(x.shape)}"
                )
            return [fn(mu.upcast(x), axis=axis).astype(out)]

        return compute

    return factory


# ---------------------------------------------------------------------------------------
# MatMul, BatchMatMul(V2, V3), Einsum
# ---------------------------------------------------------------------------------------


def _size_incompatible(a: np.ndarray, b: np.ndarray) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"Matrix size-incompatible: In[0]: {mu.shape_str(a.shape)}, In[1]: {mu.shape_str(b.shape)}"
    )


def _matmul(kc: KernelConstruction) -> Callable:
    ta = bool(kc.attrs.get("transpose_a", False))
    tb = bool(kc.attrs.get("transpose_b", False))
    out = mu.np_type(kc.output_types[0])

    def compute(ctx, inputs: list) -> list:
        a, b = np.asarray(inputs[0]), np.asarray(inputs[1])
        for i, m in enumerate((a, b)):
            if m.ndim != 2:
                raise InvalidArgumentError(
                    f"In[{i}] is not a matrix. Instead it has shape {mu.shape_str(m.shape)}"
                )
        am, bm = (a.T if ta else a), (b.T if tb else b)
        if am.shape[1] != bm.shape[0]:
            raise _size_incompatible(a, b)
        if mu.fp_errors_ignored():
            return [_product(a, b, ta, tb, out)]
        with np.errstate(all="ignore"):
            return [_product(a, b, ta, tb, out)]

    return compute


def _product(a: np.ndarray, b: np.ndarray, ta: bool, tb: bool, out: np.dtype) -> np.ndarray:
    """MatMul's product in the compute type, as dtype `out`."""
    if tb and not ta and _flip_transposed_b(a, b):
        # (b a^T)^T: the same products and sums as a @ b^T on this BLAS (_flip_is_exact).
        return mu.as_type(np.ascontiguousarray(np.matmul(b, a.T).T), out)
    am, bm = (a.T if ta else a), (b.T if tb else b)
    return mu.as_type(parallel_matmul(mu.upcast(am), mu.upcast(bm)), out)


def _flip_transposed_b(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether a @ b^T is better computed as (b @ a^T)^T: for a few rows of `a` (an RNN's
    batch) and a wide inner dimension, OpenBLAS's SkylakeX kernels take about 0.5-0.7x
    the time that way (measured over m <= 64, 128 <= n <= k: e.g. the LSTM step's
    [32, 512] x [256, 512]^T, 163 us against 107 us); outside that range it was slower.
    Only where the flip gives a @ b^T's bits (_flip_is_exact)."""
    m, k = a.shape
    n = b.shape[0]
    return (
        m <= 64
        and 128 <= n <= k
        and a.dtype == b.dtype
        and a.dtype.char in "fd"
        and m * k * n < _PARALLEL_MATMUL_FLOPS
        and _flip_is_exact()
    )


@functools.cache
def _flip_is_exact() -> bool:
    """Whether this process's BLAS computes (b @ a^T)^T bit for bit as a @ b^T. OpenBLAS's
    SkylakeX kernels do (it sums each output in the same order either way); its Haswell
    kernels, which it picks on CPUs without AVX-512, differ in the last bits. The kernel
    set is chosen once per process, so one probe of each dtype over the flip's shapes
    decides it for the process."""
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        for m, k, n in ((32, 512, 256), (8, 256, 128), (64, 1024, 1024)):
            a = rng.standard_normal((m, k)).astype(dtype)
            b = rng.standard_normal((n, k)).astype(dtype)
            if not np.array_equal(np.matmul(b, a.T).T, np.matmul(a, b.T)):
                return False
    return True


# A MatMul of at least this many multiply-adds is split by rows over the compute pool
# (BLAS runs single-threaded in workers: see worker/__main__.py).
_PARALLEL_MATMUL_FLOPS = 1 << 24


def parallel_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for 2-D operands, a large one split over the compute pool
    (common.ops.parallel): by rows of `a`, or by columns of `b` when `a` has fewer rows
    than `b` has columns (each part then reads only its share of `b`: a [64, 3136] @
    [3136, 1024] MatMul costs 5.5 ms of CPU split by columns, 6.8 ms split by rows)."""
    m, n = a.shape[0], b.shape[1]
    parts = min(parallel.cores(), max(m, n))
    if parts < 2 or m * a.shape[1] * n < _PARALLEL_MATMUL_FLOPS:
        return np.matmul(a, b)
    out = np.empty((m, n), np.result_type(a, b))
    by_rows = m >= n
    spans = parallel.bounds(m if by_rows else n, parts)

    def block(k: int) -> None:
        lo, hi = spans[k]
        if by_rows:
            np.matmul(a[lo:hi], b, out=out[lo:hi])
        else:
            np.matmul(a, b[:, lo:hi], out=out[:, lo:hi])

    parallel.run_parts(block, parts)
    return out


def _adjoint(m: np.ndarray) -> np.ndarray:
    m = np.swapaxes(m, -1, -2)
    return np.conj(m) if m.dtype.kind == "c" else m


def _batch_matmul(broadcast: bool) -> Callable[[KernelConstruction], Callable]:
    def factory(kc: KernelConstruction) -> Callable:
        adj_x = bool(kc.attrs.get("adj_x", False))
        adj_y = bool(kc.attrs.get("adj_y", False))
        out = mu.np_type(kc.output_types[0])
        ct = mu.compute_type(out)

        def compute(ctx, inputs: list) -> list:
            x, y = np.asarray(inputs[0]), np.asarray(inputs[1])
            for i, m in enumerate((x, y)):
                if m.ndim < 2:
                    raise InvalidArgumentError(f"In[{i}] ndims must be >= 2: {m.ndim}")
            bx, by = x.shape[:-2], y.shape[:-2]
            if broadcast:
                try:
                    np.broadcast_shapes(bx, by)
                except ValueError:
                    raise InvalidArgumentError(
                        "In[0] and In[1] must have compatible batch dimensions: "
                        f"{mu.shape_str(x.shape)} vs. {mu.shape_str(y.shape)}"
                    ) from None
            elif bx != by:
                raise InvalidArgumentError(
                    "In[0] and In[1] must have compatible batch dimensions: "
                    f"{mu.shape_str(x.shape)} vs. {mu.shape_str(y.shape)}"
                )
            xm = _adjoint(x) if adj_x else x
            ym = _adjoint(y) if adj_y else y
            if xm.shape[-1] != ym.shape[-2]:
                raise _size_incompatible(x, y)
            with np.errstate(all="ignore"):
                z = np.matmul(mu.as_type(xm, ct), mu.as_type(ym, ct))
            return [mu.as_type(z, out)]

        return compute

    return factory


def _einsum_repeated_output(equation: str, xs: list[np.ndarray]) -> np.ndarray:
    """An output label repeated ("i->ii", Einsum's gradient of a trace): TensorFlow places
    the values on that diagonal, zeros elsewhere; numpy refuses such an output."""
    inputs, output = equation.split("->")
    unique = "".join(dict.fromkeys(output))
    z = np.einsum(f"{inputs}->{unique}", *xs)
    sizes = dict(zip(unique, z.shape))
    full = np.zeros([sizes[c] for c in output], z.dtype)
    np.einsum(f"{output}->{unique}", full)[...] = z  # a writeable view of the diagonal
    return full


def _einsum(kc: KernelConstruction) -> Callable:
    equation = kc.attrs["equation"]
    out = mu.np_type(kc.output_types[0])

    def compute(ctx, inputs: list) -> list:
        xs = [mu.upcast(np.asarray(x)) for x in inputs]
        # TensorFlow's checks first: numpy's parser takes and refuses other equations.
        found = einsum_equation.plan(equation, [x.shape for x in xs])
        memory.check_allocation(kc, found.output_shape, out)
        output = found.numpy_equation.partition("->")[2]
        try:
            with np.errstate(all="ignore"):
                if "." not in output and len(set(output)) < len(output):
                    z = _einsum_repeated_output(found.numpy_equation, xs)
                else:
                    z = np.einsum(found.numpy_equation, *xs)
        except ValueError as e:
            raise InvalidArgumentError(f"Invalid Einsum equation '{equation}': {e}") from None
        return [mu.as_type(z, out)]

    return compute


# ---------------------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------------------


def _register() -> None:
    register_op(
        "AddN",
        ["inputs: N * T"],
        ["sum: T"],
        ["N: int >= 1", f"T: {{{_NUMBER}, variant}}"],
        commutative=True,
        aggregate=True,
    )
    register_kernel("AddN")(_add_n)
    register_op(
        "ClipByValue",
        ["t: T", "clip_value_min: T", "clip_value_max: T"],
        ["output: T"],
        [f"T: {{{_NUMBER}}}"],
    )
    register_kernel("ClipByValue")(_clip_by_value)
    register_op(
        "Cast", ["x: SrcT"], ["y: DstT"], ["SrcT: type", "DstT: type", "Truncate: bool = false"]
    )
    register_kernel("Cast")(_cast)
    bitcast_types = (
        "bfloat16, half, float, double, int64, int32, uint8, uint16, uint32, uint64, int8, "
        "int16, complex64, complex128, qint8, quint8, qint16, quint16, qint32"
    )
    register_op(
        "Bitcast",
        ["input: T"],
        ["output: type"],
        [f"T: {{{bitcast_types}}}", f"type: {{{bitcast_types}}}"],
    )
    register_kernel("Bitcast")(_bitcast)
    register_op(
        "Range",
        ["start: Tidx", "limit: Tidx", "delta: Tidx"],
        ["output: Tidx"],
        [
            (
                "Tidx: {bfloat16, half, float, double, int8, int16, int32, int64, uint16, "
                "uint32, uint64} = int32"
            )
        ],
    )
    register_kernel("Range", host_memory=("start", "limit", "delta", "output"))(_range)
    register_op(
        "LinSpace",
        ["start: T", "stop: T", "num: Tidx"],
        ["output: T"],
        ["T: {bfloat16, half, float, double}", "Tidx: {int32, int64} = int32"],
    )
    register_kernel("LinSpace")(_lin_space)
    for name, ufunc, identity in (("Cumsum", np.add, 0), ("Cumprod", np.multiply, 1)):
        register_op(
            name,
            ["x: T", "axis: Tidx"],
            ["out: T"],
            [
                "exclusive: bool = false",
                "reverse: bool = false",
                f"T: {{{_NUMBER}}}",
                "Tidx: {int32, int64} = int32",
            ],
        )
        register_kernel(name, expensive=True)(_scan(ufunc, identity))
    register_op(
        "ArgMax",
        ["input: T", "dimension: Tidx"],
        ["output: output_type"],
        [
            f"T: {{{_ARG_T}}}",
            "Tidx: {int16, int32, int64} = int32",
            "output_type: {int16, uint16, int32, int64} = int64",
        ],
    )
    register_kernel("ArgMax", expensive=True)(_arg_reduce(np.argmax))
    register_op(
        "ArgMin",
        ["input: T", "dimension: Tidx"],
        ["output: output_type"],
        [f"T: {{{_ARG_T}}}", "Tidx: {int32, int64} = int32", "output_type: {int32, int64} = int64"],
    )
    register_kernel("ArgMin", expensive=True)(_arg_reduce(np.argmin))
    _register_matmul()


def _register_matmul() -> None:
    grads = ("grad_x: bool = false", "grad_y: bool = false")
    adj = ("adj_x: bool = false", "adj_y: bool = false")
    register_op(
        "MatMul",
        ["a: T", "b: T"],
        ["product: T"],
        [
            "transpose_a: bool = false",
            "transpose_b: bool = false",
            (
                "T: {bfloat16, half, float, double, int32, int64, uint8, uint16, uint32, "
                "uint64, complex64, complex128}"
            ),
            "grad_a: bool = false",
            "grad_b: bool = false",
        ],
    )
    register_kernel("MatMul", expensive=True)(_matmul)
    register_op(
        "BatchMatMul",
        ["x: T", "y: T"],
        ["output: T"],
        ["T: {bfloat16, half, float, double, int32, int64, complex64, complex128}", *adj, *grads],
    )
    register_kernel("BatchMatMul", expensive=True)(_batch_matmul(broadcast=False))
    register_op(
        "BatchMatMulV2",
        ["x: T", "y: T"],
        ["output: T"],
        [
            (
                "T: {bfloat16, half, float, double, int16, int32, int64, uint8, uint16, "
                "uint32, uint64, complex64, complex128}"
            ),
            *adj,
            *grads,
        ],
    )
    register_kernel("BatchMatMulV2", expensive=True)(_batch_matmul(broadcast=True))
    v3_in = "bfloat16, half, float, double, uint8, int8, int16, int32, int64, complex64, complex128"
    register_op(
        "BatchMatMulV3",
        ["x: Ta", "y: Tb"],
        ["output: Tout"],
        [
            f"Ta: {{{v3_in}}}",
            f"Tb: {{{v3_in}}}",
            "Tout: {bfloat16, half, float, double, int16, int32, int64, complex64, complex128}",
            *adj,
            *grads,
        ],
    )
    register_kernel("BatchMatMulV3", expensive=True)(_batch_matmul(broadcast=True))
    register_op(
        "Einsum", ["inputs: N * T"], ["output: T"], ["equation: string", "N: int >= 1", "T: type"]
    )
    register_kernel("Einsum", expensive=True)(_einsum)


_register()
