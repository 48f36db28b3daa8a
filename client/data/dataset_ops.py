"""Client, tf.data graph building: `tf.data.Dataset` as TensorFlow's tf.compat.v1 graph mode
builds it — each method adds the dataset op TensorFlow adds (TensorSliceDataset, MapDataset,
ShuffleDataset, BatchDatasetV2 ...), with its argument Consts named as TF names them
("batch_size", "count", "seed" ...) and its output_types / output_shapes attrs, so the
runtime (common/ops/data/) runs it and a GraphDef reads as TensorFlow's.

Functions given to map / filter / flat_map are traced into FunctionDefs
(client.framework.function): the element's components are the arguments (a tuple element
is unpacked into positional arguments, anything else is passed whole, as TF's
StructuredFunctionWrapper), captured outer tensors are passed as `other_arguments`.

A Dataset is an immutable value over one graph; building is not thread-safe (as TF).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from client.data import iterator_ops, structure, tensor_list
from client.data.structure import SparseTensorSpec, TensorSpec
from client.framework import dtypes as _dtypes
from client.framework import function as _function
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.sparse_tensor import SparseTensor, SparseTensorValue
from client.framework.tensor_shape import TensorShape

AUTOTUNE = -1
INFINITE = -1
UNKNOWN = -2
_MAXINT32 = 2**31 - 1
_DEFAULT_GRAPH_SEED = 87654321
_uids = itertools.count(1)


def _int64(value: Any, name: str) -> _ops.Tensor:
    return convert_to_tensor(value, dtype=_dtypes.int64, name=name)


def _variant_op(op_type: str, inputs: list[Any], attrs: dict[str, Any]) -> _ops.Tensor:
    out = apply_op(op_type, inputs, attrs).outputs[0]
    out._shape = TensorShape([])
    return out


def _spec_attrs(element_spec: Any) -> dict[str, Any]:
    return {
        "output_types": structure.flat_types(element_spec),
        "output_shapes": structure.flat_shapes(element_spec),
    }


# -- seeds (TF's data/util/random_seed.get_seed) -------------------------------------------
def _op_seeds(op_seed: Any) -> tuple[int | None, int | None]:
    """TF's random_seed.get_seed: the graph seed and op seed, None for none."""
    from client.ops import random_ops

    g = _ops.get_default_graph()
    if g.seed is None and op_seed is None:
        return None, None
    return random_ops.get_seed(op_seed)


def _seed_tensors(op_seed: Any) -> tuple[_ops.Tensor, _ops.Tensor]:
    """The (seed, seed2) int64 inputs of a random dataset op, as TF builds them."""
    from client.ops import array_ops, math_ops

    seed, seed2 = _op_seeds(op_seed)
    seed_t = _int64(0 if seed is None else seed, "seed")
    if seed2 is None:
        return seed_t, _int64(0, "seed2")
    with _ops.name_scope("seed2") as scope:
        s2 = _int64(seed2, "Const")
        both_zero = math_ops.logical_and(math_ops.equal(seed_t, 0), math_ops.equal(s2, 0))
        seed2_t = array_ops.where_v2(both_zero, _int64(_MAXINT32, "Const"), s2, name=scope)
    return seed_t, seed2_t


# -- functions ------------------------------------------------------------------------------
def _func_name(transformation: str, fn: Callable[..., Any]) -> str:
    base = getattr(fn, "__name__", type(fn).__name__)
    for symbol in "<>\\' ":
        base = base.replace(symbol, "")
    return f"__inference_Dataset_{transformation}_{base}_{next(_uids)}"


