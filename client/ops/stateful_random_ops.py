"""Client, graph building: tf.random.Generator (Philox), as TensorFlow 2.x's
stateful_random_ops.py builds it in graph mode: the state is an int64 [3] resource
variable "random_generator/StateVar" (from_seed chops the seed into 64-bit words, left
padded); each draw reads and advances it with RngReadAndSkip and feeds the old counter
and key to the stateless V2 kernels; binomial runs StatefulRandomBinomial on the state.
The same node names as TensorFlow's, so the same numbers. Graph building; not
thread-safe.
"""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.ops import array_ops, math_ops

RNG_ALG_PHILOX = 1
RNG_ALG_THREEFRY = 2
RNG_ALG_AUTO_SELECT = 3
_STATE_SIZE = 3
_M64 = (1 << 64) - 1
_ALGS = {"philox": RNG_ALG_PHILOX, "threefry": RNG_ALG_THREEFRY, "auto_select": 3}


def _alg_id(alg: Any) -> int:
    if alg is None:
        return RNG_ALG_PHILOX
    if isinstance(alg, str):
        if alg.lower() not in _ALGS:
            raise ValueError(f"Unsupported random algorithm: {alg}")
        return _ALGS[alg.lower()]
    return int(getattr(alg, "value", alg))


def _shape_tensor(shape: Any) -> Any:
    if isinstance(shape, _ops.Tensor):
        return shape
    dtype = dtypes.int32 if isinstance(shape, (list, tuple)) and not shape else None
    return convert_to_tensor(shape, dtype=dtype, name="shape")


def _uint_to_int(n: int) -> int:
    return n - (1 << 64) if n >= 1 << 63 else n


def create_rng_state(seed: Any, alg: Any) -> Any:
    """_make_1d_state: an int seed as 64-bit words, low first; left zero-padded to 3."""
    if isinstance(seed, int):
        words = []
        for _ in range(_STATE_SIZE):
            words.append(_uint_to_int(seed & _M64))
            seed >>= 64
        seed = words
    state = math_ops.cast(seed, dtypes.int64)
    state = array_ops.reshape(state, [-1])
    state = state[0:_STATE_SIZE]
    size = state.shape[0] if state.shape.ndims else None
    if size is None:
        size = array_ops.shape(state)[0]
    padding_size = math_ops.maximum(_STATE_SIZE - size, 0)
    with _ops.name_scope(None, "zeros") as zeros_scope:
        # array_ops.zeros of a tensor size: the autopacked shape "packed", then Fill.
        packed = apply_op("Pack", [[padding_size]], {"axis": 0}, "packed").outputs[0]
        zero = convert_to_tensor(0, dtype=state.dtype, name="Const")
        padding = apply_op("Fill", [packed, zero], {}, zeros_scope).outputs[0]
    state = array_ops.concat([padding, state], axis=0)
    state.set_shape([_STATE_SIZE])
    return state


