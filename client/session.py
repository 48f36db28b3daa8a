"""Client, session: tf.compat.v1.Session over the in-process runtime or a MasterService.

`Session(target="")` runs in this process through `common.session.Session`, extended
with the nodes added since the last run. `Session("grpc://host:port")` behaves like
TensorFlow's GrpcSession (see tf_wire_facts §10): nothing is sent until the first run,
which sends CreateSession with the whole graph; later runs send ExtendSession with only
the new nodes (plus library and versions) and the last graph_version; RunStep carries
unique fetch names, `store_errors_in_response_body` and a random request_id; close()
sends CloseSession once. Fetch structures (lists, tuples, namedtuples, dicts) come
back in the same shape, as TF's fetch mapper does. One session may be used from
several threads for `run` (graph extension is serialized by a lock).
"""

from __future__ import annotations

import abc
import secrets
import threading
from types import TracebackType
from typing import Any

import numpy as np

from client.framework import ops as _ops
from client.framework.indexed_slices import IndexedSlices, IndexedSlicesValue
from client.framework.op_builder import convert_to_tensor
from client.framework.ragged_tensor import RaggedTensor, RaggedTensorValue
from client.framework.sparse_tensor import SparseTensor, SparseTensorValue
from common import errors as _errors
from common import tensor as _tensor
from protos import config_pb2, master_pb2

# The default-session stack lives with the graph stack (client.framework.ops), as in
# TensorFlow's framework/ops.py, so tensors and ops find it without importing this module.
get_default_session = _ops.get_default_session
_default_session = _ops.default_session


# -- fetch mapping --------------------------------------------------------------------------
class _FetchMapper:
    """Flattens a fetch structure to graph elements and rebuilds it from their values."""

    def __init__(self, graph: _ops.Graph, fetches: Any) -> None:
        self.graph = graph
        self.elements: list[Any] = []  # Tensor or Operation, in order of appearance
        self.structure = self._map(fetches)

    def _map(self, f: Any) -> Any:
        if f is None:
            raise TypeError(
                f"Fetch argument {f!r} has invalid type {type(f)}, must be a string or Tensor. "
                "(Can not convert a NoneType into a Tensor or Operation.)"
            )
        if isinstance(f, dict):
            return ("dict", type(f), [(k, self._map(v)) for k, v in f.items()])
        if isinstance(f, tuple) and hasattr(f, "_fields"):
            return ("namedtuple", type(f), [self._map(v) for v in f])
        if isinstance(f, (list, tuple)):
            return ("seq", type(f), [self._map(v) for v in f])
        if isinstance(f, SparseTensor):  # fetched as a SparseTensorValue, as in TF
            parts = [f.indices, f.values, f.dense_shape]
            return ("indexed", SparseTensorValue, [self._map(v) for v in parts])
        if isinstance(f, RaggedTensor):  # fetched as a RaggedTensorValue, as in TF
            parts = [f.values, f.row_splits]
            return ("indexed", RaggedTensorValue, [self._map(v) for v in parts])
        if isinstance(f, IndexedSlices):  # fetched as an IndexedSlicesValue, as in TF
            parts = [f.values, f.indices] + ([f.dense_shape] if f.dense_shape is not None else [])
            return ("indexed", IndexedSlicesValue, [self._map(v) for v in parts])
        try:
            el = self.graph.as_graph_element(f)
        except (TypeError, KeyError, ValueError) as e:
            if isinstance(e, TypeError):
                raise TypeError(
                    f"Fetch argument {f!r} has invalid type {type(f)}, must be a string or "
                    f"Tensor. ({e})"
                ) from None
            raise ValueError(
                f"Fetch argument {f!r} cannot be interpreted as a Tensor. ({e})"
            ) from None
        self.elements.append(el)
        return ("leaf", len(self.elements) - 1)

    def build(self, values: list[Any]) -> Any:
        return self._build(self.structure, values)

    def _build(self, s: Any, values: list[Any]) -> Any:
        kind = s[0]
        if kind == "leaf":
            value = values[s[1]]
            # A scalar string comes back as bytes, as TensorFlow's Session returns it.
            if isinstance(value, np.ndarray) and value.dtype == object and value.ndim == 0:
                item = value.item()
                if isinstance(item, bytes):  # not variants or resources
                    return item
            return value
        if kind == "dict":
            return s[1]((k, self._build(v, values)) for k, v in s[2])
        if kind in ("namedtuple", "indexed"):
            return s[1](*[self._build(v, values) for v in s[2]])
        items = [self._build(v, values) for v in s[2]]
        return items if s[1] is list else s[1](items)


