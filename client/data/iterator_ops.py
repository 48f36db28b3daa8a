"""Client, tf.data graph building: iterators over a Dataset as tf.compat.v1 graph mode
builds them — make_one_shot_iterator (OneShotIterator whose dataset_factory is a
zero-argument function copying the dataset's ops by value), make_initializable_iterator
(IteratorV2 + MakeIterator as `initializer`), and `Iterator.get_next()` (IteratorGetNext),
all colocated with the dataset as TensorFlow colocates them. Running get_next past the end
raises tf.errors.OutOfRangeError from Session.run. Not thread-safe while building.
"""

from __future__ import annotations

from typing import Any, Protocol

from client.data import structure, tensor_list
from client.framework import dtypes as _dtypes
from client.framework import function as _function
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape


class DatasetLike(Protocol):
    """What an iterator reads of a dataset_ops.Dataset (which imports this module to build
    its iterators)."""

    _variant_tensor: _ops.Tensor

    @property
    def element_spec(self) -> Any: ...

    @property
    def _flat_structure(self) -> dict[str, Any]: ...


GLOBAL_ITERATORS = "iterators"


class Iterator(structure.HasElementSpec):
    """An iterator resource and the structure of its elements (tf.compat.v1.data.Iterator)."""

    def __init__(
        self, iterator_resource: _ops.Tensor, initializer: _ops.Operation | None, element_spec: Any
    ) -> None:
        self._iterator_resource = iterator_resource
        self._initializer = initializer
        self._element_spec = element_spec
        handle = apply_op("IteratorToStringHandle", [iterator_resource], {}).outputs[0]
        handle._shape = TensorShape([])
        self._string_handle = handle
        _ops.add_to_collection(GLOBAL_ITERATORS, iterator_resource)

    @property
    def initializer(self) -> _ops.Operation:
        if self._initializer is None:
            raise ValueError(
                "The iterator does not have an initializer. This means it was likely created "
                "using `tf.data.Dataset.make_one_shot_iterator()`. For an initializable "
                "iterator, use `tf.data.Dataset.make_initializable_iterator()` instead."
            )
        return self._initializer

    def get_next(self, name: str | None = None) -> Any:
        """The next element's structure of tensors (IteratorGetNext)."""
        with _ops.colocate_with(self._iterator_resource):
            op = apply_op(
                "IteratorGetNext", [self._iterator_resource], _flat_attrs(self._element_spec), name
            )
            for t, s in zip(op.outputs, structure.flat_shapes(self._element_spec)):
                t._shape = s
            return tensor_list.from_compatible_tensor_list(self._element_spec, op.outputs)

    def string_handle(self, name: str | None = None) -> _ops.Tensor:
        if name is None:
            return self._string_handle
        with _ops.colocate_with(self._iterator_resource):
            return apply_op("IteratorToStringHandle", [self._iterator_resource], {}, name).outputs[
                0
            ]

    def make_initializer(self, dataset: DatasetLike, name: str | None = None) -> _ops.Operation:
        """A MakeIterator op (re)starting this iterator on `dataset` (same structure)."""
        structure.assert_same_structure(self._element_spec, dataset.element_spec)
        for a, b in zip(structure.flatten(self._element_spec),
                        structure.flatten(dataset.element_spec)):  # fmt: skip
            if a.dtype != b.dtype or not a.shape.is_compatible_with(b.shape):
                raise TypeError(
                    f"Expected output types and shapes compatible with {self._element_spec} "
                    f"but got dataset with {dataset.element_spec}."
                )
        with _ops.colocate_with(self._iterator_resource):
            return apply_op(
                "MakeIterator", [dataset._variant_tensor, self._iterator_resource], {}, name
            )

    @staticmethod
    def from_structure(
        output_types: Any, output_shapes: Any = None, shared_name: str | None = None,
        output_classes: Any = None,
    ) -> Iterator:  # fmt: skip
        """An iterator not bound to a dataset: `make_initializer(ds)` binds it."""
        if output_shapes is None:
            output_shapes = structure.map_structure(lambda _: TensorShape(None), output_types)
        spec = structure.map_structure(
            lambda t, s: structure.TensorSpec(s, _dtypes.as_dtype(t)), output_types, output_shapes
        )
        resource = apply_op(
            "IteratorV2", [], {"container": "", "shared_name": shared_name or "",
                               **_flat_attrs(spec)},
        ).outputs[0]  # fmt: skip
        return Iterator(resource, None, spec)

    @staticmethod
    def from_string_handle(
        string_handle: Any, output_types: Any, output_shapes: Any = None,
        output_classes: Any = None,
    ) -> Iterator:  # fmt: skip
        """A feedable iterator: whichever iterator's `string_handle()` value is fed into
        `string_handle` at run time (IteratorFromStringHandleV2), as tf.compat.v1's."""
        if output_shapes is None:
            output_shapes = structure.map_structure(lambda _: TensorShape(None), output_types)
        spec = structure.map_structure(
            lambda t, s: structure.TensorSpec(s, _dtypes.as_dtype(t)), output_types, output_shapes
        )
        handle = convert_to_tensor(string_handle, dtype=_dtypes.string)
        resource = apply_op("IteratorFromStringHandleV2", [handle], _flat_attrs(spec)).outputs[0]
        return Iterator(resource, None, spec)

    def _as_graph_element(self) -> _ops.Tensor:
        return self._iterator_resource


