"""Client API: the base of tf.keras layers as tf_keras' v1 Layer runs in a graph.

A layer gets its name when constructed ("dense", "dense_1" ... counted per graph); every
call opens a name scope of that name, uniquified by the graph ("dense", then "dense_2"
for a second call), builds the layer's weights on the first call (resource variables,
"dense/kernel", made by tf.compat.v1.Variable, so named by the name scope alone) and then
its ops. Each call records a node (inputs, outputs, arguments) on the outputs, which is
how a functional Model finds its layers. Updates stay on the layer (`updates`); tf_keras
does not put them in UPDATE_OPS. Graph building only: not thread-safe.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from client.framework import dtypes, nest
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.keras import backend, initializers
from client.layers import base as _base
from client.ops import array_ops, variables


@dataclasses.dataclass(frozen=True)
class Node:
    """One call of a layer: what went in, what came out, the other arguments."""

    layer: Any
    inputs: Any
    outputs: Any
    args: tuple
    kwargs: dict


def _to_tensors(inputs: Any) -> Any:
    return nest.map_structure(
        lambda x: x if isinstance(x, _ops.Tensor) else convert_to_tensor(x), inputs
    )


def _shapes(inputs: Any) -> Any:
    return nest.map_structure(lambda x: x.shape, inputs)


class Layer(_base.Layer):
    """tf.keras.layers.Layer: the naming, weight creation and call protocol of tf_keras.

    Layers that reuse a tf.compat.v1.layers class list this class first, so its name,
    add_weight and __call__ take over from the v1 layer's variable scopes.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        name = kwargs.pop("name", None)
        input_shape = kwargs.pop("input_shape", None)
        batch_input_shape = kwargs.pop("batch_input_shape", None)
        input_dim = kwargs.pop("input_dim", None)
        batch_size = kwargs.pop("batch_size", None)
        dtype = kwargs.pop("dtype", None)
        super().__init__(*args, **kwargs)
        self._dtype = dtypes.as_dtype(dtype) if dtype is not None else None
        self._keras_name = name or backend.unique_object_name(
            _base._snake_case(type(self).__name__)
        )
        if input_dim is not None and input_shape is None:
            input_shape = (input_dim,)
        if input_shape is not None and batch_input_shape is None:
            batch_input_shape = (batch_size, *tuple(input_shape))
        self._batch_input_shape = (
            tuple(batch_input_shape) if batch_input_shape is not None else None
        )
        self._inbound_nodes: list[Node] = []

    @property
    def name(self) -> str:
        return self._keras_name

    @property
    def dtype(self) -> Any:
        return self._dtype or dtypes.as_dtype(backend.floatx())

    @property
    def input(self) -> Any:
        return self._inbound_nodes[0].inputs

    @property
    def output(self) -> Any:
        return self._inbound_nodes[0].outputs

    def add_weight(
        self,
        name: str,
        shape: Any = (),
        dtype: Any = None,
        initializer: Any = None,
        regularizer: Any = None,
        trainable: bool = True,
        constraint: Any = None,
        **kwargs: Any,
    ) -> Any:
        """tf_keras' make_variable: a resource tf.compat.v1.Variable "<scope>/<name>"
        whose initial value the initializer builds under "<name>/Initializer"."""
        dtype = dtypes.as_dtype(dtype or self.dtype)
        initializer = initializers.get(initializer)
        if initializer is None:
            initializer = initializers.get("glorot_uniform" if dtype.is_floating else "zeros")
        shape = TensorShape(shape)
        trainable = trainable and self.trainable

        def initial_value() -> Any:
            return initializer(shape.as_list(), dtype=dtype)

        v = variables.Variable(
            initial_value,
            name=name,
            trainable=trainable,
            dtype=dtype,
            use_resource=True,
            constraint=constraint,
        )
        if regularizer is not None:
            with _ops.name_scope(name + "/Regularizer"):
                self._losses.append(regularizer(v))
        (self._trainable_weights if trainable else self._non_trainable_weights).append(v)
        return v

    add_variable = add_weight

    def _expects(self, argument: str) -> bool:
        return argument in inspect.signature(self.call).parameters

    def __call__(self, inputs: Any, *args: Any, **kwargs: Any) -> Any:
        inputs = _to_tensors(inputs)
        if "training" in kwargs and kwargs["training"] is None:
            del kwargs["training"]  # the layer's default: the learning phase
        with _ops.name_scope(self.name):
            if not self.built:
                self.build(_shapes(inputs))
                self.built = True
            outputs = self.call(inputs, *args, **kwargs)
        node = Node(self, inputs, outputs, args, kwargs)
        self._inbound_nodes.append(node)
        for t in nest.flatten(outputs):
            if isinstance(t, _ops.Tensor):
                t._keras_history = node  # type: ignore[attr-defined]
        return outputs

    def get_config(self) -> dict:
        return {"name": self.name, "trainable": self.trainable}


def _training(training: Any) -> Any:
    """A call's training argument: given, or the graph's learning phase."""
    return backend.learning_phase() if training is None else training


class InputLayer(Layer):
    """tf.keras.layers.InputLayer: a placeholder named as the layer ("input_1")."""

    def __init__(
        self,
        input_shape: Any = None,
        batch_size: Any = None,
        dtype: Any = None,
        input_tensor: Any = None,
        sparse: bool = False,
        name: str | None = None,
        batch_input_shape: Any = None,
        **kwargs: Any,
    ) -> None:
        if sparse:
            raise NotImplementedError("sparse Keras inputs are not supported by this client")
        name = name or backend.unique_object_name("input", zero_based=False)
        super().__init__(name=name, dtype=dtype or backend.floatx(), **kwargs)
        if batch_input_shape is None and input_shape is not None:
            batch_input_shape = (batch_size, *tuple(input_shape))
        if input_tensor is None:
            input_tensor = array_ops.placeholder(self.dtype, batch_input_shape, name=self.name)
        self.built = True
        self._batch_input_shape = tuple(input_tensor.shape.as_list() or ())
        node = Node(self, (), input_tensor, (), {})
        self._inbound_nodes.append(node)
        input_tensor._keras_history = node


def Input(  # noqa: N802 - tf.keras.Input
    shape: Any = None,
    batch_size: Any = None,
    name: str | None = None,
    dtype: Any = None,
    sparse: bool = False,
    tensor: Any = None,
    batch_shape: Any = None,
    **kwargs: Any,
) -> Any:
    """tf.keras.Input: the placeholder of a new InputLayer."""
    if batch_shape is None and shape is not None:
        batch_shape = (batch_size, *tuple(shape))
    layer = InputLayer(
        batch_input_shape=batch_shape,
        dtype=dtype,
        input_tensor=tensor,
        sparse=sparse,
        name=name,
    )
    return layer.output
