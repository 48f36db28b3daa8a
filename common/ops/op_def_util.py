"""Op signatures applied to NodeDefs: dtypes of a node's args, default attrs, validation.

TensorFlow's op_def_util / node_def_util for the graph constructor: `in_out_types`
(InOutTypesForNode) resolves each input and output arg to dtypes from the node's attrs,
`add_default_attrs` (AddDefaultsToNodeDef) fills omitted attrs, `validate_node_attrs`
(the attr half of ValidateNodeDef) checks kinds, allowed values and minimums. Messages
follow TensorFlow's wording and name the node as `{{node NAME}}`.

Attrs are AttrValue protos keyed by name and are read, never mutated; default protos are
built once per AttrDef and shared between nodes (replace them, do not mutate them).
Everything here is pure; caches are filled under the GIL and safe from any thread.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, Literal

from common import dtypes
from common.attr_value import FIELD_OF_TYPE, LIST_FIELDS, TYPE_OF_FIELD
from common.dtypes import DataType
from common.errors import InvalidArgumentError
from common.ops.registry import ArgDef, AttrDef, OpDef

# A number_attr this large would make a type vector that cannot be real: refuse it rather
# than allocate it (fuzzed GraphDefs carry such values).
MAX_NUMBER_ATTR = 1 << 20

_DT_BY_INT: dict[int, DataType] = {int(d): d for d in DataType}


def format_node_for_error(node_name: str) -> str:
    """TensorFlow's FormatNodeDefForError."""
    return "{{node " + node_name + "}}"


# ---------------------------------------------------------------------------------------
# Summaries (SummarizeOpDef / SummarizeAttrValue)
# ---------------------------------------------------------------------------------------


def summarize_value(value: Any) -> str:
    """A Python attr value the way TensorFlow's SummarizeAttrValue prints it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, DataType):
        return value.name
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:g}" if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, bytes):
        return '"' + value.decode("utf-8", "backslashreplace") + '"'
    if value is None:
        return "<unknown>"
    if isinstance(value, tuple):  # a shape
        return "[" + ",".join("?" if d is None else str(d) for d in value) + "]"
    if isinstance(value, list):
        return "[" + ", ".join(summarize_value(v) for v in value) + "]"
    if hasattr(value, "name") and hasattr(value, "attrs"):  # NameAttrList
        return str(value.name)
    return "<" + type(value).__name__ + ">"


def _summarize_arg(arg: ArgDef) -> str:
    if arg.type != DataType.DT_INVALID:
        ty = dtypes.tf_name(arg.type)
    else:
        ty = arg.type_list_attr or arg.type_attr
    if arg.number_attr:
        ty = arg.number_attr + "*" + ty
    if arg.is_ref:
        ty = "Ref(" + ty + ")"
    return arg.name + ":" + ty


def summarize_op_def(op_def: OpDef) -> str:
    """TensorFlow's SummarizeOpDef: "Op<name=AddV2; signature=x:T, y:T -> z:T; attr=...>"."""
    parts = [
        "Op<name=" + op_def.name,
        "signature="
        + ", ".join(_summarize_arg(a) for a in op_def.input_args)
        + " -> "
        + ", ".join(_summarize_arg(a) for a in op_def.output_args),
    ]
    for a in op_def.attrs:
        s = "attr=" + a.name + ":" + a.type
        if a.has_default:
            s += ",default=" + summarize_value(a.default)
        if a.has_minimum:
            s += ",min=" + str(a.minimum)
        if a.allowed_values is not None:
            s += ",allowed=" + summarize_value(list(a.allowed_values))
        parts.append(s)
    for flag, text in (
        (op_def.is_commutative, "is_commutative=true"),
        (op_def.is_aggregate, "is_aggregate=true"),
        (op_def.is_stateful, "is_stateful=true"),
        (op_def.allows_uninitialized_input, "allows_uninitialized_input=true"),
    ):
        if flag:
            parts.append(text)
    return "; ".join(parts) + ">"


