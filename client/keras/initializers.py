"""Client API: tf.keras.initializers as tf_keras 2.x builds them in a graph.

The random ones are stateless: a seed given is fed as [seed, 0]; without one, the first
call draws it from Python's `random` (random.randint(1, 1e9)) and later calls reuse it,
as tf_keras' RandomGenerator(rng_type="stateless") does. Seeding Python's `random` the
same way therefore gives TensorFlow's initial values.
"""

from __future__ import annotations

import math
import random
from typing import Any

from client.framework import dtypes, op_builder, tf2
from client.ops import array_ops, random_ops
from client.ops import init_ops as _v1

_TRUNCATED_STDDEV = 0.87962566103423978  # stddev of a unit normal truncated at 2 sigma


def _dtype(dtype: Any) -> dtypes.DType:
    from client.keras import backend

    return dtypes.as_dtype(dtype or backend.floatx())


class Initializer:
    """tf.keras.initializers.Initializer: called with (shape, dtype)."""

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        raise NotImplementedError

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config: dict) -> Initializer:
        return cls(**config)


class Zeros(Initializer):
    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        return array_ops.zeros(shape, _dtype(dtype))


class Ones(Initializer):
    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        return array_ops.ones(shape, _dtype(dtype))


class Constant(Initializer):
    def __init__(self, value: Any = 0) -> None:
        self.value = value

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        return op_builder.constant(self.value, dtype=_dtype(dtype), shape=shape)

    def get_config(self) -> dict:
        return {"value": self.value}


class _Random(Initializer):
    """The seed handling every random initializer shares (see the module docstring)."""

    def __init__(self, seed: Any = None) -> None:
        self.seed = seed
        self._seed: int | None = None

    def _stateless_seed(self) -> list[int]:
        if self._seed is None:
            self._seed = int(self.seed) if self.seed is not None else random.randint(1, int(1e9))
        return [self._seed, 0]

    def get_config(self) -> dict:
        return {"seed": self.seed}


class RandomUniform(_Random):
    def __init__(self, minval: float = -0.05, maxval: float = 0.05, seed: Any = None) -> None:
        super().__init__(seed)
        self.minval, self.maxval = minval, maxval

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        return random_ops.stateless_random_uniform(
            shape, self._stateless_seed(), self.minval, self.maxval, _dtype(dtype)
        )

    def get_config(self) -> dict:
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


class RandomNormal(_Random):
    def __init__(self, mean: float = 0.0, stddev: float = 0.05, seed: Any = None) -> None:
        super().__init__(seed)
        self.mean, self.stddev = mean, stddev

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        return random_ops.stateless_random_normal(
            shape, self._stateless_seed(), self.mean, self.stddev, _dtype(dtype)
        )

    def get_config(self) -> dict:
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class TruncatedNormal(RandomNormal):
    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        return random_ops.stateless_truncated_normal(
            shape, self._stateless_seed(), self.mean, self.stddev, _dtype(dtype)
        )


class VarianceScaling(_Random):
    def __init__(
        self,
        scale: float = 1.0,
        mode: str = "fan_in",
        distribution: str = "truncated_normal",
        seed: Any = None,
    ) -> None:
        if scale <= 0.0:
            raise ValueError(f"`scale` must be positive float. Received: scale={scale}.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        distribution = "truncated_normal" if distribution == "normal" else distribution
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}.")
        super().__init__(seed)
        self.scale, self.mode, self.distribution = scale, mode, distribution

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        dtype = _dtype(dtype)
        fan_in, fan_out = _v1._compute_fans(shape)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}
        scale = self.scale / max(1.0, fan[self.mode])
        seed = self._stateless_seed()
        if self.distribution == "truncated_normal":
            stddev = math.sqrt(scale) / _TRUNCATED_STDDEV
            return random_ops.stateless_truncated_normal(shape, seed, 0.0, stddev, dtype)
        if self.distribution == "untruncated_normal":
            return random_ops.stateless_random_normal(shape, seed, 0.0, math.sqrt(scale), dtype)
        limit = math.sqrt(3.0 * scale)
        return random_ops.stateless_random_uniform(shape, seed, -limit, limit, dtype)

    def get_config(self) -> dict:
        return {
            "scale": self.scale,
            "mode": self.mode,
            "distribution": self.distribution,
            "seed": self.seed,
        }


class Orthogonal(_Random):
    """tf_keras' Orthogonal: the Q of a stateless normal draw's QR, signs fixed by R's
    diagonal, times the gain."""

    def __init__(self, gain: float = 1.0, seed: Any = None) -> None:
        super().__init__(seed)
        self.gain = gain

    def __call__(self, shape: Any, dtype: Any = None, **kwargs: Any) -> Any:
        from client.ops import linalg_ops, math_ops

        dtype = _dtype(dtype)
        shape = [int(d) for d in shape]
        if len(shape) < 2:
            raise ValueError(
                "The tensor to initialize must be at least two-dimensional. "
                f"Received: shape={shape} of rank {len(shape)}."
            )
        rows, cols = math.prod(shape[:-1]), shape[-1]
        flat = (max(cols, rows), min(cols, rows))
        a = random_ops.stateless_random_normal(flat, self._stateless_seed(), dtype=dtype)
        q, r = linalg_ops.qr(a, full_matrices=False)
        q *= math_ops.sign(linalg_ops.tensor_diag_part(r))
        if rows < cols:
            q = array_ops.matrix_transpose(q)
        return self.gain * array_ops.reshape(q, shape)

    def get_config(self) -> dict:
        return {"gain": self.gain, "seed": self.seed}


