"""Client API: the base of tf.compat.v1.layers (TF's legacy_tf_layers.base.Layer).

A layer captures a variable scope at its first call ("dense", "dense_1" ... or its name,
under the variable scope current then); its variables are "<scope>/kernel" ... made with
get_variable, and every call builds its ops in the name scope that scope first opened
("dense/MatMul", then "dense/MatMul_1"), reusing the variables. Ops a layer wants run for
training (batch-norm moving averages) go in its `updates` and in UPDATE_OPS.
Graph building only: not thread-safe.
"""

from __future__ import annotations

import re
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import init_ops
from client.ops import variable_scope as vs


def _snake_case(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()


def _nested_shape(x: Any) -> Any:
    if isinstance(x, (list, tuple)):
        return type(x)(_nested_shape(v) for v in x) if not hasattr(x, "_fields") else None
    return convert_to_tensor(x).shape


class Layer:
    """tf.compat.v1.layers.Layer: build(input_shape) once, call(inputs) per use."""

    def __init__(
        self,
        trainable: bool = True,
        name: str | None = None,
        dtype: Any = None,
        _reuse: Any = None,
        _scope: Any = None,
        **kwargs: Any,
    ) -> None:
        self.trainable = trainable
        self._base_name = name or _snake_case(type(self).__name__)
        self._name = name
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._reuse = _reuse
        self._scope: Any = None
        if _scope:  # the functional forms (tf.layers.dense(..., name=)) pass their name
            with vs.variable_scope(_scope) as s:
                self._scope = s
        self.built = False
        self._trainable_weights: list[Any] = []
        self._non_trainable_weights: list[Any] = []
        self._updates: list[Any] = []
        self._losses: list[Any] = []

    # -- weights ------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._scope.name if self._scope is not None else self._base_name

    @property
    def dtype(self) -> Any:
        return self._dtype

    @property
    def trainable_weights(self) -> list[Any]:
        return list(self._trainable_weights) if self.trainable else []

    @property
    def non_trainable_weights(self) -> list[Any]:
        if self.trainable:
            return list(self._non_trainable_weights)
        return self._trainable_weights + self._non_trainable_weights

    @property
    def weights(self) -> list[Any]:
        return self.trainable_weights + self.non_trainable_weights

    variables = weights
    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def updates(self) -> list[Any]:
        return list(self._updates)

    @property
    def losses(self) -> list[Any]:
        return list(self._losses)

    def add_update(self, update: Any) -> None:
        # As tf_keras' v1 layers: a tensor's op is the update (UPDATE_OPS holds ops).
        if not isinstance(update, _ops.Operation) and hasattr(update, "op"):
            update = update.op
        self._updates.append(update)

    def add_weight(
        self,
        name: str,
        shape: Any,
        dtype: Any = None,
        initializer: Any = None,
        regularizer: Any = None,
        trainable: bool = True,
        **kwargs: Any,
    ) -> Any:
        dtype = dtypes.as_dtype(dtype or self._dtype or dtypes.float32)
        trainable = trainable and self.trainable
        if (
            initializer is None
            and vs.get_variable_scope().initializer is None
            and dtype.is_floating
        ):
            # tf_keras's add_weight default, not get_variable's (see the class's docstring).
            initializer = init_ops.LayerDefaultGlorotUniform()
        before = len(_ops.get_collection(_ops.GraphKeys.REGULARIZATION_LOSSES))
        # A partitioner (tf_keras's add_weight argument) makes a PartitionedVariable.
        partitioner = {"partitioner": kwargs["partitioner"]} if kwargs.get("partitioner") else {}
        v = vs.get_variable(
            name,
            shape,
            dtype,
            initializer,
            regularizer=regularizer,
            trainable=trainable,
            **partitioner,
        )
        self._losses.extend(_ops.get_collection(_ops.GraphKeys.REGULARIZATION_LOSSES)[before:])
        (self._trainable_weights if trainable else self._non_trainable_weights).append(v)
        return v

    add_variable = add_weight

    # -- a kernel and an optional bias (Dense, the convolutions) ------------------------
    def _kernel_and_bias_args(
        self,
        activation: Any,
        use_bias: bool,
        kernel_initializer: Any,
        bias_initializer: Any,
        kernel_regularizer: Any,
        bias_regularizer: Any,
    ) -> None:
        """Keeps the constructor's arguments; the bias starts at zeros unless told."""
        self.activation = activation
        self.use_bias = use_bias
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer or init_ops.zeros_initializer()
        self.kernel_regularizer = kernel_regularizer
        self.bias_regularizer = bias_regularizer
        self.kernel: Any = None
        self.bias: Any = None

    def _add_kernel_and_bias(self, kernel_shape: list[int], bias_shape: list[int]) -> None:
        """The "kernel" weight, then the "bias" with `use_bias` (TF's order of creation)."""
        self.kernel = self.add_weight(
            "kernel",
            kernel_shape,
            initializer=self.kernel_initializer,
            regularizer=self.kernel_regularizer,
        )
        self._add_bias(bias_shape)

    def _add_bias(self, bias_shape: list[int]) -> None:
        """The "bias" weight, with `use_bias` only."""
        if self.use_bias:
            self.bias = self.add_weight(
                "bias",
                bias_shape,
                initializer=self.bias_initializer,
                regularizer=self.bias_regularizer,
            )

    def _activate(self, outputs: Any) -> Any:
        return outputs if self.activation is None else self.activation(outputs)

    # -- calls --------------------------------------------------------------------------
    def build(self, input_shape: Any) -> None:
        self.built = True

    def call(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return inputs

    def _set_scope(self, scope: Any = None) -> None:
        if self._scope is not None:
            return
        if self._reuse:
            with vs.variable_scope(scope if scope is not None else self._base_name) as s:
                self._scope = s
        else:
            with vs.variable_scope(scope, default_name=self._base_name) as s:
                self._scope = s

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        self._set_scope(kwargs.pop("scope", None))
        reuse = True if self.built else self._reuse
        with (
            vs.variable_scope(self._scope, reuse=reuse, auxiliary_name_scope=False),
            _ops.name_scope(self._scope.original_name_scope),
        ):
            if not self.built:
                if self._dtype is None:
                    first = inputs[0] if isinstance(inputs, (list, tuple)) else inputs
                    if hasattr(first, "dtype"):
                        self._dtype = dtypes.as_dtype(first.dtype).base_dtype
                self.build(_nested_shape(inputs))
                self.built = True
            outputs = self.call(inputs, *args, **kwargs)
        updates = _ops.get_collection_ref(_ops.GraphKeys.UPDATE_OPS)
        for u in self._updates:
            if all(u is not x for x in updates):
                updates.append(u)
        return outputs

    def apply(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        return self.__call__(inputs, *args, **kwargs)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        raise NotImplementedError
