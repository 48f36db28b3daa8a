"""Op and kernel registries: what an op is (its signature) and how each device runs it.

Ops are declared with TensorFlow's REGISTER_OP vocabulary so signatures can be checked
against TensorFlow's docs line by line:

    register_op("AddV2", inputs=["x: T", "y: T"], outputs=["z: T"],
                attrs=["T: {half, bfloat16, float, double, int32, int64}"], commutative=True)

Kernels are registered per (op, device type, label) as *factories*: called once when a
graph is registered on a device, with everything known statically (`KernelConstruction`:
attrs with defaults filled, resolved input/output dtypes, the device), they return the
compute function the executor calls per step:

    compute(ctx: OpKernelContext, inputs: list) -> list of outputs       (sync)
    compute(ctx, inputs, done) ; later done(outputs, None) or done(None, error)  (is_async)

Values are numpy arrays (or numpy scalars); a kernel never sees a dead input except Merge.
A control-flow kernel marks an output dead by returning the `DEAD` sentinel in its place.

Both registries are module-level tables filled at import time by `common.ops` (importing
that package registers every op family). Registration is not thread-safe; lookups are.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from common import dtypes
from common.dtypes import DataType
from common.errors import AlreadyExistsError, InvalidArgumentError, NotFoundError
from common.op_def import ArgDef, AttrDef, OpDef  # noqa: F401  (part of the registry's API)


class _Dead:
    """The value of a dead tensor (the untaken branch of a Switch). A singleton."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "DEAD"

    def __reduce__(self):
        return "DEAD"


DEAD = _Dead()

# ---------------------------------------------------------------------------------------
# Op signatures
# ---------------------------------------------------------------------------------------

# Named type sets, as TensorFlow's op registrations spell them.
_REAL_NUMBER = (
    "float, double, int32, uint8, int16, int8, int64, bfloat16, uint16, half, uint32, uint64"
)
TYPE_SETS: dict[str, str] = {
    "numbertype": _REAL_NUMBER + ", complex64, complex128, qint8, quint8, qint32",
    "realnumbertype": _REAL_NUMBER,
    "quantizedtype": "qint8, quint8, qint32, qint16, quint16",
    "floattype": "half, bfloat16, float, double",
    "complextype": "complex64, complex128",
    "inttype": "int8, int16, int32, int64, uint8, uint16, uint32, uint64",
}

ATTR_TYPES = ("string", "int", "float", "bool", "type", "shape", "tensor", "func")


_ARG_RE = re.compile(r"^\s*(\w+)\s*:\s*(.+?)\s*$")
# DOTALL: a string default may hold a newline (PrintV2's end = "\n").
_ATTR_RE = re.compile(r"^\s*(\w+)\s*:\s*(.+?)\s*(?:(?<![<>!=])=(?!=)\s*(.+?)\s*)?$", re.DOTALL)


def _type_set(spec: str, where: str) -> tuple[DataType, ...]:
    names: list[str] = []
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        names.extend(x.strip() for x in TYPE_SETS.get(part, part).split(","))
    try:
        return tuple(dtypes.from_name(n) for n in names)
    except InvalidArgumentError as e:
        raise ValueError(f"{where}: {e}") from None


def _parse_arg(spec: str, attrs: dict[str, AttrDef], op: str) -> ArgDef:
    m = _ARG_RE.match(spec)
    if not m:
        raise ValueError(f"Op {op}: bad arg spec {spec!r}")
    name, ty = m.group(1), m.group(2).strip()
    is_ref = False
    ref = re.fullmatch(r"Ref\((.+)\)", ty)
    if ref:
        is_ref, ty = True, ref.group(1).strip()
    number_attr = ""
    star = re.fullmatch(r"(\w+)\s*\*\s*(\w+)", ty)
    if star:
        number_attr, ty = star.group(1), star.group(2)
        if number_attr not in attrs:
            attrs[number_attr] = AttrDef(number_attr, "int", has_minimum=True, minimum=1)
    if ty in attrs or (not _is_type_name(ty)):
        declared = attrs.get(ty)
        if declared is not None and declared.type == "list(type)":
            return ArgDef(name, type_list_attr=ty, is_ref=is_ref)
        if declared is None:
            attrs[ty] = AttrDef(ty, "type")
        return ArgDef(name, type_attr=ty, number_attr=number_attr, is_ref=is_ref)
    return ArgDef(name, type=dtypes.from_name(ty), number_attr=number_attr, is_ref=is_ref)


def _is_type_name(s: str) -> bool:
    try:
        dtypes.from_name(s)
    except InvalidArgumentError:
        return False
    return True


