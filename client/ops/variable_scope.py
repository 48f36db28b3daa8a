"""Client, graph building: tf.compat.v1.variable_scope and get_variable with reuse.

Like TensorFlow's variable_scope.py: each graph has a variable store (full name ->
Variable) and a stack of VariableScopes; get_variable creates "<scope>/<name>" or, when
the scope reuses (True or AUTO_REUSE), returns the stored one. Variable names depend on
the variable scope only (the name scope is reset while a variable is created), ops
built in the scope go under a name scope of the same name, uniquified. Graph building:
not thread-safe.
"""

from __future__ import annotations

import contextlib
import enum
import inspect
from collections.abc import Iterator
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.op_builder import convert_to_tensor
from client.framework.tensor_shape import as_shape
from client.ops import (
    array_ops,
    init_ops,
    ref_variable,  # noqa: F401  (registers RefVariable with variables)
    resource_variables_toggle,
)
from client.ops import partitioned_variables as _pv
from client.ops.variables import SaveSliceInfo, Variable


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


class VariableScope:
    """The current variable-scope name, reuse mode and default initializer/dtype."""

    def __init__(
        self,
        reuse: Any,
        name: str = "",
        initializer: Any = None,
        dtype: Any = dtypes.float32,
        regularizer: Any = None,
        caching_device: Any = None,
        partitioner: Any = None,
        use_resource: Any = None,
    ) -> None:
        self.name = name
        self.use_resource = use_resource
        self.caching_device = caching_device
        self.partitioner = partitioner
        self.reuse = reuse
        self.initializer = initializer
        self.regularizer = regularizer
        self.dtype = dtypes.as_dtype(dtype)
        self.original_name_scope = name + "/" if name else ""

    def set_regularizer(self, regularizer: Any) -> None:
        self.regularizer = regularizer

    def set_caching_device(self, caching_device: Any) -> None:
        self.caching_device = caching_device

    def set_partitioner(self, partitioner: Any) -> None:
        self.partitioner = partitioner

    def set_use_resource(self, use_resource: Any) -> None:
        self.use_resource = use_resource

    def reuse_variables(self) -> None:
        self.reuse = True

    def set_initializer(self, initializer: Any) -> None:
        self.initializer = initializer

    def get_variable(
        self,
        name: str,
        shape: Any = None,
        dtype: Any = None,
        initializer: Any = None,
        trainable: Any = None,
        collections: Any = None,
        regularizer: Any = None,
        **kwargs: Any,
    ) -> Any:
        full_name = f"{self.name}/{name}" if self.name else name
        partitioner = kwargs.get("partitioner") or self.partitioner
        regularizer = regularizer or self.regularizer
        is_scalar = isinstance(shape, (list, tuple)) and not shape
        partitioned = _partitioned(_ops.get_default_graph())
        use_resource = kwargs.get("use_resource")
        use_resource = self.use_resource if use_resource is None else use_resource
        if partitioner is not None and not is_scalar:
            if not callable(partitioner):
                raise ValueError(f"Partitioner must be callable, but received: {partitioner}")
            return self._get_partitioned_variable(
                full_name, partitioner, shape, dtype, initializer, trainable, collections,
                regularizer, use_resource,
            )  # fmt: skip
        if self.reuse is True and full_name in partitioned:
            return self._get_partitioned_variable(
                full_name, None, shape, dtype, initializer, trainable, collections, regularizer,
                use_resource,
            )  # fmt: skip
        store = _store(_ops.get_default_graph())
        if f"{full_name}/part_0" in store:
            raise ValueError(
                "No partitioner was provided, but a partitioned version of the variable was "
                f"found: {full_name}/part_0. Perhaps a variable of the same name was already "
                "created with partitioning?"
            )
        found = store.get(full_name)
        if found is not None:
            self._check_reuse(full_name, shape, dtype, found)
            return found
        if self.reuse is True:
            raise ValueError(
                f"Variable {full_name} does not exist, or was not created with "
                "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in VarScope?"
            )
        return self._create(
            full_name, shape, dtype, initializer, trainable, collections, regularizer, None,
            use_resource,
        )  # fmt: skip

    def _check_reuse(self, full_name: str, shape: Any, dtype: Any, found: Any) -> None:
        if self.reuse is None or self.reuse is False:
            raise ValueError(
                f"Variable {full_name} already exists, disallowed. Did you mean to set "
                "reuse=True or reuse=tf.AUTO_REUSE in VarScope?"
            )
        if shape is not None and not as_shape(shape).is_compatible_with(found.shape):
            raise ValueError(
                f"Trying to share variable {full_name}, but specified shape {as_shape(shape)} "
                f"and found shape {found.shape}."
            )
        if dtype is not None and dtypes.as_dtype(dtype) != found.dtype.base_dtype:
            raise ValueError(
                f"Trying to share variable {full_name}, but specified dtype "
                f"{dtypes.as_dtype(dtype).name} and found dtype {found.dtype.name}."
            )

    def _create(
        self,
        full_name: str,
        shape: Any,
        dtype: Any,
        initializer: Any,
        trainable: Any,
        collections: Any,
        regularizer: Any,
        partition_info: Any = None,
        use_resource: Any = None,
    ) -> Variable:
        v = _new_variable(
            full_name,
            shape,
            dtypes.as_dtype(dtype or self.dtype),
            initializer if initializer is not None else self.initializer,
            trainable,
            collections,
            self.caching_device,
            partition_info,
            use_resource,
        )
        _store(_ops.get_default_graph())[full_name] = v
        if regularizer is not None:
            # TF's _VariableStore: the loss goes in "<variable>/Regularizer/".
            g = _ops.get_default_graph()
            with g.name_scope(None), g.name_scope(full_name + "/Regularizer/"):
                loss = regularizer(v)
            if loss is not None:
                g.add_to_collection(_ops.GraphKeys.REGULARIZATION_LOSSES, loss)
        return v

    def _get_partitioned_variable(
        self,
        full_name: str,
        partitioner: Any,
        shape: Any,
        dtype: Any,
        initializer: Any,
        trainable: Any,
        collections: Any,
        regularizer: Any,
        use_resource: Any = None,
    ) -> _pv.PartitionedVariable:
        """TF's _VariableStore._get_partitioned_variable: the stored PartitionedVariable
        (reuse), or one variable "<name>/part_<i>" per shard, each its slice of the whole."""
        g = _ops.get_default_graph()
        if full_name in _store(g):
            raise ValueError(
                "A partitioner was provided, but an unpartitioned version of the variable "
                f"was found: {full_name}.  Perhaps a variable of the same name was already "
                "created without partitioning?"
            )
        dtype = dtypes.as_dtype(dtype or self.dtype)
        initializer = initializer if initializer is not None else self.initializer
        shape = as_shape(shape)
        if isinstance(initializer, _ops.Tensor):
            shape = shape.merge_with(initializer.shape)
        partitions = None
        if not self.reuse or partitioner:
            partitions = _pv.call_partitioner(partitioner, shape, dtype)
        existing = _partitioned(g).get(full_name)
        if existing is not None:
            _check_partitioned_reuse(self.reuse, existing, shape, dtype, partitions)
            return existing
        if self.reuse is True:
            raise ValueError(
                f"PartitionedVariable {full_name} does not exist, or was not created with "
                "tf.get_variable(). Did you mean to set reuse=False or reuse=tf.AUTO_REUSE "
                "in VarScope?"
            )
        assert partitions is not None  # reuse is not True, so the partitioner was called
        slice_dim, num_slices = _pv.slice_dim_and_num_slices(partitions)
        full_shape = _pv.fully_defined_dims(shape)
        shards = []
        for i, (offset, var_shape) in enumerate(_pv.iter_slices(full_shape, num_slices, slice_dim)):
            part_name = f"{full_name}/part_{i}"
            with g.name_scope(None), g.name_scope(part_name + "/PartitionedInitializer"):
                init, init_shape, part_dtype = _shard_initializer(
                    initializer, offset, var_shape, dtype
                )
            v = self._create(
                part_name,
                init_shape,
                part_dtype,
                init,
                trainable,
                collections,
                regularizer,
                _pv.PartitionInfo(full_shape, offset),
                use_resource,
            )
            v._set_save_slice_info(
                SaveSliceInfo(full_name, tuple(full_shape), tuple(offset), tuple(var_shape))
            )
            shards.append(v)
        partitioned = _pv.PartitionedVariable(full_name, shape, dtype, shards, partitions)
        _partitioned(g)[full_name] = partitioned
        return partitioned


