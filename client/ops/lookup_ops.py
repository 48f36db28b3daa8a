"""Client, graph building: tf.lookup (StaticHashTable, KeyValueTensorInitializer,
StaticVocabularyTable, experimental.MutableHashTable) and tf.tables_initializer, building
the nodes tensorflow.compat.v1's lookup_ops.py builds, with its node names. A static table's
shared_name is "hash_table_<uuid4>" as in TF, so two graphs never share one by accident.
Not thread-safe (graph building)."""

from __future__ import annotations

import uuid
from typing import Any

from client.framework import dtypes as _dtypes
from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.sparse_tensor import SparseTensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, control_flow_ops, math_ops, string_ops
from client.ops.tf1_extras import tables_initializer
from client.training.saveable_object import TableSaveable

TABLE_INITIALIZERS = _ops.GraphKeys.TABLE_INITIALIZERS
initialize_all_tables = tables_initializer


def _text(dtype: Any) -> str:
    """A dtype as TF's f-strings print it (TF's DType.__str__)."""
    return f"<dtype: '{_dtypes.as_dtype(dtype).name}'>"


def _keys_dtype_error(key_dtype: Any, keys: Any) -> TypeError:
    return TypeError(
        f"Dtype of argument `keys` must be {_text(key_dtype)}, received: {_text(keys.dtype)}"
    )


def check_table_dtypes(table: Any, key_dtype: Any, value_dtype: Any) -> None:
    if key_dtype.base_dtype != table.key_dtype:
        raise TypeError(
            f"Invalid key dtype for table, expected {_text(table.key_dtype)} "
            f"but got {_text(key_dtype)}."
        )
    if value_dtype.base_dtype != table.value_dtype:
        raise TypeError(
            "Invalid value dtype for table, expected "
            f"{_text(table.value_dtype)} but got {_text(value_dtype)}."
        )


class KeyValueTensorInitializer:
    """Initializes a table from `keys` and `values` tensors (one LookupTableImportV2)."""

    def __init__(
        self,
        keys: Any,
        values: Any,
        key_dtype: Any = None,
        value_dtype: Any = None,
        name: str | None = None,
    ) -> None:
        self._keys = convert_to_tensor(keys, dtype=key_dtype, name="keys")
        self._values = convert_to_tensor(values, dtype=value_dtype, name="values")
        self._name = name if name is not None else "key_value_init"
        self.key_dtype = _dtypes.as_dtype(self._keys.dtype)
        self.value_dtype = _dtypes.as_dtype(self._values.dtype)
        self._shared_name = ""

    def initialize(self, table: Any) -> Any:
        check_table_dtypes(table, self._keys.dtype, self._values.dtype)
        handle = table.resource_handle
        with _ops.name_scope(self._name, values=(handle, self._keys, self._values)):
            init_op = apply_op("LookupTableImportV2", [handle, self._keys, self._values])
        _ops.add_to_collection(TABLE_INITIALIZERS, init_op)
        return init_op


def _lookup_result(keys: Any, values: Any) -> Any:
    if isinstance(keys, SparseTensor):
        return SparseTensor(keys.indices, values, keys.dense_shape)
    return values


