"""Client, tf.compat.v1.distributions.DirichletMultinomial (TensorFlow's
dirichlet_multinomial.py): counts over K classes from `total_count` draws whose class
probabilities are themselves Dirichlet(concentration). TF's formulas in TF's order, so the
graph has TF's node names; with `validate_args` TF's checks guard the parameters and the
counts."""

from __future__ import annotations

from typing import Any

from client.distributions.distribution import NOT_REPARAMETERIZED, Distribution, gen_new_seed
from client.distributions.util import (
    embed_check_categorical_event_shape,
    embed_check_counts,
    embed_check_nonnegative_integer_form,
    log_combinations,
)
from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.ops import array_ops, check_ops, linalg_ops, math_ops, random_ops
from client.ops import special_math_ops as sm
from client.ops.control_flow_ops import with_dependencies


class DirichletMultinomial(Distribution):
    def __init__(
        self,
        total_count: Any,
        concentration: Any,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "DirichletMultinomial",
    ) -> None:
        parameters = {"total_count": total_count, "concentration": concentration}
        with _ops.name_scope(name, values=[total_count, concentration]) as name:
            self._total_count = convert_to_tensor(total_count, name="total_count")
            if validate_args:
                self._total_count = embed_check_nonnegative_integer_form(self._total_count)
            self._concentration = self._maybe_assert_valid_concentration(
                convert_to_tensor(concentration, name="concentration"), validate_args
            )
            self._total_concentration = math_ops.reduce_sum(self._concentration, -1)
        super().__init__(
            dtype=self._concentration.dtype,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            reparameterization_type=NOT_REPARAMETERIZED,
            parameters=parameters,
            graph_parents=[self._total_count, self._concentration],
            name=name,
        )

    total_count = property(lambda self: self._total_count)
    concentration = property(lambda self: self._concentration)
    total_concentration = property(lambda self: self._total_concentration)

    def _batch_shape_tensor(self) -> Any:
        return array_ops.shape(self.total_concentration)

    def _batch_shape(self) -> Any:
        return self.total_concentration.shape

    def _event_shape_tensor(self) -> Any:
        return array_ops.shape(self.concentration)[-1:]

    def _event_shape(self) -> Any:
        return self.concentration.shape.with_rank_at_least(1)[-1:]

    def _sample_n(self, n: Any, seed: Any = None) -> Any:
        """Gamma variates as unnormalized log-probabilities, then a multinomial draw of
        total_count classes per row (TF's salted second seed), counted by one-hot sums."""
        n_draws = math_ops.cast(self.total_count, dtype=dtypes.int32)
        k = self.event_shape_tensor()[0]
        gamma = random_ops.random_gamma(
            shape=[n], alpha=self.concentration, dtype=self.dtype, seed=seed
        )
        unnormalized_logits = array_ops.reshape(math_ops.log(gamma), shape=[-1, k])
        draws = random_ops.multinomial(
            logits=unnormalized_logits,
            num_samples=n_draws,
            seed=gen_new_seed(seed, salt="dirichlet_multinomial"),
        )
        x = math_ops.reduce_sum(array_ops.one_hot(draws, depth=k), -2)
        final_shape = array_ops.concat([[n], self.batch_shape_tensor(), [k]], 0)
        x = array_ops.reshape(x, final_shape)
        return math_ops.cast(x, self.dtype)

    def _log_prob(self, counts: Any) -> Any:
        counts = self._maybe_assert_valid_sample(counts)
        ordered_prob = sm.lbeta(self.concentration + counts) - sm.lbeta(self.concentration)
        return ordered_prob + log_combinations(self.total_count, counts)

    def _prob(self, counts: Any) -> Any:
        return math_ops.exp(self._log_prob(counts))

    def _mean(self) -> Any:
        return self.total_count * (self.concentration / self.total_concentration[..., None])

    def _covariance(self) -> Any:
        """-outer(x, x) off the diagonal, the variance on it (x the scaled mean)."""
        x = self._variance_scale_term() * self._mean()
        outer = math_ops.matmul(x[..., None], x[..., None, :])
        return linalg_ops.matrix_set_diag(-outer, self._variance())

    def _variance(self) -> Any:
        scale = self._variance_scale_term()
        x = scale * self._mean()
        return x * (self.total_count * scale - x)

    def _variance_scale_term(self) -> Any:
        """sqrt((1 + alpha_0 / n) / (1 + alpha_0)), shared by variance and covariance."""
        c0 = self.total_concentration[..., None]
        return math_ops.sqrt((1.0 + c0 / self.total_count) / (1.0 + c0))

    @staticmethod
    def _maybe_assert_valid_concentration(concentration: Any, validate_args: bool) -> Any:
        if not validate_args:
            return concentration
        concentration = embed_check_categorical_event_shape(concentration)
        check = check_ops.assert_positive(
            concentration, message="Concentration parameter must be positive."
        )
        return with_dependencies([check], concentration)

    def _maybe_assert_valid_sample(self, counts: Any) -> Any:
        """With validate_args: non-negative integer counts summing to total_count."""
        if not self.validate_args:
            return counts
        return embed_check_counts(
            counts, self.total_count, "counts last-dimension must sum to `self.total_count`"
        )