class StructuredFunction:
    """A Python function over elements of `input_spec`, traced (TF's
    StructuredFunctionWrapper): `output_spec` is the structure it returns."""

    def __init__(
        self,
        fn: Callable[..., Any],
        transformation: str,
        input_spec: Any,
        want_dataset: bool = False,
    ) -> None:
        self.output_spec: Any = None
        self.output_dataset: Dataset | None = None
        specs = [structure.component_spec(s) for s in structure.flatten(input_spec)]

        def body(args: list[_ops.Tensor]) -> list[Any]:
            for a, s in zip(args, specs):
                a.set_shape(s.shape)
            nested = tensor_list.from_compatible_tensor_list(input_spec, args)
            ret = fn(*nested) if type(nested) is tuple else fn(nested)
            if want_dataset:
                if not isinstance(ret, Dataset):
                    raise TypeError(
                        f"The function passed to `{transformation}()` must return a "
                        f"`tf.data.Dataset` object, got {type(ret).__name__}."
                    )
                self.output_dataset = ret
                self.output_spec = ret.element_spec
                return [ret._variant_tensor]
            if isinstance(ret, list):
                ret = tuple(ret)
            flat = [
                r if isinstance(r, SparseTensor) else convert_to_tensor(r)
                for r in structure.flatten(ret)
            ]
            self.output_spec = structure.pack_sequence_as(ret, [structure.spec_of(t) for t in flat])
            return tensor_list.to_tensor_list(self.output_spec, flat)

        self.traced = _function.trace_function(
            _func_name(transformation, fn),
            [(s.dtype, s.shape) for s in specs],
            body,
            attrs={"_tf_data_function": True},
        )
        if not want_dataset:
            shapes = iter(self.traced.output_shapes)
            self.output_spec = structure.map_structure(self._traced_spec(shapes), self.output_spec)

    @staticmethod
    def _traced_spec(shapes: Iterator[TensorShape]) -> Callable[[Any], Any]:
        """A returned component's spec with the shape tracing found (a SparseTensor's
        variant tells nothing of its dense shape: its spec stays)."""

        def spec(s: Any) -> Any:
            shape = next(shapes)
            return s if isinstance(s, SparseTensorSpec) else TensorSpec(shape, s.dtype)

        return spec

    @property
    def func_attr(self) -> Any:
        return _function.func_attr(self.traced.name, {"_tf_data_function": True})

    @property
    def captured_inputs(self) -> list[_ops.Tensor]:
        return self.traced.captured_inputs


