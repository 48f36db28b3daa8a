"""Ops (executor stage), bounding boxes on images: SampleDistortedBoundingBox (V1, V2 and
Stateless) and DrawBoundingBoxes (V1, V2), as TensorFlow's
sample_distorted_bounding_box_op.cc and draw_bounding_box_op.cc compute them.

The sampler draws, per attempt, an aspect ratio (one float) and a crop size and corner
(exact uniform integers by rejection, TF's ExactUniformInt) from one Philox word stream;
its float arithmetic is float32 in TensorFlow's order, with lrintf's round-half-even,
so the same seeds give TensorFlow's crop. The stateful ops keep their generator per
node and session (each run reserves 4 * max_attempts words, as TF's kernel does).
Thread-safe: the stateful reservation is locked, the rest keeps no state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from common.errors import FailedPreconditionError, InvalidArgumentError
from common.ops import math_util as mu
from common.ops.random.philox import PhiloxRandom, WordStream
from common.ops.random_ops import node_generator
from common.ops.registry import KernelConstruction, register_kernel, register_op
from common.ops.stateless_random_ops import seed_generator

F32 = np.float32
_M32 = 0xFFFFFFFF
_INT32_MAX = 2**31 - 1
_INTEGRAL = "{uint8, int8, int16, int32, int64}"
_SAMPLER_ATTRS = [
    "aspect_ratio_range: list(float) = [0.75, 1.33]",
    "area_range: list(float) = [0.05, 1.0]",
    "max_attempts: int = 100",
    "use_image_if_no_bounding_boxes: bool = false",
]


@dataclass(frozen=True)
class _Rect:
    min_x: int
    min_y: int
    max_x: int
    max_y: int

    def area(self) -> np.float32:
        return F32((self.max_x - self.min_x) * (self.max_y - self.min_y))

    def intersect(self, r: _Rect) -> _Rect:
        x0, y0 = max(self.min_x, r.min_x), max(self.min_y, r.min_y)
        x1, y1 = min(self.max_x, r.max_x), min(self.max_y, r.max_y)
        return _Rect(0, 0, 0, 0) if x0 > x1 or y0 > y1 else _Rect(x0, y0, x1, y1)


class _SimplePhilox:
    """TF's SimplePhilox over a generator: RandFloat (one word) and Uniform(n) (exact,
    by rejection of the words that would bias toward 0)."""

    def __init__(self, gen: PhiloxRandom) -> None:
        self._words = WordStream(gen)

    def rand32(self) -> int:
        return int(self._words.take(1)[0])

    def rand_float(self) -> np.float32:
        return self._words.rand_floats(1)[0]

    def uniform(self, n: int) -> int:
        n &= _M32
        if n == 0:
            self.rand32()
            return 0
        if n & (n - 1) == 0:
            return self.rand32() & (n - 1)
        rem = (_M32 % n) + 1
        while True:
            r = self.rand32()
            if r >= rem:
                return r % n


def _lrintf(x: np.float32) -> int:
    return int(np.rint(F32(x)))


def _random_crop(
    width: int, height: int, min_rel: np.float32, max_rel: np.float32, aspect: np.float32,
    rng: _SimplePhilox,
) -> _Rect | None:  # fmt: skip
    """GenerateRandomCrop: a crop of area in [min_rel, max_rel] of the image and
    width = round(aspect * height), or None when the constraints cannot be met."""
    if max_rel <= 0 or aspect <= 0 or width <= 0 or height <= 0 or min_rel > max_rel:
        return None
    min_area = F32(F32(min_rel * F32(width)) * F32(height))
    max_area = F32(F32(max_rel * F32(width)) * F32(height))
    h = _lrintf(np.sqrt(F32(min_area / aspect)))
    max_h = _lrintf(np.sqrt(F32(max_area / aspect)))
    if _lrintf(F32(max_h) * aspect) > width:
        eps = float(F32(0.0000001))
        max_h = int((width + 0.5 - eps) / float(aspect))
        if _lrintf(F32(max_h) * aspect) > width:
            max_h -= 1
    max_h = min(max_h, height)
    h = min(h, max_h)
    if h < max_h:
        h += rng.uniform(max_h - h + 1)
    w = _lrintf(F32(h) * aspect)
    area = F32(w * h)
    if area < min_area:
        h += 1
        w = _lrintf(F32(h) * aspect)
        area = F32(w * h)
    if area > max_area:
        h -= 1
        w = _lrintf(F32(h) * aspect)
        area = F32(w * h)
    if area < min_area or area > max_area or w > width or h > height or w <= 0 or h <= 0:
        return None
    y = rng.uniform(height - h) if h < height else 0
    x = rng.uniform(width - w) if w < width else 0
    return _Rect(x, y, x + w, y + h)


def _covers(crop: _Rect, min_covered: np.float32, boxes: list[_Rect]) -> bool:
    if crop.area() < 1:
        return False
    for box in boxes:
        area = box.area()
        if area < 1:
            continue
        if F32(crop.intersect(box).area() / area) >= min_covered:
            return True
    return False


class _Sampler:
    """The attrs of a SampleDistortedBoundingBox node, checked as TF's constructor does."""

    def __init__(self, kc: KernelConstruction) -> None:
        a = kc.attrs
        node = kc.node_name
        self.use_image = bool(a["use_image_if_no_bounding_boxes"])
        self.aspect = [F32(v) for v in a["aspect_ratio_range"]]
        self.area = [F32(v) for v in a["area_range"]]
        self.max_attempts = int(a["max_attempts"])
        self.min_covered = F32(a.get("min_object_covered", 0.0))
        if len(self.aspect) != 2:
            raise InvalidArgumentError("Aspect ratio range field must specify 2 dimensions", node)
        if not (self.aspect[0] > 0 and self.aspect[1] > 0):
            raise InvalidArgumentError(
                f"Aspect ratio range must be non-negative: [{self.aspect[0]}, {self.aspect[1]}]",
                node,
            )
        if len(self.area) != 2:
            raise InvalidArgumentError("Area range field must specify 2 dimensions", node)
        if not (self.area[0] > 0 and self.area[1] > 0):
            raise InvalidArgumentError(
                f"Area range must be non-negative: [{self.area[0]}, {self.area[1]}]", node
            )
        if not (self.area[0] <= 1 and self.area[1] <= 1):
            raise InvalidArgumentError(
                f"Area range must be less then or equal to 1.0: [{self.area[0]}, {self.area[1]}]",
                node,
            )
        if self.max_attempts <= 0:
            raise InvalidArgumentError(
                f"Max attempts must be non-negative: {self.max_attempts}", node
            )
        if "min_object_covered" in a and self.min_covered < 0:
            raise InvalidArgumentError(
                f"Min object covered must be non-negative: {self.min_covered}", node
            )

    def sample(self, image_size, boxes, min_covered, gen: PhiloxRandom) -> list[np.ndarray]:
        size = np.asarray(image_size)
        if size.ndim != 1:
            raise InvalidArgumentError(
                f"image_size must be 1-dimensional{mu.shape_str(size.shape)}"
            )
        if size.shape[0] != 3:
            raise InvalidArgumentError(
                f"image_size must contain 3 elements{mu.shape_str(size.shape)}"
            )
        height_raw, width_raw = int(size[0]) & (2**64 - 1), int(size[1]) & (2**64 - 1)
        if height_raw >= _INT32_MAX:
            raise InvalidArgumentError("image height cannot be >= int32 max")
        if width_raw >= _INT32_MAX:
            raise InvalidArgumentError("image width cannot be >= int32 max")
        height, width = height_raw, width_raw
        b = np.asarray(boxes, np.float32)
        if b.ndim != 3:
            raise InvalidArgumentError(
                f"input boxes must be 3-dimensional [batch, num_boxes, coords]: "
                f"{mu.shape_str(b.shape)}"
            )
        if b.shape[-1] != 4:
            raise InvalidArgumentError(
                f"bounding boxes must have shape [4] or [*, 4], got {mu.shape_str(b.shape)}"
            )
        covered = self.min_covered
        if min_covered is not None:
            m = np.asarray(min_covered)
            if m.ndim != 0:
                raise InvalidArgumentError(
                    f"min_object_covered must be 0-D, got shape {mu.shape_str(m.shape)}"
                )
            covered = F32(m)
            if covered < 0:
                raise InvalidArgumentError(f"Min object covered must be non-negative: {covered}")
        rects = []
        for row in b.reshape(-1, 4):
            for v in row:
                if not (v >= 0.0 and v <= 1.0):
                    raise InvalidArgumentError(
                        f"All bounding box coordinates must be in [0.0, 1.0]: {v}"
                    )
            rects.append(
                _Rect(
                    int(F32(row[1] * F32(width))),
                    int(F32(row[0] * F32(height))),
                    int(F32(row[3] * F32(width))),
                    int(F32(row[2] * F32(height))),
                )
            )
        image_rect = _Rect(0, 0, width, height)
        if not rects:
            if not self.use_image:
                raise InvalidArgumentError(
                    "No bounding boxes provided as input. One must enable "
                    "use_image_if_no_bounding_boxes if you wish to not provide any "
                    "bounding boxes."
                )
            rects.append(image_rect)
        rng = _SimplePhilox(gen)
        crop = image_rect
        lo_aspect, hi_aspect = self.aspect
        for _ in range(self.max_attempts):
            aspect = F32(F32(rng.rand_float() * F32(hi_aspect - lo_aspect)) + lo_aspect)
            got = _random_crop(width, height, self.area[0], self.area[1], aspect, rng)
            if got is not None and _covers(got, covered, rects):
                crop = got
                break
        tw, th = crop.max_x - crop.min_x, crop.max_y - crop.min_y
        if width < tw + crop.min_x:
            raise FailedPreconditionError(
                f"width must be > target_width + offset_width: {width}vs {tw} + {crop.min_x}"
            )
        if height < th + crop.min_y:
            raise FailedPreconditionError(
                f"height must be >= target_height: height = {height}vs {th} + {crop.min_y}"
            )
        dt = size.dtype
        begin = np.array([crop.min_y, crop.min_x, 0], np.int64).astype(dt)
        extent = np.array([th, tw, -1], np.int64).astype(dt)  # -1 wraps as T(-1) does
        bbox = np.array(
            [
                F32(crop.min_y) / F32(height),
                F32(crop.min_x) / F32(width),
                F32(crop.max_y) / F32(height),
                F32(crop.max_x) / F32(width),
            ],
            np.float32,
        ).reshape(1, 1, 4)
        return [begin, extent, bbox]


