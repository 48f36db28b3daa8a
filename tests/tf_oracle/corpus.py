"""TensorFlow oracle corpus: the registry of cases and their export through TensorFlow.

A case is a builder `build(tf, rng) -> Built` that adds ops to the default graph (the
exporter owns the `tf.Graph`) and says what to feed, fetch and run first. `tf` is
`tensorflow.compat.v1`; `rng` is a numpy Generator seeded from the case name, so inputs
are random but identical on every run. Importing this module does not import TensorFlow:
the registry (names, tags, flags) is needed at collection time, TensorFlow only when a
case is exported.

Every case carries exactly one family tag (FAMILIES) that decides whether it is expected
to pass yet, plus optional marker tags. The conftest turns both into pytest markers.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

FAMILIES = frozenset(
    {
        "inference",
        "control_flow_v1",
        "control_flow_v2",
        "gradients",
        "gradients_v2",
        "training",
        "strings",
        "random",
        "extra_ops",
        "data_flow",
    }
)
# Marker-only tags: they never decide xfail, they only let `-m` select.
MARKER_TAGS = frozenset({"variables", "pinned", "casts", "pbtxt"})


@dataclass
class Built:
    """What a builder returns. Tensors/ops or their names are both accepted."""

    feeds: Mapping[Any, np.ndarray]
    fetches: Sequence[Any]
    init: Sequence[Any] = ()  # targets run once before anything else (initializers)
    train: Sequence[Any] = ()  # targets run `steps` times (with feeds) before fetching
    steps: int = 0


@dataclass(frozen=True)
class Case:
    name: str
    build: Callable[[Any, np.random.Generator], Built]
    family: str
    markers: frozenset[str] = frozenset()
    pbtxt: bool = False  # also exported as a text GraphDef, and run through the CLI that way
    shape_only: bool = False  # random ops: compare shape and dtype, not values
    min_devices: int = 1  # pins ops to /device:CPU:1 or CPU:2
    cli: bool = True  # False when the case needs several runs (training)
    control_flow_v1: bool = False  # build with tf.compat.v1.disable_control_flow_v2()

    @property
    def tags(self) -> frozenset[str]:
        return self.markers | {self.family}


CASES: dict[str, Case] = {}


def register(c: Case) -> Case:
    assert c.family in FAMILIES, c.family
    assert c.markers <= MARKER_TAGS, c.markers
    assert c.name not in CASES, c.name
    CASES[c.name] = c
    return c


def case(
    family: str, *markers: str, name: str | None = None, **flags: Any
) -> Callable[[Callable[..., Built]], Callable[..., Built]]:
    """Decorator registering a builder; the case name defaults to the function name."""

    def wrap(fn: Callable[..., Built]) -> Callable[..., Built]:
        marks = frozenset(markers) | ({"pbtxt"} if flags.get("pbtxt") else frozenset())
        register(Case(name or fn.__name__, fn, family, marks, **flags))
        return fn

    return wrap


# --------------------------------------------------------------------------- export


@dataclass(frozen=True)
class Exported:
    """One case written to disk: everything both test runners need, no TensorFlow."""

    case: Case
    directory: Path
    feeds: dict[str, np.ndarray]
    fetches: list[str]
    init: list[str]
    train: list[str]
    steps: int
    dtypes: dict[str, str]  # fetch name -> TensorFlow dtype name ("float32", "bfloat16", ...)
    expected: dict[str, np.ndarray] = field(repr=False)

    @property
    def graph_pb(self) -> Path:  # frozen (variables as consts) binary GraphDef for the CLI
        return self.directory / "graph.pb"

    @property
    def graph_pbtxt(self) -> Path:
        return self.directory / "graph.pbtxt"

    @property
    def feeds_npz(self) -> Path:
        return self.directory / "feeds.npz"

    @property
    def session_graph_pb(self) -> Path:  # as built, with variables and initializers
        return self.directory / "session_graph.pb"


def _name(x: Any) -> str:
    return x if isinstance(x, str) else x.name


def _feed_array(value: Any) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind == "U":
        arr = np.char.encode(arr, "utf-8")
    return arr


def _result_array(value: Any) -> np.ndarray:
    """TF returns numpy scalars, bytes for scalar strings, object arrays for strings."""
    arr = np.asarray(value)
    if arr.dtype.kind in "SO":
        flat = [bytes(v) for v in arr.reshape(-1).tolist()]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        arr = out.reshape(arr.shape)
    return arr


def build_graph(c: Case, tf: Any) -> tuple[Any, Built]:
    rng = np.random.default_rng(zlib.crc32(c.name.encode()))
    graph = tf.Graph()
    if c.control_flow_v1:
        tf.disable_control_flow_v2()  # process-global: restore immediately after building
    try:
        with graph.as_default():
            built = c.build(tf, rng)
    finally:
        if c.control_flow_v1:
            tf.enable_control_flow_v2()
    return graph, built


def export(c: Case, tf: Any, directory: Path) -> Exported:
    """Builds the case, runs it on TensorFlow and writes graph(s), feeds and expected."""
    graph, built = build_graph(c, tf)
    feeds = {_name(k): _feed_array(v) for k, v in built.feeds.items()}
    fetches = [_name(f) for f in built.fetches]
    init = [_name(t) for t in built.init]
    train = [_name(t) for t in built.train]
    dtypes = {f: graph.get_tensor_by_name(f).dtype.name for f in fetches}
    config = tf.ConfigProto(device_count={"CPU": 3})
    with tf.Session(graph=graph, config=config) as sess:
        if init:
            sess.run(init)
        for _ in range(built.steps):
            sess.run(train, feeds)
        values = sess.run(fetches, feeds)
        graph_def = graph.as_graph_def()
        frozen = graph_def
        if init and c.cli:
            outputs = sorted({f.rsplit(":", 1)[0] for f in fetches})
            frozen = tf.graph_util.convert_variables_to_constants(sess, graph_def, outputs)
    expected = {f: _result_array(v) for f, v in zip(fetches, values)}

    directory.mkdir(parents=True, exist_ok=True)
    (directory / "session_graph.pb").write_bytes(graph_def.SerializeToString())
    (directory / "graph.pb").write_bytes(frozen.SerializeToString())
    if c.pbtxt:
        (directory / "graph.pbtxt").write_text(str(frozen))
    np.savez(directory / "feeds.npz", **feeds)
    np.savez(directory / "expected.npz", **expected)
    meta = {"fetches": fetches, "init": init, "train": train, "steps": built.steps}
    (directory / "meta.json").write_text(json.dumps({**meta, "dtypes": dtypes}, indent=1))
    return Exported(c, directory, feeds, fetches, init, train, built.steps, dtypes, expected)


def load_cases() -> dict[str, Case]:
    """Imports the case modules (they register on import) and returns the registry."""
    from . import (  # noqa: F401
        cases_array,
        cases_data_flow,
        cases_families,
        cases_gradients_v2,
        cases_inference,
    )

    return CASES


def select(cases: Iterable[Case], **flags: Any) -> list[Case]:
    return [c for c in cases if all(getattr(c, k) == v for k, v in flags.items())]
