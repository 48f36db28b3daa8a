"""ImageSummary against TensorFlow: graphs built with tf.compat.v1.summary.image run by
TensorFlow's session and by ours give byte-equal Summary protos (PNG bytes, float
normalization, non-finite pixels in bad_color, tags)."""

from __future__ import annotations

import numpy as np
import pytest

from common.ops import registry

from .tf_graphs import run_both

tf = pytest.importorskip("tensorflow")


def test_image_summary_default_bad_color():
    attr = {a.name: a for a in registry.lookup_op("ImageSummary").attrs}["bad_color"]
    assert attr.default.tolist() == [255, 0, 0, 255] and attr.default.dtype == np.uint8


def _images():
    rng = np.random.default_rng(9)
    out = [rng.integers(0, 256, (4, 5, 6, c)).astype(np.uint8) for c in (1, 3, 4)]
    positive = rng.uniform(0, 3, (2, 4, 3, 3)).astype(np.float32)
    mixed = rng.standard_normal((3, 4, 3, 1)).astype(np.float32)
    mixed[0, 1, 1, 0] = np.nan
    mixed[1, 2, 2, 0] = np.inf
    zeros = np.zeros((1, 2, 2, 3), np.float32)
    return [*out, positive, mixed, zeros, positive.astype(np.float64), mixed.astype(np.float16)]


def test_image_summaries_bytes_equal_tensorflow():
    def build(tf1):
        out = []
        for i, images in enumerate(_images()):
            for n in (1, 3):
                out.append(tf1.summary.image(f"img{i}", tf1.constant(images), max_outputs=n))
        return out

    (theirs,), (ours,) = run_both(build)
    for a, b in zip(ours, theirs):
        assert bytes(np.asarray(a, dtype=object).item()) == b
