"""examples/lstm_sine.py on an in-process cluster (LSTM on worker 1, variables and Adam's
slots on ps) against TensorFlow's own session on the same seed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import client
from tests.client.test_cluster import target  # noqa: F401  (fixture)

TF_GRAPH_MODE = True
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lstm_sine.py"


def _load():
    spec = importlib.util.spec_from_file_location("lstm_sine", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_lstm_sine_reaches_tensorflows_losses(target):  # noqa: F811
    """Seeded Glorot initializers draw TensorFlow's numbers, so the losses agree step for
    step; the residue is float32 summation order (measured below 1e-7 over 30 steps)."""
    from tests.client.tf1_oracle import need_tf_keras, tf_real  # TF_USE_LEGACY_KERAS=1

    need_tf_keras()
    from tensorflow.python.ops import control_flow_util

    example = _load()
    ours, our_error = example.train(client, target, steps=30, quiet=True)
    was = control_flow_util.ENABLE_CONTROL_FLOW_V2
    tf_real.compat.v1.disable_control_flow_v2()  # the TF1 program's disable_v2_behavior()
    try:
        theirs, their_error = example.train(
            tf_real.compat.v1, "", steps=30, quiet=True, devices=("", "")
        )
    finally:
        control_flow_util.ENABLE_CONTROL_FLOW_V2 = was
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-7)
    assert our_error == pytest.approx(their_error, rel=1e-4)
    assert ours[-1] < ours[0] / 5


def test_lstm_sine_main_starts_a_local_cluster(capsys):
    assert _load().main(["--steps", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("step 0: loss ")
    assert out[-1].startswith("final loss ")
