"""Client, tf.compat.v1.distributions: logits/probs families (TensorFlow's bernoulli.py,
categorical.py, multinomial.py), TF's formulas in TF's order. With `validate_args` the
parameters and events pass through TF's checks (util.py's embed_check_* helpers)."""

from __future__ import annotations

from typing import Any

from client.distributions.distribution import NOT_REPARAMETERIZED, Distribution
from client.distributions.util import (
    embed_check_categorical_event_shape,
    embed_check_counts,
    embed_check_integer_casting_closed,
    embed_check_nonnegative_integer_form,
    get_logits_and_probs,
    log_combinations,
)
from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, math_ops, nn_ops, random_ops
from client.ops.tf1_extras import sequence_mask


class Bernoulli(Distribution):
    def __init__(
        self,
        logits: Any = None,
        probs: Any = None,
        dtype: Any = dtypes.int32,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Bernoulli",
    ) -> None:
        with _ops.name_scope(name) as name:
            self._logits, self._probs = get_logits_and_probs(
                logits=logits, probs=probs, validate_args=validate_args, name=name
            )
        super().__init__(
            dtype=dtypes.as_dtype(dtype),
            reparameterization_type=NOT_REPARAMETERIZED,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            parameters={"logits": logits, "probs": probs, "dtype": dtype},
            graph_parents=[self._logits, self._probs],
            name=name,
        )

    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    def _batch_shape_tensor(self) -> Any:
        return array_ops.shape(self._logits)

    def _batch_shape(self) -> Any:
        return self._logits.shape

    def _sample_n(self, n: Any, seed: Any = None) -> Any:
        new_shape = array_ops.concat([[n], self.batch_shape_tensor()], 0)
        uniform = random_ops.random_uniform(new_shape, seed=seed, dtype=self.probs.dtype)
        return math_ops.cast(math_ops.less(uniform, self.probs), self.dtype)

    def _log_prob(self, event: Any) -> Any:
        if self.validate_args:
            event = embed_check_integer_casting_closed(event, dtypes.bool)
        event = math_ops.cast(event, self.logits.dtype)
        logits = self.logits
        es, ls = event.shape, logits.shape
        if not (es.is_fully_defined() and ls.is_fully_defined() and es == ls):
            logits, event = (
                array_ops.ones_like(event) * logits,
                array_ops.ones_like(logits) * event,
            )
        return -nn_ops.sigmoid_cross_entropy_with_logits(labels=event, logits=logits)

    def _entropy(self) -> Any:
        return -self.logits * (math_ops.sigmoid(self.logits) - 1) + nn_ops.softplus(-self.logits)

    def _mean(self) -> Any:
        return array_ops.identity(self.probs)

    def _variance(self) -> Any:
        return self._mean() * (1.0 - self.probs)

    def _mode(self) -> Any:
        return math_ops.cast(self.probs > 0.5, self.dtype)


def _broadcast_cat_event_and_params(event: Any, params: Any) -> tuple[Any, Any]:
    if event.dtype.is_floating:
        event = math_ops.cast(event, dtype=dtypes.int32)
    elif not event.dtype.is_integer:
        raise TypeError("`value` should have integer `dtype`")
    ps = params.shape
    static = ps.ndims is not None and ps[:-1].is_fully_defined() and event.shape.is_fully_defined()
    if not static or ps[:-1].as_list() != event.shape.as_list():
        params *= array_ops.ones_like(event[..., None], dtype=params.dtype)
        params_shape = array_ops.shape(params)[:-1]
        event *= array_ops.ones(params_shape, dtype=event.dtype)
    return event, params


def _logits_shapes(logits: Any) -> tuple[Any, Any, Any]:
    """Categorical's batch rank, event size and batch shape: constants where the static
    shape of `logits` knows them, else read from its dynamic shape (as TF's)."""
    static = logits.shape.with_rank_at_least(1)
    if static.ndims is not None:
        batch_rank = convert_to_tensor(static.ndims - 1, dtype=dtypes.int32, name="batch_rank")
    else:
        with _ops.name_scope("batch_rank"):
            batch_rank = array_ops.rank(logits) - 1
    logits_shape = array_ops.shape(logits, name="logits_shape")
    if static.ndims is not None and static[-1] is not None:
        event_size = convert_to_tensor(int(static[-1]), dtype=dtypes.int32, name="event_size")
    else:
        with _ops.name_scope("event_size"):
            event_size = logits_shape[batch_rank]
    if static.ndims is not None and static[:-1].is_fully_defined():
        batch_shape = convert_to_tensor(
            static[:-1].as_list(), dtype=dtypes.int32, name="batch_shape"
        )
    else:
        with _ops.name_scope("batch_shape"):
            batch_shape = logits_shape[:-1]
    return batch_rank, event_size, batch_shape


