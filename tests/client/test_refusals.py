"""What this client still refuses, it refuses plainly: NotImplementedError naming the
option and why (options TensorFlow 2.21's compat.v1 accepts but this client does not)."""

from __future__ import annotations

import pytest

import client


@pytest.fixture(autouse=True)
def fresh_graph():
    client.reset_default_graph()


def test_queue_runner_from_a_def():
    with pytest.raises(NotImplementedError, match="no QueueRunnerDef"):
        client.train.QueueRunner(queue_runner_def=object())


def test_saver_with_a_custom_builder():
    client.Variable(1.0, name="v")
    with pytest.raises(NotImplementedError, match="custom saver builder is not supported"):
        client.train.Saver(builder=object())


@pytest.mark.parametrize(
    "option,why",
    [("clear_extraneous_savers", "pruning other savers"), ("save_debug_info", "GraphDebugInfo")],
)
def test_export_meta_graph_options(option, why):
    with pytest.raises(NotImplementedError, match=why):
        client.train.export_meta_graph(**{option: True})


def test_file_writer_with_a_session(tmp_path):
    with pytest.raises(NotImplementedError, match="TF2 summary-writer ops"):
        client.summary.FileWriter(str(tmp_path), session=object())
