"""Client, graph building: random tensors as tensorflow.compat.v1 builds them (the same
op types, node names and seed attrs, so the same program draws the same numbers):
random_normal/uniform, truncated_normal, random_shuffle, multinomial/categorical, and
the stateless V2 family (tf.random.stateless_*) over StatelessRandomGetKeyCounter."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1
# TF's Algorithm enum (random_ops_util): what the V2 stateless ops' alg input means.
RNG_ALG_PHILOX, RNG_ALG_THREEFRY, RNG_ALG_AUTO_SELECT = 1, 2, 3


def _truncate_seed(seed: Any) -> int:
    return int(seed) % _MAXINT32  # Python's % is TF's too: never negative


def get_seed(op_seed: Any) -> tuple[int, int]:
    """TF's random_seed.get_seed: (seed, seed2) attrs from the graph and op seeds. With a
    graph seed and no op seed, op seeds count 0, 1, 2 ... per graph (TF 2.x's
    _graph_to_seed_dict); seeds are taken modulo 2**31 - 1; (0, 0) becomes (0, 2**31 - 1).
    Without either seed the attrs are (0, 0): the kernel seeds itself from the OS."""
    g = _ops.get_default_graph()
    graph_seed = g.seed
    if graph_seed is not None:
        if op_seed is None:
            op_seed = getattr(g, "_op_seed_counter", 0)
            g._op_seed_counter = op_seed + 1  # type: ignore[attr-defined]
        seeds = _truncate_seed(graph_seed), _truncate_seed(op_seed)
    elif op_seed is not None:
        seeds = DEFAULT_GRAPH_SEED, _truncate_seed(op_seed)
    else:
        return 0, 0
    return (0, _MAXINT32) if seeds == (0, 0) else seeds


def set_random_seed(seed: int) -> None:
    _ops.get_default_graph().seed = seed


def _shape(shape: Any) -> Any:
    """The shape input of a sampler; a Python shape becomes the Const "<scope>/shape", as
    TF's shape_util.shape_tensor names it."""
    from client.ops import array_ops

    if isinstance(shape, (list, tuple)) and not any(isinstance(d, _ops.Tensor) for d in shape):
        return convert_to_tensor(shape, dtype=dtypes.int32, name="shape")
    if isinstance(shape, (list, tuple)):
        return convert_to_tensor(list(shape), name="shape")
    return array_ops._int_tensor(shape)


def _scaled(rnd: Any, mean: Any, stddev: Any, scope: str) -> Any:
    from client.ops import math_ops

    return math_ops.add(rnd * stddev, mean, name=scope)


def _normal_family(op_type: str, default: str, shape, mean, stddev, dtype, seed, name) -> Any:
    """`op_type` (a standard normal sampler) * stddev + mean, as TF's random_ops builds it."""
    dtype = dtypes.as_dtype(dtype)
    with _ops.name_scope(name, default, [shape, mean, stddev]) as scope:
        s = _shape(shape)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        std_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        seed1, seed2 = get_seed(seed)
        rnd = apply_op(op_type, [s], {"dtype": dtype, "seed": seed1, "seed2": seed2}).outputs[0]
        return _scaled(rnd, mean_t, std_t, scope)


def random_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    seed: Any = None,
    name: str | None = None,
) -> Any:
    return _normal_family(
        "RandomStandardNormal", "random_normal", shape, mean, stddev, dtype, seed, name
    )


def truncated_normal(
    shape: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    seed: Any = None,
    name: str | None = None,
) -> Any:
    return _normal_family(
        "TruncatedNormal", "truncated_normal", shape, mean, stddev, dtype, seed, name
    )


def random_uniform(
    shape: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = dtypes.float32,
    seed: Any = None,
    name: str | None = None,
) -> Any:
    """TF's random_uniform: with the default [0, 1) floats the RandomUniform op alone;
    otherwise min/max Consts and rnd * (max - min) + min (rnd * max when min is int 0)."""
    from client.ops import math_ops

    dtype = dtypes.as_dtype(dtype)
    if maxval is None:
        if dtype.is_integer:
            raise ValueError(f"Must specify maxval for integer dtype {dtype!r}")
        maxval = 1
    with _ops.name_scope(name, "random_uniform", [shape, minval, maxval]) as scope:
        s = _shape(shape)
        min_is_zero = isinstance(minval, int) and not isinstance(minval, bool) and minval == 0
        max_is_one = isinstance(maxval, int) and not isinstance(maxval, bool) and maxval == 1
        if not min_is_zero or not max_is_one or dtype.is_integer:
            minval = convert_to_tensor(minval, dtype=dtype, name="min")
            maxval = convert_to_tensor(maxval, dtype=dtype, name="max")
        seed1, seed2 = get_seed(seed)
        if dtype.is_integer:
            return apply_op(
                "RandomUniformInt", [s, minval, maxval], {"seed": seed1, "seed2": seed2}, scope
            ).outputs[0]
        rnd = apply_op(
            "RandomUniform", [s], {"dtype": dtype, "seed": seed1, "seed2": seed2}
        ).outputs[0]
        if min_is_zero:
            return rnd if max_is_one else math_ops.multiply(rnd, maxval)
        return math_ops.add(rnd * (maxval - minval), minval, name=scope)