# ---------------------------------------------------------------------------------------
# Input and output dtypes (InOutTypesForNode)
# ---------------------------------------------------------------------------------------


def _missing_attr(node_name: str, op_def: OpDef, attr: str) -> InvalidArgumentError:
    return InvalidArgumentError(
        f"NodeDef missing attr '{attr}' from {summarize_op_def(op_def)}; "
        f"NodeDef: {format_node_for_error(node_name)}",
        node_name,
    )


def _attr_proto(
    node_name: str, op_def: OpDef, attr_protos: Mapping[str, Any], name: str, field: str
) -> Any:
    """The AttrValue `name`, checked to hold a value in oneof `field`."""
    proto = attr_protos.get(name)
    if proto is None:
        raise _missing_attr(node_name, op_def, name)
    kind = proto.WhichOneof("value")
    if kind != field:
        if field == "list" and kind is None:
            return proto  # an empty list
        found = "list(...)" if kind == "list" else TYPE_OF_FIELD.get(kind or "", kind)
        expected = "list(type)" if field == "list" else TYPE_OF_FIELD[field]
        raise InvalidArgumentError(
            f"Attr '{name}' of node {format_node_for_error(node_name)} has value of type "
            f"'{found}' when '{expected}' expected",
            node_name,
        )
    return proto


def _dtype(node_name: str, attr: str, value: int) -> DataType:
    dt = _DT_BY_INT.get(value)
    if dt is None:
        raise InvalidArgumentError(
            f"Attr '{attr}' of node {format_node_for_error(node_name)} has invalid "
            f"DataType enum: {value}",
            node_name,
        )
    return dt


def _add_arg_types(
    node_name: str,
    op_def: OpDef,
    attr_protos: Mapping[str, Any],
    arg: ArgDef,
    out: list[DataType],
) -> None:
    start = len(out)
    if arg.number_attr:
        n = _attr_proto(node_name, op_def, attr_protos, arg.number_attr, "i").i
        if n < 0:
            raise InvalidArgumentError(
                f"Value for number_attr() {n} < 0 (attr '{arg.number_attr}' of node "
                f"{format_node_for_error(node_name)})",
                node_name,
            )
        if n > MAX_NUMBER_ATTR:
            raise InvalidArgumentError(
                f"Value for number_attr '{arg.number_attr}' of {n} is larger than the "
                f"supported {MAX_NUMBER_ATTR} in {format_node_for_error(node_name)}",
                node_name,
            )
        if arg.type_attr:
            proto = _attr_proto(node_name, op_def, attr_protos, arg.type_attr, "type")
            dt = _dtype(node_name, arg.type_attr, proto.type)
        else:
            dt = arg.type
        out.extend([dt] * n)
    elif arg.type_list_attr:
        proto = _attr_proto(node_name, op_def, attr_protos, arg.type_list_attr, "list")
        out.extend(_dtype(node_name, arg.type_list_attr, t) for t in proto.list.type)
    elif arg.type_attr:
        proto = _attr_proto(node_name, op_def, attr_protos, arg.type_attr, "type")
        out.append(_dtype(node_name, arg.type_attr, proto.type))
    else:
        out.append(arg.type)
    if arg.is_ref:
        for i in range(start, len(out)):
            if dtypes.is_ref(out[i]):
                raise InvalidArgumentError(
                    f"Requested reference to a reference type: {dtypes.tf_name(out[i])} "
                    f"(arg '{arg.name}' of node {format_node_for_error(node_name)})",
                    node_name,
                )
            if out[i] == DataType.DT_INVALID:
                raise InvalidArgumentError(
                    f"Ref arg '{arg.name}' of node {format_node_for_error(node_name)} "
                    "has type DT_INVALID",
                    node_name,
                )
            out[i] = dtypes.make_ref(out[i])