class Categorical(Distribution):
    def __init__(
        self,
        logits: Any = None,
        probs: Any = None,
        dtype: Any = dtypes.int32,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Categorical",
    ) -> None:
        with _ops.name_scope(name, values=[logits, probs]) as name:
            self._logits, self._probs = get_logits_and_probs(
                logits=logits,
                probs=probs,
                multidimensional=True,
                validate_args=validate_args,
                name=name,
            )
            if validate_args:
                self._logits = embed_check_categorical_event_shape(self._logits)
            self._batch_rank, self._event_size, self._batch_shape_val = _logits_shapes(self._logits)
        super().__init__(
            dtype=dtypes.as_dtype(dtype),
            reparameterization_type=NOT_REPARAMETERIZED,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            parameters={"logits": logits, "probs": probs, "dtype": dtype},
            graph_parents=[self._logits, self._probs],
            name=name,
        )

    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)
    event_size = property(lambda self: self._event_size)

    def _batch_shape_tensor(self) -> Any:
        return array_ops.identity(self._batch_shape_val)

    def _batch_shape(self) -> Any:
        return self.logits.shape[:-1]

    def _sample_n(self, n: Any, seed: Any = None) -> Any:
        if self.logits.shape.ndims == 2:
            logits_2d = self.logits
        else:
            logits_2d = array_ops.reshape(self.logits, [-1, self.event_size])
        sample_dtype = dtypes.int64 if self.dtype.size > 4 else dtypes.int32
        draws = random_ops.multinomial(logits_2d, n, seed=seed, output_dtype=sample_dtype)
        draws = array_ops.transpose(draws)
        draws = array_ops.reshape(draws, array_ops.concat([[n], self.batch_shape_tensor()], 0))
        return math_ops.cast(draws, self.dtype)

    def _cdf(self, k: Any) -> Any:
        k = convert_to_tensor(k, name="k")
        if self.validate_args:
            k = embed_check_integer_casting_closed(k, dtypes.int32)
        k, probs = _broadcast_cat_event_and_params(k, self.probs)
        flat_probs = array_ops.reshape(probs, (-1, self._event_size))
        flat_k = array_ops.reshape(k, [-1])
        to_sum_over = array_ops.where(
            sequence_mask(flat_k, self._event_size), flat_probs, array_ops.zeros_like(flat_probs)
        )
        flat_cdf = math_ops.reduce_sum(to_sum_over, axis=-1)
        return array_ops.reshape(flat_cdf, array_ops.shape(k))

    def _log_prob(self, k: Any) -> Any:
        k = convert_to_tensor(k, name="k")
        if self.validate_args:
            k = embed_check_integer_casting_closed(k, dtypes.int32)
        k, logits = _broadcast_cat_event_and_params(k, self.logits)
        return -nn_ops.sparse_softmax_cross_entropy_with_logits(labels=k, logits=logits)

    def _entropy(self) -> Any:
        return -math_ops.reduce_sum(nn_ops.log_softmax(self.logits) * self.probs, axis=-1)

    def _mode(self) -> Any:
        ret = math_ops.argmax(self.logits, axis=self._batch_rank)
        return math_ops.cast(ret, self.dtype)


