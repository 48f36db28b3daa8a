"""Client, graph building: variable initializers as tensorflow.compat.v1's init_ops
builds them (the same ops, node names, seeds and constants, so a seeded program's
variables start from TensorFlow's values): zeros/ones/constant, random_uniform/normal,
truncated_normal, uniform_unit_scaling, variance_scaling and its glorot/he/lecun forms,
orthogonal."""

from __future__ import annotations

import math
import random
from typing import Any

from client.framework import dtypes
from client.ops import array_ops, random_ops


def _float_dtype(dtype: Any) -> dtypes.DType:
    dt = dtypes.as_dtype(dtype)
    if not dt.is_floating:
        raise ValueError(f"Argument `dtype` is expected to be floating point. Received: {dt}.")
    return dt


def _compute_fans(shape: Any) -> tuple[int, int]:
    """TF's fan-in/fan-out: a kernel's receptive field multiplies its last two dims."""
    shape = list(shape)
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return int(shape[0]), int(shape[0])
    if len(shape) == 2:
        return int(shape[0]), int(shape[1])
    receptive = math.prod(int(d) for d in shape[:-2])
    return int(shape[-2]) * receptive, int(shape[-1]) * receptive


def _full_shape(shape: Any, partition_info: Any) -> Any:
    return shape if partition_info is None else partition_info.full_shape


class Initializer:
    """Base of the initializers: called with (shape, dtype, partition_info)."""

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        raise NotImplementedError

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> Initializer:
        config = dict(config)
        config.pop("dtype", None)
        return cls(**config)


class Zeros(Initializer):
    def __init__(self, dtype: Any = dtypes.float32) -> None:
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return array_ops.zeros(shape, dtype or self.dtype)

    def get_config(self) -> dict:
        return {"dtype": self.dtype.name}


class Ones(Zeros):
    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return array_ops.ones(shape, dtype or self.dtype)


class Constant(Initializer):
    def __init__(self, value: Any = 0, dtype: Any = dtypes.float32, verify_shape: bool = False):
        self.value, self.dtype, self._verify_shape = value, dtypes.as_dtype(dtype), verify_shape

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        from client.framework.op_builder import constant

        return constant(self.value, dtype=dtype or self.dtype, shape=shape)

    def get_config(self) -> dict:
        return {"value": self.value, "dtype": self.dtype.name}