# -- feeds --------------------------------------------------------------------------------
def _expand_sparse_feeds(feed_dict: Any) -> list[tuple[Any, Any]]:
    """Feed pairs with each SparseTensor key (a sparse placeholder) split into its indices,
    values and dense_shape, fed from a SparseTensorValue or an (indices, values, shape)
    triple, as TF's session expands them."""
    out: list[tuple[Any, Any]] = []
    for key, value in (feed_dict or {}).items():
        if isinstance(key, SparseTensor):
            out.extend(zip([key.indices, key.values, key.dense_shape], value))
        else:
            out.append((key, value))
    return out


def _feed_items(graph: _ops.Graph, feed_dict: Any) -> list[tuple[Any, Any]]:
    out = []
    for key, value in _expand_sparse_feeds(feed_dict):
        if isinstance(key, tuple):
            raise TypeError("Sparse feeds are not supported")
        if hasattr(key, "_as_graph_element") and not isinstance(key, _ops.Tensor):
            key = key._as_graph_element()
        try:
            t = graph.as_graph_element(key, allow_tensor=True, allow_operation=False)
        except (TypeError, ValueError, KeyError) as e:
            raise TypeError(f"Cannot interpret feed_dict key as Tensor: {e}") from None
        if isinstance(value, _ops.Tensor):
            raise TypeError(
                "The value of a feed cannot be a tf.Tensor object. Acceptable feed values "
                "include Python scalars, strings, lists, numpy ndarrays, or TensorHandles."
            )
        np_val = _feed_value(t, value)
        if not t.shape.is_compatible_with(np_val.shape):
            raise ValueError(
                f"Cannot feed value of shape {np_val.shape!r} for Tensor {t.name}, which has "
                f"shape {t.shape}"
            )
        out.append((t, np_val))
    return out


def _feed_value(t: Any, value: Any) -> np.ndarray:
    dt = t.dtype.base_dtype
    if dt.name == "string":
        return np.asarray(value, dtype=object)
    want = np.dtype(dt.as_numpy_dtype)
    arr = np.asarray(value)
    if arr.dtype != want:
        if arr.dtype.kind in "SUO" and want.kind not in "SUO":
            raise ValueError(f"invalid literal for {want}: {value!r}")
        arr = arr.astype(want)
    return arr


def _fetch_names(mapper: _FetchMapper) -> tuple[list[str], list[str]]:
    """Unique fetch tensor names and target op names, in first-occurrence order."""
    fetch_names: list[str] = []
    targets: list[str] = []
    for el in mapper.elements:
        names = fetch_names if isinstance(el, _ops.Tensor) else targets
        if el.name not in names:
            names.append(el.name)
    return fetch_names, targets


class _DeviceAttributes:
    """One entry of Session.list_devices() (TF's session._DeviceAttributes)."""

    def __init__(
        self, name: str, device_type: str, memory_limit_bytes: int, incarnation: int
    ) -> None:
        self._name = name
        self._device_type = device_type
        self._memory_limit_bytes = memory_limit_bytes
        self._incarnation = incarnation

    name = property(lambda self: self._name)
    device_type = property(lambda self: self._device_type)
    memory_limit_bytes = property(lambda self: self._memory_limit_bytes)
    incarnation = property(lambda self: self._incarnation)

    def __repr__(self) -> str:
        return "_DeviceAttributes(%s, %s, %d, %d)" % (  # noqa: UP031  (TF's repr)
            self._name,
            self._device_type,
            self._memory_limit_bytes,
            self._incarnation,
        )


