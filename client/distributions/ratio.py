"""Client, tf.compat.v1.distributions: the families built from gamma variates and the beta
function (TensorFlow's student_t.py, beta.py, dirichlet.py), TF's formulas in TF's order.
With `validate_args` the parameters depend on TF's assertions (a positive df, positive
concentrations, a Dirichlet's event size of 2 or more), as do Beta and Dirichlet values."""

from __future__ import annotations

from typing import Any

import numpy as np

from client.distributions.distribution import (
    FULLY_REPARAMETERIZED,
    Distribution,
    broadcast_shape_tensor,
    broadcast_static,
    gen_new_seed,
)
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.ops import array_ops, check_ops, math_ops, random_ops
from client.ops import special_math_ops as sm
from client.ops.control_flow_ops import with_dependencies


def _maybe_assert_positive(concentration: Any, validate_args: bool) -> Any:
    """Beta's _maybe_assert_valid_concentration: the tensor after a positivity check."""
    if not validate_args:
        return concentration
    check = check_ops.assert_positive(
        concentration, message="Concentration parameter must be positive."
    )
    return with_dependencies([check], concentration)


class StudentT(Distribution):
    def __init__(
        self,
        df: Any,
        loc: Any,
        scale: Any,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "StudentT",
    ) -> None:
        parameters = {"df": df, "loc": loc, "scale": scale}
        with (
            _ops.name_scope(name, values=[df, loc, scale]) as name,
            _ops.control_dependencies([check_ops.assert_positive(df)] if validate_args else []),
        ):
            self._df = array_ops.identity(df, name="df")
            self._loc = array_ops.identity(loc, name="loc")
            self._scale = array_ops.identity(scale, name="scale")
        super().__init__(
            dtype=self._scale.dtype,
            reparameterization_type=FULLY_REPARAMETERIZED,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            parameters=parameters,
            graph_parents=[self._df, self._loc, self._scale],
            name=name,
        )

    df = property(lambda self: self._df)
    loc = property(lambda self: self._loc)
    scale = property(lambda self: self._scale)

    def _batch_shape_tensor(self) -> Any:
        return broadcast_shape_tensor(self.df, self.loc, self.scale)

    def _batch_shape(self) -> Any:
        return broadcast_static(self.df, self.loc, self.scale)

    def _ones(self) -> Any:
        return array_ops.ones(self.batch_shape_tensor(), dtype=self.dtype)

    def _sample_n(self, n: Any, seed: Any = None) -> Any:
        shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        normal_sample = random_ops.random_normal(shape, dtype=self.dtype, seed=seed)
        df = self.df * self._ones()
        gamma_sample = random_ops.random_gamma(
            [n], 0.5 * df, beta=0.5, dtype=self.dtype, seed=gen_new_seed(seed, salt="student_t")
        )
        samples = normal_sample * math_ops.rsqrt(gamma_sample / df)
        return samples * self.scale + self.loc

    def _log_prob(self, x: Any) -> Any:
        y = (x - self.loc) / self.scale
        unnormalized = -0.5 * (self.df + 1.0) * math_ops.log1p(y**2.0 / self.df)
        return unnormalized - self._log_normalization()

    def _log_normalization(self) -> Any:
        return (
            math_ops.log(math_ops.abs(self.scale))
            + 0.5 * math_ops.log(self.df)
            + 0.5 * np.log(np.pi)
            + math_ops.lgamma(0.5 * self.df)
            - math_ops.lgamma(0.5 * (self.df + 1.0))
        )

    def _cdf(self, x: Any) -> Any:
        y = (x - self.loc) / math_ops.abs(self.scale)
        x_t = self.df / (y**2.0 + self.df)
        neg_cdf = 0.5 * sm.betainc(0.5 * self.df, 0.5, x_t)
        return array_ops.where_v2(math_ops.less(y, 0.0), neg_cdf, 1.0 - neg_cdf)

    def _entropy(self) -> Any:
        v = self._ones()[..., None]
        u = v * self.df[..., None]
        beta_arg = array_ops.concat([u, v], -1) / 2.0
        return (
            math_ops.log(math_ops.abs(self.scale))
            + 0.5 * math_ops.log(self.df)
            + sm.lbeta(beta_arg)
            + 0.5
            * (self.df + 1.0)
            * (math_ops.digamma(0.5 * (self.df + 1.0)) - math_ops.digamma(0.5 * self.df))
        )

    def _nan(self) -> Any:
        nan = np.array(np.nan, self.dtype.as_numpy_dtype)
        return array_ops.fill(self.batch_shape_tensor(), nan, name="nan")

    def _mean(self) -> Any:
        mean = self.loc * self._ones()
        return array_ops.where_v2(math_ops.greater(self.df, self._ones()), mean, self._nan())

    def _variance(self) -> Any:
        denom = array_ops.where_v2(
            math_ops.greater(self.df, 2.0), self.df - 2.0, array_ops.ones_like(self.df)
        )
        var = self._ones() * math_ops.square(self.scale) * self.df / denom
        inf = np.array(np.inf, self.dtype.as_numpy_dtype)
        defined = array_ops.where_v2(
            self.df > array_ops.fill(self.batch_shape_tensor(), 2.0),
            var,
            array_ops.fill(self.batch_shape_tensor(), inf, name="inf"),
        )
        return array_ops.where_v2(math_ops.greater(self.df, self._ones()), defined, self._nan())

    def _mode(self) -> Any:
        return array_ops.identity(self.loc)


