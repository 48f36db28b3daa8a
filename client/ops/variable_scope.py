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
from collections.abc import Iterator
from typing import Any

from client.framework import dtypes
from client.framework import ops as _ops
from client.framework.tensor_shape import as_shape
from client.ops import init_ops
from client.ops.variables import Variable


class _ReuseMode(enum.Enum):
    AUTO_REUSE = 1


AUTO_REUSE = _ReuseMode.AUTO_REUSE


def _refuse_partitioner(partitioner: Any, where: str) -> None:
    """Partitioned variables are not built: a partitioner is refused rather than ignored
    (the variable would silently be one unsharded table)."""
    if partitioner is not None:
        raise NotImplementedError(
            f"{where}(partitioner=...): partitioned variables (PartitionedVariable, "
            "part_0, part_1, ...) are not supported by this client; create the shards as "
            "separate variables and pass the list to tf.nn.embedding_lookup, which takes "
            "sharded tables ('mod' or 'div')"
        )


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
    ) -> None:
        self.name = name
        self.caching_device = caching_device
        self.reuse = reuse
        self.initializer = initializer
        self.regularizer = regularizer
        self.dtype = dtypes.as_dtype(dtype)
        self.original_name_scope = name + "/" if name else ""

    def set_regularizer(self, regularizer: Any) -> None:
        self.regularizer = regularizer

    def set_caching_device(self, caching_device: Any) -> None:
        self.caching_device = caching_device

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
        _refuse_partitioner(kwargs.get("partitioner"), "get_variable")
        full_name = f"{self.name}/{name}" if self.name else name
        store = _store(_ops.get_default_graph())
        found = store.get(full_name)
        if found is not None:
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
            if dtype is not None and dtypes.as_dtype(dtype) != found.dtype:
                raise ValueError(
                    f"Trying to share variable {full_name}, but specified dtype "
                    f"{dtypes.as_dtype(dtype).name} and found dtype {found.dtype.name}."
                )
            return found
        if self.reuse is True:
            raise ValueError(
                f"Variable {full_name} does not exist, or was not created with "
                "tf.get_variable(). Did you mean to set reuse=tf.AUTO_REUSE in VarScope?"
            )
        v = _new_variable(
            full_name,
            shape,
            dtypes.as_dtype(dtype or self.dtype),
            initializer if initializer is not None else self.initializer,
            trainable,
            collections,
            self.caching_device,
        )
        store[full_name] = v
        regularizer = regularizer or self.regularizer
        if regularizer is not None:
            # TF's _VariableStore: the loss goes in "<variable>/Regularizer/".
            g = _ops.get_default_graph()
            with g.name_scope(None), g.name_scope(full_name + "/Regularizer/"):
                loss = regularizer(v)
            if loss is not None:
                g.add_to_collection(_ops.GraphKeys.REGULARIZATION_LOSSES, loss)
        return v


def _new_variable(
    full_name: str,
    shape: Any,
    dtype: Any,
    initializer: Any,
    trainable: Any,
    collections: Any,
    caching_device: Any = None,
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
        )


def _store(g: _ops.Graph) -> dict[str, Any]:
    return g._variable_store


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
    """tf.compat.v1.get_variable: "<variable scope>/<name>", created or reused."""
    _refuse_partitioner(kwargs.get("partitioner"), "get_variable")
    return get_variable_scope().get_variable(
        name, shape, dtype, initializer, trainable, collections, regularizer
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
    _refuse_partitioner(kwargs.get("partitioner"), "variable_scope")
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
