"""Fixtures for the TensorFlow oracle tests: markers per tag, parametrization over the
corpus, and the corpus itself, exported through TensorFlow once per test session.

Everything skips cleanly where TensorFlow is not installed. TensorFlow is imported once,
by the `oracle_corpus` fixture; collecting the tests does not import it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from .corpus import FAMILIES, MARKER_TAGS, Case, Exported, export, load_cases

# The single switch: families whose cases are expected to pass. Cases of any other family
# are xfail(strict=False) so they neither break CI now nor need editing when they pass.
IMPLEMENTED_TAGS = {
    "inference",
    "control_flow_v1",
    "control_flow_v2",
    "gradients",
    "gradients_v2",
    "training",
    "random",
    "extra_ops",
    "strings",
    "data_flow",
}

SESSION_DEVICE_COUNTS = (1, 3)


def pytest_configure(config: pytest.Config) -> None:
    for tag in sorted(FAMILIES | MARKER_TAGS):
        config.addinivalue_line("markers", f"{tag}: TensorFlow oracle cases tagged {tag!r}")


def _marks(c: Case) -> list[Any]:
    marks: list[Any] = [getattr(pytest.mark, tag) for tag in sorted(c.tags)]
    if c.family not in IMPLEMENTED_TAGS:
        marks.append(pytest.mark.xfail(strict=False, reason=f"{c.family}: issue 3"))
    return marks


def _cli_params() -> list[Any]:
    # The CLI runs one device and one step: no multi-step (training) or pinned cases.
    params = []
    for c in load_cases().values():
        if not c.cli or c.min_devices > 1:
            continue
        params.append(pytest.param((c, "pb"), marks=_marks(c), id=c.name))
        if c.pbtxt:
            params.append(pytest.param((c, "pbtxt"), marks=_marks(c), id=f"{c.name}-pbtxt"))
    return params


def _session_params() -> list[Any]:
    return [
        pytest.param((c, n), marks=_marks(c), id=f"{c.name}-{n}dev")
        for c in load_cases().values()
        for n in SESSION_DEVICE_COUNTS
        if n >= c.min_devices
    ]


def _corpus_params() -> list[Any]:
    # The TensorFlow side must run clean for every family: tag markers, never xfail.
    return [
        pytest.param(c, marks=[getattr(pytest.mark, t) for t in sorted(c.tags)], id=c.name)
        for c in load_cases().values()
    ]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "corpus_case" in metafunc.fixturenames:
        metafunc.parametrize("corpus_case", _corpus_params())
    if "cli_case" in metafunc.fixturenames:
        metafunc.parametrize("cli_case", _cli_params())
    if "session_case" in metafunc.fixturenames:
        metafunc.parametrize("session_case", _session_params())


class OracleCorpus:
    """Exports cases on first use and keeps them for the rest of the test session, so a
    `-k` selection only pays for the cases it runs. Not thread-safe (pytest is not)."""

    def __init__(self, tf: Any, root: Path) -> None:
        self._tf = tf
        self._root = root
        self._exported: dict[str, Exported] = {}

    def get(self, c: Case) -> Exported:
        if c.name not in self._exported:
            self._exported[c.name] = export(c, self._tf, self._root / c.name)
        return self._exported[c.name]


@pytest.fixture(scope="session")
def oracle_corpus(tmp_path_factory: pytest.TempPathFactory) -> OracleCorpus:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    pytest.importorskip("tensorflow")
    import tensorflow.compat.v1 as tf

    return OracleCorpus(tf, tmp_path_factory.mktemp("tf_oracle"))
