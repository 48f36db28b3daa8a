"""Client, tf.compat.v1.distributions: scalar continuous families (TensorFlow's normal.py,
uniform.py, laplace.py, gamma.py, exponential.py), the same formulas in the same order so
values and node names follow TF's. With `validate_args` the parameters' Identity nodes
depend on TF's assertions (a positive scale or rate, low < high)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from client.distributions import special_math
from client.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    Distribution,
    broadcast_shape_tensor,
    broadcast_static,
)
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.ops import array_ops, check_ops, math_ops, random_ops
from client.ops import special_math_ops as sm
from client.ops.control_flow_ops import with_dependencies


class _TwoParameter(Distribution):
    """A scalar-event family of two broadcast parameters, held as Identity nodes."""

    _names: tuple[str, str] = ("loc", "scale")

    def __init__(self, p: Any, q: Any, validate_args: bool, allow_nan_stats: bool, name: str):
        parameters = dict(zip(self._names, (p, q)))
        # The checks are built inside the scope, as TF's are.
        with (
            _ops.name_scope(name, values=[p, q]) as name,
            _ops.control_dependencies(self._param_checks(p, q) if validate_args else []),
        ):
            self._p = array_ops.identity(p, name=self._names[0])
            self._q = array_ops.identity(q, name=self._names[1])
        super().__init__(
            dtype=self._p.dtype,
            reparameterization_type=FULLY_REPARAMETERIZED,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            parameters=parameters,
            graph_parents=[self._p, self._q],
            name=name,
        )

    def _param_checks(self, p: Any, q: Any) -> list[Any]:
        """TF's validate_args assertions on the raw parameters: a positive scale."""
        return [check_ops.assert_positive(q)]

    def _batch_shape_tensor(self) -> Any:
        return broadcast_shape_tensor(self._p, self._q)

    def _batch_shape(self) -> Any:
        return broadcast_static(self._p, self._q)

    def _sample_shape(self, n: Any) -> Any:
        return array_ops.concat([[n], self.batch_shape_tensor()], 0)


class _LocScale(_TwoParameter):
    """A location-scale family (Normal, Laplace): the parameters by those names, the mode
    at the mean."""

    loc = property(lambda self: self._p)
    scale = property(lambda self: self._q)

    def _mode(self) -> Any:
        return self._mean()


class Normal(_LocScale):
    def __init__(
        self,
        loc: Any,
        scale: Any,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Normal",
    ) -> None:
        super().__init__(loc, scale, validate_args, allow_nan_stats, name)

    def _sample_n(self, n: Any, seed: Any = None) -> Any:
        sampled = random_ops.random_normal(
            shape=self._sample_shape(n), mean=0.0, stddev=1.0, dtype=self.loc.dtype, seed=seed
        )
        return sampled * self.scale + self.loc

    def _log_prob(self, x: Any) -> Any:
        return -0.5 * math_ops.square(self._z(x)) - self._log_normalization()

    def _log_normalization(self) -> Any:
        return 0.5 * math.log(2.0 * math.pi) + math_ops.log(self.scale)

    def _log_cdf(self, x: Any) -> Any:
        return special_math.log_ndtr(self._z(x))

    def _cdf(self, x: Any) -> Any:
        return special_math.ndtr(self._z(x))

    def _survival_function(self, x: Any) -> Any:
        return special_math.ndtr(-self._z(x))

    def _entropy(self) -> Any:
        scale = self.scale * array_ops.ones_like(self.loc)
        return 0.5 * math.log(2.0 * math.pi * math.e) + math_ops.log(scale)

    def _mean(self) -> Any:
        return self.loc * array_ops.ones_like(self.scale)

    def _quantile(self, p: Any) -> Any:
        z = special_math.ndtri(p)
        with _ops.name_scope("reconstruct", values=[z]):
            return z * self.scale + self.loc

    def _stddev(self) -> Any:
        return self.scale * array_ops.ones_like(self.loc)

    def _z(self, x: Any) -> Any:
        with _ops.name_scope("standardize", values=[x]):
            return (x - self.loc) / self.scale


