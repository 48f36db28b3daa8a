"""Ops (executor stage), parsing: ParseExampleV2, ParseSingleExample (tf.train.Example
protos, TensorFlow's core/util/example_proto_fast_parsing.cc semantics), DecodeRaw and
DecodeCSV (decode_raw_op.cc, decode_csv_op.cc).

Examples parse with the protos in protos/example.proto (TensorFlow's field numbers).
Dense features: a fixed shape per key, a missing key takes its default (an empty default
makes the key required); a first dimension of None (FixedLenSequenceFeature) pads every
example to the longest with the default. Sparse (VarLenFeature) features give indices,
values and dense shape; ragged ones values and row splits. Kernels keep no state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from common import dtypes
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops.registry import KernelConstruction, register_kernel, register_op
from protos import example_pb2, feature_pb2

_TYPES = "{float, int64, string}"
register_op(
    "ParseExampleV2",
    inputs=["serialized: string", "names: string", "sparse_keys: string", "dense_keys: string",
            "ragged_keys: string", "dense_defaults: Tdense"],
    outputs=["sparse_indices: num_sparse * int64", "sparse_values: sparse_types",
             "sparse_shapes: num_sparse * int64", "dense_values: Tdense",
             "ragged_values: ragged_value_types", "ragged_row_splits: ragged_split_types"],
    attrs=[f"Tdense: list({_TYPES}) >= 0", "num_sparse: int >= 0",
           f"sparse_types: list({_TYPES}) >= 0", f"ragged_value_types: list({_TYPES}) >= 0",
           "ragged_split_types: list({int32, int64}) >= 0", "dense_shapes: list(shape) >= 0"],
)  # fmt: skip
register_op(
    "ParseSingleExample",
    inputs=["serialized: string", "dense_defaults: Tdense"],
    outputs=["sparse_indices: num_sparse * int64", "sparse_values: sparse_types",
             "sparse_shapes: num_sparse * int64", "dense_values: Tdense"],
    attrs=["num_sparse: int >= 0", "sparse_keys: list(string) >= 0",
           "dense_keys: list(string) >= 0", f"sparse_types: list({_TYPES}) >= 0",
           f"Tdense: list({_TYPES}) >= 0", "dense_shapes: list(shape) >= 0"],
)  # fmt: skip
register_op(
    "DecodeRaw",
    inputs=["bytes: string"],
    outputs=["output: out_type"],
    attrs=["out_type: {half, float, double, int32, uint16, uint8, int16, int8, int64, "
           "complex64, complex128, bool, bfloat16}", "little_endian: bool = true"],
)  # fmt: skip
register_op(
    "DecodeCSV",
    inputs=["records: string", "record_defaults: OUT_TYPE"],
    outputs=["output: OUT_TYPE"],
    attrs=["OUT_TYPE: list({float, double, int32, int64, string}) >= 1",
           "field_delim: string = ','", "use_quote_delim: bool = true", "na_value: string = ''",
           "select_cols: list(int) = []"],
)  # fmt: skip

Compute = Callable[..., list]
_KIND_TYPE = {
    "float_list": DataType.DT_FLOAT,
    "int64_list": DataType.DT_INT64,
    "bytes_list": DataType.DT_STRING,
}


def _strings(value: np.ndarray) -> list[str]:
    return [v.decode() if isinstance(v, bytes) else str(v) for v in np.asarray(value).reshape(-1)]


def _array(values: Sequence, dt: DataType) -> np.ndarray:
    if dt == DataType.DT_STRING:
        out = np.empty(len(values), dtype=object)
        out[:] = list(values)
        return out
    return np.asarray(values, dtype=dtypes.as_numpy(dt)).reshape(-1)


def _feature_values(feature: feature_pb2.Feature, key: str, dt: DataType, where: str) -> list:
    """A feature's values as a list, checked against the type asked for."""
    kind = feature.WhichOneof("kind")
    if kind is None:
        return []
    if _KIND_TYPE[kind] != dt:
        raise InvalidArgumentError(
            f"{where}Key: {key}.  Data types don't match. Data type: "
            f"{dtypes.python_name(_KIND_TYPE[kind])} but expected type: {dtypes.python_name(dt)}"
        )
    return list(getattr(feature, kind).value)


