"""TF_CONFIG parsing (common.tf_config): TensorFlow's and Kubeflow's form -> the cluster
in TensorFlow's layout and this task; errors name the field."""

from __future__ import annotations

import json

import pytest

from common import tf_config
from common.cluster import ClusterSpec
from common.errors import InvalidArgumentError, NotFoundError

CLUSTER = {
    "chief": ["chief-0.svc:2222"],
    "worker": ["worker-0.svc:2222", "worker-1.svc:2222"],
    "ps": ["ps-0.svc:2222"],
    "evaluator": ["evaluator-0.svc:2222"],
}


def config(job: str, index: object = 0, cluster: object = CLUSTER) -> str:
    return json.dumps(
        {"cluster": cluster, "task": {"type": job, "index": index}, "environment": "cloud"}
    )


def test_training_task_gets_the_cluster_without_the_evaluator():
    task = tf_config.parse(config("worker", 1))
    assert (task.job, task.task, task.address) == ("worker", 1, "worker-1.svc:2222")
    assert task.task_name == "/job:worker/replica:0/task:1"
    assert task.cluster.jobs == ("chief", "worker", "ps")
    assert task.cluster.master is None and task.cluster.layout == "tensorflow"


def test_evaluator_is_a_cluster_of_its_own_and_index_may_be_a_string():
    task = tf_config.parse(config("evaluator", "0"))
    assert task.cluster.jobs == ("evaluator",) and task.address == "evaluator-0.svc:2222"


def test_round_trip_through_to_json():
    task = tf_config.parse(config("ps"))
    again = tf_config.parse(tf_config.to_json(task.cluster, "ps", 0))
    assert again == task


@pytest.mark.parametrize(
    "text, message",
    [
        ("{", "TF_CONFIG is not valid JSON"),
        (json.dumps({"task": {"type": "worker"}}), "'cluster' must map job names"),
        (config("worker", 2), "Task /job:worker/replica:0/task:2 is not in the cluster"),
        (config("worker", -1), "task.index must be an integer >= 0"),
        (config("trainer"), "task type 'trainer' is not a job of the cluster"),
        (config("worker", 0, {"worker": ["no-port"]}), "jobs.worker[0]: expected HOST:PORT"),
    ],
)
def test_errors_name_the_field(text, message):
    with pytest.raises(InvalidArgumentError, match="TF_CONFIG") as e:
        tf_config.parse(text)
    assert message in e.value.message


def test_unset_is_not_found():
    with pytest.raises(NotFoundError, match="TF_CONFIG is not set"):
        tf_config.from_env({})


def test_yaml_layout_option():
    spec = ClusterSpec.from_dict({"layout": "tensorflow", "jobs": {"worker": ["h:1"]}})
    assert spec.layout == "tensorflow" and spec.to_dict()["layout"] == "tensorflow"
    with pytest.raises(InvalidArgumentError, match="not used with layout: tensorflow"):
        ClusterSpec.from_dict({"layout": "tensorflow", "master": "h:2", "jobs": {"w": ["h:1"]}})
    with pytest.raises(InvalidArgumentError, match="layout: expected one of"):
        ClusterSpec.from_dict({"layout": "tf", "jobs": {"w": ["h:1"]}})


def test_job_and_task_replace_tf_config_task_which_may_be_absent():
    text = json.dumps({"cluster": CLUSTER})
    task = tf_config.parse(text, "worker", 1)
    assert (task.job, task.task) == ("worker", 1)
    assert tf_config.parse(config("ps"), "chief", 0).task_name == "/job:chief/replica:0/task:0"
    with pytest.raises(InvalidArgumentError, match="'task' must be"):
        tf_config.parse(text)
