"""Client API: tf.keras.Model (functional) and tf.keras.Sequential as callables in a
graph, as tf_keras' v1 Network runs them: calling a model opens its name scope
("model", "sequential") and calls its layers in order inside it, reusing their weights
("model/dense/MatMul" reads "dense/kernel"). Graph building only: not thread-safe.
"""

from __future__ import annotations

from typing import Any

from client.framework import nest
from client.keras.engine import Input, InputLayer, Layer, Node


def _dedup(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in items:
        if all(v is not w for w in out):
            out.append(v)
    return out


class _Network(Layer):
    """What the functional Model and Sequential share: weights gathered from the
    layers (trainable first, then the rest), updates and losses likewise."""

    @property
    def layers(self) -> list[Any]:
        raise NotImplementedError

    def _own_layers(self) -> list[Any]:
        return [layer for layer in self.layers if not isinstance(layer, InputLayer)]

    @property
    def trainable_weights(self) -> list[Any]:
        if not self.trainable:
            return []
        return _dedup([w for layer in self._own_layers() for w in layer.trainable_weights])

    @property
    def non_trainable_weights(self) -> list[Any]:
        ws = [w for layer in self._own_layers() for w in layer.non_trainable_weights]
        if not self.trainable:
            ws = [w for layer in self._own_layers() for w in layer.weights]
        return _dedup(ws)

    @property
    def weights(self) -> list[Any]:
        return _dedup(self.trainable_weights + self.non_trainable_weights)

    variables = weights
    trainable_variables = trainable_weights
    non_trainable_variables = non_trainable_weights

    @property
    def updates(self) -> list[Any]:
        return [u for layer in self._own_layers() for u in layer.updates]

    @property
    def losses(self) -> list[Any]:
        return [x for layer in self._own_layers() for x in layer.losses]

    def get_layer(self, name: str | None = None, index: int | None = None) -> Any:
        if index is not None:
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}.")

    def build(self, input_shape: Any) -> None:
        self.built = True

    def compile(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            "Model.compile/fit/evaluate/predict are not supported by this client: call the "
            "model on tensors and train with a tf.compat.v1.train optimizer"
        )

    fit = evaluate = predict = compile


def _nodes_between(inputs: list[Any], outputs: list[Any]) -> list[Node]:
    """The layer calls from `inputs` to `outputs`, in the order they were made."""
    seen: dict[int, Node] = {}
    order: list[Node] = []
    input_ids = {id(t) for t in inputs}

    def visit(t: Any) -> None:
        if id(t) in input_ids:
            return
        node = getattr(t, "_keras_history", None)
        if node is None:
            raise ValueError(
                f"Output tensors of a Functional model must be the output of a layer; "
                f"{t.name} is not reachable from the model's inputs through layers."
            )
        if isinstance(node.layer, InputLayer):
            raise ValueError(f"Graph disconnected: {t.name} is an input the model lacks.")
        if id(node) in seen:
            return
        seen[id(node)] = node
        for x in nest.flatten(node.inputs):
            visit(x)
        order.append(node)

    for t in outputs:
        visit(t)
    return order


class Model(_Network):
    """tf.keras.Model(inputs, outputs): replays its layers on new inputs when called."""

    def __init__(self, inputs: Any = None, outputs: Any = None, name: str | None = None, **kw):
        if inputs is None or outputs is None:
            raise NotImplementedError(
                "subclassed tf.keras.Model is not supported by this client: build a "
                "functional Model(inputs, outputs) or a Sequential"
            )
        super().__init__(name=name, **kw)
        self._init_graph(inputs, outputs)

    def _init_graph(self, inputs: Any, outputs: Any) -> None:
        self._nested_inputs, self._nested_outputs = inputs, outputs
        self.inputs = nest.flatten(inputs)
        self.outputs = nest.flatten(outputs)
        self._nodes = _nodes_between(self.inputs, self.outputs)
        layers = [t._keras_history.layer for t in self.inputs]
        for node in self._nodes:
            if all(node.layer is not x for x in layers):
                layers.append(node.layer)
        self._layers = layers
        self.built = True

    @property
    def layers(self) -> list[Any]:
        return list(self._layers)

    def call(self, inputs: Any, training: Any = None) -> Any:
        values = {id(t): x for t, x in zip(self.inputs, nest.flatten(inputs))}
        for node in self._nodes:
            args = nest.map_structure(lambda t: values[id(t)], node.inputs)
            kwargs = dict(node.kwargs)
            if training is not None and node.layer._expects("training"):
                kwargs["training"] = training
            out = node.layer(args, *node.args, **kwargs)
            for t, x in zip(nest.flatten(node.outputs), nest.flatten(out)):
                values[id(t)] = x
        return nest.pack_sequence_as(self._nested_outputs, [values[id(t)] for t in self.outputs])


class Sequential(Model):
    """tf.keras.Sequential: layers applied in order. Given an input shape (the first
    layer's input_shape, or an InputLayer) it builds at once on a placeholder
    "<first layer>_input", as tf_keras does; otherwise on its first call, inside its
    name scope (weights "sequential/dense/kernel")."""

    def __init__(self, layers: Any = None, name: str | None = None, **kw: Any) -> None:
        Layer.__init__(self, name=name, **kw)
        self._seq: list[Any] = []
        self._nodes = []
        self.inputs: list[Any] = []
        self.outputs: list[Any] = []
        for layer in layers or ():
            self.add(layer)

    @property
    def layers(self) -> list[Any]:
        return [x for x in self._seq if not isinstance(x, InputLayer)]

    def _own_layers(self) -> list[Any]:
        return self.layers

    def add(self, layer: Any) -> None:
        if isinstance(layer, InputLayer):
            self._seq.append(layer)
            self._start(layer.output)
            return
        if not self._seq and getattr(layer, "_batch_input_shape", None) is not None:
            batch_shape = layer._batch_input_shape
            self._start(Input(batch_shape=batch_shape, name=layer.name + "_input"))
        self._seq.append(layer)
        if self.outputs:
            self.outputs = [layer(self.outputs[0])]
            self._init_graph(self.inputs[0], self.outputs[0])

    def _start(self, tensor: Any) -> None:
        self.inputs, self.outputs = [tensor], [tensor]

    def pop(self) -> None:
        raise NotImplementedError("Sequential.pop is not supported by this client")

    def call(self, inputs: Any, training: Any = None) -> Any:
        if self.inputs and self.outputs and self._nodes:
            return Model.call(self, inputs, training)
        x = inputs
        for layer in self.layers:
            kwargs = (
                {"training": training}
                if training is not None and layer._expects("training")
                else {}
            )
            x = layer(x, **kwargs)
        return x
