"""Attr values: AttrValue / OpDef protos <-> the Python values kernels and passes use.

The proto boundary for node attrs (docs/DESIGN.md "Values"). Python forms: str for
`string` (UTF-8 with surrogateescape, so arbitrary bytes survive a round trip), int,
float, bool, DataType for `type`, a shape tuple (int | None per dim; None for unknown
rank), np.ndarray for `tensor`, `NameAttrList` for `func`, `AttrPlaceholder` for a
FunctionDef's "$T"-style placeholder, and Python lists for `list(...)`.
Also converts registry OpDefs to OpDef protos and back, and renders the one-line
summaries TensorFlow prints in errors. Pure functions; safe from any thread.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from common import dtypes, tensor
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.op_def import ArgDef, AttrDef, OpDef
from common.tensor_shape import TensorShape, shape_from_proto, shape_string, shape_to_proto
from protos import attr_value_pb2, op_def_pb2, tensor_pb2, tensor_shape_pb2

AttrValue = attr_value_pb2.AttrValue
NameAttrListProto = attr_value_pb2.NameAttrList

# Re-exported so callers find shape conversion next to the other attr conversions.
__all__ = [
    "AttrPlaceholder",
    "NameAttrList",
    "attr_summary",
    "attrs_to_python",
    "op_def_from_proto",
    "op_def_to_proto",
    "shape_from_proto",
    "shape_to_proto",
    "to_proto",
    "to_python",
]


@dataclasses.dataclass(frozen=True)
class NameAttrList:
    """A `func` attr value: a function name and the attrs to instantiate it with."""

    name: str
    attrs: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class AttrPlaceholder:
    """AttrValue.placeholder: inside a FunctionDef, "take the caller's attr `name`"."""

    name: str


# The AttrValue oneof case (and ListValue field) of each scalar attr type; common.ops.op_def_util
# reads the same tables.
FIELD_OF_TYPE = {
    "string": "s",
    "int": "i",
    "float": "f",
    "bool": "b",
    "type": "type",
    "shape": "shape",
    "tensor": "tensor",
    "func": "func",
}
TYPE_OF_FIELD = {f: t for t, f in FIELD_OF_TYPE.items()}
LIST_FIELDS = ("s", "i", "f", "b", "type", "shape", "tensor", "func")


def _split_type(attr_type: str) -> tuple[str, bool]:
    """("int", True) for "list(int)"; InvalidArgumentError for unknown types."""
    is_list = attr_type.startswith("list(") and attr_type.endswith(")")
    base = attr_type[5:-1] if is_list else attr_type
    if base not in FIELD_OF_TYPE:
        raise InvalidArgumentError(f"Unknown attr type '{attr_type}'")
    return base, is_list


# ---------------------------------------------------------------------------------------
# AttrValue -> Python
# ---------------------------------------------------------------------------------------


def decode_string(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape")


def encode_string(value: str | bytes) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8", "surrogateescape")


def _func_to_python(f: NameAttrListProto) -> NameAttrList:
    return NameAttrList(f.name, {k: to_python(v) for k, v in sorted(f.attr.items())})


_SCALAR_TO_PYTHON: dict[str, Callable[[Any], Any]] = {
    "s": decode_string,
    "i": int,
    "f": float,
    "b": bool,
    "type": DataType,
    "shape": shape_from_proto,
    "tensor": tensor.to_numpy,
    "func": _func_to_python,
}


def to_python(av: AttrValue, attr_type: str | None = None) -> Any:
    """The Python value of an AttrValue. With `attr_type` (the OpDef's "int",
    "list(type)" ...) the value must have that type; without it the oneof case decides,
    and an empty list is []. An unset AttrValue is None ([] for a list type)."""
    case = av.WhichOneof("value")
    if attr_type is not None:
        base, is_list = _split_type(attr_type)
        if case is None:
            return [] if is_list else None
        if case == "placeholder":
            return AttrPlaceholder(av.placeholder)
        want = "list" if is_list else FIELD_OF_TYPE[base]
        if case != want:
            raise InvalidArgumentError(
                f"AttrValue had value with type '{_case_type(av)}' when '{attr_type}' expected"
            )
        if is_list:
            return _list_to_python(av.list, FIELD_OF_TYPE[base], attr_type)
        return _SCALAR_TO_PYTHON[case](getattr(av, case))
    if case is None:
        return None
    if case == "placeholder":
        return AttrPlaceholder(av.placeholder)
    if case == "list":
        present = [f for f in LIST_FIELDS if len(getattr(av.list, f))]
        return _list_to_python(av.list, present[0], "list") if present else []
    return _SCALAR_TO_PYTHON[case](getattr(av, case))


def _list_to_python(lv: AttrValue.ListValue, field: str, attr_type: str) -> list:
    for other in LIST_FIELDS:
        if other != field and len(getattr(lv, other)):
            raise InvalidArgumentError(
                f"AttrValue had value with type 'list({TYPE_OF_FIELD[other]})' when "
                f"'{attr_type}' expected"
            )
    convert = _SCALAR_TO_PYTHON[field]
    return [convert(x) for x in getattr(lv, field)]


def _case_type(av: AttrValue) -> str:
    case = av.WhichOneof("value")
    if case == "list":
        present = [f for f in LIST_FIELDS if len(getattr(av.list, f))]
        return f"list({TYPE_OF_FIELD[present[0]]})" if present else "list"
    return TYPE_OF_FIELD.get(case or "", case or "unset")


def attrs_to_python(attr_protos: Mapping[str, AttrValue], op_def: OpDef | None) -> dict[str, Any]:
    """A node's attrs as Python values, typed by the OpDef where it declares the attr,
    with the OpDef's defaults filled in for attrs the NodeDef omits (TF strips
    default-valued attrs when shipping partitions)."""
    out: dict[str, Any] = {}
    for name, av in attr_protos.items():
        attr_def = op_def.attr(name) if op_def is not None else None
        out[name] = to_python(av, attr_def.type if attr_def else None)
    if op_def is not None:
        for attr_def in op_def.attrs:
            if attr_def.name not in out and attr_def.has_default:
                default = attr_def.default
                out[attr_def.name] = list(default) if isinstance(default, list) else default
    return out


# ---------------------------------------------------------------------------------------
# Python -> AttrValue
# ---------------------------------------------------------------------------------------


def _as_dtype(value: Any) -> int:
    if isinstance(value, DataType):
        return int(value)
    if isinstance(value, str):
        return int(dtypes.from_name(value))
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if not dtypes.is_valid(int(value)):
            raise InvalidArgumentError(f"Invalid DataType {int(value)} for a type attr")
        return int(value)
    if isinstance(value, (np.dtype, type)):
        return int(dtypes.from_numpy(value))
    raise InvalidArgumentError(f"Expected a dtype for a type attr, got {value!r}")


def _as_int(value: Any) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise InvalidArgumentError(f"Expected an int for an int attr, got {value!r}")
    return int(value)


def _as_float(value: Any) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise InvalidArgumentError(f"Expected a float for a float attr, got {value!r}")
    return float(value)


def _as_bool(value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InvalidArgumentError(f"Expected a bool for a bool attr, got {value!r}")
    return bool(value)


def _as_string(value: Any) -> bytes:
    if not isinstance(value, (str, bytes)):
        raise InvalidArgumentError(f"Expected a string for a string attr, got {value!r}")
    return encode_string(value)


def _as_tensor(value: Any) -> tensor_pb2.TensorProto:
    if isinstance(value, tensor_pb2.TensorProto):
        return value
    if isinstance(value, np.ndarray):
        return tensor.from_numpy(value)
    return tensor.make_tensor_proto(value)


def _as_func(value: Any) -> NameAttrListProto:
    if isinstance(value, NameAttrListProto):
        return value
    if isinstance(value, str):
        return NameAttrListProto(name=value)
    if not isinstance(value, NameAttrList):
        raise InvalidArgumentError(f"Expected a function for a func attr, got {value!r}")
    proto = NameAttrListProto(name=value.name)
    for k, v in value.attrs.items():
        proto.attr[k].CopyFrom(to_proto(v))
    return proto


_SCALAR_TO_PROTO: dict[str, Callable[[Any], Any]] = {
    "string": _as_string,
    "int": _as_int,
    "float": _as_float,
    "bool": _as_bool,
    "type": _as_dtype,
    "shape": shape_to_proto,
    "tensor": _as_tensor,
    "func": _as_func,
}
_MESSAGE_FIELDS = ("shape", "tensor", "func")


def _set_scalar(av: AttrValue, base: str, value: Any) -> None:
    converted = _SCALAR_TO_PROTO[base](value)
    field = FIELD_OF_TYPE[base]
    if field in _MESSAGE_FIELDS:
        getattr(av, field).CopyFrom(converted)
    else:
        setattr(av, field, converted)


def to_proto(value: Any, attr_type: str | None = None) -> AttrValue:
    """An AttrValue for a Python value; with no `attr_type` the Python type decides (a
    tuple is a shape, a list is a list(...), None is an unknown-rank shape). AttrValue
    protos are returned unchanged. InvalidArgumentError when the value does not fit."""
    if isinstance(value, AttrValue):
        return value
    av = AttrValue()
    if isinstance(value, AttrPlaceholder):
        av.placeholder = value.name
        return av
    if attr_type is None:
        attr_type = infer_attr_type(value)
    base, is_list = _split_type(attr_type)
    if not is_list:
        _set_scalar(av, base, value)
        return av
    if not isinstance(value, (list, tuple)):
        raise InvalidArgumentError(f"Expected a list for a {attr_type} attr, got {value!r}")
    av.list.SetInParent()
    target = getattr(av.list, FIELD_OF_TYPE[base])
    for item in value:
        converted = _SCALAR_TO_PROTO[base](item)
        if FIELD_OF_TYPE[base] in _MESSAGE_FIELDS:
            target.add().CopyFrom(converted)
        else:
            target.append(converted)
    return av


def _infer_scalar(value: Any) -> str | None:
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (DataType, np.dtype)):
        return "type"
    if isinstance(value, (int, np.integer)):
        return "int"
    if isinstance(value, (float, np.floating)):
        return "float"
    if isinstance(value, (str, bytes)):
        return "string"
    if isinstance(value, (tuple, TensorShape, tensor_shape_pb2.TensorShapeProto)) or value is None:
        return "shape"
    if isinstance(value, (np.ndarray, tensor_pb2.TensorProto)):
        return "tensor"
    if isinstance(value, (NameAttrList, NameAttrListProto)):
        return "func"
    return None


def infer_attr_type(value: Any) -> str:
    """The attr type a Python value would have ("int", "list(shape)" ...)."""
    if isinstance(value, list):
        if not value:
            return "list(int)"  # any list field would do: all encode an empty list the same
        inner = {_infer_scalar(v) for v in value}
        if len(inner) == 1 and None not in inner:
            return f"list({inner.pop()})"
        if inner == {"int", "float"}:
            return "list(float)"
        raise InvalidArgumentError(f"Cannot infer an attr type for the list {value!r}")
    base = _infer_scalar(value)
    if base is None:
        raise InvalidArgumentError(f"Cannot infer an attr type for {type(value).__name__}")
    return base


# ---------------------------------------------------------------------------------------
# Summaries (TF's SummarizeAttrValue)
# ---------------------------------------------------------------------------------------


def _summarize_float(f: float) -> str:
    """TF's StrCat of a float: the shortest of %.6g / %.9g that round-trips."""
    x = np.float32(f)
    text = f"{float(x):.6g}"
    return text if np.float32(text) == x else f"{float(x):.9g}"