def _check_partitioned_reuse(
    reuse: Any, existing: _pv.PartitionedVariable, shape: Any, dtype: Any, partitions: Any
) -> None:
    name = existing.name
    if reuse is None or reuse is False:
        raise ValueError(
            f"Partitioned variable with name {name} already exists. Did you mean to set "
            "reuse=True or reuse=tf.AUTO_REUSE in VarScope?"
        )
    if not shape.is_compatible_with(existing.get_shape()):
        raise ValueError(
            f"Trying to reuse partitioned variable {name}, but specified shape {shape} and "
            f"found shape {existing.get_shape()}."
        )
    if dtype != existing.dtype:
        raise ValueError(
            f"Trying to reuse partitioned variable {name}, but specified dtype {dtype.name} "
            f"and found dtype {existing.dtype.name}."
        )
    if partitions is not None and existing._get_partitions() != partitions:
        raise ValueError(
            f"Trying to reuse partitioned variable {name}, but specified partitions "
            f"{partitions} and found partitions {existing._get_partitions()}."
        )


def _shard_initializer(
    initializer: Any, offset: list[int], var_shape: list[int], dtype: Any
) -> tuple[Any, Any, Any]:
    """(initializer, shape, dtype) of one shard: a callable (or the default, None) is
    called with the shard's shape; a value is sliced to the shard."""
    if initializer is None or callable(initializer):
        return initializer, var_shape, dtype
    if isinstance(initializer, _ops.Tensor):
        init = array_ops.slice(initializer, offset, var_shape)
        return init, None, init.dtype.base_dtype
    init = convert_to_tensor(initializer, dtype=dtype)
    return array_ops.slice(init, offset, var_shape), None, dtype