class Beta(Distribution):
    def __init__(
        self,
        concentration1: Any = None,
        concentration0: Any = None,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Beta",
    ) -> None:
        parameters = {"concentration1": concentration1, "concentration0": concentration0}
        with _ops.name_scope(name, values=[concentration1, concentration0]) as name:
            self._concentration1 = _maybe_assert_positive(
                convert_to_tensor(concentration1, name="concentration1"), validate_args
            )
            self._concentration0 = _maybe_assert_positive(
                convert_to_tensor(concentration0, name="concentration0"), validate_args
            )
            self._total_concentration = self._concentration1 + self._concentration0
        super().__init__(
            dtype=self._total_concentration.dtype,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            reparameterization_type=FULLY_REPARAMETERIZED,
            parameters=parameters,
            graph_parents=[self._concentration1, self._concentration0, self._total_concentration],
            name=name,
        )

    concentration1 = property(lambda self: self._concentration1)
    concentration0 = property(lambda self: self._concentration0)
    total_concentration = property(lambda self: self._total_concentration)

    def _batch_shape_tensor(self) -> Any:
        return array_ops.shape(self.total_concentration)

    def _batch_shape(self) -> Any:
        return self.total_concentration.shape

    def _sample_n(self, n: Any, seed: Any = None) -> Any:
        ones = array_ops.ones_like(self.total_concentration, dtype=self.dtype)
        c1 = ones * self.concentration1
        c0 = array_ops.ones_like(self.total_concentration, dtype=self.dtype) * self.concentration0
        g1 = random_ops.random_gamma(shape=[n], alpha=c1, dtype=self.dtype, seed=seed)
        g2 = random_ops.random_gamma(
            shape=[n], alpha=c0, dtype=self.dtype, seed=gen_new_seed(seed, "beta")
        )
        return g1 / (g1 + g2)

    def _maybe_assert_valid_sample(self, x: Any) -> Any:
        """TF's validate_args check of a value: in (0, 1)."""
        if not self.validate_args:
            return x
        checks = [
            check_ops.assert_positive(x, message="sample must be positive"),
            check_ops.assert_less(
                x, array_ops.ones([], self.dtype), message="sample must be less than `1`."
            ),
        ]
        return with_dependencies(checks, x)

    def _log_prob(self, x: Any) -> Any:
        x = self._maybe_assert_valid_sample(x)
        unnormalized = math_ops.xlogy(self.concentration1 - 1.0, x) + (
            self.concentration0 - 1.0
        ) * math_ops.log1p(-x)
        return unnormalized - self._log_normalization()

    def _prob(self, x: Any) -> Any:
        return math_ops.exp(self._log_prob(x))

    def _log_cdf(self, x: Any) -> Any:
        return math_ops.log(self._cdf(x))

    def _cdf(self, x: Any) -> Any:
        return sm.betainc(self.concentration1, self.concentration0, x)

    def _log_normalization(self) -> Any:
        return (
            math_ops.lgamma(self.concentration1)
            + math_ops.lgamma(self.concentration0)
            - math_ops.lgamma(self.total_concentration)
        )

    def _entropy(self) -> Any:
        return (
            self._log_normalization()
            - (self.concentration1 - 1.0) * math_ops.digamma(self.concentration1)
            - (self.concentration0 - 1.0) * math_ops.digamma(self.concentration0)
            + (self.total_concentration - 2.0) * math_ops.digamma(self.total_concentration)
        )

    def _mean(self) -> Any:
        return self._concentration1 / self._total_concentration

    def _variance(self) -> Any:
        return self._mean() * (1.0 - self._mean()) / (1.0 + self.total_concentration)

    def _mode(self) -> Any:
        mode = (self.concentration1 - 1.0) / (self.total_concentration - 2.0)
        nan = array_ops.fill(
            self.batch_shape_tensor(), np.array(np.nan, self.dtype.as_numpy_dtype), name="nan"
        )
        defined = math_ops.logical_and(self.concentration1 > 1.0, self.concentration0 > 1.0)
        return array_ops.where_v2(defined, mode, nan)