def _summarize_double(f: float) -> str:
    text = f"{f:.15g}"
    return text if float(text) == f else f"{f:.17g}"


_ESCAPES = {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t", 0x22: '\\"', 0x27: "\\'", 0x5C: "\\\\"}


def c_escape(data: bytes) -> str:
    """absl::CEscape: C escapes, octal for other bytes outside printable ASCII."""
    out = []
    for b in data:
        if b in _ESCAPES:
            out.append(_ESCAPES[b])
        elif 0x20 <= b < 0x7F:
            out.append(chr(b))
        else:
            out.append(f"\\{b:03o}")
    return "".join(out)


def utf8_safe_c_escape(data: bytes) -> bytes:
    """absl::Utf8SafeCEscape: as c_escape, but bytes >= 0x80 are kept (UTF-8 text stays
    readable); what tf.print and the Assert/Print kernels show of strings."""
    out = bytearray()
    for b in data:
        if b in _ESCAPES:
            out += _ESCAPES[b].encode()
        elif b < 0x20 or b == 0x7F:
            out += b"\\%03o" % b
        else:
            out.append(b)
    return bytes(out)


_MAX_STRING_SUMMARY = 80


def _summarize_string(data: bytes) -> str:
    """TF's SummarizeString: quoted and escaped; long strings keep 10 chars each end."""
    escaped = c_escape(data)
    if len(escaped) >= _MAX_STRING_SUMMARY:
        escaped = escaped[:10] + "..." + escaped[-10:]
    return f'"{escaped}"'


_SUMMARY_VALUES = 3  # TF's Tensor::DebugString default


def _summarize_element(x: Any) -> str:
    if isinstance(x, bytes):
        return c_escape(x)
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, np.float64):
        return _summarize_double(float(x))
    return _summarize_float(float(x))  # float32 and narrower print as float