class Uniform(_TwoParameter):
    _names = ("low", "high")

    def __init__(
        self,
        low: Any = 0.0,
        high: Any = 1.0,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Uniform",
    ) -> None:
        super().__init__(low, high, validate_args, allow_nan_stats, name)

    low = property(lambda self: self._p)
    high = property(lambda self: self._q)

    def _param_checks(self, p: Any, q: Any) -> list[Any]:
        return [check_ops.assert_less(p, q, message="uniform not defined when low >= high.")]

    def range(self, name: str = "range") -> Any:
        with self._name_scope(name):
            return self.high - self.low

    def _sample_n(self, n: Any, seed: Any = None) -> Any:
        shape = self._sample_shape(n)
        samples = random_ops.random_uniform(shape=shape, dtype=self.dtype, seed=seed)
        return self.low + self.range() * samples

    def _prob(self, x: Any) -> Any:
        bx = x * array_ops.ones(self.batch_shape_tensor(), dtype=x.dtype)
        is_nan = math_ops.is_nan(bx)
        outside = math_ops.logical_or(bx < self.low, bx >= self.high)
        inside = array_ops.where_v2(
            outside, array_ops.zeros_like(bx), array_ops.ones_like(bx) / self.range()
        )
        return array_ops.where_v2(is_nan, bx, inside)

    def _cdf(self, x: Any) -> Any:
        shape = apply_op("BroadcastArgs", [array_ops.shape(x), self.batch_shape_tensor()]).outputs[
            0
        ]
        zeros = array_ops.zeros(shape, dtype=self.dtype)
        ones = array_ops.ones(shape, dtype=self.dtype)
        bx = x * ones
        below = array_ops.where_v2(x < self.low, zeros, (bx - self.low) / self.range())
        return array_ops.where_v2(x >= self.high, ones, below)

    def _entropy(self) -> Any:
        return math_ops.log(self.range())

    def _mean(self) -> Any:
        return (self.low + self.high) / 2.0

    def _variance(self) -> Any:
        return math_ops.square(self.range()) / 12.0

    def _stddev(self) -> Any:
        return self.range() / math.sqrt(12.0)


class Laplace(_LocScale):
    def __init__(
        self,
        loc: Any,
        scale: Any,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Laplace",
    ) -> None:
        super().__init__(loc, scale, validate_args, allow_nan_stats, name)

    def _sample_n(self, n: Any, seed: Any = None) -> Any:
        np_dtype = self.dtype.as_numpy_dtype
        u = random_ops.random_uniform(
            shape=self._sample_shape(n),
            minval=np.nextafter(np_dtype(-1.0), np_dtype(0.0)),
            maxval=1.0,
            dtype=self.dtype,
            seed=seed,
        )
        return self.loc - self.scale * math_ops.sign(u) * math_ops.log1p(-math_ops.abs(u))

    def _log_prob(self, x: Any) -> Any:
        return -math_ops.abs(self._z(x)) - (math.log(2.0) + math_ops.log(self.scale))

    def _prob(self, x: Any) -> Any:
        return math_ops.exp(self._log_prob(x))

    def _cdf(self, x: Any) -> Any:
        z = self._z(x)
        return 0.5 + 0.5 * math_ops.sign(z) * (1.0 - math_ops.exp(-math_ops.abs(z)))

    def _entropy(self) -> Any:
        scale = self.scale + array_ops.zeros_like(self.loc)
        return math.log(2.0) + 1.0 + math_ops.log(scale)

    def _mean(self) -> Any:
        return self.loc + array_ops.zeros_like(self.scale)

    def _stddev(self) -> Any:
        return math.sqrt(2.0) * self.scale + array_ops.zeros_like(self.loc)

    def _z(self, x: Any) -> Any:
        return (x - self.loc) / self.scale