def _stateful(kc: KernelConstruction) -> Callable:
    sampler = _Sampler(kc)
    guarded = node_generator(kc)
    v2 = kc.op == "SampleDistortedBoundingBoxV2"

    def compute(ctx, inputs: list) -> list:
        gen = guarded.reserve_samples32(4 * sampler.max_attempts)
        return sampler.sample(inputs[0], inputs[1], inputs[2] if v2 else None, gen)

    return compute


def _stateless(kc: KernelConstruction) -> Callable:
    sampler = _Sampler(kc)

    def compute(ctx, inputs: list) -> list:
        image_size, boxes, covered, seed = inputs
        return sampler.sample(image_size, boxes, covered, seed_generator(seed))

    return compute


# -- DrawBoundingBoxes ------------------------------------------------------------------------
_DEFAULT_COLORS: list[list[float]] = [
    [1, 1, 0, 1],
    [0, 0, 1, 1],
    [1, 0, 0, 1],
    [0, 1, 0, 1],
    [0.5, 0, 0.5, 1],
    [0.5, 0.5, 0, 1],
    [0.5, 0, 0, 1],
    [0, 0, 0.5, 1],
    [0, 1, 1, 1],
    [1, 0, 1, 1],
]


def draw_bounding_boxes(images, boxes, colors=None) -> np.ndarray:
    images, boxes = np.asarray(images), np.asarray(boxes, np.float32)
    if images.ndim != 4:
        raise InvalidArgumentError("The rank of the images should be 4")
    if boxes.ndim != 3:
        raise InvalidArgumentError("The rank of the boxes tensor should be 3")
    if images.shape[0] != boxes.shape[0]:
        raise InvalidArgumentError("The batch sizes should be the same")
    batch, height, width, depth = images.shape
    if depth not in (1, 3, 4):
        raise InvalidArgumentError("Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA)")
    if boxes.shape[2] != 4:
        raise InvalidArgumentError(
            f"The size of the third dimension of the box must be 4. Received: {boxes.shape[2]}"
        )
    table: list = []
    if colors is not None:
        c = np.asarray(colors, np.float32)
        if c.ndim != 2:
            raise InvalidArgumentError(f"colors must be a 2-D matrix{mu.shape_str(c.shape)}")
        if c.shape[1] < depth:
            raise InvalidArgumentError(
                "colors must have equal or more channels than the image provided: "
                f"{mu.shape_str(c.shape)}"
            )
        table = [list(row[:depth]) for row in c]
    if not table:
        table = [list(row) for row in _DEFAULT_COLORS]
        if depth == 1:
            for row in table:
                row[0] = 1
    canvas = images.copy()
    for b in range(batch):
        for bb in range(boxes.shape[1]):
            color = np.array(table[bb % len(table)][:depth], np.float32).astype(images.dtype)
            y0, x0, y1, x1 = boxes[b, bb]
            min_row = int(F32(y0 * F32(height - 1)))
            max_row = int(F32(y1 * F32(height - 1)))
            min_col = int(F32(x0 * F32(width - 1)))
            max_col = int(F32(x1 * F32(width - 1)))
            if min_row > max_row or min_col > max_col:
                continue  # inverted: TF logs and skips it
            if min_row >= height or max_row < 0 or min_col >= width or max_col < 0:
                continue  # outside the image
            r0, r1 = max(min_row, 0), min(max_row, height - 1)
            c0, c1 = max(min_col, 0), min(max_col, width - 1)
            if min_row >= 0:
                canvas[b, min_row, c0 : c1 + 1] = color
            if max_row < height:
                canvas[b, max_row, c0 : c1 + 1] = color
            if min_col >= 0:
                canvas[b, r0 : r1 + 1, min_col] = color
            if max_col < width:
                canvas[b, r0 : r1 + 1, max_col] = color
    return canvas


