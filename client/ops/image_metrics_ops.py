"""Client, graph building: tf.image's edge, gradient and quality functions (sobel_edges,
image_gradients, total_variation, psnr, ssim, ssim_multiscale), composites of existing
ops built as tensorflow.compat.v1's image_ops_impl.py builds them: the same nodes and
names. ssim's Gaussian window runs through DepthwiseConv2dNative as tf.nn's
depthwise_conv2d does at rate 1. Graph building; not thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from client.framework import dtypes as _dtypes
from client.framework import ops as _ops
from client.framework.op_builder import apply_op, constant, convert_to_tensor
from client.framework.tensor_shape import TensorShape
from client.ops import array_ops, math_ops, nn_ops
from client.ops.control_flow_assert import Assert
from client.ops.control_flow_ops import cond
from client.ops.image_ops import convert_image_dtype

_MSSSIM_WEIGHTS = (0.0448, 0.2856, 0.3001, 0.2363, 0.1333)


def _depthwise_conv2d(x: Any, kernel: Any, padding: str) -> _ops.Tensor:
    """tf.compat.v1.nn.depthwise_conv2d at rate 1, stride 1 (the only form the image
    metrics use): its "depthwise" scope, filter Shape and dilation_rate nodes included."""
    with _ops.name_scope(None, "depthwise", [x, kernel]) as name:
        x = convert_to_tensor(x, name="tensor_in")
        kernel = convert_to_tensor(kernel, name="filter_in")
        array_ops.shape(kernel)
        convert_to_tensor([1, 1], _dtypes.int32, name="dilation_rate")
        attrs = {"strides": [1, 1, 1, 1], "padding": padding, "data_format": "NHWC"}
        return apply_op("DepthwiseConv2dNative", [x, kernel], attrs, name).outputs[0]


# -- edges and gradients -------------------------------------------------------------------
def sobel_edges(image: Any) -> _ops.Tensor:
    """tf.image.sobel_edges: [batch, h, w, d, 2], the vertical then horizontal Sobel
    responses of each channel over a REFLECT-padded image."""
    image = convert_to_tensor(image)
    static_shape = image.shape
    image_shape = array_ops.shape(image)
    kernels = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]])
    kernels = np.expand_dims(np.transpose(kernels, (1, 2, 0)), -2)
    filters = array_ops.tile(
        constant(kernels, dtype=image.dtype), [1, 1, image_shape[-1], 1], name="sobel_filters"
    )
    padded = array_ops.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    output = _depthwise_conv2d(padded, filters, "VALID")
    output = array_ops.reshape(output, array_ops.concat([image_shape, [2]], 0))
    if static_shape.ndims is not None:
        output.set_shape(TensorShape([*static_shape.as_list(), 2]))
    return output


def image_gradients(image: Any) -> tuple[_ops.Tensor, _ops.Tensor]:
    """tf.image.image_gradients: (dy, dx) forward differences, zero in the last row and
    column."""
    if image.shape.ndims != 4:
        raise ValueError(
            f"image_gradients expects a 4D tensor [batch_size, h, w, d], not {image.shape}."
        )
    image_shape = array_ops.shape(image)
    batch, height, width, depth = array_ops.unstack(image_shape)
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    shape = array_ops.stack([batch, 1, width, depth])
    dy = array_ops.concat([dy, array_ops.zeros(shape, image.dtype)], 1)
    dy = array_ops.reshape(dy, image_shape)
    shape = array_ops.stack([batch, height, 1, depth])
    dx = array_ops.concat([dx, array_ops.zeros(shape, image.dtype)], 2)
    dx = array_ops.reshape(dx, image_shape)
    return dy, dx


def total_variation(images: Any, name: str | None = None) -> _ops.Tensor:
    """tf.image.total_variation: the sum of absolute neighbour differences, per image of
    a batch (rank 4) or for one image (rank 3)."""
    with _ops.name_scope(name, "total_variation"):
        ndims = images.shape.ndims
        if ndims == 3:
            dif1 = images[1:, :, :] - images[:-1, :, :]
            dif2 = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif ndims == 4:
            dif1 = images[:, 1:, :, :] - images[:, :-1, :, :]
            dif2 = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return math_ops.reduce_sum(math_ops.abs(dif1), axis=axis) + math_ops.reduce_sum(
            math_ops.abs(dif2), axis=axis
        )


# -- quality metrics -------------------------------------------------------------------------
def _verify_compatible_image_shapes(img1: Any, img2: Any) -> tuple[Any, Any, list]:
    """The static checks of TF's helper (ValueError), then ShapeN and two Asserts."""
    shape1, shape2 = img1.shape.with_rank_at_least(3), img2.shape.with_rank_at_least(3)
    TensorShape(
        shape1.as_list()[-3:] if shape1.ndims is not None else None
    ).assert_is_compatible_with(
        TensorShape(shape2.as_list()[-3:] if shape2.ndims is not None else None)
    )
    if shape1.ndims is not None and shape2.ndims is not None:
        for d1, d2 in zip(reversed(shape1.as_list()[:-3]), reversed(shape2.as_list()[:-3])):
            if not (d1 == 1 or d2 == 1 or d1 is None or d2 is None or d1 == d2):
                raise ValueError(f"Two images are not compatible: {shape1} and {shape2}")
    s1, s2 = array_ops.shape_n([img1, img2])
    checks = [
        Assert(math_ops.greater_equal(array_ops.size(s1), 3), [s1, s2], summarize=10),
        Assert(math_ops.reduce_all(math_ops.equal(s1[-3:], s2[-3:])), [s1, s2], summarize=10),
    ]
    return s1, s2, checks