class Gamma(_TwoParameter):
    _names = ("concentration", "rate")

    def __init__(
        self,
        concentration: Any,
        rate: Any,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Gamma",
    ) -> None:
        super().__init__(concentration, rate, validate_args, allow_nan_stats, name)

    concentration = property(lambda self: self._p)
    rate = property(lambda self: self._q)

    def _param_checks(self, p: Any, q: Any) -> list[Any]:
        return [check_ops.assert_positive(p), check_ops.assert_positive(q)]

    def _sample_n(self, n: Any, seed: Any = None) -> Any:
        return random_ops.random_gamma(
            shape=[n], alpha=self.concentration, beta=self.rate, dtype=self.dtype, seed=seed
        )

    def _maybe_assert_valid_sample(self, x: Any) -> Any:
        """TF's validate_args check of a value: positive."""
        if not self.validate_args:
            return x
        return with_dependencies([check_ops.assert_positive(x)], x)

    def _log_prob(self, x: Any) -> Any:
        x = self._maybe_assert_valid_sample(x)
        unnormalized = math_ops.xlogy(self.concentration - 1.0, x) - self.rate * x
        normalization = math_ops.lgamma(self.concentration) - self.concentration * math_ops.log(
            self.rate
        )
        return unnormalized - normalization

    def _cdf(self, x: Any) -> Any:
        x = self._maybe_assert_valid_sample(x)
        return sm.igamma(self.concentration, self.rate * x)

    def _entropy(self) -> Any:
        c = self.concentration
        return c - math_ops.log(self.rate) + math_ops.lgamma(c) + (1.0 - c) * math_ops.digamma(c)

    def _mean(self) -> Any:
        return self.concentration / self.rate

    def _variance(self) -> Any:
        return self.concentration / math_ops.square(self.rate)

    def _stddev(self) -> Any:
        return math_ops.sqrt(self.concentration) / self.rate

    def _mode(self) -> Any:
        mode = (self.concentration - 1.0) / self.rate
        nan = array_ops.fill(
            self.batch_shape_tensor(), np.array(np.nan, self.dtype.as_numpy_dtype), name="nan"
        )
        return array_ops.where_v2(self.concentration > 1.0, mode, nan)


class Exponential(Gamma):
    def __init__(
        self,
        rate: Any,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Exponential",
    ) -> None:
        with _ops.name_scope(name, values=[rate]) as name:
            self._rate = convert_to_tensor(rate, name="rate")
        super().__init__(
            concentration=array_ops.ones([], dtype=self._rate.dtype),
            rate=self._rate,
            allow_nan_stats=allow_nan_stats,
            validate_args=validate_args,
            name=name,
        )
        self._parameters = {"rate": rate}
        self._graph_parents += [self._rate]

    def _sample_n(self, n: Any, seed: Any = None) -> Any:
        shape = array_ops.concat([[n], array_ops.shape(self._rate)], 0)
        sampled = random_ops.random_uniform(
            shape,
            minval=np.finfo(self.dtype.as_numpy_dtype).tiny,
            maxval=1.0,
            seed=seed,
            dtype=self.dtype,
        )
        return -math_ops.log(sampled) / self._rate


def kl_normal_normal(a: Normal, b: Normal, name: str | None = None) -> Any:
    with _ops.name_scope(name, "kl_normal_normal", [a.loc, b.loc]):
        one = constant(1, dtype=a.dtype)
        two = constant(2, dtype=a.dtype)
        half = constant(0.5, dtype=a.dtype)
        s_a_squared = math_ops.square(a.scale)
        s_b_squared = math_ops.square(b.scale)
        ratio = s_a_squared / s_b_squared
        return math_ops.squared_difference(a.loc, b.loc) / (two * s_b_squared) + half * (
            ratio - one - math_ops.log(ratio)
        )


def kl_gamma_gamma(g0: Gamma, g1: Gamma, name: str | None = None) -> Any:
    values = [g0.concentration, g0.rate, g1.concentration, g1.rate]
    with _ops.name_scope(name, "kl_gamma_gamma", values):
        return (
            (g0.concentration - g1.concentration) * math_ops.digamma(g0.concentration)
            + math_ops.lgamma(g1.concentration)
            - math_ops.lgamma(g0.concentration)
            + g1.concentration * math_ops.log(g0.rate)
            - g1.concentration * math_ops.log(g1.rate)
            + g0.concentration * (g1.rate / g0.rate - 1.0)
        )
