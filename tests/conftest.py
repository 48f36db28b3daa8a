"""Suite-wide fixtures.

TensorFlow is the oracle in many test modules. Some need its graph mode (they declare
`TF_GRAPH_MODE = True`), the others call `tf.raw_ops` eagerly. TensorFlow's mode is
process-wide and pytest imports every module before running any, so each module gets the
mode it declares when its tests start: the order modules run in cannot change results.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="module")
def _tensorflow_mode(request: pytest.FixtureRequest) -> Iterator[None]:
    tf = sys.modules.get("tensorflow")
    if tf is not None:
        want_graph = bool(getattr(request.module, "TF_GRAPH_MODE", False))
        if want_graph and tf.executing_eagerly():
            tf.compat.v1.disable_eager_execution()
        elif not want_graph and not tf.executing_eagerly():
            # Eager mode can come back only once no global default graph exists.
            tf.compat.v1.reset_default_graph()
            tf.compat.v1.enable_eager_execution()
    yield


# -- tiers: `pytest -m "not integration"` is the inner loop (markers in pyproject.toml) -----
# Real processes started as a user starts them (the CLIs, the launcher, docker, benchmarks).
_INTEGRATION_DIRS = ("integration", "deploy", "bench")


def _tier(item: pytest.Item) -> str:
    parts = item.path.relative_to(item.config.rootpath).parts
    in_tests = parts[1:] if parts[:1] == ("tests",) else parts
    if in_tests[:1] and in_tests[0] in _INTEGRATION_DIRS or item.path.stem.endswith("_cli"):
        return "integration"
    return "unit"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks every test with its tier (unit or integration) and, where the module holds
    TensorFlow (the oracle), tf_oracle; the tree decides, so new tests need no marks."""
    for item in items:
        item.add_marker(_tier(item))
        module = getattr(item, "module", None)
        holds_tf = (
            any(getattr(value, "__name__", None) == "tensorflow" for value in vars(module).values())
            if module is not None
            else False
        )
        if holds_tf or "tf_oracle" in item.path.parts:
            item.add_marker("tf_oracle")


@pytest.fixture(autouse=True)
def _in_process_sharing_restored() -> Iterator[None]:
    """A test that hosts a task in this process (tf.train.Server, python -m server's
    task_server) turns on rpc.local_rpc's process-wide in-process sharing; later tests
    must see the socket path again, as a fresh process would."""
    from rpc import local_rpc

    before = local_rpc.sharing_in_process()
    yield
    local_rpc.share_in_process(before)


@pytest.fixture(autouse=True)
def _client_resource_variables_restored() -> Iterator[None]:
    """A TF1 program's disable_v2_behavior() (a test calling it) turns the client's
    process-wide resource-variables switch off; later tests must build what a fresh
    process builds."""
    from client.ops import resource_variables_toggle as toggle

    before = toggle.resource_variables_enabled()
    yield
    (toggle.enable_resource_variables if before else toggle.disable_resource_variables)()


# TensorFlow's CPU kernels depend on the host: without oneDNN's AVX-512 paths its
# Conv2DBackpropInput/Conv3D refuse dilations and grouped convolutions ("Current CPU
# implementations do not yet support ..."). There the oracle has no answer: such a case
# is skipped, saying why, rather than failed (ours still runs in every other test).
_TF_HOST_REFUSALS = (
    "Current CPU implementations do not yet support",
    "Gradients for grouped convolutions are not supported on CPU",
    "CPU implementation of Conv3D currently only supports dilated rates of 1",
    "Current implementation only supports equal length strides in the row and column",
)


@pytest.hookimpl(hookwrapper=True)
def pytest_pyfunc_call(pyfuncitem):  # noqa: ANN001, ANN201 (pytest hook)
    outcome = yield
    error = outcome.excinfo[1] if outcome.excinfo else None
    if error is not None and type(error).__module__.startswith("tensorflow"):
        message = str(error)
        for refusal in _TF_HOST_REFUSALS:
            if refusal in message:
                outcome.force_exception(
                    pytest.skip.Exception(f"TensorFlow on this CPU refuses: {refusal}")
                )