def random_shuffle(value: Any, seed: Any = None, name: str | None = None) -> Any:
    seed1, seed2 = get_seed(seed)
    return apply_op(
        "RandomShuffle", [value], {"seed": seed1, "seed2": seed2}, name or "RandomShuffle"
    ).outputs[0]


def _multinomial(logits: Any, num_samples: Any, dtype: Any, seed: Any) -> Any:
    logits = convert_to_tensor(logits, name="logits")
    dtype = dtypes.as_dtype(dtype) if dtype else dtypes.int64
    if dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError(
            f"Argument `dtype` got invalid value {dtype}. Accepted dtypes are "
            f"({dtypes.int32}, {dtypes.int64})."
        )
    seed1, seed2 = get_seed(seed)
    attrs = {"seed": seed1, "seed2": seed2, "output_dtype": dtype}
    return apply_op("Multinomial", [logits, num_samples], attrs).outputs[0]


def multinomial(
    logits: Any,
    num_samples: Any,
    seed: Any = None,
    name: str | None = None,
    output_dtype: Any = None,
) -> Any:
    with _ops.name_scope(name, "multinomial", [logits]):
        return _multinomial(logits, num_samples, output_dtype, seed)


def categorical(
    logits: Any, num_samples: Any, dtype: Any = None, seed: Any = None, name: str | None = None
) -> Any:
    with _ops.name_scope(name, "categorical", [logits]):
        return _multinomial(logits, num_samples, dtype, seed)


# -- stateless (tf.random.stateless_*) ---------------------------------------------------


def _alg_id(alg: Any) -> int:
    if isinstance(alg, int):
        return alg
    canon = str(alg).strip().lower().replace("-", "").replace("_", "")
    ids = {"philox": RNG_ALG_PHILOX, "threefry": RNG_ALG_THREEFRY}
    ids["autoselect"] = RNG_ALG_AUTO_SELECT
    if canon not in ids:
        raise ValueError(f"Argument `alg` got unsupported value {alg}.")
    return ids[canon]


def get_key_counter_alg(seed: Any, alg: Any) -> tuple[Any, Any, int]:
    """Key, counter and algorithm for the V2 ops. TF builds them with
    StatelessRandomGetKeyCounter for auto_select (its default); for an explicit Philox it
    scrambles the seed with ops of its own that compute the same key and counter, which
    here are the same StatelessRandomGetKeyCounter node."""
    a = _alg_id(RNG_ALG_AUTO_SELECT if alg is None else alg)
    if a not in (RNG_ALG_PHILOX, RNG_ALG_AUTO_SELECT):
        raise ValueError(
            f"Algorithm {a} is not supported on CPU (TensorFlow's CPU kernels are Philox only)"
        )
    kc = apply_op("StatelessRandomGetKeyCounter", [seed], {})
    return kc.outputs[0], kc.outputs[1], a


def _stateless_v2(op_type: str, s: Any, seed: Any, alg: Any, extra: list, attrs: dict, name=None):
    key, counter, a = get_key_counter_alg(seed, alg)
    return apply_op(op_type, [s, key, counter, a, *extra], attrs, name).outputs[0]


