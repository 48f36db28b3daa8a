"""Ops, control flow: Switch/Merge (conditionals) and Enter/Exit/NextIteration/LoopCond
(loops), as TensorFlow's control_flow_ops.cc declares them, with their CPU kernels.

The interesting semantics live in the executor (frames, iterations, dead tensors): these
kernels only route values. Switch marks its untaken output DEAD; Merge forwards the live
input it was started with and its index; Enter/Exit/NextIteration forward their input
(the executor moves it between frames and iterations). Ref variants forward the ref.
Kernels are stateless: safe from any thread.
"""

from __future__ import annotations

import numpy as np

from common.errors import InternalError, InvalidArgumentError
from common.ops.registry import (
    DEAD,
    ComputeFn,
    KernelConstruction,
    OpKernelContext,
    find_op,
    register_kernel,
    register_op,
)

# -- signatures (TensorFlow's REGISTER_OP) --------------------------------------------------
register_op(
    "Switch",
    inputs=["data: T", "pred: bool"],
    outputs=["output_false: T", "output_true: T"],
    attrs=["T: type"],
)
register_op(
    "RefSwitch",
    inputs=["data: Ref(T)", "pred: bool"],
    outputs=["output_false: Ref(T)", "output_true: Ref(T)"],
    attrs=["T: type"],
    allows_uninitialized_input=True,
)
register_op(
    "Merge",
    inputs=["inputs: N * T"],
    outputs=["output: T", "value_index: int32"],
    attrs=["T: type", "N: int >= 1"],
)
register_op(
    "RefMerge",
    inputs=["inputs: Ref(N * T)"],
    outputs=["output: Ref(T)", "value_index: int32"],
    attrs=["T: type", "N: int >= 1"],
)
_ENTER_ATTRS = [
    "T: type",
    "frame_name: string",
    "is_constant: bool = false",
    "parallel_iterations: int = 10",
]
register_op("Enter", inputs=["data: T"], outputs=["output: T"], attrs=_ENTER_ATTRS)
register_op("RefEnter", inputs=["data: Ref(T)"], outputs=["output: Ref(T)"], attrs=_ENTER_ATTRS)
register_op("Exit", inputs=["data: T"], outputs=["output: T"], attrs=["T: type"])
register_op("RefExit", inputs=["data: Ref(T)"], outputs=["output: Ref(T)"], attrs=["T: type"])
register_op("NextIteration", inputs=["data: T"], outputs=["output: T"], attrs=["T: type"])
register_op(
    "RefNextIteration", inputs=["data: Ref(T)"], outputs=["output: Ref(T)"], attrs=["T: type"]
)
register_op("LoopCond", inputs=["input: bool"], outputs=["output: bool"])
register_op(  # Case lowered to v1 control flow (common.optimizer.lower_functional)
    "_SwitchN",
    inputs=["data: T", "output_index: int32"],
    outputs=["outputs: num_outs * T"],
    attrs=["num_outs: int >= 1", "T: type"],
)
register_op("ControlTrigger")
if find_op("NoOp") is None:
    register_op("NoOp")


# -- kernels -------------------------------------------------------------------------------------
def _scalar_pred(value: object, ctx: OpKernelContext, what: str) -> bool:
    if type(value) is np.bool_:  # a loop's predicate (Less, LoopCond): nothing to check
        return bool(value)
    arr = np.asarray(value)
    if arr.ndim != 0:
        raise InvalidArgumentError(
            f"{what} must be a scalar, but it has shape {list(arr.shape)}", ctx.node_name
        )
    return bool(arr)


def _switch_factory(kc: KernelConstruction) -> ComputeFn:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        data, pred = inputs
        if _scalar_pred(pred, ctx, "The second input"):
            return [DEAD, data]
        return [data, DEAD]

    return compute


def _switch_n_factory(kc: KernelConstruction) -> ComputeFn:
    n = int(kc.attr("num_outs"))

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        data, index = inputs
        arr = np.asarray(index)
        if arr.ndim != 0:
            raise InvalidArgumentError(
                f"output_index must be a scalar, but it has shape {list(arr.shape)}",
                ctx.node_name,
            )
        k = int(arr)
        if k < 0 or k >= n:
            k = n - 1  # TF's _SwitchN: an out-of-range index takes the last output
        outputs: list = [DEAD] * n
        outputs[k] = data
        return outputs

    return compute


def _merge_factory(kc: KernelConstruction) -> ComputeFn:
    indices = [np.int32(k) for k in range(int(kc.attrs.get("N", 0)) or len(kc.input_types))]

    def compute(ctx: OpKernelContext, inputs: list) -> list:
        for k, v in enumerate(inputs):
            if v is not DEAD:
                return [v, indices[k] if k < len(indices) else np.int32(k)]
        raise InternalError(f"Merge {ctx.node_name} ran without a live input", ctx.node_name)

    return compute


def _forward_factory(kc: KernelConstruction) -> ComputeFn:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return [inputs[0]]

    return compute


def _loop_cond_factory(kc: KernelConstruction) -> ComputeFn:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        _scalar_pred(inputs[0], ctx, "The input of LoopCond")
        return [inputs[0]]

    return compute


def _no_output_factory(kc: KernelConstruction) -> ComputeFn:
    def compute(ctx: OpKernelContext, inputs: list) -> list:
        return []

    return compute


for _op in ("Switch", "RefSwitch"):
    register_kernel(_op)(_switch_factory)
for _op in ("Merge", "RefMerge"):
    register_kernel(_op)(_merge_factory)
for _op in ("Enter", "RefEnter", "Exit", "RefExit", "NextIteration", "RefNextIteration"):
    register_kernel(_op)(_forward_factory)
register_kernel("_SwitchN")(_switch_n_factory)
register_kernel("LoopCond")(_loop_cond_factory)
register_kernel("ControlTrigger")(_no_output_factory)
register_kernel("NoOp")(_no_output_factory)