# -- partial runs (in-process) ----------------------------------------------------------------
class _PartialRunState:
    """The declared and the so-far fed/fetched tensors of one partial run."""

    def __init__(self, feeds: list[str], fetches: list[str], targets: list[str]) -> None:
        self.feeds = feeds
        self.fetches = fetches
        self.targets = targets
        self.fed: dict[str, Any] = {}
        self.fetched: set[str] = set()

    def check(self, feeds: list[tuple[str, Any]], fetches: list[str]) -> None:
        """DirectSession::PRun's checks, in its order and words."""
        for name, _ in feeds:
            if name not in self.feeds:
                raise _errors.InvalidArgumentError(
                    f"The feed {name} was not specified in partial_run_setup."
                )
            if name in self.fed:
                raise _errors.InvalidArgumentError(f"The feed {name} has already been fed.")
        for name in fetches:
            if name not in self.fetches:
                raise _errors.InvalidArgumentError(
                    f"The fetch {name} was not specified in partial_run_setup."
                )
            if name in self.fetched:
                raise _errors.InvalidArgumentError(f"The fetch {name} has already been fetched.")

    def done(self) -> bool:
        return len(self.fed) == len(self.feeds) and self.fetched == set(self.fetches)


def _check_fetch(
    graph: _ops.Graph, state: _PartialRunState, feeding: list[str], fetches: list[str]
) -> None:
    """TF's CheckFetch: no fetch may depend on a declared feed not fed yet."""
    pending = {n for n in state.feeds if n not in state.fed and n not in feeding}
    stack = [graph.as_graph_element(f).op for f in fetches]
    visited: set[Any] = set()
    while stack:
        op = stack.pop()
        for t in op._inputs:
            if t.name in pending:
                raise _errors.InvalidArgumentError(
                    f"Fetch {t.name} can't be computed from the feeds that have been fed so far."
                )
        for src in [t.op for t in op._inputs] + op._control_inputs:
            if src not in visited:
                visited.add(src)
                stack.append(src)


