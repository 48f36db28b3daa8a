"""Ops (executor stage): optimizer updates (TensorFlow's training_ops.cc) — ApplyX on
reference variables and ResourceApplyX on resource variables, for GradientDescent,
Momentum, KerasMomentum, Adam, AdaMax, Adagrad, AdagradV2, RMSProp, CenteredRMSProp and
the rules of training_rules (Adadelta, AdagradDA, Ftrl, FtrlV2, ProximalGradientDescent,
ProximalAdagrad), plus the sparse (row-indexed) forms TensorFlow has (SparseApplyX).

Each update is one function of the slot values, the scalar hyper-parameters and the
gradient, written in TensorFlow's evaluation order in the variable's own dtype, so float32
results agree with TF's CPU kernels. A kernel takes the locks of all the variables it
updates (in a fixed order, so concurrent updates cannot deadlock), validates, and updates
the slots in place: each slot's array is the stored one when nothing else references it,
else a private copy (`Var.updatable`, TF's PrepareToUpdateVariable), so a value read
earlier never changes. Safe from any thread.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from common import dtypes
from common.errors import FailedPreconditionError, InvalidArgumentError
from common.ops import training_rules as rules
from common.ops.array_ops import shape_str
from common.ops.registry import KernelConstruction, OpKernelContext, register_kernel, register_op
from common.ops.slicing_ops import check_indices
from common.ops.state_ops import Var, lookup_var, updating

_T = (
    "T: {float, double, int32, uint8, int16, int8, complex64, int64, qint8, quint8, qint32, "
    "bfloat16, qint16, quint16, uint16, complex128, half, uint32, uint64}"
)
_LOCKING = "use_locking: bool = false"

Arrays = list[np.ndarray]
# An update rule mutates the (writeable) slot arrays in place.
Update = Callable[[Arrays, dict[str, Any], np.ndarray, dict[str, Any]], None]


@dataclasses.dataclass(frozen=True)
class Optimizer:
    """One update rule: `slots` are the variables updated (var first), `scalars` the
    hyper-parameter inputs in TF's order around `grad` (its position is `grad_at` among
    the non-slot inputs), `update` turns the slot arrays' old values into new ones in place."""

    name: str
    slots: tuple[str, ...]
    inputs: tuple[str, ...]  # non-slot inputs in TF's order, "grad" included
    update: Update
    attrs: tuple[str, ...] = (_LOCKING,)
    sparse: bool = False  # has Resource/SparseApply forms with `indices` after grad
    # TF's sparse kernel when it evaluates in another order than the dense one.
    sparse_update: Update | None = None
    int64_inputs: tuple[str, ...] = ()  # inputs typed int64, not T (AdagradDA's global_step)

    def sparse_inputs(self) -> tuple[str, ...]:
        """The SparseApply form's non-slot inputs: the gradient is always "grad" and
        `indices` follows it."""
        names = tuple("grad" if n == "delta" else n for n in self.inputs)
        at = names.index("grad") + 1
        return names[:at] + ("indices",) + names[at:]


# ---------------------------------------------------------------------------------------
# Update rules (TF's functor bodies, same operation order)
# ---------------------------------------------------------------------------------------


def _one(x: np.ndarray):
    return x.dtype.type(1)


