"""Op signatures as values: TensorFlow's OpDef, ArgDef and AttrDef with Python attr values.
The op registry (common.ops.registry) parses REGISTER_OP strings into them, and
common.attr_value converts them to and from the OpDef protos. Frozen dataclasses."""

from __future__ import annotations

import dataclasses
from typing import Any

from common.dtypes import DataType


@dataclasses.dataclass(frozen=True)
class ArgDef:
    """One input or output argument of an op (TensorFlow's OpDef.ArgDef)."""

    name: str
    type: DataType = DataType.DT_INVALID  # fixed type, or DT_INVALID when given by an attr
    type_attr: str = ""  # "T": a `type` attr gives the element type
    number_attr: str = ""  # "N": an `int` attr gives how many (all of one type)
    type_list_attr: str = ""  # "Tlist": a `list(type)` attr gives the types
    is_ref: bool = False


@dataclasses.dataclass(frozen=True)
class AttrDef:
    """One attr of an op (TensorFlow's OpDef.AttrDef); values are Python values:
    str for strings, int, float, bool, DataType, a shape tuple, np.ndarray for tensors,
    lists of those for list(...) attrs."""

    name: str
    type: str  # "int", "list(type)" ...
    has_default: bool = False
    default: Any = None
    allowed_values: tuple | None = None  # DataTypes for type attrs, strings for string attrs
    has_minimum: bool = False
    minimum: int = 0


@dataclasses.dataclass(frozen=True)
class OpDef:
    """An op's signature (common.attr_value.op_def_to_proto gives TensorFlow's OpDef
    message)."""

    name: str
    input_args: tuple[ArgDef, ...]
    output_args: tuple[ArgDef, ...]
    attrs: tuple[AttrDef, ...]
    is_stateful: bool = False
    is_commutative: bool = False
    is_aggregate: bool = False
    allows_uninitialized_input: bool = False
    summary: str = ""

    def attr(self, name: str) -> AttrDef | None:
        for a in self.attrs:
            if a.name == name:
                return a
        return None