# -- sessions -----------------------------------------------------------------------------
class BaseSession(abc.ABC):
    """Shared run() logic: map fetches, convert feeds, call `_run_step`, rebuild."""

    def __init__(
        self, target: str = "", graph: _ops.Graph | None = None, config: Any = None
    ) -> None:
        self._graph = graph or _ops.get_default_graph()
        self._target = target
        self._config = config
        self._closed = False
        self._lock = threading.Lock()
        self._nodes_sent = 0
        self._partial_runs: dict[str, _PartialRunState] = {}
        self._partial_run_ids = 0

    graph = property(lambda self: self._graph)
    sess_str = property(lambda self: self._target)

    def graph_def(self) -> Any:
        return self._graph.as_graph_def()

    def run(
        self, fetches: Any, feed_dict: Any = None, options: Any = None, run_metadata: Any = None
    ) -> Any:
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        mapper = _FetchMapper(self._graph, fetches)
        feeds = _feed_items(self._graph, feed_dict)
        fetch_names, targets = _fetch_names(mapper)
        feed_names = {t.name for t, _ in feeds}
        # A fed-and-fetched tensor comes back as fed, as in TF.
        timeout_ms = self._timeout_ms(options)
        to_run = [n for n in fetch_names if n not in feed_names]
        values = []
        if to_run or targets:  # TF runs no step when every fetch is fed
            values = self._run_step(
                [(t.name, v) for t, v in feeds], to_run, targets, timeout_ms, options, run_metadata
            )
        by_name = dict(zip(to_run, values))
        for t, v in feeds:
            by_name[t.name] = v
        results = [
            by_name[el.name] if isinstance(el, _ops.Tensor) else None for el in mapper.elements
        ]
        return mapper.build(results)

    def _timeout_ms(self, options: Any) -> int:
        step_ms = getattr(options, "timeout_in_ms", 0) if options is not None else 0
        if step_ms:
            return int(step_ms)
        config_ms = (
            getattr(self._config, "operation_timeout_in_ms", 0) if self._config is not None else 0
        )
        return int(config_ms) if config_ms else 0

    def make_callable(
        self, fetches: Any, feed_list: Any = None, accept_options: bool = False
    ) -> Any:
        """A function of the feed_list values returning `fetches`' values. Against a
        master it is a MakeCallable signature (RunCallable per call); in-process it
        wraps run()."""
        feed_list = list(feed_list or [])
        if not self._uses_master():

            def call(*args: Any, **kwargs: Any) -> Any:
                if len(args) != len(feed_list):
                    raise TypeError(
                        f"Callable expected {len(feed_list)} arguments, got {len(args)}"
                    )
                return self.run(
                    fetches,
                    dict(zip(feed_list, args)),
                    kwargs.get("options"),
                    kwargs.get("run_metadata"),
                )

            return call
        mapper = _FetchMapper(self._graph, fetches)
        fetch_names, targets = _fetch_names(mapper)
        feed_names = [
            self._graph.as_graph_element(f, allow_operation=False).name for f in feed_list
        ]
        # A fed-and-fetched tensor comes back as fed (the master refuses both).
        to_run = [n for n in fetch_names if n not in feed_names]
        options = config_pb2.CallableOptions(feed=feed_names, fetch=to_run, target=targets)
        run = self._make_callable_from_options(options)

        def call_remote(*args: Any, **kwargs: Any) -> Any:
            by_name = dict(zip(to_run, run(*args, run_metadata=kwargs.get("run_metadata"))))
            for t, v in zip(run._feed_tensors, args):
                by_name[t.name] = _feed_value(t, v)
            return mapper.build(
                [
                    by_name[el.name] if isinstance(el, _ops.Tensor) else None
                    for el in mapper.elements
                ]
            )

        return call_remote

    def _make_callable_from_options(self, callable_options: Any) -> Any:
        """TF's Keras path: a callable for CallableOptions (feeds, fetches, targets by
        name) returning the fetch values as a list."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        if isinstance(self, Session) and self._uses_master():
            return _RemoteCallable(self, callable_options)
        feeds = list(callable_options.feed)
        fetches = list(callable_options.fetch)
        targets = list(callable_options.target)

        def call(*args: Any, run_metadata: Any = None) -> list[Any]:
            if len(args) != len(feeds):
                raise TypeError(f"Callable expected {len(feeds)} arguments, got {len(args)}")
            return self.run(fetches + targets, dict(zip(feeds, args)), run_metadata=run_metadata)[
                : len(fetches)
            ]

        return call

    def _uses_master(self) -> bool:
        return False

    def partial_run_setup(self, fetches: Any, feeds: Any = None) -> str:
        """Declare every fetch and feed of a partial run; returns its handle."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        fetch_names, targets = _fetch_names(_FetchMapper(self._graph, fetches))
        feed_names = []
        for f in feeds or []:
            if hasattr(f, "_as_graph_element") and not isinstance(f, _ops.Tensor):
                f = f._as_graph_element()
            t = self._graph.as_graph_element(f, allow_tensor=True, allow_operation=False)
            feed_names.append(t.name)
        with self._lock:
            self._extend_graph()
        return self._partial_run_setup(feed_names, fetch_names, targets)

    def partial_run(self, handle: str, fetches: Any, feed_dict: Any = None) -> Any:
        """Continue partial run `handle`: feed more of its feeds, fetch more of its fetches."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        mapper = _FetchMapper(self._graph, fetches)
        fetch_names, _ = _fetch_names(mapper)
        feeds = [(t.name, v) for t, v in _feed_items(self._graph, feed_dict)]
        with self._lock:
            self._extend_graph()
        by_name = dict(zip(fetch_names, self._partial_run(handle, feeds, fetch_names)))
        return mapper.build(
            [by_name[el.name] if isinstance(el, _ops.Tensor) else None for el in mapper.elements]
        )

    def _partial_run_setup(self, feeds: list[str], fetches: list[str], targets: list[str]) -> str:
        """In-process partial runs: each partial_run runs a step over the feeds given so
        far (common.session has no suspended steps, so a node needed by two partial_run
        calls runs twice); the setup's targets run with the last fetches."""
        handle = str(self._partial_run_ids)
        self._partial_run_ids += 1
        self._partial_runs[handle] = _PartialRunState(feeds, fetches, targets)
        return handle

    def _partial_run(
        self, handle: str, feeds: list[tuple[str, Any]], fetches: list[str]
    ) -> list[Any]:
        state = self._partial_runs.get(handle)
        if state is None:
            raise _errors.InvalidArgumentError("Must run 'setup' before performing partial runs!")
        state.check(feeds, fetches)
        _check_fetch(self._graph, state, [n for n, _ in feeds], fetches)
        state.fed.update(feeds)
        state.fetched.update(fetches)
        done = state.done()
        targets = state.targets if done else []
        if done:
            del self._partial_runs[handle]
        if not fetches and not targets:
            return []
        return self._run_step(list(state.fed.items()), fetches, targets, 0, None, None)

    def as_default(self) -> Any:
        return _default_session(self)

    def list_devices(self) -> list[_DeviceAttributes]:
        """The devices the session can place ops on (TF_SessionListDevices)."""
        if self._closed:
            raise RuntimeError("Attempted to use a closed Session.")
        return self._list_devices()

    @abc.abstractmethod
    def _list_devices(self) -> list[_DeviceAttributes]:
        """The devices this session can place ops on."""

    # What a concrete session provides (Session: in process, or through a master).
    @abc.abstractmethod
    def _extend_graph(self) -> None:
        """Send the graph's new nodes to the runtime (caller holds `_lock`)."""

    @abc.abstractmethod
    def _run_step(
        self,
        feeds: list[tuple[str, Any]],
        fetches: list[str],
        targets: list[str],
        timeout_ms: int,
        options: Any,
        run_metadata: Any,
    ) -> list[Any]:
        """One step: the values of `fetches`, in order."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the session (idempotent)."""

    def __enter__(self) -> BaseSession:
        self._default_cm = _default_session(self)
        self._default_cm.__enter__()
        self._graph_cm = self._graph.as_default()
        self._graph_cm.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._graph_cm.__exit__(exc_type, exc, tb)
        self._default_cm.__exit__(exc_type, exc, tb)
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001  (interpreter shutdown)
            pass