def in_out_types(
    node_name: str, op_def: OpDef, attr_protos: Mapping[str, Any]
) -> tuple[tuple[DataType, ...], tuple[DataType, ...]]:
    """(input dtypes, output dtypes) of a node: TensorFlow's InOutTypesForNode."""
    ins: list[DataType] = []
    for arg in op_def.input_args:
        _add_arg_types(node_name, op_def, attr_protos, arg, ins)
    outs: list[DataType] = []
    for arg in op_def.output_args:
        _add_arg_types(node_name, op_def, attr_protos, arg, outs)
    return tuple(ins), tuple(outs)


# ---------------------------------------------------------------------------------------
# Defaults (AddDefaultsToNodeDef)
# ---------------------------------------------------------------------------------------

# id(AttrDef) -> (AttrDef kept alive so the id stays unique, its default AttrValue proto)
_DEFAULT_PROTOS: dict[int, tuple[AttrDef, Any]] = {}


def default_proto(attr_def: AttrDef) -> Any:
    """The AttrValue proto of `attr_def`'s default (built once, shared: do not mutate)."""
    hit = _DEFAULT_PROTOS.get(id(attr_def))
    if hit is not None:
        return hit[1]
    from common import attr_value  # late: attr_value needs the generated protos

    proto = attr_value.to_proto(attr_def.default, attr_def.type)
    _DEFAULT_PROTOS[id(attr_def)] = (attr_def, proto)
    return proto