def _summarize_values(arr: np.ndarray) -> str:
    """TF's Tensor::SummarizeValue(3): elements of the last dim space-separated, inner
    dims bracketed (the outermost not), "..." where elements were left out."""
    flat = arr.reshape(-1)
    limit = min(_SUMMARY_VALUES, flat.size)
    if (
        arr.dtype.kind == "c"
        or arr.dtype == object
        and flat.size
        and not isinstance(flat[0], bytes)
    ):
        text = " ".join("?" for _ in range(limit))  # TF leaves these types unprinted
        return text + ("..." if flat.size > limit else "")
    if arr.ndim == 0:
        return _summarize_element(flat[0])
    out: list[str] = []
    index = 0

    def one_dim(d: int) -> None:
        nonlocal index
        if index >= limit:
            return
        if d == arr.ndim - 1:
            for i in range(arr.shape[d]):
                if index >= limit:
                    if d != 0:
                        out.append("...")
                    return
                if i > 0:
                    out.append(" ")
                out.append(_summarize_element(flat[index]))
                index += 1
            return
        for _ in range(arr.shape[d]):
            opened = index < limit
            if opened:
                out.append("[")
            one_dim(d + 1)
            if index < limit or opened:
                out.append("]")

    one_dim(0)
    if flat.size > limit:
        out.append("...")
    return "".join(out)


