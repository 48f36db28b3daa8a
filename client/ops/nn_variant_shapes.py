"""Client, shape inference for the convolution and pooling variants (TF's shape functions
in core/ops/nn_ops.cc and array_ops.cc): depthwise convolution and its backprops,
Conv3DBackprop*V2, SpaceToDepth / DepthToSpace, MaxPoolWithArgmax, fractional pooling,
Dilation2D, LRN, image and volume patches, UnsortedSegmentSum."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from client.framework import shape_fns as sf
from client.framework.tensor_shape import TensorShape

UNKNOWN = TensorShape(None)


def _attr(op: Any, name: str) -> Any:
    v = sf._attr(op, name)
    return v.decode() if isinstance(v, bytes) else v


def _windowed(x: Any, window: list[int], strides: list[int], rates: list[int], pad: str) -> list:
    """Output sizes of the spatial dims of `x` (a list, None where unknown)."""
    return [
        None if n is None else sf._window_out(n, k, s, d, pad)
        for n, k, s, d in zip(x, window, strides, rates)
    ]


def _same(op: Any) -> list[Any]:
    return [sf._in(op, 0)]


def _same_rank4(op: Any) -> list[Any]:
    x = sf._in(op, 0)
    return [x if x.ndims is not None else TensorShape([None] * 4)]


def _dilation2d(op: Any) -> list[Any]:
    """TF's: the depth merged from input and filter; rows and columns only when both of
    the input's are known."""
    x, f = sf._in(op, 0), sf._in(op, 1)
    dims = x.as_list() if x.ndims == 4 else [None] * 4
    fd = f.as_list() if f.ndims == 3 else [None] * 3
    n, h, w, c = dims
    c = c if c is not None else fd[2]
    if h is None or w is None or fd[0] is None or fd[1] is None:
        return [TensorShape([n, None, None, c])]
    s, r = _attr(op, "strides"), _attr(op, "rates")
    pad = _attr(op, "padding")
    oh = sf._window_out(h, fd[0], s[1], r[1], pad)
    ow = sf._window_out(w, fd[1], s[2], r[2], pad)
    return [TensorShape([n, oh, ow, c])]


def _patches(op: Any) -> list[Any]:
    """TF's: the spatial sizes only when all of the input's are known."""
    x = sf._in(op, 0)
    rank = 4 if op.type == "ExtractImagePatches" else 5
    if x.ndims != rank:
        return [TensorShape([None] * rank)]
    dims = x.as_list()
    k, s = _attr(op, "ksizes")[1:-1], _attr(op, "strides")[1:-1]
    r = _attr(op, "rates")[1:-1] if rank == 4 else [1] * 3
    depth = None if dims[-1] is None else dims[-1] * math.prod(k)
    spatial = dims[1:-1]
    if None in spatial:
        # TF's ExtractVolumePatches then returns a rank-4 shape; the true rank is kept.
        return [TensorShape([dims[0], *[None] * (rank - 2), depth])]
    return [TensorShape([dims[0], *_windowed(spatial, k, s, r, _attr(op, "padding")), depth])]


def _fractional(op: Any) -> list[Any]:
    x = sf._in(op, 0)
    if x.ndims != 4:
        return [TensorShape([None] * 4), TensorShape([None]), TensorShape([None])]
    ratio = _attr(op, "pooling_ratio")
    out = [
        None if d is None else int(np.floor(np.float32(d) / np.float32(r)))
        for d, r in zip(x.as_list(), ratio)
    ]
    # TF's shape function gives the sequences the output's length (the kernel makes one
    # more); mirrored, so static shapes read as TF's.
    seq = [TensorShape([d]) for d in out[1:3]]
    return [TensorShape(out), *seq]


def _max_pool_with_argmax(op: Any) -> list[Any]:
    x = sf._in(op, 0)
    if x.ndims != 4:
        return [TensorShape([None] * 4)] * 2
    n, h, w, c = x.as_list()
    k, s = _attr(op, "ksize"), _attr(op, "strides")
    out = TensorShape([n, *_windowed([h, w], k[1:3], s[1:3], [1, 1], _attr(op, "padding")), c])
    return [out, out]


