"""A TF1 program after tf.disable_v2_behavior() (tests/client/keras_v1_program.py): there
tf_keras resolves "glorot_uniform" and "he_normal" to TF's v1 graph-seeded initializers
and builds v1 conds on the learning phase. TensorFlow's side runs in a child process
(disable_v2_behavior is process-wide); the client's after client.disable_v2_behavior(),
switched back after. The GraphDefs' nodes (name, op, inputs) outside the gradients and
the losses of each step must be equal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import client
from tests.client import keras_v1_program

pytest.importorskip("tensorflow")
pytest.importorskip("tf_keras")

ROOT = Path(__file__).resolve().parents[2]
CHILD = (
    "import json, tensorflow.compat.v1 as tf; tf.disable_v2_behavior(); "
    "from tests.client import keras_v1_program as p; print(json.dumps(p.run(tf)))"
)


def _tensorflow_result() -> dict:
    env = {**os.environ, "TF_USE_LEGACY_KERAS": "1", "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _forward(lines: list[str]) -> list[str]:
    return [n for n in lines if not n.startswith(("gradients/", "Adam", "beta", "init"))]


def test_tf1_program_after_disable_v2_behavior():
    want = _tensorflow_result()
    client.disable_v2_behavior()
    try:
        got = keras_v1_program.run(client)
    finally:
        client.enable_v2_behavior()
    assert _forward(got["nodes"]) == _forward(want["nodes"])
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5, atol=1e-6)