def _flat_attrs(spec: Any) -> dict[str, Any]:
    return {
        "output_types": structure.flat_types(spec),
        "output_shapes": structure.flat_shapes(spec),
    }


def _is_dataset_op(op: _ops.Operation) -> bool:
    """Stateful ops a one-shot iterator may copy: those making datasets (TF's
    traverse.obtain_capture_by_value_ops)."""
    return any(t.dtype == _dtypes.variant for t in op.outputs)


def make_one_shot_iterator(dataset: DatasetLike) -> Iterator:
    """tf.compat.v1.data.make_one_shot_iterator: OneShotIterator running a factory
    function that rebuilds the dataset (its ops captured by value, so stateful inputs such
    as variables are refused: use make_initializable_iterator)."""
    variant = dataset._variant_tensor
    # TF's make_one_shot_iterator takes get_seed(None) for its factory function: with a
    # graph seed that uses up one op seed, which the ops built after it see.
    from client.ops import random_ops

    with variant.graph.as_default():
        random_ops.get_seed(None)
    try:
        factory = _function.function_def_by_value(
            "_make_dataset_", [variant], _is_dataset_op,
            description="Factory function for a dataset.",
            attrs={"_disable_call_shape_inference": True},
        )  # fmt: skip
    except ValueError as e:
        raise ValueError(
            f"{e}: A likely cause of this error is that the dataset for which you are "
            "calling `make_one_shot_iterator()` captures a stateful object, such as a "
            "`tf.Variable` or `tf.lookup.StaticHashTable`, which is not supported. Use "
            "`make_initializable_iterator()` instead."
        ) from None
    factory.signature.is_stateful = True
    variant.graph._add_function(factory)
    with _ops.colocate_with(variant):
        attrs = {"dataset_factory": _function.func_attr(factory.signature.name),
                 "container": "", "shared_name": "", **dataset._flat_structure}  # fmt: skip
        resource = apply_op("OneShotIterator", [], attrs).outputs[0]
        resource._shape = TensorShape([])
        return Iterator(resource, None, dataset.element_spec)


def make_initializable_iterator(dataset: DatasetLike, shared_name: str | None = None) -> Iterator:
    """tf.compat.v1.data.make_initializable_iterator: IteratorV2, and MakeIterator as its
    `initializer` (run it before get_next; run it again to start over)."""
    variant = dataset._variant_tensor
    with _ops.colocate_with(variant):
        attrs = {"container": "", "shared_name": shared_name or "", **dataset._flat_structure}
        resource = apply_op("IteratorV2", [], attrs).outputs[0]
        resource._shape = TensorShape([])
        init = apply_op("MakeIterator", [variant, resource], {})
        return Iterator(resource, init, dataset.element_spec)


def get_output_types(dataset_or_iterator: Any) -> Any:
    return dataset_or_iterator.output_types


def get_output_shapes(dataset_or_iterator: Any) -> Any:
    return dataset_or_iterator.output_shapes


def get_output_classes(dataset_or_iterator: Any) -> Any:
    return dataset_or_iterator.output_classes
