"""Client, tf.compat.v1.distributions: the Distribution base class (TensorFlow's
python/ops/distributions/distribution.py): public methods open `<name>/<method>/` scopes
and fall back as TF's do (prob = exp(log_prob), stddev = sqrt(variance), ...); `sample`
reshapes `_sample_n`'s [n] + batch + event draws to sample_shape + batch + event."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.shape_fns import constant_value
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, math_ops


class ReparameterizationType:
    def __init__(self, rep_type: str) -> None:
        self._rep_type = rep_type

    def __repr__(self) -> str:
        return f"<Reparameteriation Type: {self._rep_type}>"


FULLY_REPARAMETERIZED = ReparameterizationType("FULLY_REPARAMETERIZED")
NOT_REPARAMETERIZED = ReparameterizationType("NOT_REPARAMETERIZED")


def gen_new_seed(seed: int | None, salt: str) -> int | None:
    """TF's distribution_util.gen_new_seed: a sub-sampler's seed from md5(seed + salt)."""
    if seed is None:
        return None
    digest = hashlib.md5((str(seed) + salt).encode("utf-8")).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


def pick_vector(cond: Any, true_vector: Any, false_vector: Any, name: str = "pick_vector") -> Any:
    """TF's distribution_util.pick_vector: `true_vector` if `cond` else `false_vector`,
    chosen at graph time when `cond` is constant, else by a Slice of their concat."""
    with _ops.name_scope(name, values=[cond, true_vector, false_vector]):
        cond = convert_to_tensor(cond, name="cond")
        if cond.dtype != dtypes.bool:
            raise TypeError(f"{cond}.dtype={cond.dtype} which is not {dtypes.bool}")
        static = constant_value(cond)
        if static is not None:
            return true_vector if static else false_vector
        true_vector = convert_to_tensor(true_vector, name="true_vector")
        false_vector = convert_to_tensor(false_vector, name="false_vector")
        if true_vector.dtype != false_vector.dtype:
            raise TypeError(
                f"{true_vector}.dtype={true_vector.dtype} does not match "
                f"{false_vector}.dtype={false_vector.dtype}"
            )
        n = array_ops.shape(true_vector)[0]
        return array_ops.slice(
            array_ops.concat([true_vector, false_vector], 0),
            [array_ops.where_v2(cond, 0, n)],
            [array_ops.where(cond, n, -1)],
        )


def broadcast_shape_tensor(*tensors: Any) -> Any:
    """array_ops.broadcast_dynamic_shape of the tensors' shapes, folded left."""
    shape = array_ops.shape(tensors[0])
    for t in tensors[1:]:
        shape = apply_op("BroadcastArgs", [shape, array_ops.shape(t)], {}).outputs[0]
    return shape


def broadcast_static(*tensors: Any) -> TensorShape:
    """array_ops.broadcast_static_shape of the tensors' static shapes."""
    from client.framework.shape_fns import broadcast_shapes

    shape = tensors[0].shape
    for t in tensors[1:]:
        shape = broadcast_shapes(shape, t.shape)
    return shape


