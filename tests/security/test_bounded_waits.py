"""Every client wait has a bound: a client pointed at a port nobody serves (or a host
that does not answer) fails with UnavailableError naming the target, within
operation_timeout_in_ms, instead of waiting forever."""

from __future__ import annotations

import pytest

import client as tf
from client.master_connection import MasterConnection
from common.errors import UnavailableError
from deploy.launcher import free_port
from protos import master_pb2


def test_session_creation_on_a_dead_port_is_unavailable_naming_it() -> None:
    target = f"grpc://127.0.0.1:{free_port()}"
    config = tf.ConfigProto(operation_timeout_in_ms=500)
    with tf.Graph().as_default():
        c = tf.constant(1.0)
        with (
            tf.Session(target, config=config) as sess,
            pytest.raises(tf.errors.UnavailableError) as info,
        ):
            sess.run(c)
    assert target in info.value.message


def test_the_first_call_waits_for_the_master_at_most_the_connect_timeout() -> None:
    address = f"127.0.0.1:{free_port()}"
    connection = MasterConnection(address, connect_timeout_s=0.3)
    try:
        with pytest.raises(UnavailableError) as info:
            connection.call("ListDevices", master_pb2.ListDevicesRequest())
    finally:
        connection.close()
    assert f"grpc://{address} is unavailable (ListDevices)" in info.value.message