def _new_variable(
    full_name: str,
    shape: Any,
    dtype: Any,
    initializer: Any,
    trainable: Any,
    collections: Any,
    caching_device: Any = None,
    partition_info: Any = None,
    use_resource: Any = None,
) -> Any:
    if initializer is None:
        initializer = (
            init_ops.glorot_uniform_initializer()
            if dtype.is_floating
            else init_ops.zeros_initializer()
        )
    g = _ops.get_default_graph()
    if callable(initializer):
        if shape is None:
            raise ValueError(
                f"Shape of a new variable ({full_name}) must be fully defined, but instead "
                "was None."
            )
        dims = as_shape(shape).as_list()

        def init_value() -> Any:
            if partition_info is not None and _takes_partition_info(initializer):
                return initializer(dims, dtype=dtype, partition_info=partition_info)
            return initializer(dims, dtype=dtype)

        init, init_dtype = init_value, None
    else:
        init, init_dtype = initializer, dtype
    with g.name_scope(None):
        return Variable(
            init,
            name=full_name,
            dtype=init_dtype,
            trainable=trainable,
            collections=collections,
            caching_device=caching_device,
            use_resource=use_resource,
        )


def _takes_partition_info(initializer: Any) -> bool:
    try:
        return "partition_info" in inspect.signature(initializer).parameters
    except (TypeError, ValueError):
        return False


def _store(g: _ops.Graph) -> dict[str, Any]:
    return g._variable_store


def _partitioned(g: _ops.Graph) -> dict[str, _pv.PartitionedVariable]:
    """The graph's PartitionedVariables by name (TF's _VariableStore._partitioned_vars)."""
    return g.__dict__.setdefault("_partitioned_variable_store", {})


def _scope_stack(g: _ops.Graph) -> list[VariableScope]:
    if not g._variable_scope_stack:
        g._variable_scope_stack.append(VariableScope(None))
    return g._variable_scope_stack


def get_variable_scope() -> VariableScope:
    return _scope_stack(_ops.get_default_graph())[-1]


def get_variable(
    name: str,
    shape: Any = None,
    dtype: Any = None,
    initializer: Any = None,
    regularizer: Any = None,
    trainable: Any = None,
    collections: Any = None,
    **kwargs: Any,
) -> Any:
    """tf.compat.v1.get_variable: "<variable scope>/<name>", created or reused; with a
    partitioner (its own or the scope's), a PartitionedVariable."""
    return get_variable_scope().get_variable(
        name,
        shape,
        dtype,
        initializer,
        trainable,
        collections,
        regularizer,
        partitioner=kwargs.get("partitioner"),
        use_resource=kwargs.get("use_resource"),
    )


