"""Demo job for a running cluster: variables on /job:ps/task:0, a matmul split across
/job:worker/task:0 and /job:worker/task:1, a few update steps; results checked with numpy.

Speaks MasterService directly (no TensorFlow needed): builds a GraphDef, CreateSession,
RunStep, CloseSession. `python examples/demo.py --target grpc://HOST:PORT`; a closed
cluster's certificate, CA and token come from FLOWRT_TLS_CERT, FLOWRT_TLS_KEY, FLOWRT_TLS_CA
and FLOWRT_AUTH_TOKEN_FILE (common.credentials), as in the Kubernetes manifests.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from common import credentials
from common import tensor as tensor_util
from common.dtypes import DataType
from protos import attr_value_pb2, graph_pb2, master_pb2, tensor_shape_pb2
from rpc import auth
from rpc.channels import GRPC_OPTIONS
from rpc.service_paths import master_stub

F32 = DataType.DT_FLOAT


def _attr(value: Any) -> attr_value_pb2.AttrValue:
    if isinstance(value, DataType):
        return attr_value_pb2.AttrValue(type=int(value))
    if isinstance(value, bool):
        return attr_value_pb2.AttrValue(b=value)
    if isinstance(value, int):
        return attr_value_pb2.AttrValue(i=value)
    if isinstance(value, str):
        return attr_value_pb2.AttrValue(s=value.encode())
    if isinstance(value, tuple):
        dims = [tensor_shape_pb2.TensorShapeProto.Dim(size=d) for d in value]
        return attr_value_pb2.AttrValue(shape=tensor_shape_pb2.TensorShapeProto(dim=dims))
    if isinstance(value, np.ndarray):
        return attr_value_pb2.AttrValue(tensor=tensor_util.make_tensor_proto(value))
    raise TypeError(f"no attr for {value!r}")


class GraphBuilder:
    """Appends NodeDefs to a GraphDef."""

    def __init__(self) -> None:
        self.graph_def = graph_pb2.GraphDef()

    def node(
        self, name: str, op: str, inputs: Sequence[str] = (), device: str = "", **attrs: Any
    ) -> str:
        nd = self.graph_def.node.add(name=name, op=op, device=device)
        nd.input.extend(inputs)
        for key, value in attrs.items():
            nd.attr[key].CopyFrom(_attr(value))
        return name

    def const(self, name: str, value: np.ndarray, device: str = "") -> str:
        return self.node(name, "Const", device=device, dtype=F32, value=value)

    def variable(self, name: str, init: np.ndarray, device: str) -> tuple[str, str]:
        """A resource variable; returns (handle, initializer op)."""
        handle = self.node(
            name,
            "VarHandleOp",
            device=device,
            dtype=F32,
            shape=tuple(init.shape),
            container="",
            shared_name=name,
        )
        value = self.const(f"{name}/init_value", init, device)
        assign = self.node(
            f"{name}/Assign", "AssignVariableOp", [handle, value], device=device, dtype=F32
        )
        return handle, assign


def build_demo_graph(rng: np.random.Generator) -> tuple[graph_pb2.GraphDef, dict[str, Any]]:
    ps, w0, w1 = "/job:ps/task:0", "/job:worker/task:0", "/job:worker/task:1"
    b = GraphBuilder()
    left0, right0 = (
        rng.standard_normal((4, 3)).astype(np.float32),
        rng.standard_normal((4, 3)).astype(np.float32),
    )
    left, init_l = b.variable("left", left0, ps)
    right, init_r = b.variable("right", right0, ps)
    b.node("init", "NoOp", ["^" + init_l, "^" + init_r])
    b.node("x", "Placeholder", dtype=F32, shape=(2, 4))
    read_l = b.node("read_left", "ReadVariableOp", [left], dtype=F32)  # goes with its variable
    read_r = b.node("read_right", "ReadVariableOp", [right], dtype=F32)
    y0 = b.node("y0", "MatMul", ["x", read_l], device=w0, T=F32)
    y1 = b.node("y1", "MatMul", ["x", read_r], device=w1, T=F32)
    axis = b.node("axis", "Const", device=w0, dtype=DataType.DT_INT32, value=np.array(1, np.int32))
    b.node("y", "ConcatV2", [y0, y1, axis], device=w0, N=2, T=F32, Tidx=DataType.DT_INT32)
    delta = b.const("delta", np.full((4, 3), 0.5, np.float32), w1)
    # After y: the step reads `right` before adding to it.
    b.node("update", "AssignAddVariableOp", [right, delta, "^y"], device=ps, dtype=F32)
    return b.graph_def, {"left": left0, "right": right0}


def run_demo(target: str, steps: int = 3, out: Any = sys.stdout) -> bool:
    """Run the demo against a master; True if every step matched numpy."""
    address = target.removeprefix("grpc://")
    rng = np.random.default_rng(0)
    graph_def, init = build_demo_graph(rng)
    right = init["right"].copy()
    ok = True
    with auth.channel(address, GRPC_OPTIONS, credentials.load()) as channel:
        stub = master_stub(channel)
        # wait_for_ready: the master may still be starting (a pod's own server, Kubernetes)
        devices = stub.ListDevices(master_pb2.ListDevicesRequest(), timeout=60, wait_for_ready=True)
        print("cluster devices:", file=out)
        for d in list(devices.local_device) + list(devices.remote_device):
            print(f"  {d.name}", file=out)
        handle = stub.CreateSession(
            master_pb2.CreateSessionRequest(graph_def=graph_def), timeout=60
        ).session_handle
        try:
            _run(stub, handle, [], ["init"])
            for step in range(steps):
                x = rng.standard_normal((2, 4)).astype(np.float32)
                (y,) = _run(stub, handle, ["y:0"], ["update"], {"x:0": x})
                want = np.concatenate([x @ init["left"], x @ right], axis=1)
                match = np.allclose(y, want, rtol=1e-5, atol=1e-5)
                ok &= match
                print(
                    f"step {step}: y = x @ [left | right] (variables on ps, matmuls "
                    f"on worker 0 and worker 1), shape {y.shape}, "
                    f"{'matches numpy' if match else 'MISMATCH'}",
                    file=out,
                )
                print(np.array2string(y, precision=4, suppress_small=True), file=out)
                right += 0.5  # the step's `update` target: right += 0.5 on the ps
        finally:
            stub.CloseSession(master_pb2.CloseSessionRequest(session_handle=handle), timeout=30)
    print("demo", "OK" if ok else "FAILED", file=out)
    return ok


def _run(
    stub: Any,
    handle: str,
    fetches: list[str],
    targets: list[str],
    feeds: dict[str, np.ndarray] | None = None,
) -> list[np.ndarray]:
    request = master_pb2.RunStepRequest(
        session_handle=handle, fetch=fetches, target=targets, store_errors_in_response_body=True
    )
    for name, value in (feeds or {}).items():
        request.feed.add(name=name).tensor.CopyFrom(tensor_util.as_proto_tensor_content(value))
    response = stub.RunStep(request, timeout=60)
    if response.status_code:
        raise RuntimeError(f"step failed ({response.status_code}): {response.status_error_message}")
    values = {t.name: tensor_util.to_numpy(t.tensor) for t in response.tensor}
    return [values[f] for f in fetches]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--target", required=True, help="grpc://HOST:PORT of the master")
    p.add_argument("--steps", type=int, default=3)
    args = p.parse_args(argv)
    return 0 if run_demo(args.target, args.steps) else 1


if __name__ == "__main__":
    sys.exit(main())