class Distribution:
    """A batch of distributions of one family; subclasses implement the `_method`s."""

    def __init__(
        self,
        dtype: Any,
        reparameterization_type: ReparameterizationType,
        validate_args: bool,
        allow_nan_stats: bool,
        parameters: dict | None = None,
        graph_parents: list | None = None,
        name: str | None = None,
    ) -> None:
        if not name or name[-1] != "/":  # not yet a name scope: make it one
            with _ops.name_scope(name or type(self).__name__) as name:
                pass
        self._dtype = dtype
        self._reparameterization_type = reparameterization_type
        self._allow_nan_stats = allow_nan_stats
        self._validate_args = validate_args
        self._parameters = {k: v for k, v in (parameters or {}).items() if k != "self"}
        self._graph_parents = graph_parents or []
        self._name = name

    name = property(lambda self: self._name)
    dtype = property(lambda self: self._dtype)
    parameters = property(lambda self: dict(self._parameters))
    reparameterization_type = property(lambda self: self._reparameterization_type)
    allow_nan_stats = property(lambda self: self._allow_nan_stats)
    validate_args = property(lambda self: self._validate_args)

    @contextlib.contextmanager
    def _name_scope(self, name: str | None = None, values: list | None = None) -> Iterator[str]:
        parents = (values or []) + self._graph_parents
        with _ops.name_scope(self.name), _ops.name_scope(name, values=parents) as scope:
            yield scope

    # -- shapes ----------------------------------------------------------------------------
    @property
    def batch_shape(self) -> TensorShape:
        return TensorShape(self._batch_shape())

    @property
    def event_shape(self) -> TensorShape:
        return TensorShape(self._event_shape())

    def batch_shape_tensor(self, name: str = "batch_shape_tensor") -> Any:
        with self._name_scope(name):
            if self.batch_shape.is_fully_defined():
                return convert_to_tensor(
                    self.batch_shape.as_list(), dtype=dtypes.int32, name="batch_shape"
                )
            return self._batch_shape_tensor()

    def event_shape_tensor(self, name: str = "event_shape_tensor") -> Any:
        with self._name_scope(name):
            if self.event_shape.is_fully_defined():
                return convert_to_tensor(
                    self.event_shape.as_list(), dtype=dtypes.int32, name="event_shape"
                )
            return self._event_shape_tensor()

    def _event_shape(self) -> TensorShape:
        return TensorShape([])

    def _event_shape_tensor(self) -> Any:
        return _ops_constant_int32([])

    # -- sampling --------------------------------------------------------------------------
    def sample(self, sample_shape: Any = (), seed: int | None = None, name: str = "sample") -> Any:
        with self._name_scope(name, values=[sample_shape]):
            sample_shape = convert_to_tensor(sample_shape, dtype=dtypes.int32, name="sample_shape")
            sample_shape, n = self._expand_sample_shape_to_vector(sample_shape, "sample_shape")
            samples = self._sample_n(n, seed)
            batch_event_shape = array_ops.shape(samples)[1:]
            final_shape = array_ops.concat([sample_shape, batch_event_shape], 0)
            return array_ops.reshape(samples, final_shape)

    def _expand_sample_shape_to_vector(self, x: Any, name: str) -> tuple[Any, Any]:
        """`x` as a vector and the product of its entries: numbers when `x` is constant,
        else a ReduceProd (and, at unknown rank, a reshape picking [1] for a scalar)."""
        static = constant_value(x)
        prod = math_ops.reduce_prod(x) if static is None else np.prod(static, dtype=np.int32)
        ndims = x.shape.ndims
        if ndims is None:
            expanded = pick_vector(
                math_ops.equal(array_ops.rank(x), 0),
                np.array([1], dtype=np.int32),
                array_ops.shape(x),
            )
            x = array_ops.reshape(x, expanded)
        elif ndims == 0:
            if static is not None:
                x = convert_to_tensor(np.array([static], dtype=np.int32), name=name)
            else:
                x = array_ops.reshape(x, [1])
        elif ndims != 1:
            raise ValueError("Input is neither scalar nor vector.")
        return x, prod

    # -- densities -------------------------------------------------------------------------
    def _call(self, name: str, value: Any, primary: str, fallback: str, via: Any) -> Any:
        with self._name_scope(name, values=[value]):
            value = convert_to_tensor(value, name="value", preferred_dtype=self.dtype)
            try:
                return getattr(self, primary)(value)
            except NotImplementedError:
                return via(getattr(self, fallback)(value))

    def log_prob(self, value: Any, name: str = "log_prob") -> Any:
        return self._call(name, value, "_log_prob", "_prob", math_ops.log)

    def prob(self, value: Any, name: str = "prob") -> Any:
        return self._call(name, value, "_prob", "_log_prob", math_ops.exp)

    def log_cdf(self, value: Any, name: str = "log_cdf") -> Any:
        return self._call(name, value, "_log_cdf", "_cdf", math_ops.log)

    def cdf(self, value: Any, name: str = "cdf") -> Any:
        return self._call(name, value, "_cdf", "_log_cdf", math_ops.exp)

    def survival_function(self, value: Any, name: str = "survival_function") -> Any:
        with self._name_scope(name, values=[value]):
            value = convert_to_tensor(value, name="value", preferred_dtype=self.dtype)
            try:
                return self._survival_function(value)
            except NotImplementedError:
                return 1.0 - self.cdf(value)

    def quantile(self, value: Any, name: str = "quantile") -> Any:
        with self._name_scope(name, values=[value]):
            value = convert_to_tensor(value, name="value", preferred_dtype=self.dtype)
            return self._quantile(value)

    # -- statistics ------------------------------------------------------------------------
    def entropy(self, name: str = "entropy") -> Any:
        with self._name_scope(name):
            return self._entropy()

    def mean(self, name: str = "mean") -> Any:
        with self._name_scope(name):
            return self._mean()

    def mode(self, name: str = "mode") -> Any:
        with self._name_scope(name):
            return self._mode()

    def variance(self, name: str = "variance") -> Any:
        with self._name_scope(name):
            try:
                return self._variance()
            except NotImplementedError:
                return math_ops.square(self._stddev())

    def covariance(self, name: str = "covariance") -> Any:
        with self._name_scope(name):
            return self._covariance()

    def stddev(self, name: str = "stddev") -> Any:
        with self._name_scope(name):
            try:
                return self._stddev()
            except NotImplementedError:
                return math_ops.sqrt(self._variance())

    def kl_divergence(self, other: Distribution, name: str = "kl_divergence") -> Any:
        from client.distributions.kullback_leibler import kl_divergence

        with self._name_scope(name):
            return kl_divergence(self, other, allow_nan_stats=self.allow_nan_stats)

    def cross_entropy(self, other: Distribution, name: str = "cross_entropy") -> Any:
        from client.distributions.kullback_leibler import cross_entropy

        with self._name_scope(name):
            return cross_entropy(self, other, allow_nan_stats=self.allow_nan_stats)

    def _not_implemented(self, *args: Any) -> Any:
        raise NotImplementedError(type(self).__name__)

    _log_prob = _prob = _log_cdf = _cdf = _survival_function = _quantile = _not_implemented
    _entropy = _mean = _mode = _variance = _stddev = _sample_n = _not_implemented
    _covariance = _not_implemented
    _batch_shape_tensor = _not_implemented

    def _batch_shape(self) -> TensorShape:
        return TensorShape(None)


def _ops_constant_int32(value: list) -> Any:
    return convert_to_tensor(np.array(value, np.int32))