def stateless_random_uniform(
    shape: Any,
    seed: Any,
    minval: Any = 0,
    maxval: Any = None,
    dtype: Any = dtypes.float32,
    name: str | None = None,
    alg: Any = "auto_select",
) -> Any:
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_integer:
        if (minval is None) != (maxval is None):
            raise ValueError(
                f"For integer `dtype` argument {dtype}, argument `minval` and `maxval` must be "
                f"both None or not None. Got `minval`={minval} and `maxval`={maxval}."
            )
    elif maxval is None:
        maxval = 1
    with _ops.name_scope(name, "stateless_random_uniform", [shape, seed, minval, maxval]) as scope:
        s = _shape(shape)
        if dtype.is_integer and minval is None:
            return _stateless_v2(
                "StatelessRandomUniformFullIntV2", s, seed, alg, [], {"dtype": dtype}, scope
            )
        lo = convert_to_tensor(minval, dtype=dtype, name="min")
        hi = convert_to_tensor(maxval, dtype=dtype, name="max")
        if dtype.is_integer:
            return _stateless_v2("StatelessRandomUniformIntV2", s, seed, alg, [lo, hi], {}, scope)
        rnd = _stateless_v2("StatelessRandomUniformV2", s, seed, alg, [], {"dtype": dtype})
        from client.ops import math_ops

        return math_ops.add(rnd * (hi - lo), lo, name=scope)


def _stateless_normal_family(op_type, default, shape, seed, mean, stddev, dtype, name, alg):
    dtype = dtypes.as_dtype(dtype)
    with _ops.name_scope(name, default, [shape, seed, mean, stddev]) as scope:
        s = _shape(shape)
        mean_t = convert_to_tensor(mean, dtype=dtype, name="mean")
        std_t = convert_to_tensor(stddev, dtype=dtype, name="stddev")
        rnd = _stateless_v2(op_type, s, seed, alg, [], {"dtype": dtype})
        return _scaled(rnd, mean_t, std_t, scope)


def stateless_random_normal(
    shape: Any,
    seed: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    name: str | None = None,
    alg: Any = "auto_select",
) -> Any:
    return _stateless_normal_family(
        "StatelessRandomNormalV2",
        "stateless_random_normal",
        shape,
        seed,
        mean,
        stddev,
        dtype,
        name,
        alg,
    )


def stateless_truncated_normal(
    shape: Any,
    seed: Any,
    mean: Any = 0.0,
    stddev: Any = 1.0,
    dtype: Any = dtypes.float32,
    name: str | None = None,
    alg: Any = "auto_select",
) -> Any:
    return _stateless_normal_family(
        "StatelessTruncatedNormalV2",
        "stateless_truncated_normal",
        shape,
        seed,
        mean,
        stddev,
        dtype,
        name,
        alg,
    )


def stateless_multinomial(
    logits: Any,
    num_samples: Any,
    seed: Any,
    output_dtype: Any = dtypes.int64,
    name: str | None = None,
) -> Any:
    with _ops.name_scope(name, "stateless_multinomial", [logits, seed]):
        logits = convert_to_tensor(logits, name="logits")
        return apply_op(
            "StatelessMultinomial",
            [logits, num_samples, seed],
            {"output_dtype": dtypes.as_dtype(output_dtype)},
        ).outputs[0]


def stateless_categorical(
    logits: Any,
    num_samples: Any,
    seed: Any,
    dtype: Any = dtypes.int64,
    name: str | None = None,
) -> Any:
    with _ops.name_scope(name, "stateless_categorical", [logits, seed]):
        logits = convert_to_tensor(logits, name="logits")
        return apply_op(
            "StatelessMultinomial",
            [logits, num_samples, seed],
            {"output_dtype": dtypes.as_dtype(dtype)},
        ).outputs[0]


def random_gamma(
    shape: Any,
    alpha: Any,
    beta: Any = None,
    dtype: Any = dtypes.float32,
    seed: Any = None,
    name: str | None = None,
) -> Any:
    """TF's random_gamma: RandomGamma over alpha broadcast against beta, / beta, floored
    at the dtype's smallest normal number."""
    import numpy as np

    from client.ops import array_ops, math_ops

    dtype = dtypes.as_dtype(dtype)
    with _ops.name_scope(name, "random_gamma", [shape, alpha, beta]):
        shape = convert_to_tensor(shape, name="shape", dtype=dtypes.int32)
        alpha = convert_to_tensor(alpha, name="alpha", dtype=dtype)
        beta = convert_to_tensor(beta if beta is not None else 1, name="beta", dtype=dtype)
        dims = apply_op(
            "BroadcastArgs", [array_ops.shape(alpha), array_ops.shape(beta)], {}
        ).outputs[0]
        alpha_b = array_ops.broadcast_to(alpha, dims)
        seed1, seed2 = get_seed(seed)
        sample = apply_op("RandomGamma", [shape, alpha_b], {"seed": seed1, "seed2": seed2})
        tiny = float(np.finfo(dtype.as_numpy_dtype).tiny)
        return math_ops.maximum(tiny, sample.outputs[0] / beta)