# -- Dataset --------------------------------------------------------------------------------
class Dataset(structure.HasElementSpec):
    """A sequence of elements built in a graph (tf.compat.v1.data.Dataset): a DT_VARIANT
    tensor and the structure of its elements."""

    def __init__(self, variant_tensor: _ops.Tensor, element_spec: Any) -> None:
        self._variant_tensor = variant_tensor
        self._element_spec = element_spec

    @property
    def _flat_structure(self) -> dict[str, Any]:
        return _spec_attrs(self._element_spec)

    @property
    def graph(self) -> _ops.Graph:
        return self._variant_tensor.graph

    def __repr__(self) -> str:
        return f"<{type(self).__name__} element_spec={self._element_spec}>"

    # -- sources ---------------------------------------------------------------------
    @staticmethod
    def from_tensors(tensors: Any, name: str | None = None) -> Dataset:
        """One element: `tensors` (TensorDataset)."""
        flat = _normalize_element(tensors)
        spec = structure.pack_sequence_as(tensors, [structure.spec_of(t) for t in flat])
        attrs = {"output_shapes": structure.flat_shapes(spec)}
        components = tensor_list.to_tensor_list(spec, flat)
        return Dataset(_variant_op("TensorDataset", [components], attrs), spec)

    @staticmethod
    def from_tensor_slices(tensors: Any, name: str | None = None) -> Dataset:
        """One element per row of the components (TensorSliceDataset)."""
        flat = _normalize_element(tensors)
        rows = None
        for t in flat:
            if t.shape.ndims == 0:
                raise ValueError(f"Unbatching a tensor is only supported for rank >= 1: {t!r}")
            n = t.shape[0] if t.shape.ndims else None
            if rows is not None and n is not None and n != rows:
                raise ValueError(
                    "Dimensions of the components differ: all components must have the same "
                    f"size in their first dimension ({rows} vs {n})."
                )
            rows = rows if n is None else n
        batched = structure.pack_sequence_as(tensors, [structure.spec_of(t) for t in flat])
        spec = structure.map_structure(structure.unbatched, batched)
        components = tensor_list.to_batched_tensor_list(batched, flat)
        attrs = {"output_shapes": structure.flat_shapes(spec)}
        return Dataset(_variant_op("TensorSliceDataset", [components], attrs), spec)

    # Dataset.from_generator(generator, output_types, output_shapes, args,
    # output_signature, name) builds on this class: client/data/__init__.py sets it from
    # client/data/from_generator.py.
    from_generator: Callable[..., Dataset]

    @staticmethod
    def range(*args: Any, output_type: Any = _dtypes.int64, name: str | None = None) -> Dataset:
        """range(stop), range(start, stop[, step]) as int64 scalars (RangeDataset)."""
        if not 1 <= len(args) <= 3:
            raise ValueError(f"Invalid `args`: must be 1, 2 or 3 values, got {len(args)}.")
        start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
        inputs = [_int64(start, "start"), _int64(stop, "stop"), _int64(step, "step")]
        dtype = _dtypes.as_dtype(output_type)
        spec = TensorSpec([], dtype)
        return Dataset(_variant_op("RangeDataset", inputs, _spec_attrs(spec)), spec)

    @staticmethod
    def zip(*args: Any, datasets: Any = None, name: str | None = None) -> Dataset:
        """Elements of several datasets side by side (ZipDataset)."""
        if datasets is None:
            datasets = args[0] if len(args) == 1 else tuple(args)
        flat = structure.flatten(datasets)
        for d in flat:
            if not isinstance(d, Dataset):
                raise TypeError(f"Invalid `datasets`: expected datasets, got {d!r}.")
        spec = structure.map_structure(lambda d: d.element_spec, datasets)
        inputs = [d._variant_tensor for d in flat]
        return Dataset(_variant_op("ZipDataset", [inputs], _spec_attrs(spec)), spec)

    # -- transformations -------------------------------------------------------------
    def _unary(self, op_type: str, inputs: list[Any], spec: Any = None, **attrs: Any) -> Dataset:
        spec = self._element_spec if spec is None else spec
        attrs.update(_spec_attrs(spec))
        return Dataset(_variant_op(op_type, [self._variant_tensor, *inputs], attrs), spec)

    def repeat(self, count: Any = None, name: str | None = None) -> Dataset:
        return self._unary("RepeatDataset", [_int64(-1 if count is None else count, "count")])

    def take(self, count: Any, name: str | None = None) -> Dataset:
        return self._unary("TakeDataset", [_int64(count, "count")])

    def skip(self, count: Any, name: str | None = None) -> Dataset:
        return self._unary("SkipDataset", [_int64(count, "count")])

    def cache(self, filename: Any = "", name: str | None = None) -> Dataset:
        f = convert_to_tensor(filename, dtype=_dtypes.string, name="filename")
        return self._unary("CacheDataset", [f])

    def prefetch(self, buffer_size: Any, name: str | None = None) -> Dataset:
        size = _int64(AUTOTUNE if buffer_size is None else buffer_size, "buffer_size")
        with _ops.colocate_with(self._variant_tensor):
            return self._unary(
                "PrefetchDataset", [size], legacy_autotune=buffer_size in (None, AUTOTUNE)
            )

    def shuffle(
        self,
        buffer_size: Any,
        seed: Any = None,
        reshuffle_each_iteration: bool | None = None,
        name: str | None = None,
    ) -> Dataset:
        """ShuffleDataset, seeded as TensorFlow seeds it (graph seed + op seed)."""
        size = _int64(buffer_size, "buffer_size")
        seed_t, seed2_t = _seed_tensors(seed)
        reshuffle = True if reshuffle_each_iteration is None else bool(reshuffle_each_iteration)
        return self._unary(
            "ShuffleDataset", [size, seed_t, seed2_t], reshuffle_each_iteration=reshuffle
        )

    def batch(
        self,
        batch_size: Any,
        drop_remainder: Any = False,
        num_parallel_calls: Any = None,
        deterministic: Any = None,
        name: str | None = None,
    ) -> Dataset:
        """BatchDatasetV2: a leading dim of batch_size if drop_remainder, else None."""
        size = _int64(batch_size, "batch_size")
        drop = convert_to_tensor(drop_remainder, dtype=_dtypes.bool, name="drop_remainder")
        lead = _static_batch(size, drop)
        spec = structure.map_structure(lambda s: structure.batched(s, lead), self._element_spec)
        return self._unary("BatchDatasetV2", [size, drop], spec, parallel_copy=False)

    def padded_batch(
        self,
        batch_size: Any,
        padded_shapes: Any = None,
        padding_values: Any = None,
        drop_remainder: Any = False,
        name: str | None = None,
    ) -> Dataset:
        """PaddedBatchDatasetV2: components padded to `padded_shapes` (default: each
        component's largest in the batch), with `padding_values` (default zeros / b"")."""
        specs = structure.flatten(self._element_spec)
        if any(isinstance(s, SparseTensorSpec) for s in specs):
            raise TypeError(
                "`padded_batch` is only supported for datasets that produce tensor elements "
                f"but type spec of elements in the input dataset is not a subclass of "
                f"TensorSpec: `{self._element_spec}`."
            )
        size = _int64(batch_size, "batch_size")
        if padded_shapes is None:
            padded = [s.shape for s in specs]
        else:
            padded = [TensorShape(p) for p in _flatten_up_to(self._element_spec, padded_shapes)]
        for s, p in zip(specs, padded):
            if p.ndims is None:
                raise ValueError(f"Padded shapes need a known rank, got {p} for {s}.")
        shape_ts = [_int64([-1 if d is None else d for d in p.as_list()], "Const") for p in padded]
        if padding_values is None:
            values = [_default_padding(s.dtype) for s in specs]
        else:
            values = _flatten_up_to(self._element_spec, padding_values)
        value_ts = [
            convert_to_tensor(v, dtype=s.dtype, name="padding_value") for v, s in zip(values, specs)
        ]
        drop = convert_to_tensor(drop_remainder, dtype=_dtypes.bool, name="drop_remainder")
        lead = _static_batch(size, drop)
        flat_spec = [
            TensorSpec(TensorShape([lead]).concatenate(p), s.dtype) for p, s in zip(padded, specs)
        ]
        spec = structure.pack_sequence_as(self._element_spec, flat_spec)
        attrs = {"output_shapes": [s.shape for s in flat_spec], "parallel_copy": False}
        variant = _variant_op(
            "PaddedBatchDatasetV2", [self._variant_tensor, size, shape_ts, value_ts, drop], attrs
        )
        return Dataset(variant, spec)

    def concatenate(self, dataset: Dataset, name: str | None = None) -> Dataset:
        """ConcatenateDataset: this dataset's elements, then `dataset`'s (same types)."""
        structure.assert_same_structure(self._element_spec, dataset.element_spec)
        for a, b in zip(
            structure.flatten(self._element_spec), structure.flatten(dataset.element_spec)
        ):
            if a.dtype != b.dtype:
                raise TypeError(
                    f"Incompatible dataset elements: {self._element_spec} vs. "
                    f"{dataset.element_spec}."
                )
        spec = structure.map_structure(
            lambda a, b: structure.with_shape(
                a, structure.most_specific_compatible_shape(a.shape, b.shape)),
            self._element_spec,
            dataset.element_spec,
        )  # fmt: skip
        return self._unary("ConcatenateDataset", [dataset._variant_tensor], spec)

    def map(
        self,
        map_func: Callable[..., Any],
        num_parallel_calls: Any = None,
        deterministic: Any = None,
        name: str | None = None,
    ) -> Dataset:
        """MapDataset (ParallelMapDatasetV2 with num_parallel_calls) over traced `map_func`."""
        fn = StructuredFunction(map_func, "map", self._element_spec)
        attrs: dict[str, Any] = {
            "f": fn.func_attr,
            "use_inter_op_parallelism": True,
            "preserve_cardinality": False,
        }
        captured = fn.captured_inputs
        if num_parallel_calls is None:
            return self._unary("MapDataset", [captured], fn.output_spec, **attrs)
        n = _int64(num_parallel_calls, "num_parallel_calls")
        det = "default" if deterministic is None else ("true" if deterministic else "false")
        return self._unary(
            "ParallelMapDatasetV2", [captured, n], fn.output_spec, deterministic=det, **attrs
        )

    def filter(self, predicate: Callable[..., Any], name: str | None = None) -> Dataset:
        """FilterDataset: the elements for which traced `predicate` is a True scalar."""
        fn = StructuredFunction(predicate, "filter", self._element_spec)
        out = structure.flatten(fn.output_spec)
        if len(out) != 1 or out[0].dtype != _dtypes.bool or out[0].shape.ndims not in (0, None):
            raise ValueError(
                "Invalid `predicate`. `predicate` must return a `tf.bool` scalar tensor, but "
                f"its return type is {fn.output_spec}."
            )
        return self._unary("FilterDataset", [fn.captured_inputs], predicate=fn.func_attr)

    def flat_map(self, map_func: Callable[..., Any], name: str | None = None) -> Dataset:
        """FlatMapDataset: the elements of the datasets traced `map_func` returns."""
        fn = StructuredFunction(map_func, "flat_map", self._element_spec, want_dataset=True)
        return self._unary("FlatMapDataset", [fn.captured_inputs], fn.output_spec, f=fn.func_attr)

    def interleave(
        self,
        map_func: Callable[..., Any],
        cycle_length: Any = None,
        block_length: Any = None,
        num_parallel_calls: Any = None,
        deterministic: Any = None,
        name: str | None = None,
    ) -> Dataset:
        """(Parallel)InterleaveDataset: the datasets traced `map_func` returns, cycled
        `cycle_length` at a time (AUTOTUNE when None), `block_length` (1) in a row."""
        fn = StructuredFunction(map_func, "interleave", self._element_spec, want_dataset=True)
        counts = [
            _int64(AUTOTUNE if cycle_length is None else cycle_length, "cycle_length"),
            _int64(1 if block_length is None else block_length, "block_length"),
        ]
        if num_parallel_calls is None:
            inputs = [fn.captured_inputs, *counts]
            return self._unary("InterleaveDataset", inputs, fn.output_spec, f=fn.func_attr)
        counts += [
            _int64(AUTOTUNE, "buffer_output_elements"),
            _int64(AUTOTUNE, "prefetch_input_elements"),
            _int64(num_parallel_calls, "num_parallel_calls"),
        ]
        order = "default" if deterministic is None else ("true" if deterministic else "false")
        return self._unary(
            "ParallelInterleaveDatasetV4",
            [fn.captured_inputs, *counts],
            fn.output_spec,
            f=fn.func_attr,
            deterministic=order,
        )

    def unbatch(self, name: str | None = None) -> Dataset:
        """UnbatchDataset: each element split into the rows of its first dimension."""
        element_spec = self._element_spec

        # TF's normalize_to_dense: a MapDataset whose function makes each element its
        # batched tensor list (a SparseTensor as SerializeManySparse's [N, 3] variant,
        # the rows UnbatchDataset splits; dense components pass through).
        def normalize(*args: Any) -> Any:
            flat = structure.flatten(args)
            return tuple(tensor_list.to_batched_tensor_list(element_spec, flat))

        normalized = self.map(normalize)
        # TF checks the flat components (a SparseTensor's variant has unknown shape).
        shapes = [structure.component_spec(s).shape for s in structure.flatten(element_spec)]
        if any(shape.ndims == 0 for shape in shapes):
            raise ValueError("Cannot unbatch an input with scalar components.")
        known = None
        for shape in shapes:
            lead = shape.as_list()[0] if shape.ndims is not None else None
            if known is not None and lead is not None and lead != known:
                raise ValueError(
                    "`unbatch()` is only supported for datasets of elements whose "
                    "components have a matching leading dimension. Encountered both "
                    f"{known} and {lead}."
                )
            known = lead if known is None else known
        spec = structure.map_structure(structure.unbatched, element_spec)
        return normalized._unary("UnbatchDataset", [], spec)

    def apply(self, transformation_func: Callable[[Dataset], Dataset]) -> Dataset:
        out = transformation_func(self)
        if not isinstance(out, Dataset):
            raise TypeError("`transformation_func` must return a `tf.data.Dataset` object.")
        return out

    # -- iterators (TF1) ---------------------------------------------------------------
    def make_one_shot_iterator(self) -> Any:
        return iterator_ops.make_one_shot_iterator(self)

    def make_initializable_iterator(self, shared_name: str | None = None) -> Any:
        return iterator_ops.make_initializable_iterator(self, shared_name)