def _parse_default(value: str, ty: str) -> Any:
    v = value.strip()
    if ty.startswith("list("):
        inner = ty[5:-1]
        body = v.strip()[1:-1].strip()
        if not body:
            return []
        if inner == "shape":
            return [_parse_default(x + "]", "shape") for x in body.split("]") if x.strip(" ,")]
        return [_parse_default(x, inner) for x in _split_top(body)]
    if ty == "string":
        return v.strip("\"'")
    if ty == "int":
        return int(v)
    if ty == "float":
        return float(v)
    if ty == "bool":
        return v.lower() == "true"
    if ty == "type":
        return dtypes.from_name(v)
    if ty == "shape":
        body = v.strip(" ,[]")
        if v.strip() == "<unknown>" or "unknown_rank" in v:
            return None
        return tuple(int(x) if int(x) >= 0 else None for x in body.split(",") if x.strip())
    if ty == "func":
        return v.strip("\"'")
    if ty == "tensor":  # "DT_UINT8 [255, 0, 0, 255]": a dtype and a flat list of values
        name, _, body = v.partition(" ")
        values = [float(x) for x in body.strip(" []").split(",") if x.strip()]
        return np.array(values).astype(dtypes.as_numpy(dtypes.from_name(name)))
    raise ValueError(f"Default values are not supported for attrs of type {ty}")


def _split_top(body: str) -> list[str]:
    return [x.strip() for x in body.split(",") if x.strip()]


def _parse_attr(spec: str, op: str) -> AttrDef:
    m = _ATTR_RE.match(spec)
    if not m:
        raise ValueError(f"Op {op}: bad attr spec {spec!r}")
    name, ty, default = m.group(1), m.group(2).strip(), m.group(3)
    has_minimum, minimum = False, 0
    mm = re.fullmatch(r"(.+?)\s*>=\s*(-?\d+)", ty)
    if mm:
        ty, has_minimum, minimum = mm.group(1).strip(), True, int(mm.group(2))
    allowed: tuple | None = None
    where = f"Op {op} attr {name}"
    if ty.startswith("{"):  # "{float, int32}" or "{'SAME', 'VALID'}"
        body = ty[1:-1]
        if "'" in body or '"' in body:
            allowed = tuple(x.strip().strip("'\"") for x in body.split(","))
            ty = "string"
        else:
            allowed, ty = _type_set(body, where), "type"
    elif ty in TYPE_SETS:
        allowed, ty = _type_set(ty, where), "type"
    elif ty.startswith("list({"):
        allowed, ty = _type_set(ty[6:-2], where), "list(type)"
    base_ty = ty[5:-1] if ty.startswith("list(") else ty
    if base_ty not in ATTR_TYPES:
        raise ValueError(f"{where}: unknown attr type {ty!r}")
    if default is None:
        return AttrDef(name, ty, allowed_values=allowed, has_minimum=has_minimum, minimum=minimum)
    return AttrDef(
        name,
        ty,
        has_default=True,
        default=_parse_default(default, ty),
        allowed_values=allowed,
        has_minimum=has_minimum,
        minimum=minimum,
    )


_OPS: dict[str, OpDef] = {}


def register_op(
    name: str,
    inputs: Sequence[str] = (),
    outputs: Sequence[str] = (),
    attrs: Sequence[str] = (),
    *,
    stateful: bool = False,
    commutative: bool = False,
    aggregate: bool = False,
    allows_uninitialized_input: bool = False,
    summary: str = "",
) -> OpDef:
    """Declare an op from REGISTER_OP-style strings. Type attrs used by args but not
    declared become unconstrained `type` attrs; "N * T" declares N as `int >= 1`."""
    if name in _OPS:
        raise AlreadyExistsError(f"Op {name} is already registered")
    declared: dict[str, AttrDef] = {}
    for spec in attrs:
        a = _parse_attr(spec, name)
        declared[a.name] = a
    ins = tuple(_parse_arg(s, declared, name) for s in inputs)
    outs = tuple(_parse_arg(s, declared, name) for s in outputs)
    op = OpDef(
        name,
        ins,
        outs,
        tuple(declared.values()),
        is_stateful=stateful,
        is_commutative=commutative,
        is_aggregate=aggregate,
        allows_uninitialized_input=allows_uninitialized_input,
        summary=summary,
    )
    _OPS[name] = op
    return op


def lookup_op(name: str) -> OpDef:
    op = _OPS.get(name)
    if op is None:
        raise NotFoundError(f"Op type not registered '{name}'")
    return op


def find_op(name: str) -> OpDef | None:
    return _OPS.get(name)


def all_ops() -> list[OpDef]:
    return sorted(_OPS.values(), key=lambda o: o.name)


# ---------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------