class Generator:
    """tf.random.Generator with the Philox algorithm."""

    def __init__(self, copy_from: Any = None, state: Any = None, alg: Any = None) -> None:
        from client.ops.variables import Variable

        if copy_from is not None:
            state, alg = copy_from.state, copy_from.algorithm
        if state is None or alg is None:
            raise ValueError("Generator needs a state and an algorithm (or copy_from)")
        self._alg = _alg_id(alg)
        if self._alg == RNG_ALG_THREEFRY:
            raise ValueError("ThreeFry runs on XLA devices only; use Philox")
        if isinstance(state, Variable):
            self._state_var = state
        else:
            if isinstance(state, (list, tuple)):
                state = [_uint_to_int(int(v) & _M64) for v in state]
            state = math_ops.cast(state, dtypes.int64)
            with _ops.name_scope("random_generator"):
                self._state_var = Variable(
                    state, dtype=dtypes.int64, trainable=False, name="StateVar"
                )

    @classmethod
    def from_seed(cls, seed: Any, alg: Any = None) -> Generator:
        alg = _alg_id(alg)
        return cls(state=create_rng_state(seed, alg), alg=alg)

    @classmethod
    def from_state(cls, state: Any, alg: Any) -> Generator:
        return cls(state=state, alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg: Any = None) -> Generator:
        state = apply_op(
            "NonDeterministicInts",
            [[_STATE_SIZE]],
            {"dtype": dtypes.int64, "shape_dtype": dtypes.int32},
        ).outputs[0]
        return cls(state=state, alg=_alg_id(alg))

    state = property(lambda self: self._state_var)
    algorithm = property(lambda self: self._alg)

    def skip(self, delta: Any) -> Any:
        """RngReadAndSkip: the state before, and the state moved on by 256 * delta."""
        return apply_op(
            "RngReadAndSkip",
            [
                self._state_var.handle,
                math_ops.cast(self._alg, dtypes.int32),
                math_ops.cast(delta, dtypes.uint64),
            ],
            {},
        ).outputs[0]

    def _prepare_key_counter(self, shape: Any) -> tuple[Any, Any]:
        counter_key = self.skip(math_ops.reduce_prod(shape))
        bitcast = {"type": dtypes.uint64}
        counter = apply_op("Bitcast", [counter_key[:2]], bitcast).outputs[0]
        key = apply_op("Bitcast", [counter_key[2:3]], bitcast).outputs[0]
        return key, counter

    def _stateless(
        self, op: str, shape: Any, attrs: dict, extra: tuple = (), name: str | None = None
    ) -> Any:
        """A stateless V2 draw from the state's old key and counter."""
        key, counter = self._prepare_key_counter(shape)
        return apply_op(op, [shape, key, counter, self._alg, *extra], attrs, name).outputs[0]

    def uniform(
        self,
        shape: Any,
        minval: Any = 0,
        maxval: Any = None,
        dtype: Any = dtypes.float32,
        name: str | None = None,
    ) -> Any:
        dtype = dtypes.as_dtype(dtype)
        if dtype.is_integer:
            if (minval is None) != (maxval is None):
                raise ValueError(
                    f"For integer dtype {dtype}, minval and maxval must be both `None` or "
                    f"both non-`None`; got minval={minval} and maxval={maxval}"
                )
        elif maxval is None:
            maxval = 1
        with _ops.name_scope(name, "stateful_uniform", [shape, minval, maxval]) as scope:
            shape = _shape_tensor(shape)
            if dtype.is_integer and minval is None:
                return self._stateless(
                    "StatelessRandomUniformFullIntV2", shape, {"dtype": dtype}, name=scope
                )
            lo = convert_to_tensor(minval, dtype=dtype, name="min")
            hi = convert_to_tensor(maxval, dtype=dtype, name="max")
            if dtype.is_integer:
                return self._stateless(
                    "StatelessRandomUniformIntV2", shape, {}, (lo, hi), name=scope
                )
            rnd = self._stateless("StatelessRandomUniformV2", shape, {"dtype": dtype})
            return math_ops.add(rnd * (hi - lo), lo, name=scope)

    def uniform_full_int(
        self, shape: Any, dtype: Any = dtypes.uint64, name: str | None = None
    ) -> Any:
        dtype = dtypes.as_dtype(dtype)
        with _ops.name_scope(name, "stateful_uniform_full_int", [shape]) as scope:
            shape = _shape_tensor(shape)
            return self._stateless(
                "StatelessRandomUniformFullIntV2", shape, {"dtype": dtype}, name=scope
            )

    def normal(
        self,
        shape: Any,
        mean: Any = 0.0,
        stddev: Any = 1.0,
        dtype: Any = dtypes.float32,
        name: str | None = None,
    ) -> Any:
        return self._scaled(
            "StatelessRandomNormalV2", "stateful_normal", shape, mean, stddev, dtype, name
        )

    def truncated_normal(
        self,
        shape: Any,
        mean: Any = 0.0,
        stddev: Any = 1.0,
        dtype: Any = dtypes.float32,
        name: str | None = None,
    ) -> Any:
        return self._scaled(
            "StatelessTruncatedNormalV2", "truncated_normal", shape, mean, stddev, dtype, name
        )

    def _scaled(
        self,
        op: str,
        default_name: str,
        shape: Any,
        mean: Any,
        stddev: Any,
        dtype: Any,
        name: str | None,
    ) -> Any:
        """`op`'s standard samples times stddev plus mean, as normal/truncated_normal build."""
        dtype = dtypes.as_dtype(dtype)
        with _ops.name_scope(name, default_name, [shape, mean, stddev]) as scope:
            shape = _shape_tensor(shape)
            mean = convert_to_tensor(mean, dtype=dtype, name="mean")
            stddev = convert_to_tensor(stddev, dtype=dtype, name="stddev")
            rnd = self._stateless(op, shape, {"dtype": dtype})
            return math_ops.add(rnd * stddev, mean, name=scope)

    def binomial(
        self,
        shape: Any,
        counts: Any,
        probs: Any,
        dtype: Any = dtypes.int32,
        name: str | None = None,
    ) -> Any:
        dtype = dtypes.as_dtype(dtype)
        with _ops.name_scope(name, "binomial", [shape, counts, probs]) as scope:
            counts = convert_to_tensor(counts, name="counts")
            probs = convert_to_tensor(probs, name="probs")
            shape = _shape_tensor(shape)
            return apply_op(
                "StatefulRandomBinomial",
                [self._state_var.handle, self._alg, shape, counts, probs],
                {"dtype": dtype},
                scope,
            ).outputs[0]

    def make_seeds(self, count: int = 1) -> Any:
        import numpy as np

        keys = self.uniform_full_int(shape=[count], dtype=dtypes.int64)
        # zeros_like of a static shape is a constant in TensorFlow's graph.
        zeros = convert_to_tensor(np.zeros([count], np.int64), name="zeros_like")
        return array_ops.stack([keys, zeros])
