"""The examples run against an in-process two-worker cluster."""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import client as tf
from tests.client.test_cluster import target  # noqa: F401  (fixture)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEVICES = [
    "/job:ps/replica:0/task:0/device:CPU:0",
    "/job:worker/replica:0/task:0/device:CPU:0",
    "/job:worker/replica:0/task:1/device:CPU:0",
]
STEPS_PER_EPOCH = 11  # 1438 training examples // (64 per worker * 2 workers)


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _train_digits(target: str, *flags: str) -> None:  # noqa: F811
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    assert _load("train_digits").main(["--target", target, "--quiet", *flags]) == 0


def _final_line(out: str) -> tuple[int, float]:
    """(global step, test accuracy) from the example's last line."""
    m = re.fullmatch(r"global step (\d+); test accuracy (\d\.\d{4})", out.splitlines()[-1])
    assert m, out
    return int(m[1]), float(m[2])


def _events(path: Path) -> Iterator[Any]:
    """The events in `path`, read by TensorFlow's reader where installed."""
    try:
        import tensorflow as real_tf
    except ImportError:
        return tf.train.summary_iterator(str(path))
    return real_tf.compat.v1.train.summary_iterator(str(path))


def test_frozen_inference_matches_tensorflow(target):  # noqa: F811
    probs, classes = _load("frozen_inference").run(target)
    assert probs.shape == (5, 10) and classes.shape == (5,)


def test_train_digits_learns(target):  # noqa: F811
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    acc = _load("train_digits").train(target, epochs=6, quiet=True)
    assert acc > 0.9


def test_train_digits_writes_summaries_and_a_trace(target, tmp_path, capsys):  # noqa: F811
    logdir = tmp_path / "logs"
    _train_digits(target, "--epochs", "2", "--logdir", str(logdir), "--summary-every", "5",
                  "--trace-step", "3")  # fmt: skip
    out = capsys.readouterr().out
    assert _final_line(out)[0] == 2 * STEPS_PER_EPOCH
    (trace_line,) = [line for line in out.splitlines() if line.startswith("trace")]
    assert re.fullmatch(
        r"trace of step 3: /job:ps/task:0/device:CPU:0 \S+ \(\w+\) \d+\.\d\dms; "
        r"/job:worker/task:0/device:CPU:0 \S+ \(\w+\) \d+\.\d\dms; "
        r"/job:worker/task:1/device:CPU:0 \S+ \(\w+\) \d+\.\d\dms",
        trace_line,
    ), trace_line

    (events_file,) = logdir.glob("events.out.tfevents.*")
    values: dict[str, list[tuple[int, Any]]] = {}
    graphs, traces = 0, []
    for event in _events(events_file):
        graphs += event.HasField("graph_def")
        if event.HasField("tagged_run_metadata"):
            traces.append(event)
        for v in event.summary.value:
            values.setdefault(v.tag, []).append((event.step, v))
    assert sorted(values) == ["accuracy", "hidden_weights", "loss"]
    for tag, points in values.items():
        assert [step for step, _ in points] == [5, 10, 15, 20], tag
    losses = [v.simple_value for _, v in values["loss"]]
    accuracies = [v.simple_value for _, v in values["accuracy"]]
    assert losses[-1] < losses[0] and accuracies[-1] > accuracies[0]
    assert all(0.0 < a <= 1.0 for a in accuracies)
    assert [v.histo.num for _, v in values["hidden_weights"]] == [64 * 64] * 4
    assert graphs == 1
    (trace,) = traces
    assert (trace.step, trace.tagged_run_metadata.tag) == (3, "step3")
    metadata = tf.RunMetadata.FromString(trace.tagged_run_metadata.run_metadata)
    assert sorted(d.device for d in metadata.step_stats.dev_stats) == DEVICES


def test_train_digits_resumes_from_its_checkpoints(target, tmp_path, capsys):  # noqa: F811
    ckpt = tmp_path / "ckpt"
    _train_digits(target, "--epochs", "1", "--checkpoint-dir", str(ckpt))
    step, first_acc = _final_line(capsys.readouterr().out)
    assert step == STEPS_PER_EPOCH
    assert tf.train.latest_checkpoint(str(ckpt)) == str(ckpt / "model.ckpt-11")

    # Same epochs again: nothing left to train; the restored weights score the same.
    _train_digits(target, "--epochs", "1", "--checkpoint-dir", str(ckpt))
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"restored {ckpt / 'model.ckpt-11'}: global step 11"
    assert _final_line(out) == (STEPS_PER_EPOCH, first_acc)

    _train_digits(target, "--epochs", "6", "--checkpoint-dir", str(ckpt))
    out = capsys.readouterr().out
    assert out.splitlines()[0] == f"restored {ckpt / 'model.ckpt-11'}: global step 11"
    step, acc = _final_line(out)
    assert step == 6 * STEPS_PER_EPOCH and acc > 0.9
    state = tf.train.get_checkpoint_state(str(ckpt))
    kept = [str(ckpt / f"model.ckpt-{s}") for s in (44, 55, 66)]
    assert state.model_checkpoint_path == kept[-1]
    assert list(state.all_model_checkpoint_paths) == kept
    # max_to_keep=3 over both runs: the first run's checkpoint was deleted too.
    assert sorted(p.name for p in ckpt.glob("*.index")) == [
        "model.ckpt-44.index",
        "model.ckpt-55.index",
        "model.ckpt-66.index",
    ]


def test_cnn_tfrecord_reaches_tensorflows_losses(target, tmp_path):  # noqa: F811
    """The CNN fed from TFRecord files through tf.data, on the cluster (input on worker 0,
    model on worker 1, variables on ps), against TensorFlow's own session on the same seed:
    the same losses step for step (the first steps bit-equal; conv/matmul summation order
    leaves float32 rounding differences later, measured below 3e-7 over 30 steps)."""
    pytest.importorskip("sklearn")
    tf1 = pytest.importorskip("tensorflow.compat.v1")
    example = _load("cnn_tfrecord")
    ours, our_acc = example.train(tf, target, str(tmp_path / "ours"), steps=30, quiet=True)
    theirs, their_acc = example.train(
        tf1, "", str(tmp_path / "theirs"), steps=30, quiet=True, devices=("", "", "")
    )
    assert ours[:3] == theirs[:3]
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert our_acc == their_acc
    assert ours[-1] < ours[0] - 0.5
    assert sorted(p.name for p in (tmp_path / "ours").iterdir()) == [
        "digits-0.tfrecord",
        "digits-1.tfrecord",
        "digits-2.tfrecord.gz",
    ]