DatasetV1 = Dataset


def _normalize_element(element: Any) -> list[Any]:
    """The components as tensors, Consts named normalize_element/component_<i>, and
    SparseTensors (a SparseTensorValue made one) (TF's structure.normalize_element)."""
    with _ops.name_scope("normalize_element"):
        return [_component(c, i) for i, c in enumerate(structure.flatten(element))]


def _component(value: Any, i: int) -> Any:
    if isinstance(value, SparseTensor):
        return value
    if isinstance(value, SparseTensorValue):
        return SparseTensor(value.indices, value.values, value.dense_shape)
    return convert_to_tensor(value, name=f"component_{i}")


def _static_batch(size: _ops.Tensor, drop: _ops.Tensor) -> int | None:
    """The static leading dim of a batch: batch_size when both are constants and
    drop_remainder is True, else None (TF's tensor_util.constant_value rule)."""
    b, d = size.op._constant_value, drop.op._constant_value
    if b is None or d is None or not bool(np.asarray(d)):
        return None
    return int(np.asarray(b))


def _default_padding(dtype: _dtypes.DType) -> Any:
    if dtype == _dtypes.string:
        return b""
    return np.zeros((), dtype.as_numpy_dtype)


def _flatten_up_to(spec: Any, values: Any) -> list[Any]:
    """`values` per component of `spec`, recursing only as deep as `spec` nests (so a
    shape given as a tuple or list is one value), as TF's nest.flatten_up_to."""
    if isinstance(spec, dict):
        return [x for k in sorted(spec) for x in _flatten_up_to(spec[k], values[k])]
    if isinstance(spec, tuple):
        if not isinstance(values, (tuple, list)) or len(values) != len(spec):
            raise ValueError(f"{values!r} does not match the structure of {spec}.")
        return [x for sv, v in zip(spec, values) for x in _flatten_up_to(sv, v)]
    return [values]