def _gradient_descent(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    s[0] -= g * a["alpha"]


def _momentum(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    var, accum = s
    lr, momentum = a["lr"], a["momentum"]
    accum *= momentum
    accum += g
    if attrs["use_nesterov"]:
        var -= g * lr + accum * momentum * lr
    else:
        var -= accum * lr


def _keras_momentum(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    var, accum = s
    lr, momentum = a["lr"], a["momentum"]
    accum *= momentum
    accum -= g * lr
    if attrs["use_nesterov"]:
        var += accum * momentum - g * lr
    else:
        var += accum


def _adam(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    var, m, v = s
    one = _one(var)
    b1, b2 = a["beta1"], a["beta2"]
    alpha = a["lr"] * np.sqrt(one - a["beta2_power"]) / (one - a["beta1_power"])
    if var.ndim == 0 or attrs["use_nesterov"]:
        m += (g - m) * (one - b1)
        v += (g * g - v) * (one - b2)
        if attrs["use_nesterov"]:
            var -= ((g * (one - b1) + b1 * m) * alpha) / (np.sqrt(v) + a["epsilon"])
        else:
            var -= (m * alpha) / (np.sqrt(v) + a["epsilon"])
        return
    # The same operations in the same order, in two temporaries instead of seven (every
    # operand has var's dtype: an out= buffer changes no bit).
    t = np.subtract(g, m)
    t *= one - b1
    m += t
    np.multiply(g, g, out=t)
    t -= v
    t *= one - b2
    v += t
    d = np.sqrt(v)
    d += a["epsilon"]
    np.multiply(m, alpha, out=t)
    t /= d
    var -= t


def _ada_max(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    var, m, v = s
    one = _one(var)
    m += (g - m) * (one - a["beta1"])
    np.maximum(a["beta2"] * v, np.abs(g), out=v)
    var -= a["lr"] / (one - a["beta1_power"]) * (m / (v + a["epsilon"]))


def _adagrad(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    var, accum = s
    if attrs["update_slots"]:
        accum += g * g
    var -= g * a["lr"] * (_one(accum) / np.sqrt(accum))


def _adagrad_v2(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    var, accum = s
    if attrs["update_slots"]:
        accum += g * g
    var -= g * a["lr"] / (np.sqrt(accum) + a["epsilon"])


def _rms_prop(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    var, ms, mom = s
    ms += (g * g - ms) * (_one(ms) - a["rho"])
    mom *= a["momentum"]
    mom += (g * a["lr"]) / np.sqrt(ms + a["epsilon"])
    var -= mom


def _centered_rms_prop(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    var, mg, ms, mom = s
    one = _one(ms)
    ms += (g * g - ms) * (one - a["rho"])
    mg += (g - mg) * (one - a["rho"])
    denom = (ms - mg * mg) + a["epsilon"]
    mom *= a["momentum"]
    mom += (g * a["lr"]) / np.sqrt(denom)
    var -= mom


def _sparse_rms_prop(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    var, ms, mom = s
    ms[...] = ms * a["rho"] + g * g * (_one(ms) - a["rho"])
    mom[...] = mom * a["momentum"] + (_one(ms) / np.sqrt(ms + a["epsilon"])) * a["lr"] * g
    var -= mom


def _sparse_centered_rms_prop(s: Arrays, a: dict, g: np.ndarray, attrs: dict) -> None:
    var, mg, ms, mom = s
    one = _one(ms)
    ms[...] = ms * a["rho"] + g * g * (one - a["rho"])
    mg[...] = mg * a["rho"] + g * (one - a["rho"])
    denom = (ms + a["epsilon"]) - mg * mg
    mom[...] = mom * a["momentum"] + (one / np.sqrt(denom)) * a["lr"] * g
    var -= mom


_NESTEROV = (_LOCKING, "use_nesterov: bool = false")
_SLOTS = (_LOCKING, "update_slots: bool = true")

OPTIMIZERS = (
    Optimizer("GradientDescent", ("var",), ("alpha", "delta"), _gradient_descent),
    Optimizer(
        "Momentum", ("var", "accum"), ("lr", "grad", "momentum"), _momentum, _NESTEROV, sparse=True
    ),
    Optimizer(
        "KerasMomentum",
        ("var", "accum"),
        ("lr", "grad", "momentum"),
        _keras_momentum,
        _NESTEROV,
        sparse=True,
    ),
    Optimizer(
        "Adam",
        ("var", "m", "v"),
        ("beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"),
        _adam,
        _NESTEROV,
    ),
    Optimizer(
        "AdaMax",
        ("var", "m", "v"),
        ("beta1_power", "lr", "beta1", "beta2", "epsilon", "grad"),
        _ada_max,
    ),
    Optimizer("Adagrad", ("var", "accum"), ("lr", "grad"), _adagrad, _SLOTS, sparse=True),
    Optimizer(
        "AdagradV2", ("var", "accum"), ("lr", "epsilon", "grad"), _adagrad_v2, _SLOTS, sparse=True
    ),
    Optimizer(
        "RMSProp",
        ("var", "ms", "mom"),
        ("lr", "rho", "momentum", "epsilon", "grad"),
        _rms_prop,
        sparse=True,
        sparse_update=_sparse_rms_prop,
    ),
    Optimizer(
        "CenteredRMSProp",
        ("var", "mg", "ms", "mom"),
        ("lr", "rho", "momentum", "epsilon", "grad"),
        _centered_rms_prop,
        sparse=True,
        sparse_update=_sparse_centered_rms_prop,
    ),
    Optimizer(
        "Adadelta",
        ("var", "accum", "accum_update"),
        ("lr", "rho", "epsilon", "grad"),
        rules.adadelta,
        sparse=True,
    ),
    Optimizer(
        "AdagradDA",
        ("var", "gradient_accumulator", "gradient_squared_accumulator"),
        ("grad", "lr", "l1", "l2", "global_step"),
        rules.adagrad_da,
        sparse=True,
        sparse_update=rules.sparse_adagrad_da,
        int64_inputs=("global_step",),
    ),
    Optimizer(
        "Ftrl",
        ("var", "accum", "linear"),
        ("grad", "lr", "l1", "l2", "lr_power"),
        rules.ftrl,
        rules.FTRL_ATTRS,
        sparse=True,
    ),
    Optimizer(
        "FtrlV2",
        ("var", "accum", "linear"),
        ("grad", "lr", "l1", "l2", "l2_shrinkage", "lr_power"),
        rules.ftrl,
        rules.FTRL_ATTRS,
        sparse=True,
    ),
    Optimizer(
        "ProximalGradientDescent",
        ("var",),
        ("alpha", "l1", "l2", "delta"),
        rules.proximal_gradient_descent,
        sparse=True,
    ),
    Optimizer(
        "ProximalAdagrad",
        ("var", "accum"),
        ("lr", "l1", "l2", "grad"),
        rules.proximal_adagrad,
        sparse=True,
    ),
)
# KerasMomentum only exists in resource form; GradientDescent's gradient is "delta".
_NO_REF_FORM = {"KerasMomentum"}


def _grad_name(opt: Optimizer) -> str:
    return "delta" if "delta" in opt.inputs else "grad"


# ---------------------------------------------------------------------------------------
# Shared kernel body
# ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def locked(variables: Sequence[Var]):
    """Hold the locks of all distinct `variables`, taken in a fixed (id) order."""
    distinct = sorted({id(v): v for v in variables}.values(), key=id)
    with contextlib.ExitStack() as stack:
        for v in distinct:
            stack.enter_context(v.lock)
        yield


def _shapes(opt: Optimizer, variables: Sequence[Var]) -> list[tuple]:
    """Caller holds the locks: the slots' shapes, which must all be var's. No reference to
    a value is kept (one would make the in-place update copy)."""
    out = []
    for var in variables:
        if var.value is None:
            raise FailedPreconditionError(f"Attempting to use uninitialized value {var.name}")
        out.append(var.value.shape)
    for name, shape in zip(opt.slots[1:], out[1:]):
        if shape != out[0]:
            raise InvalidArgumentError(
                f"var and {name} do not have the same shape{shape_str(out[0])} {shape_str(shape)}"
            )
    return out


def _arguments(
    opt: Optimizer, names: Sequence[str], raw: Sequence[Any], dtype: np.dtype
) -> dict[str, np.ndarray]:
    args: dict[str, np.ndarray] = {}
    grad = "delta" if "delta" in names else "grad"
    for name, value in zip(names, raw):
        value = np.asarray(value)
        if name != grad and name != "indices" and value.ndim != 0:
            raise InvalidArgumentError(f"{name} is not a scalar: {shape_str(value.shape)}")
        args[name] = value if name == "indices" else value.astype(dtype, copy=False)
    return args


def _dtype(var: Var) -> np.dtype:
    assert var.value is not None  # checked by _shapes
    return var.value.dtype


def _apply_dense(opt: Optimizer, variables: Sequence[Var], raw: Sequence[Any], attrs: dict) -> None:
    with locked(variables):
        shape = _shapes(opt, variables)[0]
        args = _arguments(opt, opt.inputs, raw, _dtype(variables[0]))
        grad = args.pop(_grad_name(opt))
        if grad.shape != shape:
            raise InvalidArgumentError(
                f"var and {_grad_name(opt)} do not have the same "
                f"shape{shape_str(shape)} {shape_str(grad.shape)}"
            )
        with updating(variables) as slots, np.errstate(all="ignore"):
            _update_by_chunks(opt.update, slots, args, grad, attrs)


# A dense update runs over consecutive chunks of this many elements: every rule is
# elementwise, so the results are the same, and a chunk's temporaries stay in cache
# (Adam on the bench CNN's 3.2M-element dense layer: 8.0 -> 5.7 ms of CPU).
UPDATE_CHUNK = 1 << 18


def _update_by_chunks(
    update: Update, slots: Arrays, args: dict[str, Any], grad: np.ndarray, attrs: dict
) -> None:
    n = grad.size
    if n <= 2 * UPDATE_CHUNK or not all(s.flags.c_contiguous for s in slots):
        update(slots, args, grad, attrs)
        return
    flat = [s.reshape(-1) for s in slots]
    g = grad.reshape(-1)
    for lo in range(0, n, UPDATE_CHUNK):
        hi = lo + UPDATE_CHUNK
        update([s[lo:hi] for s in flat], args, g[lo:hi], attrs)


def _apply_sparse(
    opt: Optimizer, variables: Sequence[Var], raw: Sequence[Any], attrs: dict
) -> None:
    """Rows `indices` of every slot get the dense rule with `grad`'s rows, in index
    order (a repeated index is updated once per occurrence, as TF's loop does)."""
    with locked(variables):
        shape = _shapes(opt, variables)[0]
        args = _arguments(opt, opt.sparse_inputs(), raw, _dtype(variables[0]))
        update = opt.sparse_update or opt.update
        grad, indices = args.pop("grad"), args.pop("indices")
        if indices.ndim != 1:
            raise InvalidArgumentError("indices must be one-dimensional")
        if len(shape) < 1:
            raise InvalidArgumentError("var must be at least 1 dimensional")
        if grad.shape != indices.shape + shape[1:]:
            raise InvalidArgumentError(
                f"grad must be the same shape as var except for the first dimension: "
                f"{shape_str(grad.shape)} vs {shape_str(shape)}"
            )
        check_indices(indices, shape[0])
        rows = indices.astype(np.int64)
        with updating(variables) as slots, np.errstate(all="ignore"):
            if len(np.unique(rows)) == len(rows):
                part = [slot[rows] for slot in slots]  # copies: fancy indexing
                update(part, args, grad, attrs)
                for slot, value in zip(slots, part):
                    slot[rows] = value
            else:
                for i, r in enumerate(rows.tolist()):  # views: the rule writes the slots
                    update([slot[r : r + 1] for slot in slots], args, grad[i : i + 1], attrs)


def _resource_vars(ctx: OpKernelContext, handles: Sequence[Any], dtype) -> list[Var]:
    out = []
    for h in handles:
        handle, var = lookup_var(ctx, h)
        if var.dtype != dtypes.base(dtype):
            raise InvalidArgumentError(
                f"Trying to read variable with wrong dtype. Expected {dtypes.tf_name(dtype)} "
                f"got {dtypes.tf_name(var.dtype)}"
            )
        if var.value is None:
            raise FailedPreconditionError(
                f"Error while reading resource variable {handle.name} from Container: "
                f"{handle.container}. This could mean that the variable was uninitialized."
            )
        out.append(var)
    return out


def _factory(opt: Optimizer, resource: bool, sparse: bool):
    apply = _apply_sparse if sparse else _apply_dense
    k = len(opt.slots)

    def factory(kc: KernelConstruction) -> Callable:
        attrs = dict(kc.attrs)
        dtype = kc.attr("T")

        def compute(ctx: OpKernelContext, inputs: list) -> list:
            if resource:
                variables = _resource_vars(ctx, inputs[:k], dtype)
                apply(opt, variables, inputs[k:], attrs)
                return []
            apply(opt, inputs[:k], inputs[k:], attrs)
            return [inputs[0]]

        return compute

    return factory


# ---------------------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------------------


def _signature(opt: Optimizer, resource: bool, sparse: bool) -> tuple[list, list, list]:
    slot = "resource" if resource else "Ref(T)"
    names = opt.sparse_inputs() if sparse else opt.inputs
    typed = {n: "int64" for n in opt.int64_inputs} | {"indices": "Tindices"}
    rest = [f"{n}: {typed.get(n, 'T')}" for n in names]
    attrs = [_T]
    if sparse:
        attrs.append("Tindices: {int32, int64}")
    inputs = [f"{n}: {slot}" for n in opt.slots] + rest
    outputs = [] if resource else ["out: Ref(T)"]
    return inputs, outputs, [*attrs, *opt.attrs]


def _register() -> None:
    for opt in OPTIMIZERS:
        forms = [(True, False)] if opt.name in _NO_REF_FORM else [(False, False), (True, False)]
        if opt.sparse:
            forms += [(True, True)] + ([] if opt.name in _NO_REF_FORM else [(False, True)])
        for resource, sparse in forms:
            name = ("Resource" if resource else "") + ("SparseApply" if sparse else "Apply")
            name += opt.name
            inputs, outputs, attrs = _signature(opt, resource, sparse)
            register_op(name, inputs, outputs, attrs, stateful=resource)
            register_kernel(name)(_factory(opt, resource, sparse))


_register()
