"""Tests (ops stage): UnicodeDecode(WithOffsets), UnicodeEncode, RaggedTensorToTensor and
RaggedTensorToSparse against TensorFlow (the oracle): ill-formed input replaced, skipped
or refused as TensorFlow's converter does, and ragged partitions to dense and sparse."""

from __future__ import annotations

import os

import numpy as np
import pytest

from tests.common.ops.kernel_harness import assert_same_as_tf
from tests.common.ops.signatures import assert_signature_matches_tensorflow

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
pytest.importorskip("tensorflow")

OPS = [
    "UnicodeDecode",
    "UnicodeDecodeWithOffsets",
    "UnicodeEncode",
    "RaggedTensorToTensor",
    "RaggedTensorToSparse",
]


def _strings(*values: bytes) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


TEXT = _strings(
    "héllo wörld 😀".encode(),
    b"a\x01\x7f\xc2\x85\tb",  # C0 controls, DEL and a C1 control
    b"\xff\xc3(\xed\xa0\x80x\xf0\x9f\x98",  # ill-formed: maximal subparts, a truncated tail
    b"",
)


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name: str) -> None:
    assert_signature_matches_tensorflow(name)


@pytest.mark.parametrize("op", ["UnicodeDecode", "UnicodeDecodeWithOffsets"])
@pytest.mark.parametrize("errors", ["replace", "ignore", "strict"])
@pytest.mark.parametrize("controls", [False, True])
def test_decode_utf8_as_tensorflow(op: str, errors: str, controls: bool) -> None:
    attrs = {"input_encoding": "UTF-8", "errors": errors, "replace_control_characters": controls}
    assert_same_as_tf(op, {"input": TEXT}, attrs)
    assert_same_as_tf(op, {"input": TEXT[:2]}, attrs)  # well-formed: strict decodes too
    assert_same_as_tf(op, {"input": TEXT[:1]}, {**attrs, "replacement_char": 63})


@pytest.mark.parametrize("encoding", ["UTF-16-BE", "UTF-32-BE", "NO-SUCH-ENCODING"])
def test_decode_other_encodings_as_tensorflow(encoding: str) -> None:
    from common.dtypes import DataType

    codec = {"UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}.get(encoding, "utf-8")
    attrs = {"input_encoding": encoding}
    data = _strings("añ😀".encode(codec), b"\x00a\xd8\x00", b"")
    assert_same_as_tf("UnicodeDecodeWithOffsets", {"input": data}, attrs)
    # int32 splits through UnicodeDecode only: TensorFlow 2.21's UnicodeDecodeWithOffsets
    # aborts the process on Tsplits=int32 (a CHECK on its int64 offsets output).
    assert_same_as_tf("UnicodeDecode", {"input": data}, {**attrs, "Tsplits": DataType.DT_INT32})


@pytest.mark.parametrize("encoding", ["UTF-8", "UTF-16-BE", "UTF-32-BE"])
@pytest.mark.parametrize("errors", ["replace", "ignore"])
def test_encode_as_tensorflow(encoding: str, errors: str) -> None:
    values = np.array([104, 0x110000, -1, 233, 0x1F600, 0xD800, 65], np.int32)
    splits = np.array([0, 2, 4, 4, 7], np.int64)
    attrs = {"output_encoding": encoding, "errors": errors}
    assert_same_as_tf("UnicodeEncode", {"input_values": values, "input_splits": splits}, attrs)


_V = np.arange(7, dtype=np.float32)
_SPLITS = np.array([0, 3, 3, 7], np.int64)


@pytest.mark.parametrize(
    "shape", [np.int64(-1), np.array([2, 2], np.int64), np.array([-1, 5], np.int32)]
)
def test_to_tensor_pads_and_crops_as_tensorflow(shape: np.ndarray) -> None:
    inputs = {
        "shape": shape,
        "values": _V,
        "default_value": np.float32(9),
        "row_partition_tensors": [_SPLITS],
    }
    assert_same_as_tf("RaggedTensorToTensor", inputs, {"row_partition_types": ["ROW_SPLITS"]})


def test_to_tensor_nested_splits_inner_dims_and_value_rowids_as_tensorflow() -> None:
    v2 = np.arange(14, dtype=np.int32).reshape(7, 2)
    nested = {
        "shape": np.int64(-1),
        "values": v2,
        "default_value": np.array([-1, -2], np.int32),
        "row_partition_tensors": [np.array([0, 1, 3], np.int64), _SPLITS],
    }
    types = ["ROW_SPLITS", "ROW_SPLITS"]
    assert_same_as_tf("RaggedTensorToTensor", nested, {"row_partition_types": types})
    rowids = {
        "shape": np.int64(-1),
        "values": _V,
        "default_value": np.float32(0),
        "row_partition_tensors": [np.int64(4), np.array([0, 0, 0, 2, 2, 2, 3], np.int64)],
    }
    types = ["FIRST_DIM_SIZE", "VALUE_ROWIDS"]
    assert_same_as_tf("RaggedTensorToTensor", rowids, {"row_partition_types": types})


def test_to_sparse_as_tensorflow() -> None:
    v2 = np.arange(14, dtype=np.int32).reshape(7, 2)
    nested = [np.array([0, 1, 3], np.int64), _SPLITS]
    assert_same_as_tf("RaggedTensorToSparse", {"rt_nested_splits": nested, "rt_dense_values": v2})
    words = _strings(*(c.encode() for c in "abcdefg"))
    splits32 = [_SPLITS.astype(np.int32)]
    assert_same_as_tf(
        "RaggedTensorToSparse", {"rt_nested_splits": splits32, "rt_dense_values": words}
    )
