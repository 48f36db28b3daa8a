"""Client, gradients: image resizing (TensorFlow's image_grad.py): ResizeBilinear,
ResizeNearestNeighbor, ResizeBicubic and CropAndResize differentiate into their *Grad
kernels."""

from __future__ import annotations

from typing import Any

from client.framework import dtypes
from client.framework.gradient_registry import RegisterGradient
from client.framework.op_builder import apply_op
from client.ops import array_ops


def _corners(op: Any) -> dict[str, Any]:
    return {
        "align_corners": op.get_attr("align_corners"),
        "half_pixel_centers": op.get_attr("half_pixel_centers"),
    }


@RegisterGradient("ResizeBilinear")
def _resize_bilinear_grad(op: Any, grad: Any) -> Any:
    out = apply_op("ResizeBilinearGrad", [grad, op.inputs[0]], _corners(op)).outputs[0]
    return [out, None]


@RegisterGradient("ResizeNearestNeighbor")
def _resize_nearest_grad(op: Any, grad: Any) -> Any:
    image = op.inputs[0]
    hw = image.shape[1:3] if image.shape.ndims is not None else None
    if hw is not None and hw.is_fully_defined():
        size: Any = hw.as_list()
    else:
        size = array_ops.shape(image)[1:3]
    out = apply_op("ResizeNearestNeighborGrad", [grad, size], _corners(op)).outputs[0]
    return [out, None]


@RegisterGradient("ResizeBicubic")
def _resize_bicubic_grad(op: Any, grad: Any) -> Any:
    if op.inputs[0].dtype.base_dtype not in (dtypes.float32, dtypes.float64):
        return [None, None]
    out = apply_op("ResizeBicubicGrad", [grad, op.inputs[0]], _corners(op)).outputs[0]
    return [out, None]


@RegisterGradient("CropAndResize")
def _crop_and_resize_grad(op: Any, grad: Any) -> Any:
    """To the image (floating images only) and to the boxes (bilinear terms, also for
    nearest sampling, as TensorFlow approximates it)."""
    image = op.inputs[0]
    if image.shape.is_fully_defined():
        image_shape: Any = image.shape.as_list()
    else:
        image_shape = array_ops.shape(image)
    grad0 = None
    if image.dtype.base_dtype in (dtypes.float16, dtypes.float32, dtypes.float64):
        attrs = {"T": op.get_attr("T"), "method": op.get_attr("method")}
        grad0 = apply_op(
            "CropAndResizeGradImage", [grad, op.inputs[1], op.inputs[2], image_shape], attrs
        ).outputs[0]
    grad1 = apply_op(
        "CropAndResizeGradBoxes", [grad, image, op.inputs[1], op.inputs[2]], {}
    ).outputs[0]
    return [grad0, grad1, None, None]