@dataclasses.dataclass
class KernelConstruction:
    """What a kernel factory knows when a graph is registered on a device."""

    node_name: str
    op: str
    attrs: dict[str, Any]  # Python values, defaults filled (see AttrDef)
    input_types: tuple[DataType, ...]
    output_types: tuple[DataType, ...]
    device: str  # full device name, /job:J/replica:R/task:T/device:CPU:K
    device_type: str = "CPU"
    # The function library of the graph being registered (functional ops instantiate
    # their bodies from it); None for graphs without functions.
    flib: Any = None
    # Who registered the graph (a worker session's GraphMgr, an in-process Session): a
    # common.resource_mgr.Scope. Resources private to a kernel (TF's ContainerInfo without
    # a shared_name) are per scope and released when it closes. None: no owner.
    scope: Any = None
    # Largest single allocation a kernel of this graph may make, in bytes (0: only the
    # process budget applies; common.memory). Constant folding sets it.
    allocation_limit: int = 0

    def attr(self, name: str) -> Any:
        try:
            return self.attrs[name]
        except KeyError:
            raise InvalidArgumentError(
                f"NodeDef missing attr '{name}' from {self.op} (node {self.node_name})",
                self.node_name,
            ) from None


class OpKernelContext:
    """What a kernel sees per execution: the step's state on this device and the
    frame/iteration the node runs in. Created by the executor; cheap by design."""

    __slots__ = ("step", "frame_iter", "node_name")

    def __init__(self, step: Any, frame_iter: tuple[int, int], node_name: str) -> None:
        # `step` is the executor's per-(step, device) state. Kernels use:
        #   step.step_id, step.device (name), step.incarnation, step.rendezvous,
        #   step.resource_mgr (the device's), step.step_container (per-step resources),
        #   step.function_runtime (runs library functions), step.is_aborted()
        self.step = step
        self.frame_iter = frame_iter  # (frame_id, iter_id); (0, 0) outside loops
        self.node_name = node_name


class FieldwiseOpKernelContext(OpKernelContext):
    """An OpKernelContext made with no arguments, its creator then setting the three fields:
    the executor's hot path (a Python __init__ costs ~40 ns per node more)."""

    __slots__ = ()
    __init__ = object.__init__


ComputeFn = Callable[..., Any]
KernelFactory = Callable[[KernelConstruction], ComputeFn]


@dataclasses.dataclass(frozen=True)
class KernelDef:
    op: str
    device_type: str
    label: str
    factory: KernelFactory
    # Expensive kernels may be run on the executor's thread pool (numpy releases the GIL);
    # cheap ones run inline on the thread that made them ready.
    expensive: bool
    is_async: bool
    # Inputs / outputs that live in host memory (by arg name); informational on CPU.
    host_memory: tuple[str, ...] = ()


_KERNELS: dict[tuple[str, str, str], KernelDef] = {}


def register_kernel(
    op: str,
    *,
    device_type: str = "CPU",
    label: str = "",
    expensive: bool = False,
    is_async: bool = False,
    host_memory: Sequence[str] = (),
) -> Callable[[KernelFactory], KernelFactory]:
    """Decorator registering a kernel factory for (op, device_type, label)."""

    def deco(factory: KernelFactory) -> KernelFactory:
        key = (op, device_type, label)
        if key in _KERNELS:
            raise AlreadyExistsError(f"Kernel for {op} on {device_type} label '{label}' exists")
        _KERNELS[key] = KernelDef(
            op, device_type, label, factory, expensive, is_async, tuple(host_memory)
        )
        return factory

    return deco


def register_simple_kernel(
    op: str, fn: Callable[..., Any], *, device_type: str = "CPU", expensive: bool = False
) -> None:
    """A stateless one-output kernel: `fn(*inputs) -> output`, attrs unused."""

    def factory(_: KernelConstruction) -> ComputeFn:
        def compute(ctx: OpKernelContext, inputs: list) -> list:
            return [fn(*inputs)]

        return compute

    register_kernel(op, device_type=device_type, expensive=expensive)(factory)


def one_output_kernel(
    op: str, *, device_type: str = "CPU", expensive: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: `fn(k: KernelConstruction, *inputs) -> output` as a one-output kernel
    (as register_simple_kernel, for kernels that read attrs from `k`); returns `fn`."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        def factory(k: KernelConstruction) -> ComputeFn:
            def compute(ctx: OpKernelContext, inputs: list) -> list:
                return [fn(k, *inputs)]

            return compute

        # The kernel belongs to fn's op family module (tests and tools group kernels by it).
        factory.__module__, factory.__qualname__ = fn.__module__, fn.__qualname__
        register_kernel(op, device_type=device_type, expensive=expensive)(factory)
        return fn

    return deco


def find_kernel(op: str, device_type: str = "CPU", label: str = "") -> KernelDef | None:
    return _KERNELS.get((op, device_type, label))


def lookup_kernel(op: str, device_type: str, label: str, node_name: str) -> KernelDef:
    k = _KERNELS.get((op, device_type, label))
    if k is None:
        raise NotFoundError(
            f"No registered '{op}' OpKernel for '{device_type}' devices compatible with node "
            f"{node_name}" + (f" (label '{label}')" if label else ""),
            node_name,
        )
    return k


def kernels_for(op: str) -> list[KernelDef]:
    return [k for (o, _, _), k in sorted(_KERNELS.items()) if o == op]


def has_kernel_for(op: str, device_type: str) -> bool:
    return any(o == op and d == device_type for (o, d, _) in _KERNELS)