def _scaling(name: str, scale: float, mode: str, distribution: str) -> type:
    def __init__(self: Any, seed: Any = None) -> None:
        VarianceScaling.__init__(self, scale, mode, distribution, seed)

    def get_config(self: Any) -> dict:
        return {"seed": self.seed}

    return type(name, (VarianceScaling,), {"__init__": __init__, "get_config": get_config})


GlorotUniform = _scaling("GlorotUniform", 1.0, "fan_avg", "uniform")
GlorotNormal = _scaling("GlorotNormal", 1.0, "fan_avg", "truncated_normal")
HeNormal = _scaling("HeNormal", 2.0, "fan_in", "truncated_normal")
HeUniform = _scaling("HeUniform", 2.0, "fan_in", "uniform")
LecunNormal = _scaling("LecunNormal", 1.0, "fan_in", "truncated_normal")
LecunUniform = _scaling("LecunUniform", 1.0, "fan_in", "uniform")

# The lower-case aliases tf.keras.initializers also has.
zeros, ones, constant = Zeros, Ones, Constant
random_uniform, random_normal, truncated_normal = RandomUniform, RandomNormal, TruncatedNormal
glorot_uniform, glorot_normal = GlorotUniform, GlorotNormal
he_normal, he_uniform, lecun_normal, lecun_uniform = HeNormal, HeUniform, LecunNormal, LecunUniform
_BY_NAME: dict[str, Any] = {
    "zeros": Zeros,
    "ones": Ones,
    "constant": Constant,
    "random_uniform": RandomUniform,
    "uniform": RandomUniform,
    "random_normal": RandomNormal,
    "normal": RandomNormal,
    "truncated_normal": TruncatedNormal,
    "variance_scaling": VarianceScaling,
    "glorot_uniform": GlorotUniform,
    "glorot_normal": GlorotNormal,
    "he_normal": HeNormal,
    "he_uniform": HeUniform,
    "lecun_normal": LecunNormal,
    "lecun_uniform": LecunUniform,
    "orthogonal": Orthogonal,
}
_BY_NAME.update({cls.__name__: cls for cls in list(_BY_NAME.values())})


def _snake(name: str) -> str:
    from client.layers.base import _snake_case

    return name if name.islower() else _snake_case(name)


def serialize(initializer: Initializer) -> dict:
    return {"class_name": type(initializer).__name__, "config": initializer.get_config()}


def deserialize(config: dict) -> Initializer:
    cls = _BY_NAME.get(config["class_name"])
    if cls is None:
        raise ValueError(f"Unknown initializer: {config['class_name']}")
    return cls.from_config(config.get("config", {}))


def _v1_by_name() -> dict[str, Any]:
    """tf_keras' names after disable_v2_behavior(): TF's v1 (stateful, graph-seeded)
    initializers, with tf_keras' v1 defaults (0.05 ranges)."""

    def scaling(scale: float, mode: str, distribution: str) -> Any:
        return lambda seed=None: _v1.VarianceScaling(scale, mode, distribution, seed)

    table: dict[str, Any] = {
        "zeros": _v1.Zeros,
        "ones": _v1.Ones,
        "constant": _v1.Constant,
        "glorot_uniform": _v1.GlorotUniform,
        "glorot_normal": _v1.GlorotNormal,
        "orthogonal": _v1.Orthogonal,
        "variance_scaling": _v1.VarianceScaling,
        "identity": _v1.Identity,
        "random_uniform": lambda seed=None: _v1.RandomUniform(-0.05, 0.05, seed),
        "random_normal": lambda seed=None: _v1.RandomNormal(0.0, 0.05, seed),
        "truncated_normal": lambda seed=None: _v1.TruncatedNormal(0.0, 0.05, seed),
        "he_normal": scaling(2.0, "fan_in", "truncated_normal"),
        "he_uniform": scaling(2.0, "fan_in", "uniform"),
        "lecun_normal": scaling(1.0, "fan_in", "truncated_normal"),
        "lecun_uniform": scaling(1.0, "fan_in", "uniform"),
    }
    table.update(uniform=table["random_uniform"], normal=table["random_normal"])
    return table


def get(identifier: Any) -> Any:
    """tf.keras.initializers.get: None, a name ("glorot_uniform"), a config dict, a class
    (instantiated) or a callable (kept). Names give TF's v1 initializers once
    disable_v2_behavior() turned the tf2 switch off, as in tf_keras."""
    if identifier is None:
        return None
    if isinstance(identifier, dict):
        return deserialize(identifier)
    if isinstance(identifier, str) and not tf2.enabled():
        v1 = _v1_by_name().get(_snake(identifier))
        if v1 is None:
            raise ValueError(f"Could not interpret initializer identifier: {identifier}")
        return v1()
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier)
        if cls is None:
            raise ValueError(f"Could not interpret initializer identifier: {identifier}")
        return cls()
    if isinstance(identifier, type):
        return identifier()
    if callable(identifier):
        return identifier
    raise ValueError(f"Could not interpret initializer identifier: {identifier}")