def add_default_attrs(
    op_def: OpDef, attr_protos: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """Fill the attrs `attr_protos` omits that have defaults in `op_def` (in place)."""
    for a in op_def.attrs:
        if a.has_default and a.name not in attr_protos:
            attr_protos[a.name] = default_proto(a)
    return attr_protos


# ---------------------------------------------------------------------------------------
# Validation (ValidateNodeDef's attr checks, ValidateAttrValue)
# ---------------------------------------------------------------------------------------


class _AttrCheck:
    """What an AttrDef demands of a value, precomputed once per AttrDef."""

    __slots__ = ("allowed", "allowed_text", "attr_def", "fast", "field", "is_list", "minimum")

    def __init__(self, a: AttrDef) -> None:
        self.attr_def = a
        self.is_list = a.type.startswith("list(")
        base = a.type[5:-1] if self.is_list else a.type
        self.field = FIELD_OF_TYPE.get(base, base)
        self.allowed: frozenset | None = None
        self.allowed_text = ""
        if a.allowed_values is not None:
            if base == "type":
                self.allowed = frozenset(int(v) for v in a.allowed_values)
                self.allowed_text = ", ".join(dtypes.tf_name(v) for v in a.allowed_values)
            else:
                self.allowed = frozenset(
                    v.encode() if isinstance(v, str) else v for v in a.allowed_values
                )
                self.allowed_text = ", ".join(
                    '"' + (v if isinstance(v, str) else repr(v)) + '"' for v in a.allowed_values
                )
        self.minimum = a.minimum if a.has_minimum else None
        # Fast path: any value of the right kind passes (True), or for `type` attrs the set
        # of acceptable enum values; None means the full check is needed.
        self.fast: Literal[True] | frozenset[int] | None = None
        if not self.is_list:
            if base == "type":
                ok = (
                    self.allowed
                    if self.allowed is not None
                    else frozenset(
                        int(d)
                        for d in DataType
                        if d != DataType.DT_INVALID and not dtypes.is_ref(d)
                    )
                )
                self.fast = frozenset(t for t in ok if _check_dtype(t) is None)
            elif self.allowed is None and self.minimum is None:
                self.fast = True


# id(OpDef) -> (OpDef kept alive, {attr name: _AttrCheck})
_CHECKS: dict[int, tuple[OpDef, dict[str, _AttrCheck]]] = {}
_CACHE_LIMIT = 10000


def _checks_for(op_def: OpDef) -> dict[str, _AttrCheck]:
    hit = _CHECKS.get(id(op_def))
    if hit is not None:
        return hit[1]
    checks = {a.name: _AttrCheck(a) for a in op_def.attrs}
    if len(_CHECKS) >= _CACHE_LIMIT:  # function signatures come and go with libraries
        _CHECKS.clear()
    _CHECKS[id(op_def)] = (op_def, checks)
    return checks


def _kind_name(kind: str | None, proto: Any) -> str:
    if kind == "list":
        for f in LIST_FIELDS:
            if len(getattr(proto.list, f)):
                return "list(" + TYPE_OF_FIELD[f] + ")"
        return "list"
    return TYPE_OF_FIELD.get(kind or "", kind or "none")


def _check_value_kind(proto: Any, check: _AttrCheck) -> str | None:
    """AttrValueHasType: None if `proto` holds a value of the attr's type, else why not."""
    kind = proto.WhichOneof("value")
    want = check.attr_def.type
    if kind == "placeholder":
        return "AttrValue had value with unexpected type 'placeholder'"
    if check.is_list:
        if kind is None:
            return None  # proto3 cannot tell an empty list from no value
        if kind != "list":
            got = TYPE_OF_FIELD.get(kind, kind)
            return f"AttrValue had value with type '{got}' when '{want}' expected"
        lst = proto.list
        for f in LIST_FIELDS:
            if f != check.field and len(getattr(lst, f)):
                got = TYPE_OF_FIELD[f]
                return f"AttrValue had value with type 'list({got})' when '{want}' expected"
        if check.field == "type":
            for t in lst.type:
                bad = _check_dtype(t)
                if bad:
                    return bad
        return None
    if kind is None:
        return f"AttrValue missing value with expected type '{want}'"
    if kind != check.field:
        return f"AttrValue had value with type '{_kind_name(kind, proto)}' when '{want}' expected"
    if kind == "type":
        return _check_dtype(proto.type)
    return None


def _check_dtype(t: int) -> str | None:
    dt = _DT_BY_INT.get(t)
    if dt is None:
        return f"AttrValue has invalid DataType enum: {t}"
    if dt == DataType.DT_INVALID:
        return "AttrValue has invalid DataType"
    if dtypes.is_ref(dt):
        return f"AttrValue must not have reference type value of {dtypes.tf_name(dt)}"
    return None


def _list_len(proto: Any, field: str) -> int:
    if proto.WhichOneof("value") != "list":
        return 0
    return len(getattr(proto.list, field))


def _check_value(proto: Any, check: _AttrCheck) -> str | None:
    """ValidateAttrValue: kind, minimum and allowed values; None if the value is fine."""
    why = _check_value_kind(proto, check)
    if why is not None:
        return why + f" for attr '{check.attr_def.name}'"
    name = check.attr_def.name
    if check.minimum is not None:
        if check.is_list:
            n = _list_len(proto, check.field)
            if n < check.minimum:
                return f"Length for attr '{name}' of {n} must be at least minimum {check.minimum}"
        elif check.field == "i" and proto.i < check.minimum:
            return f"Value for attr '{name}' of {proto.i} must be at least minimum {check.minimum}"
    if check.allowed is not None:
        if check.is_list:
            values = list(getattr(proto.list, check.field)) if proto.WhichOneof("value") else []
        else:
            values = [getattr(proto, check.field)]
        for v in values:
            if v not in check.allowed:
                shown = (
                    dtypes.tf_name(v)
                    if check.field == "type"
                    else (
                        '"' + v.decode("utf-8", "backslashreplace") + '"'
                        if isinstance(v, bytes)
                        else str(v)
                    )
                )
                return (
                    f"Value for attr '{name}' of {shown} is not in the list of allowed "
                    f"values: {check.allowed_text}"
                )
    return None


def validate_node_attrs(node_name: str, op_def: OpDef, attr_protos: Mapping[str, Any]) -> None:
    """Check a node's attrs against its OpDef (call after `add_default_attrs`): unknown
    attrs (names starting with "_" are internal and allowed), value kinds, minimums,
    allowed values, and missing required attrs. Raises InvalidArgumentError."""
    checks = _checks_for(op_def)
    seen = 0
    for name, proto in attr_protos.items():
        check = checks.get(name)
        if check is None:
            if name.startswith("_"):
                continue
            raise InvalidArgumentError(
                f"NodeDef mentions attr '{name}' not in {summarize_op_def(op_def)}; NodeDef: "
                f"{format_node_for_error(node_name)}. (Check whether your GraphDef-"
                "interpreting binary is up to date with your GraphDef-generating binary.).",
                node_name,
            )
        seen += 1
        fast = check.fast
        if (
            fast is not None
            and proto.WhichOneof("value") == check.field
            and (fast is True or proto.type in fast)
        ):
            continue
        why = _check_value(proto, check)
        if why is not None:
            raise InvalidArgumentError(
                f"{why}\n\t; NodeDef: {format_node_for_error(node_name)}; "
                f"{summarize_op_def(op_def)}",
                node_name,
            )
    if seen != len(checks):
        missing = [n for n in checks if n not in attr_protos]
        raise InvalidArgumentError(
            f"NodeDef missing attr{'' if len(missing) == 1 else 's'} '"
            + "', '".join(missing)
            + f"' from {summarize_op_def(op_def)}; NodeDef: {format_node_for_error(node_name)}",
            node_name,
        )


def validate_num_inputs(
    node_name: str, op_def: OpDef, input_types: Sequence[DataType], num_data_inputs: int
) -> None:
    """ValidateNodeDef's arity check: the NodeDef lists as many data inputs as the op takes."""
    if num_data_inputs != len(input_types):
        raise InvalidArgumentError(
            f"NodeDef expected inputs '{', '.join(dtypes.tf_name(t) for t in input_types)}' "
            f"do not match {num_data_inputs} inputs specified; {summarize_op_def(op_def)}; "
            f"NodeDef: {format_node_for_error(node_name)}",
            node_name,
        )


# ---------------------------------------------------------------------------------------
# The constructor's fast path
# ---------------------------------------------------------------------------------------


class _TypePlan:
    """Which attr values decide an op's arg dtypes, and the dtypes seen for each."""

    __slots__ = ("defaults", "keys", "memo", "op_def")

    def __init__(self, op_def: OpDef) -> None:
        self.op_def = op_def
        self.defaults = tuple((a.name, default_proto(a)) for a in op_def.attrs if a.has_default)
        keys: dict[str, str] = {}
        for arg in op_def.input_args + op_def.output_args:
            if arg.number_attr:
                keys[arg.number_attr] = "i"
            if arg.type_attr:
                keys[arg.type_attr] = "type"
            if arg.type_list_attr:
                keys[arg.type_list_attr] = "list"
        self.keys = tuple(keys.items())
        self.memo: dict[tuple, tuple[tuple[DataType, ...], tuple[DataType, ...]]] = {}


_PLANS: dict[int, _TypePlan] = {}
_MEMO_LIMIT = 4096


def prepare_node(
    node_name: str, op_def: OpDef, attr_protos: MutableMapping[str, Any]
) -> tuple[tuple[DataType, ...], tuple[DataType, ...]]:
    """add_default_attrs + validate_node_attrs + in_out_types in one go, with the dtypes
    memoized per op and attr values (the graph constructor's per-node work)."""
    plan = _PLANS.get(id(op_def))
    if plan is None or plan.op_def is not op_def:
        if len(_PLANS) >= _CACHE_LIMIT:
            _PLANS.clear()
        plan = _PLANS[id(op_def)] = _TypePlan(op_def)
    for name, proto in plan.defaults:
        if name not in attr_protos:
            attr_protos[name] = proto
    validate_node_attrs(node_name, op_def, attr_protos)
    key = tuple(
        tuple(attr_protos[name].list.type) if field == "list" else getattr(attr_protos[name], field)
        for name, field in plan.keys
    )
    hit = plan.memo.get(key)
    if hit is not None:
        return hit
    types = in_out_types(node_name, op_def, attr_protos)
    if len(plan.memo) >= _MEMO_LIMIT:
        plan.memo.clear()
    plan.memo[key] = types
    return types