class StaticHashTable:
    """tf.compat.v1.lookup.StaticHashTable: a HashTableV2 filled once by its initializer."""

    def __init__(self, initializer: Any, default_value: Any, name: str | None = None) -> None:
        self._initializer = initializer
        self.key_dtype = initializer.key_dtype
        self.value_dtype = initializer.value_dtype
        self._shared_name = initializer._shared_name or f"hash_table_{uuid.uuid4()}"
        self._default_value = convert_to_tensor(default_value, dtype=self.value_dtype)
        self._default_value.shape.merge_with(TensorShape([]))
        attrs = {
            "shared_name": self._shared_name,
            "key_dtype": self.key_dtype,
            "value_dtype": self.value_dtype,
        }
        handle = apply_op("HashTableV2", [], attrs, name=name or "hash_table").outputs[0]
        self._resource_handle = handle
        self._table_name = handle.op.name.split("/")[-1]
        self._init_op = initializer.initialize(self)

    resource_handle = property(lambda self: self._resource_handle)
    name = property(lambda self: self._table_name)
    default_value = property(lambda self: self._default_value)
    initializer = property(lambda self: self._init_op)

    def size(self, name: str | None = None) -> Any:
        handle = self._resource_handle
        with _ops.name_scope(name, f"{self.name}_Size", [handle]):
            return apply_op("LookupTableSizeV2", [handle]).outputs[0]

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        key_tensor = keys.values if isinstance(keys, SparseTensor) else keys
        if keys.dtype.base_dtype != self.key_dtype:
            raise _keys_dtype_error(self.key_dtype, keys)
        handle = self._resource_handle
        values_in = (handle, key_tensor, self._default_value)
        with _ops.name_scope(name, f"{self.name}_Lookup", values_in):
            op = apply_op("LookupTableFindV2", [handle, key_tensor, self._default_value])
        values = op.outputs[0]
        values.set_shape(key_tensor.shape)
        return _lookup_result(keys, values)

    def export(self, name: str | None = None) -> tuple[Any, Any]:
        handle = self._resource_handle
        with _ops.name_scope(name, f"{self.name}_Export", [handle]):
            attrs = {"Tkeys": self.key_dtype, "Tvalues": self.value_dtype}
            keys, values = apply_op("LookupTableExportV2", [handle], attrs).outputs
        values.set_shape(keys.shape.concatenate(self._default_value.shape))
        return keys, values

    def __getitem__(self, keys: Any) -> Any:
        return self.lookup(keys)


HashTable = StaticHashTable


def _as_string(tensor: Any) -> Any:
    if tensor.dtype.base_dtype == _dtypes.string:
        return tensor
    return string_ops.as_string(tensor)


class StaticVocabularyTable:
    """tf.compat.v1.lookup.StaticVocabularyTable: ids from a static table (default -1),
    out-of-vocabulary keys to `num_oov_buckets` buckets after it by StringToHashBucketFast."""

    def __init__(
        self,
        initializer: Any,
        num_oov_buckets: int,
        lookup_key_dtype: Any = None,
        name: str | None = None,
    ) -> None:
        if num_oov_buckets <= 0:
            raise ValueError("`num_oov_buckets` must be > 0; use StaticHashTable.")
        if name:
            name = name.rstrip("/")
        self._table: StaticHashTable | None = None
        if initializer:
            key_dtype = _dtypes.as_dtype(lookup_key_dtype or initializer.key_dtype)
            supported = (_dtypes.int64, _dtypes.string)
            if initializer.key_dtype not in supported:
                raise TypeError(
                    f"Invalid `key_dtype`, expected one of {supported}, "
                    f"but got {_text(initializer.key_dtype)}."
                )
            if initializer.key_dtype.is_integer != key_dtype.is_integer:
                kind = "integer" if key_dtype.is_integer else "non-integer"
                raise TypeError(
                    f"Invalid `key_dtype`, expected {kind} but got {_text(initializer.key_dtype)}."
                )
            if initializer.value_dtype != _dtypes.int64:
                raise TypeError(
                    f"Invalid `value_dtype`, expected {_text(_dtypes.int64)} "
                    f"but got {_text(initializer.value_dtype)}."
                )
            self._table = StaticHashTable(initializer, default_value=-1)
            name = name or self._table.name
        else:
            key_dtype = _dtypes.string
            name = name or "hash_bucket"
        if not key_dtype.is_integer and key_dtype != _dtypes.string:
            raise TypeError(
                f"Invalid `key_dtype`, expected integer or string, got {_text(key_dtype)}"
            )
        self.key_dtype = key_dtype
        self.value_dtype = _dtypes.int64
        self._num_oov_buckets = num_oov_buckets
        self._table_name = name.split("/")[-1]

    name = property(lambda self: self._table_name)

    @property
    def resource_handle(self) -> Any:
        return None if self._table is None else self._table.resource_handle

    @property
    def initializer(self) -> Any:
        if self._table is not None:
            return self._table.initializer
        with _ops.name_scope(None, "init"):
            return control_flow_ops.no_op()

    def size(self, name: str | None = None) -> Any:
        with _ops.name_scope(name, f"{self.name}_Size"):
            if self._table is not None:
                tsize = self._table.size()
            else:
                tsize = convert_to_tensor(0, dtype=_dtypes.int64)
            return tsize + self._num_oov_buckets

    def lookup(self, keys: Any, name: str | None = None) -> Any:
        if keys.dtype.base_dtype != self.key_dtype:
            raise _keys_dtype_error(self.key_dtype, keys)
        values = keys.values if isinstance(keys, SparseTensor) else keys
        table = self._table
        if table is not None and table.key_dtype.base_dtype == _dtypes.int64:
            values = math_ops.cast(values, _dtypes.int64)
        with _ops.name_scope(name, f"{self.name}_Lookup"):
            buckets = string_ops.string_to_hash_bucket_fast(
                _as_string(values), num_buckets=self._num_oov_buckets, name="hash_bucket"
            )
            if table is not None:
                ids = table.lookup(values)
                buckets = math_ops.add(buckets, table.size())
                is_id_non_default = math_ops.not_equal(ids, table.default_value)
                ids = array_ops.where_v2(is_id_non_default, ids, buckets)
            else:
                ids = buckets
        return _lookup_result(keys, ids)

    def __getitem__(self, keys: Any) -> Any:
        return self.lookup(keys)