class _LocalRunner:
    """The in-process runtime for target "" (common.session.Session)."""

    def __init__(self, config: Any) -> None:
        from common.session import Session as DirectSession

        n = 1
        if config is not None and "CPU" in config.device_count:
            n = max(1, int(config.device_count["CPU"]))
        self.session = DirectSession(num_devices=n)

    def extend(self, graph_def: Any) -> None:
        self.session.extend(graph_def)

    def run(
        self,
        feeds: list[tuple[str, Any]],
        fetches: list[str],
        targets: list[str],
        timeout_ms: int,
        options: Any = None,
        run_metadata: Any = None,
    ) -> list[Any]:
        return self.session.run(
            fetches,
            dict(feeds),
            targets,
            timeout_s=timeout_ms / 1000.0 if timeout_ms else None,
            run_options=options,
            run_metadata=run_metadata,
        )

    def close(self) -> None:
        self.session.close()


# Deadline of MasterService calls other than steps, when operation_timeout_in_ms is unset.
CONTROL_TIMEOUT_MS = 120_000
# How long past a step's own deadline the client waits for the master's answer.
STEP_ANSWER_GRACE_MS = 10_000
_STEP_METHODS = frozenset({"RunStep", "RunCallable"})


class _GrpcRunner:
    """A MasterService client that behaves like TF's GrpcSession."""

    def __init__(self, target: str, config: Any, credentials: Any = None) -> None:
        from client.master_connection import MasterConnection

        self.target = target
        self.config = config
        op_ms = getattr(config, "operation_timeout_in_ms", 0) if config is not None else 0
        # Every call but a step is bounded: operation_timeout_in_ms, else CONTROL_TIMEOUT_MS
        # (the wait for the master to answer at all is bounded by the connection).
        self.control_timeout_ms = op_ms if op_ms > 0 else CONTROL_TIMEOUT_MS
        self.connection = MasterConnection(
            target[len("grpc://") :],
            connect_timeout_s=op_ms / 1000.0 if op_ms > 0 else None,
            creds=credentials,
        )
        self.handle = ""
        self.graph_version = 0

    def _call(self, method: str, request: Any, timeout_ms: int = 0) -> Any:
        if not timeout_ms and method not in _STEP_METHODS:
            timeout_ms = self.control_timeout_ms
        return self.connection.call(method, request, timeout_ms / 1000.0 if timeout_ms else None)

    def extend(self, graph_def: Any) -> None:
        if not self.handle:
            req = master_pb2.CreateSessionRequest(graph_def=graph_def, target=self.target)
            req.config.CopyFrom(self.config or config_pb2.ConfigProto())
            resp = self._call("CreateSession", req)
            if not resp.session_handle:
                raise _errors.InternalError("A session is not created yet....")
            self.handle = resp.session_handle
            self.graph_version = resp.graph_version
            return
        ext = master_pb2.ExtendSessionRequest(
            session_handle=self.handle,
            graph_def=graph_def,
            current_graph_version=self.graph_version,
        )
        self.graph_version = self._call("ExtendSession", ext).new_graph_version

    def make_callable(self, options: Any) -> int:
        req = master_pb2.MakeCallableRequest(session_handle=self.handle, request_id=_request_id())
        req.options.CopyFrom(options)
        return self._call("MakeCallable", req).handle

    def run_callable(self, handle: int, feeds: list[Any], run_metadata: Any = None) -> list[Any]:
        req = master_pb2.RunCallableRequest(
            session_handle=self.handle, handle=handle, request_id=_request_id()
        )
        for value in feeds:
            req.feed.add().CopyFrom(_tensor.as_proto_tensor_content(value))
        resp = self._call("RunCallable", req)
        if run_metadata is not None:
            run_metadata.CopyFrom(resp.metadata)
        return [_tensor.to_numpy(t) for t in resp.fetch]

    def release_callable(self, handle: int) -> None:
        self._call(
            "ReleaseCallable",
            master_pb2.ReleaseCallableRequest(session_handle=self.handle, handle=handle),
        )

    def list_devices(self) -> list[_DeviceAttributes]:
        resp = self._call("ListDevices", master_pb2.ListDevicesRequest(session_handle=self.handle))
        return [
            _DeviceAttributes(d.name, d.device_type, d.memory_limit, d.incarnation)
            for d in list(resp.local_device) + list(resp.remote_device)
        ]

    def partial_run_setup(self, feeds: list[str], fetches: list[str], targets: list[str]) -> str:
        req = master_pb2.PartialRunSetupRequest(
            session_handle=self.handle,
            feed=feeds,
            fetch=fetches,
            target=targets,
            request_id=_request_id(),
        )
        return self._call("PartialRunSetup", req).partial_run_handle

    def run(
        self,
        feeds: list[tuple[str, Any]],
        fetches: list[str],
        targets: list[str],
        timeout_ms: int,
        options: Any = None,
        partial_run_handle: str = "",
    ) -> tuple[list[Any], Any]:
        req = master_pb2.RunStepRequest(
            session_handle=self.handle,
            fetch=fetches,
            target=targets,
            store_errors_in_response_body=True,
            partial_run_handle=partial_run_handle,
            request_id=_request_id(),
        )
        if options is not None:
            req.options.CopyFrom(options)
        if timeout_ms:
            req.options.timeout_in_ms = timeout_ms
        for name, value in feeds:
            nt = req.feed.add(name=name)
            nt.tensor.CopyFrom(_tensor.as_proto_tensor_content(value))
        # The master ends a step at its deadline; the call waits a little longer for that
        # answer. A step without one is bounded by the master's --step-timeout.
        resp = self._call("RunStep", req, timeout_ms + STEP_ANSWER_GRACE_MS if timeout_ms else 0)
        if resp.status_code:
            msg = resp.status_error_message
            raise _errors.from_code(resp.status_code, msg)
        got = {}
        for nt in resp.tensor:
            if nt.name not in fetches:
                raise _errors.InternalError(f"Received response for unrequested fetch: {nt.name}")
            got[nt.name] = _tensor.to_numpy(nt.tensor)
        return [got.get(n, np.zeros((0,), np.float32)) for n in fetches], resp.metadata

    def close(self) -> None:
        handle, self.handle = self.handle, ""
        try:
            if handle:
                self._call("CloseSession", master_pb2.CloseSessionRequest(session_handle=handle))
        finally:
            self.connection.close()