def _unique_scope_name(g: _ops.Graph, prefix: str) -> str:
    counts: dict[str, int] = g.__dict__.setdefault("_variable_scope_counts", {})
    name, i = prefix, counts.get(prefix, 0)
    if i:
        name = f"{prefix}_{i}"
    counts[prefix] = i + 1
    return name


@contextlib.contextmanager
def variable_scope(
    name_or_scope: Any,
    default_name: str | None = None,
    values: Any = None,
    initializer: Any = None,
    regularizer: Any = None,
    reuse: Any = None,
    dtype: Any = None,
    auxiliary_name_scope: bool = True,
    **kwargs: Any,
) -> Iterator[VariableScope]:
    """tf.compat.v1.variable_scope: reuse is inherited (True and AUTO_REUSE stay on).
    Entering a VariableScope object opens the name scope of its last component under the
    current one, as TF does; auxiliary_name_scope=False opens none."""
    if name_or_scope is None and default_name is None:
        raise TypeError("If default_name is None then name_or_scope is required")
    g = _ops.get_default_graph()
    stack = _scope_stack(g)
    outer = stack[-1]
    if isinstance(name_or_scope, VariableScope):
        full, name_scope = name_or_scope.name, name_or_scope.name.rsplit("/", 1)[-1]
        reuse = reuse or name_or_scope.reuse
        base = name_or_scope
    else:
        if name_or_scope is None:
            assert default_name is not None  # the TypeError above
            prefix = f"{outer.name}/{default_name}" if outer.name else default_name
            full = _unique_scope_name(g, prefix)
            short = full.rsplit("/", 1)[-1]
        else:
            short = name_or_scope
            full = f"{outer.name}/{short}" if outer.name else short
            _unique_scope_name(g, full)
        name_scope = short
        base = outer
        if not reuse:
            reuse = outer.reuse or reuse
    if name_or_scope is not None:
        # TF's close_variable_subscopes: re-entering a named scope restarts the numbering
        # of the default-named scopes under it ("discriminator/dense" again on reuse).
        counts = g.__dict__.setdefault("_variable_scope_counts", {})
        for key in counts:
            if key.startswith(full + "/"):
                counts[key] = 0
    scope = VariableScope(
        reuse,
        full,
        initializer if initializer is not None else base.initializer,
        dtype if dtype is not None else base.dtype,
        regularizer if regularizer is not None else base.regularizer,
        kwargs.get("caching_device") or base.caching_device,
        kwargs["partitioner"] if kwargs.get("partitioner") is not None else base.partitioner,
        kwargs["use_resource"] if kwargs.get("use_resource") is not None else base.use_resource,
    )
    if not auxiliary_name_scope or (not name_scope and isinstance(name_or_scope, VariableScope)):
        scope.original_name_scope = (
            name_or_scope.original_name_scope
            if isinstance(name_or_scope, VariableScope)
            else (g.get_name_scope() + "/" if g.get_name_scope() else "")
        )
        stack.append(scope)
        try:
            yield scope
        finally:
            stack.pop()
        return
    with _ops.name_scope(name_scope) as ns:
        scope.original_name_scope = (
            name_or_scope.original_name_scope if isinstance(name_or_scope, VariableScope) else ns
        )
        stack.append(scope)
        try:
            yield scope
        finally:
            stack.pop()


def create_partitioned_variables(
    shape: Any,
    slicing: Any,
    initializer: Any,
    dtype: Any = dtypes.float32,
    trainable: bool = True,
    collections: Any = None,
    name: str | None = None,
    reuse: Any = None,
) -> list[Variable]:
    """tf.compat.v1.create_partitioned_variables (TF1's older API): the shards of a
    variable cut by `slicing` as given, named after the variable scope `name` (default
    "PartitionedVariable"): "<scope>/part_<i>"."""
    if len(shape) != len(slicing):
        raise ValueError(
            "The 'shape' and 'slicing' of a partitioned Variable must have the length: "
            f"shape: {shape}, slicing: {slicing}"
        )
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")
    with variable_scope(name, "PartitionedVariable", reuse=reuse) as scope:
        partitioned = scope._get_partitioned_variable(
            scope.name,
            lambda **unused: slicing,
            shape,
            dtype,
            initializer,
            trainable,
            collections,
            None,
        )
    return list(partitioned)


resource_variables_toggle.set_scope_lookup(lambda: get_variable_scope().use_resource)
