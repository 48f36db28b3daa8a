"""Summary-writer op signatures equal TensorFlow's (their events: tests/security/
test_summary_writer.py)."""

from __future__ import annotations

import pytest

from .signatures import assert_signature_matches_tensorflow, module_ops

OPS = module_ops("common.ops.summary_writer_ops")


def test_every_writer_op_is_registered() -> None:
    assert len(OPS) == 10


@pytest.mark.parametrize("name", OPS)
def test_signature_matches_tensorflow(name: str) -> None:
    assert_signature_matches_tensorflow(name)