def _depthwise(op: Any) -> list[Any]:
    x, f = sf._in(op, 0), sf._in(op, 1)
    nchw = _attr(op, "data_format") == "NCHW"
    if x.ndims != 4:
        x = TensorShape([None] * 4)
    n, h, w, c = (x[0], x[2], x[3], x[1]) if nchw else x.as_list()
    fd = f.as_list() if f.ndims == 4 else [None] * 4
    s, d = _attr(op, "strides"), _attr(op, "dilations") or [1] * 4
    si, di = ((s[2], s[3]), (d[2], d[3])) if nchw else ((s[1], s[2]), (d[1], d[2]))
    pad = _attr(op, "padding")
    if pad == "EXPLICIT":
        return [TensorShape([None] * 4)]
    oh, ow = (
        None if a is None or k is None else sf._window_out(a, k, st, dl, pad)
        for a, k, st, dl in ((h, fd[0], si[0], di[0]), (w, fd[1], si[1], di[1]))
    )
    # TF merges the input's depth with the filter's in-channels, then multiplies.
    in_c = c if c is not None else fd[2]
    out_c = None if in_c is None or fd[3] is None else in_c * fd[3]
    return [TensorShape([n, out_c, oh, ow] if nchw else [n, oh, ow, out_c])]


def _from_input(i: int) -> Any:
    return lambda op: [sf._shape_from_tensor(op.inputs[i])]


def _block(op: Any) -> list[Any]:
    x = sf._in(op, 0)
    if x.ndims != 4:
        return [TensorShape([None] * 4)]
    b = int(_attr(op, "block_size"))
    nchw = _attr(op, "data_format") == "NCHW"
    n, h, w, c = (x[0], x[2], x[3], x[1]) if nchw else x.as_list()

    def scale(v: Any, f: float) -> Any:
        return None if v is None else int(v * f)

    if op.type == "SpaceToDepth":
        h, w, c = scale(h, 1 / b), scale(w, 1 / b), scale(c, b * b)
    else:
        h, w, c = scale(h, b), scale(w, b), None if c is None else c // (b * b)
    return [TensorShape([n, c, h, w] if nchw else [n, h, w, c])]


def _unsorted_segment(op: Any) -> list[Any]:
    data, ids = sf._in(op, 0), sf._in(op, 1)
    num = sf.evaluated_value(op.inputs[2])
    if data.ndims is None or ids.ndims is None:
        return [UNKNOWN]
    first = None if num is None else int(num)
    return [TensorShape([first, *data.as_list()[ids.ndims :]])]


for _names, _fn in (
    (("LRN", "LRNGrad", "FractionalMaxPoolGrad", "MaxPoolGradWithArgmax"), _same_rank4),
    (("Dilation2DBackpropInput",), _same),
    (("Dilation2DBackpropFilter",), lambda op: [sf._in(op, 1)]),
    (("Dilation2D",), _dilation2d),
    (("ExtractImagePatches", "ExtractVolumePatches"), _patches),
    (("FractionalMaxPool", "FractionalAvgPool"), _fractional),
    (("FractionalAvgPoolGrad",), _from_input(0)),
    (("MaxPoolWithArgmax",), _max_pool_with_argmax),
    (("DepthwiseConv2dNative",), _depthwise),
    (("DepthwiseConv2dNativeBackpropInput", "Conv3DBackpropInputV2"), _from_input(0)),
    (("DepthwiseConv2dNativeBackpropFilter", "Conv3DBackpropFilterV2"), _from_input(1)),
    (("SpaceToDepth", "DepthToSpace"), _block),
    (("UnsortedSegmentSum",), _unsorted_segment),
):
    for _name in _names:
        sf.SHAPE_FNS.setdefault(_name, _fn)
