"""Ops (executor stage), image resizing: ResizeBilinear, ResizeNearestNeighbor,
ResizeBicubic and their gradients, ResizeArea, CropAndResize (TensorFlow's
resize_bilinear_op.cc, resize_nearest_neighbor_op.cc, resize_bicubic_op.cc,
resize_area_op.cc, crop_and_resize_op.cc).

Coordinates and weights are computed in float32 in TensorFlow's order (the legacy scaler
`out * scale`, the half-pixel one `(out + 0.5) * scale - 0.5`, align_corners' scale
`(in - 1) / (out - 1)`), and the interpolations in float32 as TensorFlow's kernels write
them, so results equal TensorFlow's. Gradients scatter in TensorFlow's loop order.
Kernels keep no state; safe from any thread.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from common.errors import InvalidArgumentError
from common.ops.registry import KernelConstruction, register_kernel, register_op

F32 = np.float32
_REAL = "{int8, uint8, int16, uint16, int32, int64, half, float, double, bfloat16}"
_CORNERS = ["align_corners: bool = false", "half_pixel_centers: bool = false"]
register_op("ResizeBilinear", inputs=["images: T", "size: int32"],
            outputs=["resized_images: float"],
            attrs=["T: {int8, uint8, int16, uint16, int32, int64, bfloat16, half, float, double, "
                   "bfloat16}", *_CORNERS])  # fmt: skip
register_op("ResizeBilinearGrad", inputs=["grads: float", "original_image: T"],
            outputs=["output: T"],
            attrs=["T: {float, bfloat16, half, double}", *_CORNERS])  # fmt: skip
register_op("ResizeNearestNeighbor", inputs=["images: T", "size: int32"],
            outputs=["resized_images: T"], attrs=[f"T: {_REAL}", *_CORNERS])  # fmt: skip
register_op("ResizeNearestNeighborGrad", inputs=["grads: T", "size: int32"],
            outputs=["output: T"],
            attrs=["T: {uint8, int8, int32, half, float, double, bfloat16}",
                   *_CORNERS])  # fmt: skip
register_op("ResizeBicubic", inputs=["images: T", "size: int32"],
            outputs=["resized_images: float"], attrs=[f"T: {_REAL}", *_CORNERS])  # fmt: skip
register_op("ResizeBicubicGrad", inputs=["grads: float", "original_image: T"],
            outputs=["output: T"], attrs=["T: {float, double}", *_CORNERS])  # fmt: skip
register_op("ResizeArea", inputs=["images: T", "size: int32"], outputs=["resized_images: float"],
            attrs=[f"T: {_REAL}", "align_corners: bool = false"])  # fmt: skip
register_op("CropAndResize",
            inputs=["image: T", "boxes: float", "box_ind: int32", "crop_size: int32"],
            outputs=["crops: float"],
            attrs=["T: {uint8, uint16, int8, int16, int32, int64, half, float, double}",
                   "method: {'bilinear', 'nearest'} = 'bilinear'",
                   "extrapolation_value: float = 0.0"])  # fmt: skip

Compute = Callable[..., list]


def _scale(in_size: int, out_size: int, align_corners: bool) -> np.float32:
    """CalculateResizeScale."""
    if align_corners and out_size > 1:
        return F32(in_size - 1) / F32(out_size - 1)
    return F32(in_size) / F32(out_size)


def _source(out_size: int, scale: np.float32, half_pixel: bool) -> np.ndarray:
    """Each output index's source coordinate (float32), by TF's scaler."""
    idx = np.arange(out_size, dtype=F32)
    if half_pixel:
        return (idx + F32(0.5)) * scale - F32(0.5)
    return idx * scale


def _check_resize(images: np.ndarray, size: np.ndarray, node: str,
                  align: bool, half: bool) -> tuple[int, int]:  # fmt: skip
    if images.ndim != 4:
        raise InvalidArgumentError(f"input must be 4-dimensional{list(images.shape)}", node)
    size = np.asarray(size)
    if size.shape != (2,):
        raise InvalidArgumentError(f"shape_t must be 1-dimensional{list(size.shape)}", node)
    if align and half:
        raise InvalidArgumentError(
            "If half_pixel_centers is True, align_corners must be False.", node
        )
    out_h, out_w = (int(v) for v in size)
    if out_h <= 0 or out_w <= 0:
        raise InvalidArgumentError("output dimensions must be positive", node)
    if images.shape[1] <= 0 or images.shape[2] <= 0:
        raise InvalidArgumentError("input image must be of non-zero size", node)
    return out_h, out_w


# -- bilinear ----------------------------------------------------------------------------------
def _linear_weights(out_size: int, in_size: int, scale: np.float32, half: bool):  # noqa: ANN202
    src = _source(out_size, scale, half)
    floor = np.floor(src)
    lower = np.maximum(floor.astype(np.int64), 0)
    upper = np.minimum(np.ceil(src).astype(np.int64), in_size - 1)
    return lower, upper, (src - floor).astype(F32)


def resize_bilinear(images: np.ndarray, out_h: int, out_w: int, align: bool,
                    half: bool) -> np.ndarray:  # fmt: skip
    _, in_h, in_w, _ = images.shape
    img = images.astype(F32)
    ys = _linear_weights(out_h, in_h, _scale(in_h, out_h, align), half)
    xs = _linear_weights(out_w, in_w, _scale(in_w, out_w, align), half)
    top, bottom = img[:, ys[0]], img[:, ys[1]]
    x_lerp = xs[2][None, None, :, None]
    top = top[:, :, xs[0]] + (top[:, :, xs[1]] - top[:, :, xs[0]]) * x_lerp
    bottom = bottom[:, :, xs[0]] + (bottom[:, :, xs[1]] - bottom[:, :, xs[0]]) * x_lerp
    return top + (bottom - top) * ys[2][None, :, None, None]


def resize_bilinear_grad(grads: np.ndarray, in_h: int, in_w: int, align: bool, half: bool,
                         dtype: np.dtype) -> np.ndarray:  # fmt: skip
    n, out_h, out_w, c = grads.shape
    ys = _linear_weights(out_h, in_h, _scale(in_h, out_h, align), half)
    xs = _linear_weights(out_w, in_w, _scale(in_w, out_w, align), half)
    out = np.zeros((n, in_h, in_w, c), F32)
    g = grads.astype(F32)
    one = F32(1)
    for y in range(out_h):
        top, bottom, y_lerp = int(ys[0][y]), int(ys[1][y]), ys[2][y]
        inv_y = one - y_lerp
        for x in range(out_w):
            left, right, x_lerp = int(xs[0][x]), int(xs[1][x]), xs[2][x]
            inv_x = one - x_lerp
            dtop = inv_y * g[:, y, x]
            out[:, top, left] += dtop * inv_x
            out[:, top, right] += dtop * x_lerp
            dbottom = y_lerp * g[:, y, x]
            out[:, bottom, left] += dbottom * inv_x
            out[:, bottom, right] += dbottom * x_lerp
    return out.astype(dtype)


# -- nearest neighbor -----------------------------------------------------------------------------
def _nearest_index(out_size: int, in_size: int, align: bool, half: bool) -> np.ndarray:
    scale = _scale(in_size, out_size, align)
    idx = np.arange(out_size, dtype=F32)
    src = (idx + F32(0.5)) * scale if half else idx * scale
    # roundf rounds halves away from zero; the coordinates here are >= 0.
    picked = np.floor(src + F32(0.5)) if align else np.floor(src)
    out = np.minimum(picked.astype(np.int64), in_size - 1)
    return np.maximum(out, 0) if half else out


def resize_nearest(images: np.ndarray, out_h: int, out_w: int, align: bool,
                   half: bool) -> np.ndarray:  # fmt: skip
    _, in_h, in_w, _ = images.shape
    ys = _nearest_index(out_h, in_h, align, half)
    xs = _nearest_index(out_w, in_w, align, half)
    return images[:, ys][:, :, xs]


def resize_nearest_grad(grads: np.ndarray, in_h: int, in_w: int, align: bool,
                        half: bool) -> np.ndarray:  # fmt: skip
    n, out_h, out_w, c = grads.shape
    # The gradient maps each gradient pixel to the input pixel the forward pass read:
    # indices from the input size to the output size, as TF's grad kernel computes them.
    ys = _nearest_index(out_h, in_h, align, half)
    xs = _nearest_index(out_w, in_w, align, half)
    out = np.zeros((n, in_h, in_w, c), grads.dtype)
    for y in range(out_h):
        for x in range(out_w):
            out[:, ys[y], xs[x]] += grads[:, y, x]
    return out


# -- bicubic ------------------------------------------------------------------------------------
_TABLE_SIZE = 1024


def _coeffs_table(a: float) -> np.ndarray:
    """InitCoeffsTable: float entries computed from float x in double precision."""
    table = np.zeros(((_TABLE_SIZE + 1), 2), F32)
    for i in range(_TABLE_SIZE + 1):
        x = float(F32(i * 1.0 / _TABLE_SIZE))
        table[i, 0] = ((a + 2) * x - (a + 3)) * x * x + 1
        x = float(F32(x + 1.0))
        table[i, 1] = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return table


_TABLES = {True: _coeffs_table(-0.5), False: _coeffs_table(-0.75)}


def _cubic_weights(out_size: int, in_size: int, scale: np.float32, half: bool):  # noqa: ANN202
    """Per output index: 4 source indices and 4 float32 weights (GetWeightsAndIndices)."""
    table = _TABLES[half]
    src = _source(out_size, scale, half)
    indices = np.zeros((out_size, 4), np.int64)
    weights = np.zeros((out_size, 4), F32)
    for o in range(out_size):
        in_loc = int(np.floor(src[o]))
        delta = F32(src[o] - F32(in_loc))
        offset = int(np.rint(delta * F32(_TABLE_SIZE)))
        w = [table[offset, 1], table[offset, 0], table[_TABLE_SIZE - offset, 0],
             table[_TABLE_SIZE - offset, 1]]  # fmt: skip
        for k in range(4):
            want = in_loc - 1 + k
            indices[o, k] = min(max(want, 0), in_size - 1)
            if half and indices[o, k] != want:
                w[k] = F32(0)
        if half:
            total = F32(F32(F32(w[0] + w[1]) + w[2]) + w[3])
            if abs(total) >= 1000.0 * np.finfo(F32).tiny:
                inv = F32(1) / total
                w = [F32(v * inv) for v in w]
        weights[o] = w
    return indices, weights


def _interp4(w: np.ndarray, v0, v1, v2, v3):  # noqa: ANN001, ANN202
    return ((v0 * w[0] + v1 * w[1]) + v2 * w[2]) + v3 * w[3]


def resize_bicubic(images: np.ndarray, out_h: int, out_w: int, align: bool,
                   half: bool) -> np.ndarray:  # fmt: skip
    _, in_h, in_w, _ = images.shape
    img = images.astype(F32)
    yi, yw = _cubic_weights(out_h, in_h, _scale(in_h, out_h, align), half)
    xi, xw = _cubic_weights(out_w, in_w, _scale(in_w, out_w, align), half)
    rows = [img[:, yi[:, k]] for k in range(4)]  # (n, out_h, in_w, c) each
    ywk = [yw[:, k][None, :, None, None] for k in range(4)]
    col = [
        ((rows[0][:, :, xi[:, j]] * ywk[0] + rows[1][:, :, xi[:, j]] * ywk[1])
         + rows[2][:, :, xi[:, j]] * ywk[2]) + rows[3][:, :, xi[:, j]] * ywk[3]
        for j in range(4)
    ]  # fmt: skip
    xwk = [xw[:, j][None, None, :, None] for j in range(4)]
    return ((col[0] * xwk[0] + col[1] * xwk[1]) + col[2] * xwk[2]) + col[3] * xwk[3]


def resize_bicubic_grad(grads: np.ndarray, in_h: int, in_w: int, align: bool, half: bool,
                        dtype: np.dtype) -> np.ndarray:  # fmt: skip
    n, out_h, out_w, c = grads.shape
    yi, yw = _cubic_weights(out_h, in_h, _scale(in_h, out_h, align), half)
    xi, xw = _cubic_weights(out_w, in_w, _scale(in_w, out_w, align), half)
    out = np.zeros((n, in_h, in_w, c), F32)
    g = grads.astype(F32)
    for y in range(out_h):
        for x in range(out_w):
            for i in range(4):
                for j in range(4):
                    out[:, yi[y, i], xi[x, j]] += g[:, y, x] * F32(yw[y, i] * xw[x, j])
    return out.astype(dtype)


# -- area -----------------------------------------------------------------------------------------
def resize_area(images: np.ndarray, out_h: int, out_w: int, align: bool) -> np.ndarray:
    n, in_h, in_w, c = images.shape
    hs, ws = _scale(in_h, out_h, align), _scale(in_w, out_w, align)
    scale = F32(1.0 / (float(hs) * float(ws)))
    img = images.astype(F32)

    def spans(out_size: int, in_size: int, s: np.float32) -> list[list[tuple[int, np.float32]]]:
        result = []
        for o in range(out_size):
            start, end = F32(o) * s, F32(o + 1) * s
            lo, hi = int(np.floor(start)), int(np.ceil(end))
            row = []
            for i in range(lo, hi):
                w = F32(min(F32(i + 1), end) - max(F32(i), start))
                row.append((min(max(i, 0), in_size - 1), w))
            result.append(row)
        return result

    y_spans, x_spans = spans(out_h, in_h, hs), spans(out_w, in_w, ws)
    out = np.zeros((n, out_h, out_w, c), F32)
    for y, ys in enumerate(y_spans):
        for x, xs in enumerate(x_spans):
            total = np.zeros((n, c), F32)
            for yi, yw in ys:
                row = np.zeros((n, c), F32)
                for xi, xw in xs:
                    row += img[:, yi, xi] * xw
                total += row * yw
            out[:, y, x] = total * scale
    return out


# -- kernels ---------------------------------------------------------------------------------------
def _attrs(k: KernelConstruction) -> tuple[bool, bool]:
    return k.attrs["align_corners"], k.attrs.get("half_pixel_centers", False)


def _resize_kernel(op: str, fn: Callable[..., np.ndarray], keeps_type: bool) -> None:
    @register_kernel(op)
    def factory(k: KernelConstruction) -> Compute:
        align, half = _attrs(k)

        def compute(ctx, inputs: list) -> list:
            images = np.asarray(inputs[0])
            out_h, out_w = _check_resize(images, inputs[1], k.node_name, align, half)
            out = fn(images, out_h, out_w, align, half)
            return [out if keeps_type else out.astype(F32)]

        return compute

    factory.__qualname__ = factory.__name__ = f"_{op}"


_resize_kernel("ResizeBilinear", resize_bilinear, False)
_resize_kernel("ResizeNearestNeighbor", resize_nearest, True)
_resize_kernel("ResizeBicubic", resize_bicubic, False)
_resize_kernel("ResizeArea", lambda im, h, w, align, half: resize_area(im, h, w, align), False)


def _grad_kernel(op: str, fn: Callable[..., np.ndarray]) -> None:
    @register_kernel(op)
    def factory(k: KernelConstruction) -> Compute:
        align, half = _attrs(k)

        def compute(ctx, inputs: list) -> list:
            grads, original = np.asarray(inputs[0]), np.asarray(inputs[1])
            if grads.ndim != 4 or original.ndim != 4:
                raise InvalidArgumentError("input_grad and original_image must be 4-dimensional",
                                           k.node_name)  # fmt: skip
            if align and half:
                raise InvalidArgumentError(
                    "If half_pixel_centers is True, align_corners must be False.", k.node_name
                )
            _, in_h, in_w, _ = original.shape
            return [fn(grads, in_h, in_w, align, half, original.dtype)]

        return compute

    factory.__qualname__ = factory.__name__ = f"_{op}"


_grad_kernel("ResizeBilinearGrad", resize_bilinear_grad)
_grad_kernel("ResizeBicubicGrad", resize_bicubic_grad)


@register_kernel("ResizeNearestNeighborGrad")
def _resize_nearest_grad(k: KernelConstruction) -> Compute:
    align, half = _attrs(k)

    def compute(ctx, inputs: list) -> list:
        grads, size = np.asarray(inputs[0]), np.asarray(inputs[1])
        if grads.ndim != 4 or size.shape != (2,):
            raise InvalidArgumentError("input must be 4-dimensional and size a 2-vector",
                                       k.node_name)  # fmt: skip
        return [resize_nearest_grad(grads, int(size[0]), int(size[1]), align, half)]

    return compute


# -- CropAndResize ---------------------------------------------------------------------------------
def crop_and_resize(image: np.ndarray, boxes: np.ndarray, box_ind: np.ndarray, crop: tuple,
                    method: str, extrapolation: float) -> np.ndarray:  # fmt: skip
    _, in_h, in_w, c = image.shape
    ch, cw = crop
    img = image.astype(F32)
    out = np.full((len(boxes), ch, cw, c), F32(extrapolation), F32)
    for b, (y1, x1, y2, x2) in enumerate(boxes.astype(F32)):
        hs = (y2 - y1) * F32(in_h - 1) / F32(ch - 1) if ch > 1 else F32(0)
        ws = (x2 - x1) * F32(in_w - 1) / F32(cw - 1) if cw > 1 else F32(0)
        src = img[int(box_ind[b])]
        for y in range(ch):
            in_y = (
                y1 * F32(in_h - 1) + F32(y) * hs if ch > 1 else F32(0.5) * (y1 + y2) * F32(in_h - 1)
            )
            if in_y < 0 or in_y > in_h - 1:
                continue
            for x in range(cw):
                in_x = (
                    x1 * F32(in_w - 1) + F32(x) * ws
                    if cw > 1
                    else F32(0.5) * (x1 + x2) * F32(in_w - 1)
                )
                if in_x < 0 or in_x > in_w - 1:
                    continue
                if method == "nearest":
                    out[b, y, x] = src[
                        int(np.floor(in_y + F32(0.5))), int(np.floor(in_x + F32(0.5)))
                    ]
                    continue
                top, bottom = int(np.floor(in_y)), int(np.ceil(in_y))
                left, right = int(np.floor(in_x)), int(np.ceil(in_x))
                y_lerp, x_lerp = F32(in_y - F32(top)), F32(in_x - F32(left))
                t = src[top, left] + (src[top, right] - src[top, left]) * x_lerp
                bt = src[bottom, left] + (src[bottom, right] - src[bottom, left]) * x_lerp
                out[b, y, x] = t + (bt - t) * y_lerp
    return out


@register_kernel("CropAndResize")
def _crop_and_resize(k: KernelConstruction) -> Compute:
    method, extrapolation = k.attrs["method"], k.attrs["extrapolation_value"]

    def compute(ctx, inputs: list) -> list:
        image, boxes, box_ind, size = (np.asarray(x) for x in inputs)
        node = k.node_name
        if image.ndim != 4:
            raise InvalidArgumentError(f"input image must be 4-D{list(image.shape)}", node)
        if boxes.ndim != 2 or boxes.shape[1] != 4:
            raise InvalidArgumentError(f"boxes must be 2-D[{boxes.shape}]", node)
        if box_ind.shape != (boxes.shape[0],):
            raise InvalidArgumentError("box_index has incompatible shape", node)
        if np.any((box_ind < 0) | (box_ind >= image.shape[0])):
            raise InvalidArgumentError("box_index has values outside [0, batch_size)", node)
        ch, cw = (int(v) for v in size)
        if ch <= 0 or cw <= 0:
            raise InvalidArgumentError("crop dimensions must be positive", node)
        return [crop_and_resize(image, boxes, box_ind, (ch, cw), method, extrapolation)]

    return compute
