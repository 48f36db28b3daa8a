"""Client, tf.data graph building: `tf.data.Dataset.from_generator` as TensorFlow 2.21 builds
it in tf.compat.v1 graph mode — from_tensors(0) flat-mapped over a function that makes a
GeneratorDataset whose three traced functions call numpy_function (PyFunc nodes):

  init_func      a fresh iterator id per pass (GeneratorState.get_next_id, given `args`)
  next_func      the next element of that id's generator; StopIteration ends the pass
                 (PyFunc fails with OutOfRange, which GeneratorDataset takes as the end)
  finalize_func  forgets the id's generator

The generator lives in this process: the PyFunc nodes run only on a task of this process
(script_ops). Only TensorSpec elements are supported (no ragged or sparse components).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from client.data import structure
from client.data.dataset_ops import Dataset, StructuredFunction, _flatten_up_to, _variant_op
from client.data.structure import TensorSpec
from client.framework import dtypes as _dtypes
from client.framework.op_builder import _numpy_value, convert_to_tensor
from client.framework.tensor_shape import TensorShape, as_shape
from client.ops import script_ops
from common.ops.py_func_ops import _convert


class GeneratorState:
    """The Python side of every pass over one generator (TF's Dataset._GeneratorState):
    an id per pass, its `args`, and its iterator once started. Thread-safe for ids."""

    def __init__(self, generator: Callable[..., Any]) -> None:
        self._generator = generator
        self._lock = threading.Lock()
        self._next_id = 0
        self._args: dict[int, tuple[Any, ...]] = {}
        self._iterators: dict[int, Iterator[Any]] = {}

    def get_next_id(self, *args: Any) -> np.ndarray:
        with self._lock:
            ret = self._next_id
            self._next_id += 1
        self._args[ret] = args
        return np.array(ret, dtype=np.int64)

    def get_iterator(self, iterator_id: Any) -> Iterator[Any]:
        key = int(iterator_id)
        try:
            return self._iterators[key]
        except KeyError:
            iterator = iter(self._generator(*self._args.pop(key)))
            self._iterators[key] = iterator
            return iterator

    def iterator_completed(self, iterator_id: Any) -> None:
        del self._iterators[int(iterator_id)]


def from_generator(
    generator: Callable[..., Any],
    output_types: Any = None,
    output_shapes: Any = None,
    args: Any = None,
    output_signature: Any = None,
    name: str | None = None,
) -> Dataset:
    """Dataset.from_generator: the elements `generator(*args)` yields, checked against
    `output_types` / `output_shapes` (or `output_signature`) as TensorFlow checks them."""
    if not callable(generator):
        raise TypeError("`generator` must be a Python callable.")
    types, shapes = _signature(output_types, output_shapes, output_signature)
    spec = structure.map_structure(lambda t, s: TensorSpec(s, t), types, shapes)
    arg_tensors = [convert_to_tensor(a, name=f"args_{i}") for i, a in enumerate(args or ())]
    state = GeneratorState(generator)
    fns = _GeneratorFunctions(state, arg_tensors, types, shapes)

    def flat_map_fn(dummy_arg: Any) -> Dataset:
        return _generator_dataset(dummy_arg, fns, spec)

    return Dataset.from_tensors(0).flat_map(flat_map_fn)


def _signature(output_types: Any, output_shapes: Any, output_signature: Any) -> tuple[Any, Any]:
    """(types, shapes) in the element's structure, validated as TF validates them."""
    if output_signature is not None:
        if output_types is not None:
            raise TypeError(
                "The `output_types` argument can not be used together with the "
                "`output_signature` argument."
            )
        if output_shapes is not None:
            raise TypeError(
                "The `output_shapes` argument can not be used together with the "
                "`output_signature` argument."
            )
        for s in structure.flatten(output_signature):
            if not isinstance(s, TensorSpec):
                raise TypeError(
                    "`output_signature` must contain objects that are subclass of "
                    f"`tf.TypeSpec` but found {type(s)} which is not."
                )
        types = structure.map_structure(lambda s: s.dtype, output_signature)
        shapes = structure.map_structure(lambda s: s.shape, output_signature)
        return types, shapes
    if output_types is None:
        raise TypeError(
            "To specify the output signature you need to provide either the "
            "`output_signature` argument or the `output_types` argument."
        )
    types = structure.map_structure(_dtypes.as_dtype, output_types)
    if output_shapes is None:
        shapes = structure.map_structure(lambda _: TensorShape(None), types)
    else:
        flat = _flatten_up_to(types, output_shapes)
        shapes = structure.pack_sequence_as(types, [as_shape(s) for s in flat])
    return types, shapes


class _GeneratorFunctions:
    """The bodies of GeneratorDataset's three functions over one GeneratorState."""

    def __init__(self, state: GeneratorState, args: list[Any], types: Any, shapes: Any) -> None:
        self.state, self.args = state, args
        self.types, self.shapes = types, shapes
        self.flat_types: list[_dtypes.DType] = structure.flatten(types)
        self.flat_shapes: list[TensorShape] = structure.flatten(shapes)
        # TF tests `output_types and output_shapes`: an unknown-rank TensorShape is false,
        # so a lone component of unknown shape takes the output_signature path
        # (EagerPyFunc, checked against TensorSpecs).
        self.typed = _truthy(types) and _truthy(shapes)
        self.signature = structure.map_structure(lambda t, s: TensorSpec(s, t), types, shapes)

    def get_iterator_id_fn(self, unused_dummy: Any) -> Any:
        return script_ops.numpy_function(self.state.get_next_id, self.args, _dtypes.int64)

    def generator_next_fn(self, iterator_id_t: Any) -> Any:
        if not self.typed:
            return script_ops.py_function(self._next_by_signature, [iterator_id_t], self.flat_types)
        flat = script_ops.numpy_function(self._next_arrays, [iterator_id_t], self.flat_types)
        for t, shape in zip(flat, self.flat_shapes):
            t.set_shape(shape)  # PyFunc's outputs have unknown shapes
        return structure.pack_sequence_as(self.types, flat)

    def finalize_fn(self, iterator_id_t: Any) -> Any:
        return script_ops.numpy_function(self._finalize, [iterator_id_t], _dtypes.int64)

    def _finalize(self, iterator_id: Any) -> np.ndarray:
        self.state.iterator_completed(iterator_id)
        return np.array(0, dtype=np.int64)  # a function must return something

    def _next_arrays(self, iterator_id: Any) -> list[np.ndarray]:
        """The next element as arrays, TF's checks and messages (TypeError is
        InvalidArgument; StopIteration from next() is OutOfRange, the end)."""
        values = next(self.state.get_iterator(iterator_id))
        try:
            flat = _flatten_up_to(self.types, values)
        except (TypeError, ValueError, KeyError) as e:
            raise TypeError(
                "`generator` yielded an element that did not match the expected "
                f"structure. The expected structure was {self.types}, but the yielded "
                f"element was {values}."
            ) from e
        arrays = []
        for value, dtype in zip(flat, self.flat_types):
            try:
                arrays.append(_convert(value, dtype=np.dtype(dtype.as_numpy_dtype)))
            except (TypeError, ValueError) as e:
                raise TypeError(
                    "`generator` yielded an element that could not be converted to the "
                    f"expected type. The expected type was {dtype.name}, but the yielded "
                    f"element was {value}."
                ) from e
        for array, shape in zip(arrays, self.flat_shapes):
            if not shape.is_compatible_with(array.shape):
                raise TypeError(
                    f"`generator` yielded an element of shape {array.shape} where an "
                    f"element of shape {shape} was expected."
                )
        return arrays

    def _next_by_signature(self, iterator_id: Any) -> list[np.ndarray]:
        """The next element checked against the TensorSpecs (TF's output_signature path,
        its messages)."""
        values = next(self.state.get_iterator(iterator_id))
        try:
            flat = _flatten_up_to(self.types, values)
            arrays = [_numpy_value(v, t, strict=True) for v, t in zip(flat, self.flat_types)]
        except (TypeError, ValueError, KeyError) as e:
            raise TypeError(
                "`generator` yielded an element that did not match the expected "
                f"structure. The expected structure was {self.signature}, but the yielded "
                f"element was {values}."
            ) from e
        got = structure.pack_sequence_as(
            self.types, [TensorSpec(a.shape, t) for a, t in zip(arrays, self.flat_types)]
        )
        if not all(
            s.is_compatible_with(g) for s, g in zip(self.flat_specs, structure.flatten(got))
        ):
            raise TypeError(
                f"`generator` yielded an element of {got} where an element of "
                f"{self.signature} was expected."
            )
        return arrays

    @property
    def flat_specs(self) -> list[TensorSpec]:
        return structure.flatten(self.signature)


def _truthy(value: Any) -> bool:
    """Python truth as TensorFlow's objects have it: a TensorShape is true when its rank is
    known, a DType always, a structure when not empty."""
    if isinstance(value, TensorShape):
        return value.ndims is not None
    if isinstance(value, (tuple, dict)):
        return bool(value)
    return True


def _generator_dataset(dummy_arg: Any, fns: _GeneratorFunctions, spec: Any) -> Dataset:
    """GeneratorDataset over `dummy_arg` (TF's _GeneratorDataset)."""
    init_spec = structure.spec_of(dummy_arg)
    init = StructuredFunction(fns.get_iterator_id_fn, "from_generator", init_spec)
    next_ = StructuredFunction(fns.generator_next_fn, "from_generator", init.output_spec)
    final = StructuredFunction(fns.finalize_fn, "from_generator", init.output_spec)
    attrs = {
        "init_func": init.func_attr,
        "next_func": next_.func_attr,
        "finalize_func": final.func_attr,
        "output_types": structure.flat_types(spec),
        "output_shapes": structure.flat_shapes(spec),
    }
    inputs = [[dummy_arg, *init.captured_inputs], next_.captured_inputs, final.captured_inputs]
    return Dataset(_variant_op("GeneratorDataset", inputs, attrs), spec)
