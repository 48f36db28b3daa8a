"""Ops (executor stage): PyFunc, PyFuncStateless and EagerPyFunc (tf.py_func,
tf.numpy_function, tf.py_function): a node that calls a Python function registered in
*this process* under the node's `token` attr.

As in TensorFlow, the function lives where the graph was built: a client registers it in
its process's FuncRegistry and only a task running in that same process (an in-process
server, `client.train.Server`, or a local Session) can call it. A task in another
process has no such function: InvalidArgument "ValueError: Could not find callback with
key=... in the registry.", TensorFlow's own error for a PyFunc placed on a remote task.
Tokens carry a per-process random tag besides TensorFlow's counter, so a graph built
elsewhere (TensorFlow's client numbers its tokens pyfunc_0, pyfunc_1 ...) can never call
one of ours by accident.

What the function sees and returns follows TensorFlow's FuncRegistry and py_func.cc:
scalars arrive as numpy scalars, strings as bytes, arrays as read-only numpy arrays (our
tensors may be shared with other consumers: a function writing into its argument gets
a ValueError instead of corrupting them); a list or tuple result is one output per
item, None is no output, str becomes UTF-8 bytes; each output's dtype must be exactly
its Tout (no casting), else InvalidArgument naming the position. The function's own
exceptions keep TensorFlow's mapping: ValueError/TypeError InvalidArgument, StopIteration
OutOfRange, MemoryError ResourceExhausted, NotImplementedError Unimplemented, anything
else Unknown, with the Python traceback in the message.

The registry holds functions weakly (the client's Graph keeps them alive, as TF's
graph._py_funcs_used_in_graph does) and is safe from any thread. Kernels run the
function on whatever executor thread runs the node, holding the GIL as any Python does.
"""

from __future__ import annotations

import itertools
import secrets
import threading
import traceback
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from common import dtypes
from common.errors import (
    InvalidArgumentError,
    OpError,
    OutOfRangeError,
    ResourceExhaustedError,
    UnimplementedError,
    UnknownError,
)
from common.ops.registry import KernelConstruction, register_kernel, register_op

for _name in ("PyFunc", "PyFuncStateless"):
    register_op(
        _name,
        inputs=["input: Tin"],
        outputs=["output: Tout"],
        attrs=["token: string", "Tin: list(type) >= 0", "Tout: list(type) >= 0"],
        stateful=_name == "PyFunc",
    )
register_op(
    "EagerPyFunc",
    inputs=["input: Tin"],
    outputs=["output: Tout"],
    attrs=[
        "token: string",
        "is_async: bool = false",
        "Tin: list(type) >= 0",
        "Tout: list(type) >= 0",
    ],
    stateful=True,
)