class MutableHashTable:
    """tf.lookup.experimental.MutableHashTable: a MutableHashTableV2 (of tensors when the
    default value is not a scalar) with insert, lookup, remove, export and size."""

    def __init__(
        self,
        key_dtype: Any,
        value_dtype: Any,
        default_value: Any,
        name: str = "MutableHashTable",
        checkpoint: bool = True,
    ) -> None:
        self.key_dtype = _dtypes.as_dtype(key_dtype)
        self.value_dtype = _dtypes.as_dtype(value_dtype)
        self._default_value = convert_to_tensor(default_value, dtype=self.value_dtype)
        self._value_shape = self._default_value.shape
        self._checkpoint = checkpoint
        self._name = name
        attrs: dict[str, Any] = {
            "use_node_name_sharing": checkpoint,
            "key_dtype": self.key_dtype,
            "value_dtype": self.value_dtype,
        }
        op_type = "MutableHashTableV2"
        if self._value_shape.ndims != 0:
            op_type = "MutableHashTableOfTensorsV2"
            attrs["value_shape"] = self._value_shape
        handle = apply_op(op_type, [], attrs, name=name).outputs[0]
        self._resource_handle = handle
        self._table_name = handle.op.name.split("/")[-1]
        if checkpoint:
            # TF's MutableHashTable._Saveable: the Saver finds it in this collection; it
            # exports the table now (its save specs), so the graph holds that export.
            _ops.add_to_collection(_ops.GraphKeys.SAVEABLE_OBJECTS, TableSaveable(self, name))

    resource_handle = property(lambda self: self._resource_handle)
    name = property(lambda self: self._table_name)

    def size(self, name: str | None = None) -> Any:
        handle = self._resource_handle
        scope = _ops.name_scope(name, f"{self.name}_Size", [handle])
        with scope, _ops.colocate_with(handle):
            return apply_op("LookupTableSizeV2", [handle]).outputs[0]

    def remove(self, keys: Any, name: str | None = None) -> Any:
        if keys.dtype != self.key_dtype:
            raise _keys_dtype_error(self.key_dtype, keys)
        handle = self._resource_handle
        values = (handle, keys, self._default_value)
        with _ops.name_scope(name, f"{self.name}_lookup_table_remove", values):
            return apply_op("LookupTableRemoveV2", [handle, keys])

    def lookup(self, keys: Any, dynamic_default_values: Any = None, name: str | None = None) -> Any:
        handle = self._resource_handle
        values = (handle, keys, self._default_value)
        with _ops.name_scope(name, f"{self.name}_lookup_table_find", values):
            keys = convert_to_tensor(keys, dtype=self.key_dtype, name="keys")
            default = self._default_value
            if dynamic_default_values is not None:
                default = dynamic_default_values
            with _ops.colocate_with(handle):
                return apply_op("LookupTableFindV2", [handle, keys, default]).outputs[0]

    def insert(self, keys: Any, values: Any, name: str | None = None) -> Any:
        handle = self._resource_handle
        with _ops.name_scope(name, f"{self.name}_lookup_table_insert", [handle, keys, values]):
            keys = convert_to_tensor(keys, self.key_dtype, name="keys")
            values = convert_to_tensor(values, self.value_dtype, name="values")
            with _ops.colocate_with(handle):
                return apply_op("LookupTableInsertV2", [handle, keys, values])

    def export(self, name: str | None = None) -> tuple[Any, Any]:
        handle = self._resource_handle
        scope = _ops.name_scope(name, f"{self.name}_lookup_table_export_values", [handle])
        with scope, _ops.colocate_with(handle):
            attrs = {"Tkeys": self.key_dtype, "Tvalues": self.value_dtype}
            keys, values = apply_op("LookupTableExportV2", [handle], attrs).outputs
        return keys, values

    def __getitem__(self, keys: Any) -> Any:
        return self.lookup(keys)