class ExampleParser:
    """The parse of a batch of serialized Examples into dense, sparse and ragged outputs."""

    def __init__(
        self,
        sparse: list[tuple[str, DataType]],
        dense: list[tuple[str, DataType, tuple, np.ndarray]],
        ragged: list[tuple[str, DataType, DataType]],
        node: str,
    ) -> None:
        self.sparse, self.dense, self.ragged, self.node = sparse, dense, ragged, node

    def _examples(self, serialized: np.ndarray, names: list[str]) -> list[example_pb2.Example]:
        examples = []
        for i, data in enumerate(serialized.reshape(-1)):
            example = example_pb2.Example()
            try:
                example.ParseFromString(data if isinstance(data, bytes) else bytes(data))
            except Exception:  # noqa: BLE001  (protobuf's DecodeError and friends)
                name = f"Name: {names[i]}, " if names else ""
                raise InvalidArgumentError(f"{name}Could not parse example input, value: "
                                           f"'{data!r}'", self.node) from None  # fmt: skip
            examples.append(example)
        return examples

    def parse(self, serialized: np.ndarray, names: list[str]) -> tuple[list, list, list, list]:
        serialized = np.asarray(serialized, dtype=object)
        batch = serialized.shape  # () for one example, (n,) for a batch
        examples = self._examples(serialized, names)

        def where(i: int) -> str:
            return f"Name: {names[i]}, " if names else ("Name: <unknown>, " if batch else "")

        def values(i: int, key: str, dt: DataType) -> list | None:
            features = examples[i].features.feature
            if key not in features:
                return None
            try:
                return _feature_values(features[key], key, dt, where(i))
            except InvalidArgumentError as e:
                raise InvalidArgumentError(e.message, self.node) from None

        sparse_out = []
        for key, dt in self.sparse:
            rows = [values(i, key, dt) or [] for i in range(len(examples))]
            width = max((len(r) for r in rows), default=0)
            if batch:
                indices = [[i, j] for i, r in enumerate(rows) for j in range(len(r))]
                shape = [len(examples), width]
            else:
                indices = [[j] for j in range(len(rows[0]))]
                shape = [width]
            flat = [v for r in rows for v in r]
            sparse_out.append((
                np.asarray(indices, np.int64).reshape(-1, len(batch) + 1),
                _array(flat, dt),
                np.asarray(shape, np.int64),
            ))  # fmt: skip
        dense_out = [self._dense(examples, values, batch, *spec) for spec in self.dense]
        ragged_out = []
        for key, dt, split_type in self.ragged:
            rows = [values(i, key, dt) or [] for i in range(len(examples))]
            splits = np.cumsum([0] + [len(r) for r in rows]).astype(dtypes.as_numpy(split_type))
            ragged_out.append((_array([v for r in rows for v in r], dt), splits))
        return (
            [s[0] for s in sparse_out] + [s[1] for s in sparse_out] + [s[2] for s in sparse_out],
            dense_out,
            [r[0] for r in ragged_out],
            [r[1] for r in ragged_out],
        )

    def _dense(self, examples, values, batch, key, dt, shape, default) -> np.ndarray:  # noqa: ANN001
        variable = bool(shape) and shape[0] is None
        inner = tuple(shape[1:]) if variable else tuple(shape)
        inner_size = int(np.prod(inner, dtype=np.int64))
        default = np.asarray(default)
        rows: list[list] = []
        for i in range(len(examples)):
            got = values(i, key, dt)
            if got is None:
                if variable:
                    rows.append([])
                    continue
                if default.size == 0:
                    raise InvalidArgumentError(
                        f"Feature: {key} (data type: {dtypes.python_name(dt)}) is required but "
                        "could not be found.", self.node
                    )  # fmt: skip
                rows.append(list(np.broadcast_to(default, inner).reshape(-1)))
                continue
            if variable:
                if inner_size and len(got) % inner_size:
                    raise InvalidArgumentError(
                        f"Key: {key}, Index: {i}.  Number of {_list_name(dt)} values is not a "
                        f"multiple of stride length. Saw {len(got)} values but output shape is: "
                        f"{_shape_str(shape)}", self.node
                    )  # fmt: skip
            elif len(got) != inner_size:
                raise InvalidArgumentError(
                    f"Key: {key}.  Can't parse serialized Example.", self.node
                )
            rows.append(got)
        if variable:
            rows_n = max((len(r) // max(inner_size, 1) for r in rows), default=0)
            fill = (
                default.reshape(-1)[0] if default.size else (b"" if dt == DataType.DT_STRING else 0)
            )
            padded = [r + [fill] * (rows_n * inner_size - len(r)) for r in rows]
            full = (rows_n, *inner)
        else:
            padded, full = rows, inner
        flat = _array([v for r in padded for v in r], dt)
        return flat.reshape(tuple(batch) + tuple(full))


def _list_name(dt: DataType) -> str:
    return {DataType.DT_FLOAT: "float", DataType.DT_INT64: "int64"}.get(dt, "bytes")


def _shape_str(shape: tuple) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


@register_kernel("ParseExampleV2")
def _parse_example_v2(k: KernelConstruction) -> Compute:
    a = k.attrs
    tdense, shapes = list(a["Tdense"]), list(a["dense_shapes"])
    node = k.node_name

    def compute(ctx, inputs: list) -> list:
        serialized, names = inputs[0], _strings(inputs[1])
        sparse_keys, dense_keys, ragged_keys = (_strings(x) for x in inputs[2:5])
        defaults = inputs[5 : 5 + len(tdense)]
        if len(sparse_keys) != a["num_sparse"] or len(dense_keys) != len(tdense):
            raise InvalidArgumentError("Expected len(sparse_keys) == num_sparse and "
                                       "len(dense_keys) == len(Tdense)", node)  # fmt: skip
        if np.asarray(serialized).ndim > 1:
            raise InvalidArgumentError("Expected serialized to be a scalar or vector, got "
                                       f"shape {list(np.shape(serialized))}", node)  # fmt: skip
        parser = ExampleParser(
            list(zip(sparse_keys, a["sparse_types"])),
            list(zip(dense_keys, tdense, shapes, defaults)),
            list(zip(ragged_keys, a["ragged_value_types"], a["ragged_split_types"])),
            node,
        )
        sparse, dense, ragged_values, ragged_splits = parser.parse(serialized, names)
        return [*sparse, *dense, *ragged_values, *ragged_splits]

    return compute


@register_kernel("ParseSingleExample")
def _parse_single_example(k: KernelConstruction) -> Compute:
    a = k.attrs
    parser_spec = (list(zip(a["sparse_keys"], a["sparse_types"])), a["dense_keys"])

    def compute(ctx, inputs: list) -> list:
        serialized = np.asarray(inputs[0], dtype=object)
        if serialized.ndim != 0:
            raise InvalidArgumentError("Expected serialized to be a scalar, got shape: "
                                       f"[{','.join(map(str, serialized.shape))}]",
                                       k.node_name)  # fmt: skip
        dense = list(zip(parser_spec[1], a["Tdense"], a["dense_shapes"], inputs[1:]))
        parser = ExampleParser(parser_spec[0], dense, [], k.node_name)
        sparse, dense_values, _, _ = parser.parse(serialized, [])
        return [*sparse, *dense_values]

    return compute


# -- DecodeRaw -------------------------------------------------------------------------------
@register_kernel("DecodeRaw")
def _decode_raw(k: KernelConstruction) -> Compute:
    out_type = dtypes.as_numpy(k.attrs["out_type"])
    little = k.attrs["little_endian"]
    size = np.dtype(out_type).itemsize

    def compute(ctx, inputs: list) -> list:
        strings = np.asarray(inputs[0], dtype=object)
        flat = [s if isinstance(s, bytes) else bytes(s) for s in strings.reshape(-1)]
        if not flat:
            return [np.zeros(strings.shape + (0,), out_type)]
        n = len(flat[0])
        if n % size:
            raise InvalidArgumentError(
                f"Input to DecodeRaw has length {n} that is not a multiple of {size}, the size "
                f"of {dtypes.python_name(k.attrs['out_type'])}", k.node_name
            )  # fmt: skip
        for i, s in enumerate(flat):
            if len(s) != n:
                raise InvalidArgumentError(
                    "DecodeRaw requires input strings to all be the same size, but element "
                    f"{i} has size {len(s)} != {n}", k.node_name
                )  # fmt: skip
        data = np.frombuffer(b"".join(flat), dtype=np.uint8)
        if out_type == np.bool_:
            values = data != 0
        else:
            dt = np.dtype(out_type).newbyteorder("<" if little else ">")
            values = data.view(dt).astype(out_type)
        return [values.reshape(strings.shape + (n // size,))]

    return compute


# -- DecodeCSV -------------------------------------------------------------------------------
def split_csv(record: bytes, delim: bytes, quote: bool, where: str) -> list[bytes]:
    """Fields of one CSV record; with `quote`, a field may be "quoted" ("" is a quote)."""
    fields: list[bytes] = []
    i, n = 0, len(record)
    while True:
        if quote and i < n and record[i : i + 1] == b'"':
            out = bytearray()
            i += 1
            while True:
                if i >= n:
                    raise InvalidArgumentError(
                        f"Quoted field has to end with quote followed by delim or end{where}"
                    )
                c = record[i : i + 1]
                if c == b'"':
                    if record[i + 1 : i + 2] == b'"':
                        out += b'"'
                        i += 2
                        continue
                    i += 1
                    break
                out += c
                i += 1
            if i < n and record[i : i + 1] != delim:
                raise InvalidArgumentError(
                    f"Quoted field has to end with quote followed by delim or end{where}"
                )
            fields.append(bytes(out))
        else:
            j = record.find(delim, i)
            j = n if j < 0 else j
            field = record[i:j]
            if quote and b'"' in field:
                raise InvalidArgumentError(f"Unquoted fields cannot have quotes inside{where}")
            fields.append(field)
            i = j
        if i >= n:
            return fields
        i += 1  # the delimiter
        if i == n:
            fields.append(b"")
            return fields


def _csv_value(field: bytes, dt: DataType, col: int, rec: int) -> object:
    text = field.decode("utf-8", "replace")
    try:
        if dt in (DataType.DT_INT32, DataType.DT_INT64):
            value = int(text.strip())
            bits = 32 if dt == DataType.DT_INT32 else 64
            if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
                raise ValueError
            return value
        if dt in (DataType.DT_FLOAT, DataType.DT_DOUBLE):
            return float(text)
    except ValueError:
        raise InvalidArgumentError(
            f"Field {col} in record {rec} is not a valid {dtypes.python_name(dt)}: {text}"
        ) from None
    return field


@register_kernel("DecodeCSV")
def _decode_csv(k: KernelConstruction) -> Compute:
    a = k.attrs
    types = list(a["OUT_TYPE"])
    delim, quote, na = a["field_delim"].encode(), a["use_quote_delim"], a["na_value"].encode()
    select = list(a["select_cols"])
    node = k.node_name
    if len(delim) != 1:
        raise InvalidArgumentError("field_delim should be only 1 char", node)
    if select and len(select) != len(types):
        raise InvalidArgumentError("select_cols should match output size", node)
    if any(b <= c for c, b in zip(select, select[1:])):
        raise InvalidArgumentError("select_cols should be strictly increasing indices", node)

    def compute(ctx, inputs: list) -> list:
        records = np.asarray(inputs[0], dtype=object)
        defaults = [np.asarray(d).reshape(-1) for d in inputs[1:]]
        for i, d in enumerate(defaults):
            if d.size > 1:
                raise InvalidArgumentError(f"record_defaults[{i}] must be at most one element",
                                           node)  # fmt: skip
        columns: list[list] = [[] for _ in types]
        for r, record in enumerate(records.reshape(-1)):
            fields = split_csv(record, delim, quote, f" in record {r}")
            if select:
                if select[-1] >= len(fields):
                    raise InvalidArgumentError(
                        f"Expect {len(types)} fields but have {len(fields)} in record {r}", node
                    )  # fmt: skip
                fields = [fields[c] for c in select]
            elif len(fields) != len(types):
                raise InvalidArgumentError(
                    f"Expect {len(types)} fields but have {len(fields)} in record {r}", node
                )  # fmt: skip
            for c, (field, dt) in enumerate(zip(fields, types)):
                if field == b"" or field == na:
                    if defaults[c].size == 0:
                        raise InvalidArgumentError(
                            f"Field {c} is required but missing in record {r}!", node
                        )  # fmt: skip
                    columns[c].append(defaults[c][0])
                    continue
                try:
                    columns[c].append(_csv_value(field, dt, c, r))
                except InvalidArgumentError as e:
                    raise InvalidArgumentError(e.message, node) from None
        return [_array(col, dt).reshape(records.shape) for col, dt in zip(columns, types)]

    return compute


# -- ParseSequenceExampleV2 ------------------------------------------------------------------------
_SEQ_ATTRS = [
    "Ncontext_sparse: int >= 0 = 0",
    f"Tcontext_dense: list({_TYPES}) >= 0 = []",
    f"context_sparse_types: list({_TYPES}) >= 0 = []",
    f"context_ragged_value_types: list({_TYPES}) >= 0 = []",
    "context_ragged_split_types: list({int32, int64}) >= 0 = []",
    "context_dense_shapes: list(shape) >= 0 = []",
    "Nfeature_list_sparse: int >= 0 = 0",
    "Nfeature_list_dense: int >= 0 = 0",
    f"feature_list_dense_types: list({_TYPES}) >= 0 = []",
    f"feature_list_sparse_types: list({_TYPES}) >= 0 = []",
    f"feature_list_ragged_value_types: list({_TYPES}) >= 0 = []",
    "feature_list_ragged_split_types: list({int32, int64}) >= 0 = []",
    "feature_list_dense_shapes: list(shape) >= 0 = []",
]
register_op(
    "ParseSequenceExampleV2",
    inputs=["serialized: string", "debug_name: string", "context_sparse_keys: string",
            "context_dense_keys: string", "context_ragged_keys: string",
            "feature_list_sparse_keys: string", "feature_list_dense_keys: string",
            "feature_list_ragged_keys: string", "feature_list_dense_missing_assumed_empty: bool",
            "context_dense_defaults: Tcontext_dense"],
    outputs=["context_sparse_indices: Ncontext_sparse * int64",
             "context_sparse_values: context_sparse_types",
             "context_sparse_shapes: Ncontext_sparse * int64",
             "context_dense_values: Tcontext_dense",
             "context_ragged_values: context_ragged_value_types",
             "context_ragged_row_splits: context_ragged_split_types",
             "feature_list_sparse_indices: Nfeature_list_sparse * int64",
             "feature_list_sparse_values: feature_list_sparse_types",
             "feature_list_sparse_shapes: Nfeature_list_sparse * int64",
             "feature_list_dense_values: feature_list_dense_types",
             "feature_list_dense_lengths: Nfeature_list_dense * int64",
             "feature_list_ragged_values: feature_list_ragged_value_types",
             "feature_list_ragged_outer_splits: feature_list_ragged_split_types",
             "feature_list_ragged_inner_splits: feature_list_ragged_split_types"],
    attrs=_SEQ_ATTRS,
)  # fmt: skip


def _steps(seq: example_pb2.SequenceExample, key: str, dt: DataType, node: str) -> list | None:
    """The values of each step of feature list `key`; None when the example lacks it."""
    lists = seq.feature_lists.feature_list
    if key not in lists:
        return None
    try:
        return [_feature_values(f, key, dt, "") for f in lists[key].feature]
    except InvalidArgumentError as e:
        raise InvalidArgumentError(e.message, node) from None


def _zero(dt: DataType) -> object:
    return b"" if dt == DataType.DT_STRING else 0


def parse_feature_lists(
    seqs: list, batch: tuple, sparse: list, dense: list, assumed_empty: set, node: str
) -> list:
    """feature_list sparse (indices, values, shapes) and dense (values, lengths) outputs."""
    n = len(seqs)
    indices, values, shapes = [], [], []
    for key, dt in sparse:
        rows = [_steps(s, key, dt, node) or [] for s in seqs]
        max_steps = max((len(r) for r in rows), default=0)
        max_len = max((len(step) for r in rows for step in r), default=0)
        idx = [
            ([b] if batch else []) + [i, j]
            for b, r in enumerate(rows)
            for i, step in enumerate(r)
            for j in range(len(step))
        ]
        indices.append(np.asarray(idx, np.int64).reshape(-1, len(batch) + 2))
        values.append(_array([v for r in rows for step in r for v in step], dt))
        shapes.append(np.asarray(([n] if batch else []) + [max_steps, max_len], np.int64))
    dense_values, lengths = [], []
    for key, dt, shape in dense:
        size = int(np.prod(shape, dtype=np.int64))
        rows = []
        for s in seqs:
            steps = _steps(s, key, dt, node)
            if steps is None:
                if key not in assumed_empty:
                    raise InvalidArgumentError(
                        f"Name: <unknown>, Feature list '{key}' is required but could not be "
                        "found.  Did you mean to include it in "
                        "feature_list_dense_missing_assumed_empty or feature_list_dense_defaults?",
                        node,
                    )  # fmt: skip
                steps = []
            for step in steps:
                if len(step) != size:
                    raise InvalidArgumentError(
                        f"Name: <unknown>, Key: {key}, Index: 0.  Number of values != expected."
                        f"  values size: {len(step)} but output shape: {_shape_str(tuple(shape))}",
                        node,
                    )  # fmt: skip
            rows.append(steps)
        max_steps = max((len(r) for r in rows), default=0)
        flat = [v for r in rows for step in (r + [[_zero(dt)] * size] * (max_steps - len(r)))
                for v in step]  # fmt: skip
        dense_values.append(_array(flat, dt).reshape(tuple(batch) + (max_steps, *shape)))
        lengths.append(np.asarray([len(r) for r in rows], np.int64).reshape(batch))
    return [*indices, *values, *shapes, *dense_values, *lengths]


def parse_ragged_feature_lists(seqs: list, ragged: list, node: str) -> list:
    """feature_list ragged outputs: per key the values of every step of every example,
    outer splits (steps per example) and inner splits (values per step); a missing
    feature list has no steps."""
    values, outer, inner = [], [], []
    for key, dt, split_dt in ragged:
        rows = [_steps(s, key, dt, node) or [] for s in seqs]
        split_type = dtypes.as_numpy(split_dt)
        values.append(_array([v for r in rows for step in r for v in step], dt))
        outer.append(np.cumsum([0] + [len(r) for r in rows]).astype(split_type))
        inner.append(np.cumsum([0] + [len(step) for r in rows for step in r]).astype(split_type))
    return [*values, *outer, *inner]


@register_kernel("ParseSequenceExampleV2")
def _parse_sequence_example_v2(k: KernelConstruction) -> Compute:
    a = k.attrs
    node = k.node_name

    def compute(ctx, inputs: list) -> list:
        serialized = np.asarray(inputs[0], dtype=object)
        if serialized.ndim > 1:
            raise InvalidArgumentError("Expected serialized to be a scalar or vector", node)
        keys = [_strings(x) for x in inputs[2:8]]
        assumed_empty = set(keys[4][i] for i, flag in enumerate(np.asarray(inputs[8]).reshape(-1))
                            if flag)  # fmt: skip
        defaults = inputs[9:]
        seqs = []
        for data in serialized.reshape(-1):
            seq = example_pb2.SequenceExample()
            try:
                seq.ParseFromString(bytes(data))
            except Exception:  # noqa: BLE001  (protobuf's DecodeError and friends)
                raise InvalidArgumentError("Could not parse example input", node) from None
            seqs.append(seq)
        contexts = np.empty(serialized.shape, dtype=object)
        contexts.reshape(-1)[:] = [
            example_pb2.Example(features=s.context).SerializeToString() for s in seqs
        ]
        parser = ExampleParser(
            list(zip(keys[0], a["context_sparse_types"])),
            list(zip(keys[1], a["Tcontext_dense"], a["context_dense_shapes"], defaults)),
            list(zip(keys[2], a["context_ragged_value_types"], a["context_ragged_split_types"])),
            node,
        )
        sparse, dense, ragged_values, ragged_splits = parser.parse(contexts, [])
        lists = parse_feature_lists(
            seqs, serialized.shape, list(zip(keys[3], a["feature_list_sparse_types"])),
            list(zip(keys[4], a["feature_list_dense_types"], a["feature_list_dense_shapes"])),
            assumed_empty, node,
        )  # fmt: skip
        ragged_lists = parse_ragged_feature_lists(
            seqs,
            list(
                zip(
                    keys[5],
                    a["feature_list_ragged_value_types"],
                    a["feature_list_ragged_split_types"],
                )
            ),
            node,
        )
        return [*sparse, *dense, *ragged_values, *ragged_splits, *lists, *ragged_lists]

    return compute