class Dirichlet(Distribution):
    def __init__(
        self,
        concentration: Any,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Dirichlet",
    ) -> None:
        parameters = {"concentration": concentration}
        with _ops.name_scope(name, values=[concentration]) as name:
            self._concentration = self._maybe_assert_valid_concentration(
                convert_to_tensor(concentration, name="concentration"), validate_args
            )
            self._total_concentration = math_ops.reduce_sum(self._concentration, -1)
        super().__init__(
            dtype=self._concentration.dtype,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            reparameterization_type=FULLY_REPARAMETERIZED,
            parameters=parameters,
            graph_parents=[self._concentration, self._total_concentration],
            name=name,
        )

    concentration = property(lambda self: self._concentration)
    total_concentration = property(lambda self: self._total_concentration)

    def _batch_shape_tensor(self) -> Any:
        return array_ops.shape(self.total_concentration)

    def _batch_shape(self) -> Any:
        return self.total_concentration.shape

    def _event_shape_tensor(self) -> Any:
        return array_ops.shape(self.concentration)[-1:]

    def _event_shape(self) -> Any:
        return self.concentration.shape[-1:]

    def _sample_n(self, n: Any, seed: Any = None) -> Any:
        gamma_sample = random_ops.random_gamma(
            shape=[n], alpha=self.concentration, dtype=self.dtype, seed=seed
        )
        return gamma_sample / math_ops.reduce_sum(gamma_sample, -1, keepdims=True)

    def _log_prob(self, x: Any) -> Any:
        x = self._maybe_assert_valid_sample(x)
        unnormalized = math_ops.reduce_sum(math_ops.xlogy(self.concentration - 1.0, x), -1)
        return unnormalized - sm.lbeta(self.concentration)

    @staticmethod
    def _maybe_assert_valid_concentration(concentration: Any, validate_args: bool) -> Any:
        """With validate_args: positive, rank >= 1, at least 2 events."""
        if not validate_args:
            return concentration
        checks = [
            check_ops.assert_positive(
                concentration, message="Concentration parameter must be positive."
            ),
            check_ops.assert_rank_at_least(
                concentration, 1, message="Concentration parameter must have >=1 dimensions."
            ),
            check_ops.assert_less(
                1,
                array_ops.shape(concentration)[-1],
                message="Concentration parameter must have event_size >= 2.",
            ),
        ]
        return with_dependencies(checks, concentration)

    def _maybe_assert_valid_sample(self, x: Any) -> Any:
        """With validate_args: positive, summing to 1 over the last axis."""
        if not self.validate_args:
            return x
        checks = [
            check_ops.assert_positive(x, message="samples must be positive"),
            check_ops.assert_near(
                array_ops.ones([], dtype=self.dtype),
                math_ops.reduce_sum(x, -1),
                message="sample last-dimension must sum to `1`",
            ),
        ]
        return with_dependencies(checks, x)

    def _prob(self, x: Any) -> Any:
        return math_ops.exp(self._log_prob(x))

    def _entropy(self) -> Any:
        k = math_ops.cast(self.event_shape_tensor()[0], self.dtype)
        c, total = self.concentration, self.total_concentration
        return (
            sm.lbeta(c)
            + (total - k) * math_ops.digamma(total)
            - math_ops.reduce_sum((c - 1.0) * math_ops.digamma(c), axis=-1)
        )

    def _mean(self) -> Any:
        return self.concentration / self.total_concentration[..., None]

    def _variance(self) -> Any:
        scale = math_ops.rsqrt(1.0 + self.total_concentration[..., None])
        x = scale * self._mean()
        return x * (scale - x)


def kl_beta_beta(d1: Beta, d2: Beta, name: str | None = None) -> Any:
    values = [d1.concentration1, d1.concentration0, d1.total_concentration]
    values += [d2.concentration1, d2.concentration0, d2.total_concentration]
    with _ops.name_scope(name, "kl_beta_beta", values=values):
        return (
            (d2._log_normalization() - d1._log_normalization())
            - math_ops.digamma(d1.concentration1) * (d2.concentration1 - d1.concentration1)
            - math_ops.digamma(d1.concentration0) * (d2.concentration0 - d1.concentration0)
            + math_ops.digamma(d1.total_concentration)
            * (d2.total_concentration - d1.total_concentration)
        )


def kl_dirichlet_dirichlet(d1: Dirichlet, d2: Dirichlet, name: str | None = None) -> Any:
    with _ops.name_scope(name, "kl_dirichlet_dirichlet", [d1.concentration, d2.concentration]):
        digamma_sum_d1 = math_ops.digamma(
            math_ops.reduce_sum(d1.concentration, axis=-1, keepdims=True)
        )
        digamma_diff = math_ops.digamma(d1.concentration) - digamma_sum_d1
        concentration_diff = d1.concentration - d2.concentration
        return (
            math_ops.reduce_sum(concentration_diff * digamma_diff, axis=-1)
            - sm.lbeta(d1.concentration)
            + sm.lbeta(d2.concentration)
        )
