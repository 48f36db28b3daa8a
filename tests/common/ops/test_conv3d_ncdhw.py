"""The 3-D convolution and pooling kernels refuse NCDHW as TensorFlow 2.21's CPU kernels
do: InvalidArgument, each op with TF's own message. Skipped without TensorFlow."""

from __future__ import annotations

import numpy as np
import pytest

from common.errors import InvalidArgumentError

from .test_random_ops import Kernel

tf = pytest.importorskip("tensorflow")

X5 = np.random.RandomState(5).randn(2, 3, 4, 5, 6).astype(np.float32)  # N, C, D, H, W

_W = np.ones((1, 1, 1, 3, 2), np.float32)
_CONV = {"strides": [1, 1, 1, 1, 1], "padding": "VALID", "data_format": "NCDHW"}
_POOL = {"ksize": [1, 1, 1, 1, 1], **_CONV}
KERNEL_CASES = {
    "Conv3D": ([X5, _W], _CONV),
    "Conv3DBackpropInputV2": ([np.array(X5.shape, np.int32), _W, X5[:, :2]], _CONV),
    "Conv3DBackpropFilterV2": ([X5, np.array(_W.shape, np.int32), X5[:, :2]], _CONV),
    "MaxPool3D": ([X5], _POOL),
    "AvgPool3D": ([X5], _POOL),
    "MaxPool3DGrad": ([X5, X5, X5], _POOL),
    "AvgPool3DGrad": ([np.array(X5.shape, np.int32), X5], _POOL),
}


@pytest.mark.parametrize("op", sorted(KERNEL_CASES))
def test_kernels_refuse_ncdhw_with_tf_message(op):
    inputs, attrs = KERNEL_CASES[op]
    names = {
        "Conv3D": ["input", "filter"],
        "Conv3DBackpropInputV2": ["input_sizes", "filter", "out_backprop"],
        "Conv3DBackpropFilterV2": ["input", "filter_sizes", "out_backprop"],
        "MaxPool3D": ["input"],
        "AvgPool3D": ["input"],
        "MaxPool3DGrad": ["orig_input", "orig_output", "grad"],
        "AvgPool3DGrad": ["orig_input_shape", "grad"],
    }[op]
    with pytest.raises(tf.errors.InvalidArgumentError) as theirs:
        getattr(tf.raw_ops, op)(**dict(zip(names, inputs)), **attrs)
    want = theirs.value.message.split("}} ")[1].split(" [Op:")[0]
    with pytest.raises(InvalidArgumentError) as ours:
        Kernel(op, inputs, **attrs)()
    assert ours.value.message == want
