"""Tests (ops stage): variant arithmetic (ZerosLike and AddN on DT_VARIANT tensors holding
TensorLists and Optionals, as gradients of control flow v2 use them) and the Optional ops,
with TF's semantics and messages; signatures and results against TensorFlow's."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from common import tensor as tensor_util
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops.list_ops import TensorList, list_of, list_value
from common.ops.optional_ops import (
    Optional,
    decode_optional,
    encode_optional,
    optional_of,
    optional_value,
)
from tests.common.ops.kernel_harness import op_def_mismatches
from tests.common.ops.signatures import assert_signature_matches_tensorflow, module_ops

from . import run_kernel

F32, I32, VARIANT = DataType.DT_FLOAT, DataType.DT_INT32, DataType.DT_VARIANT
OPTIONAL_OPS = ["OptionalFromValue", "OptionalGetValue", "OptionalHasValue", "OptionalNone"]


def f32(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


def zeros_like(v: np.ndarray) -> np.ndarray:
    return run_kernel("ZerosLike", [v], T=VARIANT)[0]


def add_n(*vs: np.ndarray) -> np.ndarray:
    return run_kernel("AddN", list(vs), T=VARIANT)[0]


def a_list(*items: np.ndarray | None, shape: Any = (2,)) -> np.ndarray:
    return list_value(TensorList(F32, shape, tuple(items), max_num_elements=7))


# ------------------------------------------------------------------------- TensorList


def test_zeros_like_of_a_list_is_a_list_of_zeros_not_a_string() -> None:
    out = list_of(zeros_like(a_list(f32(1, 2), None, f32(3, 4))), "n")
    assert out.element_dtype == F32 and out.element_shape == (2,)
    assert out.max_num_elements == -1  # TensorListZerosLike does not copy it
    assert out.items[1] is None  # never set: stays unset
    np.testing.assert_array_equal(out.items[0], np.zeros(2, np.float32))
    assert out.items[0].dtype == np.float32


def test_add_n_of_lists_adds_items_and_an_unset_item_adds_as_the_other() -> None:
    a = a_list(f32(1, 2), None, f32(3, 4), shape=None)
    b = a_list(f32(10, 20), f32(5, 6), None)
    out = list_of(add_n(a, b, a), "n")
    assert out.element_shape == (2,)  # merged
    np.testing.assert_array_equal(out.items[0], f32(12, 24))
    np.testing.assert_array_equal(out.items[1], f32(5, 6))
    np.testing.assert_array_equal(out.items[2], f32(6, 8))


def test_add_n_of_lists_checks_dtype_shape_and_length_as_tensorflow() -> None:
    with pytest.raises(InvalidArgumentError, match="different lengths. One is 1 and the other"):
        add_n(a_list(f32(1, 2)), a_list(f32(1, 2), f32(1, 2)))
    ints = list_value(TensorList(I32, (2,), (np.array([1, 2], np.int32),)))
    with pytest.raises(InvalidArgumentError, match="different dtypes. One is float and the"):
        add_n(a_list(f32(1, 2)), ints)
    with pytest.raises(InvalidArgumentError, match="incompatible element shapes"):
        add_n(a_list(f32(1, 2)), a_list(f32(1, 2), shape=(3,)))


def test_add_n_of_lists_of_lists_recurses() -> None:
    inner = a_list(f32(1, 2))
    outer = list_value(TensorList(VARIANT, (), (inner,)))
    out = list_of(add_n(outer, outer), "n")
    np.testing.assert_array_equal(list_of(out.items[0], "n").items[0], f32(2, 4))
    zero = list_of(zeros_like(outer), "n")
    np.testing.assert_array_equal(list_of(zero.items[0], "n").items[0], f32(0, 0))


def test_zeros_like_of_strings_is_unchanged() -> None:
    s = np.array([b"a", b"bc"], dtype=object)
    assert run_kernel("ZerosLike", [s], T=DataType.DT_STRING)[0].tolist() == [b"", b""]


# -------------------------------------------------------------------------- Optionals


def test_optional_ops_round_trip_and_has_value() -> None:
    x, n = f32(1, 2), np.array(3, np.int32)
    opt = run_kernel("OptionalFromValue", [x, n], Toutput_types=[F32, I32])[0]
    none = run_kernel("OptionalNone", [])[0]
    assert (
        run_kernel("OptionalHasValue", [opt])[0] and not run_kernel("OptionalHasValue", [none])[0]
    )
    got = run_kernel("OptionalGetValue", [opt], output_types=[F32, I32], output_shapes=[(2,), ()])
    np.testing.assert_array_equal(got[0], x)
    assert got[1] == 3 and got[1].dtype == np.int32
    x[0] = 100.0  # the optional holds its own copy
    assert optional_of(opt, "n").values[0][0] == 1.0  # type: ignore[index]


def test_optional_get_value_errors_as_tensorflow() -> None:
    none = optional_value(Optional())
    with pytest.raises(InvalidArgumentError, match="The optional does not have a value."):
        run_kernel("OptionalGetValue", [none], output_types=[F32], output_shapes=[None])
    opt = optional_value(Optional((f32(1, 2),)))
    with pytest.raises(InvalidArgumentError, match="expected number of components is 2"):
        run_kernel("OptionalGetValue", [opt], output_types=[F32, F32], output_shapes=[None] * 2)
    with pytest.raises(InvalidArgumentError, match="expected type at index 0 is int32"):
        run_kernel("OptionalGetValue", [opt], output_types=[I32], output_shapes=[None])
    with pytest.raises(InvalidArgumentError, match=r"expected shape at index 0 is \[3\]"):
        run_kernel("OptionalGetValue", [opt], output_types=[F32], output_shapes=[(3,)])


def test_zeros_like_and_add_n_of_optionals() -> None:
    opt = optional_value(Optional((f32(1, 2), np.array(4, np.int32))))
    zero = optional_of(zeros_like(opt), "n")
    assert zero.values is not None
    np.testing.assert_array_equal(zero.values[0], f32(0, 0))
    assert zero.values[1] == 0 and zero.values[1].dtype == np.int32
    total = optional_of(add_n(opt, opt, opt), "n").values
    assert total is not None
    np.testing.assert_array_equal(total[0], f32(3, 6))
    none = optional_value(Optional())
    assert not optional_of(add_n(none, none), "n").has_value
    assert not optional_of(zeros_like(none), "n").has_value
    with pytest.raises(InvalidArgumentError, match="one has a value and the other doesn't"):
        add_n(opt, none)


def test_optional_wire_form_is_tensorflows() -> None:
    proto = encode_optional(Optional((f32(1, 2),)))
    assert proto.type_name == "tensorflow::data::Optional" and proto.metadata == b"\x01"
    np.testing.assert_array_equal(tensor_util.to_numpy(proto.tensors[0]), f32(1, 2))
    back = decode_optional(proto)
    assert back.values is not None
    np.testing.assert_array_equal(back.values[0], f32(1, 2))
    assert encode_optional(Optional()).metadata == b"\x00"
    assert not decode_optional(encode_optional(Optional())).has_value


def test_module_registers_exactly_the_optional_ops() -> None:
    assert module_ops("common.ops.optional_ops") == OPTIONAL_OPS


@pytest.mark.parametrize("name", OPTIONAL_OPS)
def test_optional_signature_matches_tensorflow(name: str) -> None:
    pytest.importorskip("tensorflow")
    assert op_def_mismatches(name) == []
    assert_signature_matches_tensorflow(name)


def test_list_zeros_like_and_add_match_tensorflow() -> None:
    tf = pytest.importorskip("tensorflow")
    raw = tf.raw_ops
    handle = raw.TensorListFromTensor(tensor=[[1.0, 2.0], [3.0, 4.0]], element_shape=[2])
    z = raw.TensorListStack(
        input_handle=raw.ZerosLike(x=handle), element_shape=[2], element_dtype=tf.float32
    )
    s = raw.TensorListStack(
        input_handle=raw.AddN(inputs=[handle, handle]), element_shape=[2], element_dtype=tf.float32
    )
    ours = a_list(f32(1, 2), f32(3, 4))
    np.testing.assert_array_equal(np.stack(list_of(zeros_like(ours), "n").items), z.numpy())
    np.testing.assert_array_equal(np.stack(list_of(add_n(ours, ours), "n").items), s.numpy())


@pytest.mark.parametrize("has_value", [True, False])
def test_optional_tensor_bytes_match_tensorflows_serialization(has_value: bool) -> None:
    tf = pytest.importorskip("tensorflow")
    if has_value:
        theirs = tf.raw_ops.OptionalFromValue(components=[tf.constant([1.0, 2.0])])
        ours = Optional((f32(1, 2),))
    else:
        theirs, ours = tf.raw_ops.OptionalNone(), Optional()
    proto = tensor_util.TensorProto.FromString(tf.io.serialize_tensor(theirs).numpy())
    mine = tensor_util.as_proto_tensor_content(optional_value(ours))
    assert (mine.dtype, mine.tensor_content) == (proto.dtype, proto.tensor_content)
    back = tensor_util.to_numpy(proto).item()
    assert isinstance(back, Optional) and back.has_value == has_value
    for got, want in zip(back.values or (), ours.values or ()):
        np.testing.assert_array_equal(got, want)