def psnr(a: Any, b: Any, max_val: Any, name: str | None = None) -> _ops.Tensor:
    """tf.image.psnr over the last three dimensions, in float32."""
    with _ops.name_scope(name, "PSNR", [a, b]):
        max_val = math_ops.cast(max_val, a.dtype)
        max_val = convert_image_dtype(max_val, _dtypes.float32)
        a = convert_image_dtype(a, _dtypes.float32)
        b = convert_image_dtype(b, _dtypes.float32)
        mse = math_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
        value = math_ops.subtract(
            20 * math_ops.log(max_val) / math_ops.log(10.0),
            np.float32(10 / np.log(10)) * math_ops.log(mse),
            name="psnr",
        )
        _, _, checks = _verify_compatible_image_shapes(a, b)
        with _ops.control_dependencies(checks):
            return array_ops.identity(value)


def _ssim_helper(x: Any, y: Any, reducer: Callable, max_val: Any, compensation: float,
                 k1: float, k2: float) -> tuple[Any, Any]:  # fmt: skip
    c1 = (k1 * max_val) ** 2
    c2 = (k2 * max_val) ** 2
    mean0 = reducer(x)
    mean1 = reducer(y)
    num0 = mean0 * mean1 * 2.0
    den0 = math_ops.square(mean0) + math_ops.square(mean1)
    luminance = (num0 + c1) / (den0 + c1)
    num1 = reducer(x * y) * 2.0
    den1 = reducer(math_ops.square(x) + math_ops.square(y))
    c2 *= compensation
    cs = (num1 - num0 + c2) / (den1 - den0 + c2)
    return luminance, cs


def _fspecial_gauss(size: Any, sigma: Any) -> _ops.Tensor:
    """A size x size Gaussian window (softmax of -x^2/2s^2), as a depthwise filter."""
    size = convert_to_tensor(size, _dtypes.int32)
    sigma = convert_to_tensor(sigma)
    coords = math_ops.cast(math_ops.range(size), sigma.dtype)
    coords -= math_ops.cast(size - 1, sigma.dtype) / 2.0
    g = math_ops.square(coords)
    g *= -0.5 / math_ops.square(sigma)
    g = array_ops.reshape(g, shape=[1, -1]) + array_ops.reshape(g, shape=[-1, 1])
    g = array_ops.reshape(g, shape=[1, -1])
    g = nn_ops.softmax(g)
    return array_ops.reshape(g, shape=[size, size, 1, 1])


def _ssim_per_channel(img1: Any, img2: Any, max_val: Any = 1.0, filter_size: int = 11,
                      filter_sigma: float = 1.5, k1: float = 0.01, k2: float = 0.03,
                      return_index_map: bool = False) -> tuple[Any, Any]:  # fmt: skip
    filter_size_t = constant(filter_size, dtype=_dtypes.int32)
    filter_sigma_t = constant(filter_sigma, dtype=img1.dtype)
    shape1, shape2 = array_ops.shape_n([img1, img2])
    checks = [
        Assert(
            math_ops.reduce_all(math_ops.greater_equal(shape1[-3:-1], filter_size_t)),
            [shape1, filter_size_t],
            summarize=8,
        ),
        Assert(
            math_ops.reduce_all(math_ops.greater_equal(shape2[-3:-1], filter_size_t)),
            [shape2, filter_size_t],
            summarize=8,
        ),
    ]
    with _ops.control_dependencies(checks):
        img1 = array_ops.identity(img1)
    kernel = _fspecial_gauss(filter_size_t, filter_sigma_t)
    kernel = array_ops.tile(kernel, multiples=[1, 1, shape1[-1], 1])

    def reducer(x: Any) -> Any:
        shape = array_ops.shape(x)
        x = array_ops.reshape(x, shape=array_ops.concat([[-1], shape[-3:]], 0))
        y = _depthwise_conv2d(x, kernel, "VALID")
        return array_ops.reshape(y, array_ops.concat([shape[:-3], array_ops.shape(y)[1:]], 0))

    # compensation 1.0, not 1 - sum(kernel^2), to match MATLAB's MS-SSIM as TF does.
    luminance, cs = _ssim_helper(img1, img2, reducer, max_val, 1.0, k1, k2)
    if return_index_map:
        return luminance * cs, cs
    axes = constant([-3, -2], dtype=_dtypes.int32)
    return math_ops.reduce_mean(luminance * cs, axes), math_ops.reduce_mean(cs, axes)