class RandomUniform(Initializer):
    def __init__(
        self, minval: Any = 0.0, maxval: Any = None, seed: Any = None, dtype: Any = dtypes.float32
    ) -> None:
        self.minval, self.maxval, self.seed = minval, maxval, seed
        self.dtype = dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return random_ops.random_uniform(
            shape, self.minval, self.maxval, dtype or self.dtype, seed=self.seed
        )

    def get_config(self) -> dict:
        return {
            "minval": self.minval,
            "maxval": self.maxval,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


class RandomNormal(Initializer):
    def __init__(
        self, mean: Any = 0.0, stddev: Any = 1.0, seed: Any = None, dtype: Any = dtypes.float32
    ) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return random_ops.random_normal(
            shape, self.mean, self.stddev, dtype or self.dtype, seed=self.seed
        )

    def get_config(self) -> dict:
        return {
            "mean": self.mean,
            "stddev": self.stddev,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


class TruncatedNormal(RandomNormal):
    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return random_ops.truncated_normal(
            shape, self.mean, self.stddev, dtype or self.dtype, seed=self.seed
        )


class UniformUnitScaling(Initializer):
    def __init__(self, factor: float = 1.0, seed: Any = None, dtype: Any = dtypes.float32):
        self.factor, self.seed, self.dtype = factor, seed, _float_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        input_size = 1.0
        for dim in list(_full_shape(shape, partition_info))[:-1]:
            input_size *= float(dim)
        max_val = math.sqrt(3 / max(input_size, 1.0)) * self.factor
        return random_ops.random_uniform(
            shape, -max_val, max_val, dtype or self.dtype, seed=self.seed
        )

    def get_config(self) -> dict:
        return {"factor": self.factor, "seed": self.seed, "dtype": self.dtype.name}


# scipy.stats.truncnorm.std(a=-2, b=2, loc=0., scale=1.), as TF writes it
_TRUNCNORM_STD = 0.87962566103423978


class VarianceScaling(Initializer):
    def __init__(
        self,
        scale: float = 1.0,
        mode: str = "fan_in",
        distribution: str = "truncated_normal",
        seed: Any = None,
        dtype: Any = dtypes.float32,
    ) -> None:
        if scale <= 0.0:
            raise ValueError(f"Argument `scale` must be a positive float. Received: {scale}")
        if mode not in {"fan_in", "fan_out", "fan_avg"}:
            raise ValueError(
                "Argument `mode` should be one of ('fan_in', 'fan_out', 'fan_avg'). "
                f"Received: {mode}"
            )
        distribution = distribution.lower()
        if distribution not in {"normal", "uniform", "truncated_normal", "untruncated_normal"}:
            raise ValueError(
                "Argument `distribution` should be one of ('normal', 'uniform', "
                f"'truncated_normal', 'untruncated_normal'). Received: {distribution}"
            )
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.dtype = _float_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        dtype = dtype or self.dtype
        fan_in, fan_out = _compute_fans(_full_shape(shape, partition_info))
        scale = self.scale
        if self.mode == "fan_in":
            scale /= max(1.0, fan_in)
        elif self.mode == "fan_out":
            scale /= max(1.0, fan_out)
        else:
            scale /= max(1.0, (fan_in + fan_out) / 2.0)
        if self.distribution in ("normal", "truncated_normal"):
            stddev = math.sqrt(scale) / _TRUNCNORM_STD
            return random_ops.truncated_normal(shape, 0.0, stddev, dtype, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_ops.random_normal(shape, 0.0, math.sqrt(scale), dtype, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_ops.random_uniform(shape, -limit, limit, dtype, seed=self.seed)

    def get_config(self) -> dict:
        return {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "seed": self.seed,
            "dtype": self.dtype.name,
        }


class GlorotUniform(VarianceScaling):
    def __init__(self, seed: Any = None, dtype: Any = dtypes.float32) -> None:
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)

    def get_config(self) -> dict:
        return {"seed": self.seed, "dtype": self.dtype.name}


class GlorotNormal(VarianceScaling):
    def __init__(self, seed: Any = None, dtype: Any = dtypes.float32) -> None:
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)

    def get_config(self) -> dict:
        return {"seed": self.seed, "dtype": self.dtype.name}


class Orthogonal(Initializer):
    """A random orthogonal matrix: the Q of a normal matrix's QR, signs fixed by R's
    diagonal (TF's init_ops.Orthogonal; Qr runs on the worker)."""

    def __init__(self, gain: float = 1.0, seed: Any = None, dtype: Any = dtypes.float32):
        self.gain, self.seed, self.dtype = gain, seed, _float_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        from client.framework.op_builder import apply_op
        from client.ops import math_ops

        dtype = dtype or self.dtype
        shape = list(shape)
        if len(shape) < 2:
            raise ValueError(
                "The tensor to initialize, specified by argument `shape` must be at least "
                f"two-dimensional. Received shape={shape}"
            )
        num_rows = int(math.prod(int(d) for d in shape[:-1]))
        num_cols = int(shape[-1])
        flat = (num_cols, num_rows) if num_rows < num_cols else (num_rows, num_cols)
        a = random_ops.random_normal(flat, dtype=dtype, seed=self.seed)
        q, r = apply_op("Qr", [a], {"full_matrices": False}).outputs
        d = apply_op("DiagPart", [r], {}).outputs[0]
        q *= math_ops.sign(d)
        if num_rows < num_cols:
            q = array_ops.matrix_transpose(q)
        return self.gain * array_ops.reshape(q, shape)

    def get_config(self) -> dict:
        return {"gain": self.gain, "seed": self.seed, "dtype": self.dtype.name}


class Identity(Initializer):
    """The identity matrix times `gain`, for 2-D variables only (TF's init_ops.Identity:
    Eye then a scalar Mul; a partition takes its slice of the full matrix)."""

    def __init__(self, gain: float = 1.0, dtype: Any = dtypes.float32) -> None:
        self.gain, self.dtype = gain, _float_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        from client.ops import linalg_ops

        full_shape = _full_shape(shape, partition_info)
        if len(full_shape) != 2:
            raise ValueError(
                "The tensor to initialize, specified by argument `shape` must be at least "
                f"two-dimensional. Received shape={shape}"
            )
        rows, cols = (int(d) for d in full_shape)
        initializer = linalg_ops.eye(rows, cols, dtype=dtype or self.dtype)
        if partition_info is not None:
            initializer = array_ops.slice(initializer, partition_info.var_offset, shape)
        return self.gain * initializer

    def get_config(self) -> dict:
        return {"gain": self.gain, "dtype": self.dtype.name}


def lecun_normal(seed: Any = None) -> VarianceScaling:
    return VarianceScaling(1.0, "fan_in", "truncated_normal", seed)


def lecun_uniform(seed: Any = None) -> VarianceScaling:
    return VarianceScaling(1.0, "fan_in", "uniform", seed)


def he_normal(seed: Any = None) -> VarianceScaling:
    return VarianceScaling(2.0, "fan_in", "truncated_normal", seed)


def he_uniform(seed: Any = None) -> VarianceScaling:
    return VarianceScaling(2.0, "fan_in", "uniform", seed)


# TensorFlow's public (compat.v1) names.
class LayerDefaultGlorotUniform(Initializer):
    """The kernel initializer tf.layers and tf.nn.rnn_cell use when given none.

    In TensorFlow 2.x these layers come from tf_keras, whose default GlorotUniform is
    stateless: each call draws its seed from Python's `random` (random.randint(1, 1e9)),
    not from the graph seed, and feeds StatelessRandomUniformV2 the seed [that, 0].
    Matching that draw is what makes a seeded program give TensorFlow's values.
    """

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        dtype = _float_dtype(dtype or dtypes.float32)
        fan_in, fan_out = _compute_fans(_full_shape(shape, partition_info))
        limit = math.sqrt(3.0 / max(1.0, (fan_in + fan_out) / 2.0))
        seed = random.randint(1, int(1e9))
        return random_ops.stateless_random_uniform(shape, [seed, 0], -limit, limit, dtype)

    def get_config(self) -> dict:
        return {}


zeros_initializer = Zeros
ones_initializer = Ones
constant_initializer = Constant
random_uniform_initializer = RandomUniform
random_normal_initializer = RandomNormal
truncated_normal_initializer = TruncatedNormal
uniform_unit_scaling_initializer = UniformUnitScaling
variance_scaling_initializer = VarianceScaling
glorot_uniform_initializer = GlorotUniform
glorot_normal_initializer = GlorotNormal
orthogonal_initializer = Orthogonal
identity_initializer = Identity