def random_poisson_v2(
    shape: Any,
    lam: Any,
    dtype: Any = dtypes.float32,
    seed: Any = None,
    name: str | None = None,
) -> Any:
    """TF's tf.random.poisson: one RandomPoissonV2 of shape + lam.shape."""
    with _ops.name_scope(name, "random_poisson", [lam, shape]):
        shape = convert_to_tensor(shape, name="shape", dtype=dtypes.int32)
        seed1, seed2 = get_seed(seed)
        attrs = {"dtype": dtypes.as_dtype(dtype), "seed": seed1, "seed2": seed2}
        return apply_op("RandomPoissonV2", [shape, lam], attrs).outputs[0]


def random_poisson(
    lam: Any,
    shape: Any,
    dtype: Any = dtypes.float32,
    seed: Any = None,
    name: str | None = None,
) -> Any:
    """tf.compat.v1.random_poisson (lam first)."""
    return random_poisson_v2(shape, lam, dtype, seed, name)


def stateless_random_gamma(
    shape: Any,
    seed: Any,
    alpha: Any,
    beta: Any = None,
    dtype: Any = dtypes.float32,
    name: str | None = None,
) -> Any:
    """TF's tf.random.stateless_gamma: StatelessRandomGammaV3 over alpha broadcast
    against beta, / beta, floored at the dtype's smallest normal number."""
    import numpy as np

    from client.ops import array_ops, math_ops

    dtype = dtypes.as_dtype(dtype)
    with _ops.name_scope(name, "stateless_random_gamma", [shape, seed, alpha, beta]):
        s = _shape(shape)
        alpha = convert_to_tensor(alpha, dtype=dtype, name="alpha")
        beta = convert_to_tensor(beta if beta is not None else 1, name="beta", dtype=dtype)
        dims = apply_op(
            "BroadcastArgs", [array_ops.shape(alpha), array_ops.shape(beta)], {}
        ).outputs[0]
        alpha_b = array_ops.broadcast_to(alpha, dims)
        rnd = _stateless_v2("StatelessRandomGammaV3", s, seed, "auto_select", [alpha_b], {})
        tiny = float(np.finfo(dtype.as_numpy_dtype).tiny)
        return math_ops.maximum(tiny, rnd / beta)


def stateless_random_poisson(
    shape: Any, seed: Any, lam: Any, dtype: Any = dtypes.int32, name: str | None = None
) -> Any:
    """TF's tf.random.stateless_poisson: one StatelessRandomPoisson."""
    with _ops.name_scope(name, "stateless_random_poisson", [shape, seed, lam]):
        s = _shape(shape)
        attrs = {"dtype": dtypes.as_dtype(dtype)}
        return apply_op("StatelessRandomPoisson", [s, seed, lam], attrs).outputs[0]


def stateless_shuffle(
    value: Any, seed: Any, alg: Any = "auto_select", name: str | None = None
) -> Any:
    """tf.random.experimental.stateless_shuffle: StatelessShuffle along dimension 0 from
    the seed's key and counter."""
    with _ops.name_scope(name, "stateless_shuffle", [value, seed]):
        key, counter, a = get_key_counter_alg(seed, alg)
        return apply_op("StatelessShuffle", [value, key, counter, a], {}).outputs[0]


def stateless_random_binomial(
    shape: Any,
    seed: Any,
    counts: Any,
    probs: Any,
    output_dtype: Any = dtypes.int32,
    name: str | None = None,
) -> Any:
    """tf.random.stateless_binomial: probs (float32 unless typed) and counts (probs'
    dtype unless typed) broadcast to the shape's trailing dimensions."""
    import numpy as np

    def typed(x: Any, default: Any, arg: str) -> Any:
        if isinstance(x, (_ops.Tensor, np.ndarray, np.generic)):
            return convert_to_tensor(x, name=arg)
        return convert_to_tensor(x, dtype=default, name=arg)

    with _ops.name_scope(name, "stateless_random_binomial", [shape, seed, counts, probs]):
        s = _shape(shape)
        probs_t = typed(probs, dtypes.float32, "probs")
        counts_t = typed(counts, probs_t.dtype.base_dtype, "counts")
        attrs = {"dtype": dtypes.as_dtype(output_dtype)}
        return apply_op("StatelessRandomBinomial", [s, seed, counts_t, probs_t], attrs).outputs[0]