def _summarize_tensor(t: tensor_pb2.TensorProto) -> str:
    """TF's Tensor::DebugString: Tensor<type: float shape: [2] values: 1 2>."""
    try:
        arr = tensor.to_numpy(t)
    except InvalidArgumentError:
        return f"<Invalid TensorProto: dtype {t.dtype}>"
    shape = shape_string(arr.shape)
    values = _summarize_values(arr)
    return f"Tensor<type: {dtypes.tf_name(t.dtype)} shape: {shape} values: {values}>"


def _summarize_func(f: NameAttrListProto) -> str:
    inner = ", ".join(f"{k}={attr_summary(v)}" for k, v in sorted(f.attr.items()))
    return f"{f.name}[{inner}]"


def _summarize_shape(s: tensor_shape_pb2.TensorShapeProto) -> str:
    return shape_string(shape_from_proto(s))


_SUMMARIZE: dict[str, Callable[[Any], str]] = {
    "s": _summarize_string,
    "i": str,
    "f": _summarize_float,
    "b": lambda b: "true" if b else "false",
    "type": lambda t: DataType(t).name if dtypes.is_valid(t) or t == 0 else str(t),
    "shape": _summarize_shape,
    "tensor": _summarize_tensor,
    "func": _summarize_func,
}


_MAX_LIST_SUMMARY = 30