class _RemoteCallable:
    """A step signature the master keeps (MakeCallable): each call is one RunCallable
    with the feeds in CallableOptions order; ReleaseCallable when garbage-collected
    while the session is open (TF's BaseSession._Callable)."""

    def __init__(self, session: Session, options: Any) -> None:
        self._session = session
        self._runner: _GrpcRunner = session._runner
        graph = session.graph
        self._feed_tensors = [
            graph.as_graph_element(f, allow_operation=False) for f in options.feed
        ]
        with session._lock:
            session._extend_graph()
        self._handle = self._runner.make_callable(options)

    def __call__(self, *args: Any, run_metadata: Any = None) -> list[Any]:
        if len(args) != len(self._feed_tensors):
            raise TypeError(
                f"Callable expected {len(self._feed_tensors)} arguments, got {len(args)}"
            )
        feeds = [_feed_value(t, v) for t, v in zip(self._feed_tensors, args)]
        return self._runner.run_callable(self._handle, feeds, run_metadata)

    def __del__(self) -> None:
        runner = getattr(self, "_runner", None)
        if runner is None or self._session._closed or not runner.handle:
            return
        try:
            runner.release_callable(self._handle)
        except Exception:  # noqa: BLE001  (garbage collection must not raise)
            pass


def _request_id() -> int:
    """A random non-zero int64 (TF's client draws it from the whole signed range). From
    the OS's generator: the global `random` is seeded alike by every seeded script, and
    two clients drawing equal ids would share the master's retry cache entries."""
    return secrets.randbits(63) + 1


