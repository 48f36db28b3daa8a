"""Client, graph building: tf.image — codecs (decode_png/jpeg/bmp/gif/image, encode_png/
jpeg), convert_image_dtype, flips, per_image_standardization, resizing and crop_and_resize
as tensorflow.compat.v1 builds them (its image_ops_impl.py: the same ops and node names).
Graph building; not thread-safe.
"""

from __future__ import annotations

from typing import Any

from client.framework import dtypes as _dtypes
from client.framework import ops as _ops
from client.framework import shape_fns
from client.framework.op_builder import apply_op, convert_to_tensor
from client.framework.tensor_shape import TensorShape


def _op(op_type: str, inputs: list, attrs: dict, name: str | None) -> _ops.Tensor:
    return apply_op(op_type, inputs, attrs, name).outputs[0]


# -- codecs --------------------------------------------------------------------------------------
def decode_png(contents: Any, channels: int = 0, dtype: Any = _dtypes.uint8,
               name: str | None = None) -> _ops.Tensor:  # fmt: skip
    attrs = {"channels": channels, "dtype": _dtypes.as_dtype(dtype)}
    return _op("DecodePng", [contents], attrs, name)


def decode_jpeg(contents: Any, channels: int = 0, ratio: int = 1, fancy_upscaling: bool = True,
                try_recover_truncated: bool = False, acceptable_fraction: float = 1,
                dct_method: str = "", name: str | None = None) -> _ops.Tensor:  # fmt: skip
    attrs = {"channels": channels, "ratio": ratio, "fancy_upscaling": fancy_upscaling,
             "try_recover_truncated": try_recover_truncated,
             "acceptable_fraction": acceptable_fraction, "dct_method": dct_method}  # fmt: skip
    return _op("DecodeJpeg", [contents], attrs, name)


def decode_bmp(contents: Any, channels: int = 0, name: str | None = None) -> _ops.Tensor:
    return _op("DecodeBmp", [contents], {"channels": channels}, name)


def decode_gif(contents: Any, name: str | None = None) -> _ops.Tensor:
    return _op("DecodeGif", [contents], {}, name)


def decode_image(contents: Any, channels: Any = None, dtype: Any = _dtypes.uint8,
                 name: str | None = None,
                 expand_animations: bool = True) -> _ops.Tensor:  # fmt: skip
    attrs = {"channels": channels or 0, "dtype": _dtypes.as_dtype(dtype),
             "expand_animations": expand_animations}  # fmt: skip
    with _ops.name_scope(name, "decode_image"):
        return _op("DecodeImage", [contents], attrs, None)


def encode_png(image: Any, compression: int = -1, name: str | None = None) -> _ops.Tensor:
    # image_ops_impl.encode_png converts the image first ("Const", not "EncodePng/image").
    return _op("EncodePng", [convert_to_tensor(image)], {"compression": compression}, name)


def encode_jpeg(image: Any, format: str = "", quality: int = 95, progressive: bool = False,  # noqa: A002
                optimize_size: bool = False, chroma_downsampling: bool = True,
                density_unit: str = "in", x_density: int = 300, y_density: int = 300,
                xmp_metadata: str = "", name: str | None = None) -> _ops.Tensor:  # fmt: skip
    attrs = {"format": format, "quality": quality, "progressive": progressive,
             "optimize_size": optimize_size, "chroma_downsampling": chroma_downsampling,
             "density_unit": density_unit, "x_density": x_density, "y_density": y_density,
             "xmp_metadata": xmp_metadata}  # fmt: skip
    return _op("EncodeJpeg", [image], attrs, name)


# -- static shapes ------------------------------------------------------------------------------
def _decoded(op: Any) -> list[Any]:
    channels = shape_fns._attr(op, "channels") or None
    return [TensorShape([None, None, channels])]


for _name in ("DecodePng", "DecodeJpeg", "DecodeBmp"):
    shape_fns.SHAPE_FNS[_name] = _decoded
shape_fns.SHAPE_FNS["DecodeGif"] = lambda op: [TensorShape([None, None, None, 3])]
shape_fns.SHAPE_FNS["DecodeImage"] = lambda op: [TensorShape(None)]
shape_fns.SHAPE_FNS["EncodePng"] = lambda op: [TensorShape([])]
shape_fns.SHAPE_FNS["EncodeJpeg"] = lambda op: [TensorShape([])]