def _to_float_images(img1: Any, img2: Any, max_val: Any) -> tuple[Any, Any, Any, Any, Any]:
    """ssim's and ssim_multiscale's common start: the shape checks, then float32."""
    img1 = convert_to_tensor(img1, name="img1")
    img2 = convert_to_tensor(img2, name="img2")
    shape1, shape2, checks = _verify_compatible_image_shapes(img1, img2)
    with _ops.control_dependencies(checks):
        img1 = array_ops.identity(img1)
    max_val = math_ops.cast(max_val, img1.dtype)
    max_val = convert_image_dtype(max_val, _dtypes.float32)
    img1 = convert_image_dtype(img1, _dtypes.float32)
    img2 = convert_image_dtype(img2, _dtypes.float32)
    return img1, img2, max_val, shape1, shape2


def ssim(
    img1: Any, img2: Any, max_val: Any, filter_size: int = 11, filter_sigma: float = 1.5,
    k1: float = 0.01, k2: float = 0.03, return_index_map: bool = False,
) -> _ops.Tensor:  # fmt: skip
    """tf.image.ssim: structural similarity with an 11x11 Gaussian window, averaged
    over the channels (and over the image unless return_index_map)."""
    with _ops.name_scope(None, "SSIM", [img1, img2]):
        img1, img2, max_val, _, _ = _to_float_images(img1, img2, max_val)
        per_channel, _ = _ssim_per_channel(
            img1, img2, max_val, filter_size, filter_sigma, k1, k2, return_index_map
        )
        return math_ops.reduce_mean(per_channel, [-1])


def _bind(fn: Callable, *args: Any) -> Callable[[], Any]:
    return lambda: fn(*args)


def ssim_multiscale(img1: Any, img2: Any, max_val: Any,
                    power_factors: Sequence[float] = _MSSSIM_WEIGHTS, filter_size: int = 11,
                    filter_sigma: float = 1.5, k1: float = 0.01,
                    k2: float = 0.03) -> _ops.Tensor:  # fmt: skip
    """tf.image.ssim_multiscale: SSIM's contrast-structure at each 2x-downsampled scale
    (SYMMETRIC padding to even sizes under a cond) and luminance at the last, combined
    as a weighted geometric mean."""
    with _ops.name_scope(None, "MS-SSIM", [img1, img2]):
        img1, img2, max_val, shape1, shape2 = _to_float_images(img1, img2, max_val)
        imgs = [img1, img2]
        heads = [s[:-3] for s in (shape1, shape2)]
        tails = [s[-3:] for s in (shape1, shape2)]
        divisor = [1, 2, 2, 1]
        divisor_tensor = constant(divisor[1:], dtype=_dtypes.int32)

        def do_pad(images: list, remainder: Any) -> list:
            padding = array_ops.expand_dims(remainder, -1)
            padding = array_ops.pad(padding, [[1, 0], [1, 0]])
            return [array_ops.pad(x, padding, mode="SYMMETRIC") for x in images]

        mcs = []
        per_channel: Any = None
        for k in range(len(power_factors)):
            with _ops.name_scope(None, f"Scale{k}", imgs):
                if k > 0:
                    flat = [
                        array_ops.reshape(x, array_ops.concat([[-1], t], 0))
                        for x, t in zip(imgs, tails)
                    ]
                    remainder = tails[0] % divisor_tensor
                    need_padding = math_ops.reduce_any(math_ops.not_equal(remainder, 0))
                    padded = cond(need_padding, _bind(do_pad, flat, remainder), _bind(list, flat))
                    downscaled = [
                        nn_ops.avg_pool(x, ksize=divisor, strides=divisor, padding="VALID")
                        for x in padded
                    ]
                    tails = [x[1:] for x in array_ops.shape_n(downscaled)]
                    imgs = [
                        array_ops.reshape(x, array_ops.concat([h, t], 0))
                        for x, h, t in zip(downscaled, heads, tails)
                    ]
                per_channel, cs = _ssim_per_channel(
                    imgs[0], imgs[1], max_val, filter_size, filter_sigma, k1, k2
                )
                mcs.append(nn_ops.relu(cs))
        mcs.pop()  # the last scale contributes its full SSIM instead
        stacked = array_ops.stack([*mcs, nn_ops.relu(per_channel)], axis=-1)
        ms_ssim = math_ops.reduce_prod(math_ops.pow(stacked, power_factors), [-1])
        return math_ops.reduce_mean(ms_ssim, [-1])
