"""Tests (tensor conversion): a TensorList in a DT_VARIANT tensor crosses the proto boundary
as TensorFlow's TensorList::Encode writes it (type_name "tensorflow::TensorList", the set
items as AsProtoField tensors, varint64 metadata, the element shape proto): round trips,
golden bytes, byte-for-byte equality with TensorFlow's own encoding, TF-made protos
decoding to the right lists, and unknown variants staying opaque."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from google.protobuf import text_format

from common import tensor as tensor_util
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops.list_ops import (
    TENSOR_LIST_TYPE_NAME,
    TensorList,
    decode_tensor_list,
    encode_tensor_list,
    list_value,
)
from common.session import Session
from protos import graph_pb2

F32, I32 = DataType.DT_FLOAT, DataType.DT_INT32
VariantTensorDataProto = tensor_util.VariantTensorDataProto


def assert_same_list(got: Any, want: TensorList) -> None:
    assert isinstance(got, TensorList)
    assert got.element_dtype == want.element_dtype
    assert got.element_shape == want.element_shape
    assert got.max_num_elements == want.max_num_elements
    assert len(got.items) == len(want.items)
    for g, w in zip(got.items, want.items):
        if w is None:
            assert g is None
            continue
        assert g is not None and g.dtype == w.dtype and g.shape == w.shape
        if w.dtype == object and w.size and isinstance(w.flat[0], TensorList):
            for gi, wi in zip(g.flat, w.flat):
                assert_same_list(gi, wi)
        else:
            np.testing.assert_array_equal(g, w)


def f32(*shape: int) -> np.ndarray:
    return np.arange(np.prod(shape), dtype=np.float32).reshape(shape) + 0.5


LISTS = {
    "unset_items": TensorList(F32, (3,), (None, f32(3), None, f32(3) * 2)),
    "scalars_max_set": TensorList(I32, (), (np.int32(7), np.int32(-3)), max_num_elements=5),
    "unknown_rank": TensorList(F32, None, (f32(2), f32(2, 2), None)),
    "unknown_dims": TensorList(F32, (None, 2), (f32(1, 2), f32(4, 2))),
    "empty": TensorList(F32, (2, 2), ()),
    "empty_max_zero": TensorList(I32, None, (), max_num_elements=0),
    "all_unset": TensorList(DataType.DT_INT64, (4,), (None, None)),
    "empty_element": TensorList(F32, (0, 3), (np.zeros((0, 3), np.float32),)),
    "strings": TensorList(DataType.DT_STRING, (2,), (np.array([b"ab", b""], dtype=object), None)),
    "half": TensorList(DataType.DT_HALF, (2,), (np.array([1.5, -2], np.float16),)),
    "bool": TensorList(DataType.DT_BOOL, (3,), (np.array([True, False, True]),)),
    "complex": TensorList(DataType.DT_COMPLEX64, (), (np.complex64(1 - 2j),)),
    "int8": TensorList(DataType.DT_INT8, (2,), (np.array([-128, 127], np.int8),)),
    "large_max": TensorList(F32, (1,), (f32(1),), max_num_elements=2**31 - 1),
}
LISTS["nested"] = TensorList(
    DataType.DT_VARIANT,
    (),
    (list_value(LISTS["unset_items"]), None, list_value(LISTS["scalars_max_set"])),
)


@pytest.mark.parametrize("name", sorted(LISTS))
@pytest.mark.parametrize("form", ["tensor_content", "variant_val"])
def test_round_trip_through_a_tensor_proto(name: str, form: str) -> None:
    tl = LISTS[name]
    value = np.empty(2, dtype=object)
    value[:] = [tl, tl]
    if form == "tensor_content":
        proto = tensor_util.as_proto_tensor_content(value)
        assert proto.tensor_content and not proto.variant_val
    else:
        proto = tensor_util.from_numpy(value)
        assert len(proto.variant_val) == 2 and not proto.tensor_content
    assert proto.dtype == DataType.DT_VARIANT
    back = tensor_util.to_numpy(tensor_util.TensorProto.FromString(proto.SerializeToString()))
    assert back.shape == (2,)
    for got in back:
        assert_same_list(got, tl)


def test_a_list_value_scalar_is_inferred_as_variant() -> None:
    assert tensor_util.infer_dtype(list_value(LISTS["empty"])) == DataType.DT_VARIANT


# TF 2.21's bytes for Reserve(element_shape=-1, 3, int32) with item 1 set to 5 (what
# tf.io.serialize_tensor gives as the element), spelled out so this runs without TF.
GOLDEN = (
    b"\n\x16tensorflow::TensorList"
    b"\x12\x10"  # metadata, 16 bytes:
    b"\x02\x00\x02"  # 2 unset items: 0 and 2
    b"\x03"  # element_dtype DT_INT32
    b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"  # max_num_elements -1 as 2^64-1
    b"\x18\x01"  # TensorShapeProto{unknown_rank: true}
    b"\x1a\x07\x08\x03\x12\x00:\x01\x05"  # tensors[0]: int32 scalar 5, AsProtoField form
)


def test_golden_bytes_of_a_reserved_list_with_one_item_set() -> None:
    tl = TensorList(I32, None, (None, np.int32(5), None))
    assert encode_tensor_list(tl).SerializeToString() == GOLDEN
    assert_same_list(decode_tensor_list(VariantTensorDataProto.FromString(GOLDEN)), tl)


def test_scalar_items_keep_an_empty_shape_as_tensorflow_writes_it() -> None:
    proto = tensor_util.as_proto_field(np.float32(1.0))
    assert proto.HasField("tensor_shape") and not proto.tensor_shape.dim
    assert list(proto.float_val) == [1.0] and not proto.tensor_content


def test_unknown_variant_type_names_stay_opaque() -> None:
    other = VariantTensorDataProto(type_name="tensorflow::data::Foo", metadata=b"\x01\x02")
    value = np.empty((), dtype=object)
    value[()] = other
    for proto in (tensor_util.as_proto_tensor_content(value), tensor_util.from_numpy(value)):
        back = tensor_util.to_numpy(proto).item()
        assert isinstance(back, VariantTensorDataProto) and back == other


def _with_metadata(metadata: bytes, tensors: int = 0) -> VariantTensorDataProto:
    proto = VariantTensorDataProto(type_name=TENSOR_LIST_TYPE_NAME, metadata=metadata)
    for _ in range(tensors):
        proto.tensors.add().CopyFrom(tensor_util.as_proto_field(np.float32(1)))
    return proto


MAX = b"\xff" * 9 + b"\x01"


@pytest.mark.parametrize(
    "metadata, tensors",
    [
        (b"", 0),  # no unset count
        (b"\x00\x01", 0),  # no max_num_elements
        (b"\x01\x05\x01" + MAX, 1),  # unset index beyond the list
        (b"\x02\x01\x00\x01" + MAX, 1),  # unset indices out of order
        (b"\x00\x01\x80\x80\x80\x80\x08", 0),  # max_num_elements 2^31: not an int
        (b"\x00\xe7\x07" + MAX, 0),  # element_dtype 999
        (b"\x00\x01" + MAX + b"\xff", 0),  # element shape not a TensorShapeProto
    ],
)
def test_malformed_lists_are_invalid_argument(metadata: bytes, tensors: int) -> None:
    proto = _with_metadata(metadata, tensors)
    with pytest.raises(InvalidArgumentError, match="tensorflow::TensorList"):
        decode_tensor_list(proto)


# ---------------------------------------------------------------------------------------
# TensorFlow as the oracle
# ---------------------------------------------------------------------------------------


def _tf_lists(tf: Any) -> dict[str, tuple[Any, TensorList]]:
    """TensorFlow lists built eagerly and the TensorList each should be."""
    raw = tf.raw_ops
    x = f32(3, 2)
    reserved = raw.TensorListReserve(element_shape=[-1], num_elements=4, element_dtype=tf.float32)
    reserved = raw.TensorListSetItem(input_handle=reserved, index=2, item=x[1])
    pushed = raw.EmptyTensorList(
        element_shape=tf.constant([], tf.int32), max_num_elements=3, element_dtype=tf.int64
    )
    pushed = raw.TensorListPushBack(input_handle=pushed, tensor=np.int64(-9))
    strings = raw.TensorListFromTensor(
        tensor=tf.constant([b"a", b"bcd"]), element_shape=tf.constant(-1)
    )
    nested = raw.TensorListFromTensor(
        tensor=tf.stack([pushed, pushed]), element_shape=tf.constant([], tf.int32)
    )
    int_scalars = TensorList(DataType.DT_INT64, (), (np.int64(-9),), max_num_elements=3)
    return {
        "from_tensor": (
            raw.TensorListFromTensor(tensor=x, element_shape=[-1]),
            TensorList(F32, (None,), tuple(x)),
        ),
        "reserved": (
            reserved,
            TensorList(F32, (None,), (None, None, x[1], None)),
        ),
        "empty_unknown_rank": (
            raw.EmptyTensorList(element_shape=-1, max_num_elements=-1, element_dtype=tf.float32),
            TensorList(F32, None, ()),
        ),
        "pushed": (pushed, int_scalars),
        "strings": (
            strings,
            TensorList(
                DataType.DT_STRING,
                None,
                (np.array(b"a", dtype=object), np.array(b"bcd", dtype=object)),
            ),
        ),
        "nested": (
            nested,
            TensorList(DataType.DT_VARIANT, (), (list_value(int_scalars), list_value(int_scalars))),
        ),
    }


@pytest.fixture(scope="module")
def tf() -> Any:
    return pytest.importorskip("tensorflow")


@pytest.mark.parametrize(
    "name", ["from_tensor", "reserved", "empty_unknown_rank", "pushed", "strings", "nested"]
)
def test_tensorflow_and_we_encode_the_same_bytes(tf: Any, name: str) -> None:
    handle, want = _tf_lists(tf)[name]
    theirs = tensor_util.TensorProto.FromString(tf.io.serialize_tensor(handle).numpy())
    ours = tensor_util.as_proto_tensor_content(list_value(want))
    assert ours.dtype == theirs.dtype == DataType.DT_VARIANT
    assert list(ours.tensor_shape.dim) == list(theirs.tensor_shape.dim) == []
    assert ours.tensor_content == theirs.tensor_content
    # And their proto decodes to the list they built.
    assert_same_list(tensor_util.to_numpy(theirs).item(), want)


def test_tensorflow_reads_the_lists_we_encode(tf: Any) -> None:
    tl = LISTS["unset_items"]
    proto = tensor_util.as_proto_tensor_content(list_value(tl))
    handle = tf.io.parse_tensor(proto.SerializeToString(), out_type=tf.variant)
    stacked = tf.raw_ops.TensorListStack(
        input_handle=handle, element_shape=[3], element_dtype=tf.float32
    ).numpy()
    np.testing.assert_array_equal(stacked, [np.zeros(3), f32(3), np.zeros(3), f32(3) * 2])
    length = tf.raw_ops.TensorListLength(input_handle=handle).numpy()
    assert length == 4


def test_a_variant_val_proto_from_tensorflow_bytes_decodes(tf: Any) -> None:
    handle, want = _tf_lists(tf)["reserved"]
    content = tensor_util.TensorProto.FromString(tf.io.serialize_tensor(handle).numpy())
    (element,) = tensor_util.decode_string_list(content.tensor_content, 1)
    proto = tensor_util.TensorProto(dtype=DataType.DT_VARIANT)
    proto.variant_val.add().ParseFromString(element)
    assert_same_list(tensor_util.to_numpy(proto).item(), want)


def _const_graph(tf: Any, variant: Any) -> graph_pb2.GraphDef:
    """A GraphDef: Const holding a TensorList variant -> TensorListStack as `stack`."""
    text = f"""
    node {{ name: "l" op: "Const" attr {{ key: "dtype" value {{ type: DT_VARIANT }} }}
           attr {{ key: "value" value {{ tensor {{ {text_format.MessageToString(variant, as_one_line=True)} }} }} }} }}
    node {{ name: "shape" op: "Const" attr {{ key: "dtype" value {{ type: DT_INT32 }} }}
           attr {{ key: "value" value {{ tensor {{ dtype: DT_INT32 tensor_shape {{ dim {{ size: 1 }} }} int_val: 3 }} }} }} }}
    node {{ name: "stack" op: "TensorListStack" input: "l" input: "shape"
           attr {{ key: "element_dtype" value {{ type: DT_FLOAT }} }}
           attr {{ key: "num_elements" value {{ i: -1 }} }} }}
    """
    return text_format.Parse(text, graph_pb2.GraphDef())


@pytest.mark.parametrize("form", ["tensor_content", "variant_val"])
def test_a_graph_def_constant_list_runs_the_same_on_both(tf: Any, form: str) -> None:
    tl = LISTS["unset_items"]
    if form == "tensor_content":
        variant = tensor_util.as_proto_tensor_content(list_value(tl))
    else:
        variant = tensor_util.from_numpy(list_value(tl))
    gd = _const_graph(tf, variant)
    with Session(gd) as sess:
        (ours,) = sess.run(["stack:0"])
    graph = tf.Graph()
    with graph.as_default():
        tf.graph_util.import_graph_def(tf.compat.v1.GraphDef.FromString(gd.SerializeToString()))
    with tf.compat.v1.Session(graph=graph) as tf_sess:
        theirs = tf_sess.run("import/stack:0")
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(ours, [np.zeros(3), f32(3), np.zeros(3), f32(3) * 2])
