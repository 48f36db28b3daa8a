"""Client, gradients: TensorArray ops (TensorFlow's tensor_array_grad.py). The gradient of
a TensorArray is another TensorArray (TensorArrayGradV3, keyed by the gradients name
scope "source"); reads become writes into it and writes become reads, with the flow
carrying the ordering."""

from __future__ import annotations

from typing import Any

from client.framework import ops as _ops
from client.framework.gradient_registry import NotDifferentiable, RegisterGradient
from client.ops import array_ops
from client.ops.tensor_array_ops import TensorArray

for _t in ("TensorArrayV3", "TensorArrayGradV3", "TensorArraySizeV3", "TensorArrayCloseV3"):
    NotDifferentiable(_t)


def _grad_source(t: Any) -> str:
    """The gradients name scope `t` was built under ("gradients", "gradients_1" ...)."""
    tokens = t.name.split("/")
    pos = [i for i, x in enumerate(tokens) if x.startswith("gradients")]
    if not pos:
        raise ValueError(
            f"Expected op/tensor name to start with gradients (excluding scope), got: {t.name}"
        )
    return "/".join(tokens[: pos[-1] + 1])


def _grad_array(op: Any, dtype: Any, flow: Any, source_of: Any) -> TensorArray:
    ta = TensorArray(dtype, handle=op.inputs[0], flow=flow)
    return ta.grad(source=_grad_source(source_of), flow=flow)


def _barrier(op: Any, flow: Any) -> Any:
    flow_out = array_ops.identity(op.outputs[0], "flow_out")
    with _ops.control_dependencies([flow_out]):
        return array_ops.identity(flow, "write_barrier")


@RegisterGradient("TensorArrayReadV3")
def _read_grad(op: Any, grad: Any) -> Any:
    g = _grad_array(op, op.get_attr("dtype"), op.inputs[2], grad)
    return [None, None, g.write(op.inputs[1], grad).flow]


@RegisterGradient("TensorArrayWriteV3")
def _write_grad(op: Any, flow: Any) -> Any:
    flow = _barrier(op, flow)
    g = _grad_array(op, op.get_attr("T"), flow, flow)
    return [None, None, g.read(op.inputs[1]), flow]


@RegisterGradient("TensorArrayGatherV3")
def _gather_grad(op: Any, grad: Any) -> Any:
    g = _grad_array(op, op.get_attr("dtype"), op.inputs[2], grad)
    return [None, None, g.scatter(op.inputs[1], grad).flow]


@RegisterGradient("TensorArrayScatterV3")
def _scatter_grad(op: Any, flow: Any) -> Any:
    flow = _barrier(op, flow)
    g = _grad_array(op, op.get_attr("T"), flow, flow)
    return [None, None, g.gather(op.inputs[1]), flow]


@RegisterGradient("TensorArrayConcatV3")
def _concat_grad(op: Any, grad: Any, unused_lengths_grad: Any) -> Any:
    g = _grad_array(op, op.get_attr("dtype"), op.inputs[1], grad)
    return [None, g.split(grad, op.outputs[1]).flow]


@RegisterGradient("TensorArraySplitV3")
def _split_grad(op: Any, flow: Any) -> Any:
    flow = _barrier(op, flow)
    g = _grad_array(op, op.get_attr("T"), flow, flow)
    return [None, g.concat(), None, flow]