# -- static shapes ------------------------------------------------------------------------------
@shape_fns._reg("HashTableV2", "MutableHashTableV2", "MutableHashTableOfTensorsV2")
@shape_fns._reg("LookupTableSizeV2")
def _scalar_shape(op: Any) -> list[Any]:
    return [TensorShape([])]


def _table_value_shape(handle: Any) -> TensorShape | None:
    """The value shape TF's shape inference attaches to a table's handle (None if unknown)."""
    op = handle.op
    if op.type in ("HashTableV2", "MutableHashTableV2"):
        return TensorShape([])
    if op.type == "MutableHashTableOfTensorsV2":
        return TensorShape(op.get_attr("value_shape"))
    return None


@shape_fns._reg("LookupTableFindV2")
def _find_shape(op: Any) -> list[Any]:
    value_shape = _table_value_shape(op.inputs[0])
    if value_shape is None:
        return [TensorShape(None)]
    return [op.inputs[1].shape.concatenate(value_shape)]


# -- vocabulary files and lists -------------------------------------------------------------
class TextFileIndex:
    """Where a key or value comes from in a vocabulary line (or a column index >= 0)."""

    WHOLE_LINE = -2
    LINE_NUMBER = -1


ASSET_FILEPATHS = "asset_filepaths"  # TF's GraphKeys.ASSET_FILEPATHS