class Multinomial(Distribution):
    def __init__(
        self,
        total_count: Any,
        logits: Any = None,
        probs: Any = None,
        validate_args: bool = False,
        allow_nan_stats: bool = True,
        name: str = "Multinomial",
    ) -> None:
        with _ops.name_scope(name, values=[total_count, logits, probs]) as name:
            self._total_count = convert_to_tensor(total_count, name="total_count")
            if validate_args:
                self._total_count = embed_check_nonnegative_integer_form(self._total_count)
            self._logits, self._probs = get_logits_and_probs(
                logits=logits,
                probs=probs,
                multidimensional=True,
                validate_args=validate_args,
                name=name,
            )
            self._mean_val = self._total_count[..., None] * self._probs
        super().__init__(
            dtype=self._probs.dtype,
            reparameterization_type=NOT_REPARAMETERIZED,
            validate_args=validate_args,
            allow_nan_stats=allow_nan_stats,
            parameters={"total_count": total_count, "logits": logits, "probs": probs},
            graph_parents=[self._total_count, self._logits, self._probs],
            name=name,
        )

    total_count = property(lambda self: self._total_count)
    logits = property(lambda self: self._logits)
    probs = property(lambda self: self._probs)

    def _batch_shape_tensor(self) -> Any:
        return array_ops.shape(self._mean_val)[:-1]

    def _batch_shape(self) -> Any:
        return self._mean_val.shape[:-1]

    def _event_shape_tensor(self) -> Any:
        return array_ops.shape(self._mean_val)[-1:]

    def _event_shape(self) -> TensorShape:
        return self._mean_val.shape[-1:]

    def _sample_n(self, n: Any, seed: Any = None) -> Any:
        from client.ops.functional_ops import map_fn

        n_draws = math_ops.cast(self.total_count, dtype=dtypes.int32)
        k = self.event_shape_tensor()[0]
        # total_count and logits broadcast to one batch shape, then flattened
        n_draws = array_ops.ones_like(self.logits[..., 0], dtype=n_draws.dtype) * n_draws
        logits = array_ops.ones_like(n_draws[..., None], dtype=self.logits.dtype) * self.logits
        flat_logits = array_ops.reshape(logits, [-1, k])
        flat_ndraws = n * array_ops.reshape(n_draws, [-1])

        def _sample_single(args: Any) -> Any:
            logits, n_draw = args[0], args[1]
            x = random_ops.multinomial(logits[None, ...], n_draw, seed)
            x = array_ops.reshape(x, shape=[n, -1])
            return math_ops.reduce_sum(array_ops.one_hot(x, depth=k), axis=-2)

        x = map_fn(_sample_single, [flat_logits, flat_ndraws], dtype=self.dtype)
        x = array_ops.transpose(x, perm=[1, 0, 2])
        final_shape = array_ops.concat([[n], self.batch_shape_tensor(), [k]], 0)
        return array_ops.reshape(x, final_shape)

    def _log_prob(self, counts: Any) -> Any:
        return self._log_unnormalized_prob(counts) - self._log_normalization(counts)

    def _log_unnormalized_prob(self, counts: Any) -> Any:
        counts = self._maybe_assert_valid_sample(counts)
        return math_ops.reduce_sum(counts * nn_ops.log_softmax(self.logits), -1)

    def _log_normalization(self, counts: Any) -> Any:
        counts = self._maybe_assert_valid_sample(counts)
        return -log_combinations(self.total_count, counts)

    def _maybe_assert_valid_sample(self, counts: Any) -> Any:
        """With validate_args: counts non-negative integers summing to total_count."""
        if not self.validate_args:
            return counts
        return embed_check_counts(counts, self.total_count, "counts must sum to `self.total_count`")

    def _mean(self) -> Any:
        return array_ops.identity(self._mean_val)

    def _variance(self) -> Any:
        p = self.probs * array_ops.ones_like(self.total_count)[..., None]
        return self._mean_val - self._mean_val * p


def kl_bernoulli_bernoulli(a: Bernoulli, b: Bernoulli, name: str | None = None) -> Any:
    with _ops.name_scope(name, "kl_bernoulli_bernoulli", values=[a.logits, b.logits]):
        delta_probs0 = nn_ops.softplus(-b.logits) - nn_ops.softplus(-a.logits)
        delta_probs1 = nn_ops.softplus(b.logits) - nn_ops.softplus(a.logits)
        return (
            math_ops.sigmoid(a.logits) * delta_probs0 + math_ops.sigmoid(-a.logits) * delta_probs1
        )


def kl_categorical_categorical(a: Categorical, b: Categorical, name: str | None = None) -> Any:
    with _ops.name_scope(name, "kl_categorical_categorical", values=[a.logits, b.logits]):
        delta_log_probs1 = nn_ops.log_softmax(a.logits) - nn_ops.log_softmax(b.logits)
        return math_ops.reduce_sum(nn_ops.softmax(a.logits) * delta_log_probs1, axis=-1)