def attr_summary(av: AttrValue) -> str:
    """One line, as TensorFlow prints attrs: DT_FLOAT, "SAME", [1, 2], [2,?], f[T=DT_FLOAT]."""
    case = av.WhichOneof("value")
    if case is None:
        return "<Unknown AttrValue type>"
    if case == "placeholder":
        return f"${av.placeholder}"
    if case == "list":
        pieces = [
            _SUMMARIZE[f](x)
            for f in LIST_FIELDS
            if len(getattr(av.list, f))
            for x in getattr(av.list, f)
        ]
        if len(pieces) >= _MAX_LIST_SUMMARY:  # TF also appends a fingerprint; we do not
            pieces = pieces[:5] + ["..."] + pieces[-5:]
        return "[" + ", ".join(pieces) + "]"
    return _SUMMARIZE[case](getattr(av, case))


# ---------------------------------------------------------------------------------------
# OpDef <-> proto
# ---------------------------------------------------------------------------------------


def _arg_to_proto(arg: ArgDef) -> op_def_pb2.OpDef.ArgDef:
    return op_def_pb2.OpDef.ArgDef(
        name=arg.name,
        type=dtypes.as_proto_enum(arg.type),
        type_attr=arg.type_attr,
        number_attr=arg.number_attr,
        type_list_attr=arg.type_list_attr,
        is_ref=arg.is_ref,
    )


def _arg_from_proto(p: op_def_pb2.OpDef.ArgDef) -> ArgDef:
    return ArgDef(
        name=p.name,
        type=DataType(p.type),
        type_attr=p.type_attr,
        number_attr=p.number_attr,
        type_list_attr=p.type_list_attr,
        is_ref=p.is_ref,
    )


def _allowed_type(attr_type: str) -> str:
    """Allowed values are a list of the attr's element type."""
    base, _ = _split_type(attr_type)
    return f"list({base})"


def _attr_to_proto(a: AttrDef) -> op_def_pb2.OpDef.AttrDef:
    p = op_def_pb2.OpDef.AttrDef(
        name=a.name, type=a.type, has_minimum=a.has_minimum, minimum=a.minimum
    )
    if a.has_default:
        p.default_value.CopyFrom(to_proto(a.default, a.type))
    if a.allowed_values is not None:
        p.allowed_values.CopyFrom(to_proto(list(a.allowed_values), _allowed_type(a.type)))
    return p


def _attr_from_proto(p: op_def_pb2.OpDef.AttrDef) -> AttrDef:
    has_default = p.HasField("default_value")
    allowed = None
    if p.HasField("allowed_values"):
        allowed = tuple(to_python(p.allowed_values, _allowed_type(p.type)))
    return AttrDef(
        name=p.name,
        type=p.type,
        has_default=has_default,
        default=to_python(p.default_value, p.type) if has_default else None,
        allowed_values=allowed,
        has_minimum=p.has_minimum,
        minimum=p.minimum,
    )


def op_def_to_proto(op_def: OpDef) -> op_def_pb2.OpDef:
    """TensorFlow's OpDef message for a registered op (what `python -m common ops`
    prints and what function signatures are made of)."""
    return op_def_pb2.OpDef(
        name=op_def.name,
        input_arg=[_arg_to_proto(a) for a in op_def.input_args],
        output_arg=[_arg_to_proto(a) for a in op_def.output_args],
        attr=[_attr_to_proto(a) for a in op_def.attrs],
        summary=op_def.summary,
        is_commutative=op_def.is_commutative,
        is_aggregate=op_def.is_aggregate,
        is_stateful=op_def.is_stateful,
        allows_uninitialized_input=op_def.allows_uninitialized_input,
    )


def op_def_from_proto(proto: op_def_pb2.OpDef) -> OpDef:
    """A registry OpDef from an OpDef message (e.g. a FunctionDef's signature)."""
    return OpDef(
        name=proto.name,
        input_args=tuple(_arg_from_proto(a) for a in proto.input_arg),
        output_args=tuple(_arg_from_proto(a) for a in proto.output_arg),
        attrs=tuple(_attr_from_proto(a) for a in proto.attr),
        is_stateful=proto.is_stateful,
        is_commutative=proto.is_commutative,
        is_aggregate=proto.is_aggregate,
        allows_uninitialized_input=proto.allows_uninitialized_input,
        summary=proto.summary,
    )