class TextFileInitializer:
    """tf.lookup.TextFileInitializer: one InitializeTableFromTextFileV2 filling a static
    table from a vocabulary file, with TF's argument checks and shared name."""

    def __init__(
        self,
        filename: Any,
        key_dtype: Any,
        key_index: int,
        value_dtype: Any,
        value_index: int,
        vocab_size: int | None = None,
        delimiter: str = "\t",
        name: str | None = None,
        value_index_offset: int = 0,
    ) -> None:
        if not isinstance(filename, _ops.Tensor) and not filename:
            raise ValueError("`filename` argument required for tf.lookup.TextFileInitializer")
        key_dtype, value_dtype = _dtypes.as_dtype(key_dtype), _dtypes.as_dtype(value_dtype)
        for what, index, dtype in (("key", key_index, key_dtype),
                                   ("value", value_index, value_dtype)):  # fmt: skip
            _check_text_file_index(what, index, dtype)
        if vocab_size is not None and vocab_size <= 0:
            raise ValueError(f"`vocab_size` should be > 0, received: {vocab_size}")
        self._filename_arg = filename
        # TF wraps the path in an Asset, whose graph-mode form is this Const.
        self._filename = convert_to_tensor(filename, _dtypes.string, name="asset_path")
        self._key_index, self._value_index = key_index, value_index
        self._vocab_size, self._delimiter = vocab_size, delimiter
        self._name, self._offset = name, value_index_offset
        self.key_dtype, self.value_dtype = key_dtype, value_dtype

    def initialize(self, table: Any) -> Any:
        check_table_dtypes(table, self.key_dtype, self.value_dtype)
        handle = table.resource_handle
        with _ops.name_scope(self._name, "text_file_init", (handle,)):
            filename = convert_to_tensor(self._filename, _dtypes.string, name="asset_filepath")
            attrs = {
                "key_index": self._key_index,
                "value_index": self._value_index,
                "vocab_size": -1 if self._vocab_size is None else self._vocab_size,
                "delimiter": self._delimiter,
                "offset": self._offset,
            }
            init_op = apply_op("InitializeTableFromTextFileV2", [handle, filename], attrs)
        _ops.add_to_collection(TABLE_INITIALIZERS, init_op)
        if filename.op.type == "Const":
            _ops.add_to_collection(ASSET_FILEPATHS, filename)
        return init_op

    @property
    def _shared_name(self) -> str:
        """TF's: from the file, the size, the indices and the offset (one table per file)."""
        parts = [str(self._filename_arg)]
        if self._vocab_size:
            parts.append(f"{self._vocab_size:d}")
        parts += [str(self._key_index), str(self._value_index)]
        if self._offset:
            parts.append(str(self._offset))
        return "hash_table_" + "_".join(parts)


def _check_text_file_index(what: str, index: int, dtype: Any) -> None:
    """TF's TextFileInitializer checks, with its messages (which differ key to value)."""
    key = what == "key"
    if index < -2:
        raise ValueError(f"`{what}_index` should be >= -2, received: {index}" + "."[: int(key)])
    if index == TextFileIndex.LINE_NUMBER and dtype != _dtypes.int64:
        where = "if `key_index` is" if key else "for `value_index`"
        raise ValueError(
            f"`{what}_dtype` must be int64 {where} {TextFileIndex.LINE_NUMBER}, received: {dtype}"
        )
    if index == TextFileIndex.WHOLE_LINE and not dtype.is_integer and dtype != _dtypes.string:
        raise ValueError(
            f"`{what}_dtype` should be either integer or string for `{what}_index` "
            f"{TextFileIndex.WHOLE_LINE}, received: {dtype}"
        )


class TextFileStringTableInitializer(TextFileInitializer):
    """Line numbers (int64) to whole lines (string) by default."""

    def __init__(self, filename: Any, key_column_index: int = TextFileIndex.LINE_NUMBER,
                 value_column_index: int = TextFileIndex.WHOLE_LINE,
                 vocab_size: int | None = None, delimiter: str = "\t",
                 name: str = "text_file_string_table_init") -> None:  # fmt: skip
        super().__init__(filename, _dtypes.int64, key_column_index, _dtypes.string,
                         value_column_index, vocab_size, delimiter, name)  # fmt: skip


class TextFileIdTableInitializer(TextFileInitializer):
    """Whole lines to line numbers (int64) by default."""

    def __init__(self, filename: Any, key_column_index: int = TextFileIndex.WHOLE_LINE,
                 value_column_index: int = TextFileIndex.LINE_NUMBER,
                 vocab_size: int | None = None, delimiter: str = "\t",
                 name: str = "text_file_id_table_init",
                 key_dtype: Any = _dtypes.string) -> None:  # fmt: skip
        super().__init__(filename, key_dtype, key_column_index, _dtypes.int64,
                         value_column_index, vocab_size, delimiter, name)  # fmt: skip