def _draw(kc: KernelConstruction) -> Callable:
    def compute(ctx, inputs: list) -> list:
        return [draw_bounding_boxes(*inputs)]

    return compute


def _register() -> None:
    outputs = ["begin: T", "size: T", "bboxes: float"]
    seeds = ["seed: int = 0", "seed2: int = 0"]
    register_op(
        "SampleDistortedBoundingBox",
        ["image_size: T", "bounding_boxes: float"],
        outputs,
        [f"T: {_INTEGRAL}", *seeds, "min_object_covered: float = 0.1", *_SAMPLER_ATTRS],
        stateful=True,
    )
    register_kernel("SampleDistortedBoundingBox")(_stateful)
    register_op(
        "SampleDistortedBoundingBoxV2",
        ["image_size: T", "bounding_boxes: float", "min_object_covered: float"],
        outputs,
        [f"T: {_INTEGRAL}", *seeds, *_SAMPLER_ATTRS],
        stateful=True,
    )
    register_kernel("SampleDistortedBoundingBoxV2")(_stateful)
    register_op(
        "StatelessSampleDistortedBoundingBox",
        ["image_size: T", "bounding_boxes: float", "min_object_covered: float", "seed: Tseed"],
        outputs,
        [f"T: {_INTEGRAL}", "Tseed: {int32, int64}", *_SAMPLER_ATTRS],
    )
    register_kernel("StatelessSampleDistortedBoundingBox")(_stateless)
    register_op(
        "DrawBoundingBoxes",
        ["images: T", "boxes: float"],
        ["output: T"],
        ["T: {float, half} = DT_FLOAT"],
    )
    register_kernel("DrawBoundingBoxes")(_draw)
    register_op(
        "DrawBoundingBoxesV2",
        ["images: T", "boxes: float", "colors: float"],
        ["output: T"],
        ["T: {float, half} = DT_FLOAT"],
    )
    register_kernel("DrawBoundingBoxesV2")(_draw)


_register()