class FuncRegistry:
    """token -> Python function, for the PyFunc kernels of this process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._funcs: weakref.WeakValueDictionary[str, Callable[..., Any]] = (
            weakref.WeakValueDictionary()
        )
        self._counter = itertools.count()
        self._tag = secrets.token_hex(4)

    def register(self, func: Callable[..., Any]) -> str:
        with self._lock:
            token = f"pyfunc_{next(self._counter)}_{self._tag}"
            self._funcs[token] = func
        return token

    def get(self, token: str) -> Callable[..., Any] | None:
        with self._lock:
            return self._funcs.get(token)

    def size(self) -> int:
        with self._lock:
            return len(self._funcs)


REGISTRY = FuncRegistry()


class EagerValue(np.ndarray):
    """What tf.py_function's function receives here: a numpy array with EagerTensor's
    `.numpy()` (TensorFlow passes EagerTensors; there are no eager ops in this runtime)."""

    def numpy(self) -> Any:
        value = np.array(self)
        return value[()] if value.ndim == 0 else value


def _argument(value: Any, eager: bool) -> Any:
    array = np.asarray(value)
    if eager:
        out = array.view(EagerValue)
        out.flags.writeable = False
        return out
    if array.ndim == 0:
        return array[()]  # TF passes a numpy scalar (bytes for a string)
    view = array.view()
    view.flags.writeable = False
    return view


def _convert(value: Any, dtype: np.dtype | None = None) -> np.ndarray:
    """TF's FuncRegistry._convert: numpy's fixed-width strings become object arrays of
    bytes (no padding games), unicode is encoded as UTF-8."""
    if isinstance(value, EagerValue):
        value = np.array(value)
    result = np.asarray(value, dtype=dtype, order="C")
    if result.dtype.char in ("S", "U"):
        flat = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in result.flat]
        out = np.empty(result.shape, dtype=object)
        out.flat[:] = flat if flat else []
        return out
    return result


def _results(ret: Any) -> list[np.ndarray]:
    if ret is None:
        return []
    if isinstance(ret, bytes):
        ret = [ret]
    if isinstance(ret, (tuple, list)):
        return [_convert(x) for x in ret]
    return [_convert(ret)]


def _eager_results(ret: Any, types: tuple[int, ...]) -> list[np.ndarray]:
    """EagerPyFunc converts each result to its Tout as convert_to_tensor does: Python and
    numpy values are converted to that dtype; a value the function was given (an
    EagerValue) must already have it."""
    if ret is None:
        return []
    items = list(ret) if isinstance(ret, (tuple, list)) else [ret]
    out = []
    for i, item in enumerate(items):
        ty = types[i] if i < len(types) else None
        if ty is None or ty == dtypes.DataType.DT_STRING or isinstance(item, EagerValue):
            out.append(_convert(item))
        else:
            out.append(_convert(item, dtypes.as_numpy(ty)))
    return out


def _error_for(e: BaseException) -> OpError:
    """TensorFlow's mapping of a Python exception raised in the function (py_func.cc)."""
    if isinstance(e, (ValueError, TypeError)):
        cls: type[OpError] = InvalidArgumentError
    elif isinstance(e, StopIteration):
        cls = OutOfRangeError
    elif isinstance(e, MemoryError):
        cls = ResourceExhaustedError
    elif isinstance(e, NotImplementedError):
        cls = UnimplementedError
    else:
        cls = UnknownError
    trace = "".join(traceback.format_exception(e)).rstrip()
    return cls(f"{type(e).__name__}: {e}\n{trace}")


def _check_outputs(outs: list[np.ndarray], token: str, types: tuple[int, ...]) -> None:
    if len(outs) != len(types):
        raise InvalidArgumentError(
            f"{token} returns {len(outs)} values, but expects to see {len(types)} values."
        )
    for i, (value, want) in enumerate(zip(outs, types, strict=True)):
        if value.dtype == object and not all(isinstance(v, bytes) for v in value.flat):
            raise InvalidArgumentError(
                f"{i}-th value returned by {token} is an object array that does not hold "
                "only bytes: it has no TensorFlow dtype"
            )
        try:
            got = dtypes.from_numpy(value.dtype)
        except InvalidArgumentError:
            raise InvalidArgumentError(
                f"{i}-th value returned by {token} has numpy dtype {value.dtype}, which has "
                "no TensorFlow dtype"
            ) from None
        if got != dtypes.base(want):
            raise InvalidArgumentError(
                f"{i}-th value returned by {token} is {dtypes.tf_name(got)}, but expects "
                f"{dtypes.tf_name(want)}"
            )


def _py_func_kernel(k: KernelConstruction) -> Callable:
    token = str(k.attr("token"))
    eager = k.op == "EagerPyFunc"
    out_types = tuple(k.output_types)

    def compute(ctx, inputs: list) -> list:
        func = REGISTRY.get(token)
        if func is None:
            raise InvalidArgumentError(
                f"ValueError: Could not find callback with key={token} in the registry."
            )
        args = [_argument(x, eager) for x in inputs]
        try:
            ret = func(*args)
            outs = _eager_results(ret, out_types) if eager else _results(ret)
        except (Exception, SystemExit) as e:  # the user's code: every failure is the step's
            raise _error_for(e) from e
        _check_outputs(outs, token, out_types)
        return outs

    return compute


for _name in ("PyFunc", "PyFuncStateless", "EagerPyFunc"):
    register_kernel(_name, expensive=True)(_py_func_kernel)