def _with_oov_buckets(table: StaticHashTable, num_oov_buckets: int, key_dtype: Any) -> Any:
    """Out-of-vocabulary keys to buckets after the table (TF builds an
    IdTableWithHashBuckets; ours is a StaticVocabularyTable over the same table: the same
    ids, other node names)."""
    vocab = StaticVocabularyTable(None, num_oov_buckets, lookup_key_dtype=key_dtype)
    vocab._table, vocab.key_dtype = table, key_dtype
    vocab._table_name = table.name
    return vocab


def index_table_from_file(
    vocabulary_file: Any = None,
    num_oov_buckets: int = 0,
    vocab_size: int | None = None,
    default_value: int = -1,
    key_dtype: Any = _dtypes.string,
    name: str | None = None,
    key_column_index: int = TextFileIndex.WHOLE_LINE,
    value_column_index: int = TextFileIndex.LINE_NUMBER,
    delimiter: str = "\t",
) -> Any:
    """Keys in a vocabulary file to their line numbers (TF's lookup_ops function)."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("`vocabulary_file` must be specified and must not be empty.")
    if num_oov_buckets < 0:
        raise ValueError(
            f"num_oov_buckets must be greater or equal than 0, got {num_oov_buckets:d}."
        )
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(
            f"`vocab_size` must be greater than 0, got {vocab_size:d} for vocabulary_file: "
            f"{vocabulary_file}."
        )
    key_dtype = _dtypes.as_dtype(key_dtype)
    if not key_dtype.is_integer and key_dtype.base_dtype != _dtypes.string:
        raise TypeError("Dtype for `keys` should be either integer or string.")
    with _ops.name_scope(name, "string_to_index"):
        with _ops.name_scope(None, "hash_table"):
            init = TextFileIdTableInitializer(
                vocabulary_file,
                vocab_size=vocab_size,
                key_dtype=_dtypes.int64 if key_dtype.is_integer else key_dtype,
                name="table_init",
                key_column_index=key_column_index,
                value_column_index=value_column_index,
                delimiter=delimiter,
            )
            table = StaticHashTable(init, default_value)
        if num_oov_buckets:
            return _with_oov_buckets(table, num_oov_buckets, key_dtype)
        return table


def index_to_string_table_from_file(
    vocabulary_file: Any,
    vocab_size: int | None = None,
    default_value: str = "UNK",
    name: str | None = None,
    key_column_index: int = TextFileIndex.LINE_NUMBER,
    value_column_index: int = TextFileIndex.WHOLE_LINE,
    delimiter: str = "\t",
) -> StaticHashTable:
    """Line numbers of a vocabulary file to its lines (TF's lookup_ops function)."""
    if vocabulary_file is None or (isinstance(vocabulary_file, str) and not vocabulary_file):
        raise ValueError("`vocabulary_file` must be specified and must not be empty.")
    if vocab_size is not None and vocab_size < 1:
        raise ValueError(f"`vocab_size` must be greater than 0, got {vocab_size}.")
    with _ops.name_scope(name, "index_to_string"):
        init = TextFileStringTableInitializer(
            vocabulary_file,
            vocab_size=vocab_size,
            name="table_init",
            key_column_index=key_column_index,
            value_column_index=value_column_index,
            delimiter=delimiter,
        )
        return StaticHashTable(init, default_value)


def index_table_from_tensor(
    vocabulary_list: Any,
    num_oov_buckets: int = 0,
    default_value: int = -1,
    dtype: Any = _dtypes.string,
    name: str | None = None,
) -> Any:
    """Keys in a vocabulary tensor to their positions (TF's lookup_ops function)."""
    if vocabulary_list is None:
        raise ValueError("`vocabulary_list` must be specified.")
    if num_oov_buckets < 0:
        raise ValueError(
            f"`num_oov_buckets` must be greater or equal than 0, got {num_oov_buckets:d}."
        )
    dtype = _dtypes.as_dtype(dtype)
    if not dtype.is_integer and dtype.base_dtype != _dtypes.string:
        raise TypeError("`dtype` must either be integer or string.")
    with _ops.name_scope(name, "string_to_index"):
        keys = convert_to_tensor(vocabulary_list)
        if keys.dtype.is_integer != dtype.is_integer:
            raise ValueError(
                "Invalid `dtype`: Expected "
                f"{'integer' if dtype.is_integer else 'non-integer'}, got {keys.dtype}."
            )
        if not dtype.is_integer and keys.dtype.base_dtype != dtype:
            raise ValueError(f"Invalid `dtype`: Expected {dtype}, got {keys.dtype}.")
        num_elements = array_ops.size(keys)
        values = math_ops.cast(math_ops.range(num_elements), _dtypes.int64)
        with _ops.name_scope(None, "hash_table"):
            table_keys = math_ops.cast(keys, _dtypes.int64) if keys.dtype.is_integer else keys
            init = KeyValueTensorInitializer(table_keys, values, table_keys.dtype.base_dtype,
                                             _dtypes.int64, name="table_init")  # fmt: skip
            table = StaticHashTable(init, default_value)
        if num_oov_buckets:
            return _with_oov_buckets(table, num_oov_buckets, dtype)
        return table


def index_to_string_table_from_tensor(
    vocabulary_list: Any, default_value: str = "UNK", name: str | None = None
) -> StaticHashTable:
    """Positions in a vocabulary tensor to its strings (TF's lookup_ops function)."""
    if vocabulary_list is None:
        raise ValueError("`vocabulary_list` argument must be specified.")
    with _ops.name_scope(name, "index_to_string"):
        vocabulary_list = convert_to_tensor(vocabulary_list, _dtypes.string)
        num_elements = array_ops.size(vocabulary_list)
        keys = math_ops.cast(math_ops.range(num_elements), _dtypes.int64)
        init = KeyValueTensorInitializer(keys, vocabulary_list, _dtypes.int64, _dtypes.string,
                                         name="table_init")  # fmt: skip
        return StaticHashTable(init, default_value)


class DenseHashTable(MutableHashTable):
    """tf.lookup.experimental.DenseHashTable: a MutableDenseHashTableV2 whose empty_key and
    deleted_key may not be used as keys; otherwise used as a MutableHashTable is."""

    def __init__(
        self,
        key_dtype: Any,
        value_dtype: Any,
        default_value: Any,
        empty_key: Any,
        deleted_key: Any,
        initial_num_buckets: int | None = None,
        name: str = "MutableDenseHashTable",
        checkpoint: bool = True,
    ) -> None:
        self.key_dtype = _dtypes.as_dtype(key_dtype)
        self.value_dtype = _dtypes.as_dtype(value_dtype)
        self._default_value = convert_to_tensor(
            default_value, dtype=self.value_dtype, name="default_value"
        )
        self._value_shape = self._default_value.shape
        self._checkpoint, self._name = checkpoint, name
        empty = convert_to_tensor(empty_key, dtype=self.key_dtype, name="empty_key")
        deleted = convert_to_tensor(deleted_key, dtype=self.key_dtype, name="deleted_key")
        attrs: dict[str, Any] = {
            "use_node_name_sharing": checkpoint,
            "key_dtype": self.key_dtype,
            "value_dtype": self.value_dtype,
            "value_shape": self._value_shape,
        }
        if initial_num_buckets is not None:
            attrs["initial_num_buckets"] = initial_num_buckets
        op = apply_op("MutableDenseHashTableV2", [empty, deleted], attrs, name=name)
        self._resource_handle = op.outputs[0]
        self._table_name = op.name.split("/")[-1]
        if checkpoint:
            _ops.add_to_collection(_ops.GraphKeys.SAVEABLE_OBJECTS, TableSaveable(self, name))