class Session(BaseSession):
    """tf.compat.v1.Session(target, graph, config), and `credentials` (a
    common.credentials.Credentials: TLS and tokens; default: from the environment,
    FLOWRT_TLS_CA / FLOWRT_AUTH_TOKEN ..., else insecure as TensorFlow's client)."""

    def __init__(
        self,
        target: str = "",
        graph: _ops.Graph | None = None,
        config: Any = None,
        credentials: Any = None,
    ) -> None:
        super().__init__(target, graph, config)
        if target and not target.startswith("grpc://"):
            raise _errors.InvalidArgumentError(
                f'Unsupported session target {target!r} (use "" or grpc://host:port)'
            )
        self._runner: Any = (
            _GrpcRunner(target, config, credentials) if target else _LocalRunner(config)
        )

    def _extend_graph(self) -> None:
        ops = self._graph._ops
        if self._nodes_sent == len(ops) and (
            self._nodes_sent or not isinstance(self._runner, _GrpcRunner) or self._runner.handle
        ):
            return
        gd = self._graph.as_graph_def(from_version=self._nodes_sent)
        n = len(ops)
        self._runner.extend(gd)
        self._nodes_sent = n

    def _run_step(
        self,
        feeds: list[tuple[str, Any]],
        fetches: list[str],
        targets: list[str],
        timeout_ms: int,
        options: Any,
        run_metadata: Any,
    ) -> list[Any]:
        with self._lock:
            self._extend_graph()
        if isinstance(self._runner, _GrpcRunner):
            values, metadata = self._runner.run(feeds, fetches, targets, timeout_ms, options)
            if run_metadata is not None:
                run_metadata.CopyFrom(metadata)
            return values
        return self._runner.run(feeds, fetches, targets, timeout_ms, options, run_metadata)

    def _uses_master(self) -> bool:
        return isinstance(self._runner, _GrpcRunner)

    def _list_devices(self) -> list[_DeviceAttributes]:
        if isinstance(self._runner, _GrpcRunner):
            with self._lock:
                if not self._runner.handle:
                    # TF creates the session with an empty graph; the first run extends it.
                    self._runner.extend(
                        self._graph.as_graph_def(from_version=len(self._graph._ops))
                    )
            return self._runner.list_devices()
        return [
            _DeviceAttributes(d.name, d.device_type, d.memory_limit, d.incarnation)
            for d in self._runner.session.devices
        ]

    def _partial_run_setup(self, feeds: list[str], fetches: list[str], targets: list[str]) -> str:
        if isinstance(self._runner, _GrpcRunner):
            return self._runner.partial_run_setup(feeds, fetches, targets)
        return super()._partial_run_setup(feeds, fetches, targets)

    def _partial_run(
        self, handle: str, feeds: list[tuple[str, Any]], fetches: list[str]
    ) -> list[Any]:
        if isinstance(self._runner, _GrpcRunner):
            values, _ = self._runner.run(feeds, fetches, [], 0, partial_run_handle=handle)
            return values
        return super()._partial_run(handle, feeds, fetches)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        runner = getattr(self, "_runner", None)
        if runner is not None:
            runner.close()

    @staticmethod
    def reset(target: str, containers: Any = None, config: Any = None) -> None:
        runner = _GrpcRunner(target, config)
        try:
            runner._call("Reset", master_pb2.ResetRequest(container=list(containers or [])))
        finally:
            runner.connection.close()


class InteractiveSession(Session):
    """A Session installed as the default session at construction."""

    def __init__(
        self, target: str = "", graph: _ops.Graph | None = None, config: Any = None
    ) -> None:
        super().__init__(target, graph, config)
        self._default_cm = _default_session(self)
        self._default_cm.__enter__()
        self._graph_cm = self._graph.as_default()
        self._graph_cm.__enter__()

    def close(self) -> None:
        if not self._closed and hasattr(self, "_default_cm"):
            try:
                self._graph_cm.__exit__(None, None, None)
                self._default_cm.__exit__(None, None, None)
            except (ValueError, IndexError):
                pass
        super().close()


_ = convert_to_tensor
