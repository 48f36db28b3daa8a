"""The layering of the packages, as a rule this test checks (docs/DESIGN.md draws it):

    protos <- common <- rpc <- worker, master <- client <- server, deploy, bench

An arrow points at what may be imported: a package imports only itself and what its arrow
reaches. Besides: common/ never imports gRPC (it is everything one process needs to run a
graph); client/ never imports worker/ or master/ (it talks to a master over rpc/, or runs
common's in-process session), except tf.train.Server (client/training/server_lib.py), which
hosts a task in the client's process through master/task_server.py; master/ imports worker/
only in master/task_server.py, the module that runs a worker task in the master's own
process (--colocate, TF_CONFIG tasks).
Every import statement counts, at module level or inside a function.

The checker is a pure function of (path, source), so the tests below also feed it
synthetic sources and show that a forbidden import is caught.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_BASE = {"protos"}
_COMMON = _BASE | {"common"}
_RPC = _COMMON | {"rpc"}
_ALL = _RPC | {"worker", "master", "client", "server", "deploy", "bench"}
# package -> the packages of ours it may import (itself included)
MAY_IMPORT: dict[str, set[str]] = {
    "protos": _BASE,
    "common": _COMMON,
    "rpc": _RPC,
    "worker": _RPC | {"worker"},
    "master": _RPC | {"master"},
    "client": _RPC | {"client"},
    "server": _RPC | {"worker", "master", "server"},
    "deploy": _ALL,
    "bench": _ALL,
}
OURS = frozenset(MAY_IMPORT)
# Third-party modules a package must not import.
NEVER_IMPORTS: dict[str, set[str]] = {"common": {"grpc", "grpc_health"}}
# Modules allowed one extra package beyond their own package's rule: the two places a
# process hosts a whole task (worker and master on one port) in-process.
EXCEPTIONS: dict[str, set[str]] = {
    "master/task_server.py": {"worker"},  # --colocate, TF_CONFIG tasks
    "client/training/server_lib.py": {"master"},  # tf.train.Server (master.task_server)
}


def _imported(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, top-level module) of every absolute import in `tree`."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name.split(".")[0]) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module.split(".")[0]))
    return out


def violations(path: str, source: str) -> list[str]:
    """The forbidden imports of the module at `path` (relative to the repository root, with
    forward slashes) whose text is `source`, as "path:line: package imports X"."""
    package = path.split("/")[0]
    if package not in MAY_IMPORT:
        return []
    allowed = MAY_IMPORT[package] | EXCEPTIONS.get(path, set())
    never = NEVER_IMPORTS.get(package, set())
    found = []
    for line, top in _imported(ast.parse(source, path)):
        if (top in OURS and top not in allowed) or top in never:
            found.append(f"{path}:{line}: {package} imports {top}")
    return found


def _sources() -> list[Path]:
    return sorted(p for package in MAY_IMPORT for p in (ROOT / package).rglob("*.py"))


def test_the_tree_keeps_the_layering() -> None:
    found = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        found += violations(rel, path.read_text(encoding="utf-8"))
    assert found == []


def test_every_package_of_ours_has_a_rule() -> None:
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages - {"tests"} <= OURS, "add the new package to MAY_IMPORT"


@pytest.mark.parametrize(
    "path, source, expected",
    [
        (
            "client/session.py",
            "from worker.server import WorkerServer\n",
            ["client/session.py:1: client imports worker"],
        ),
        (
            "client/session.py",
            "def f():\n    from master import master\n",
            ["client/session.py:2: client imports master"],
        ),
        ("common/session.py", "import grpc\n", ["common/session.py:1: common imports grpc"]),
        (
            "common/session.py",
            "from rpc import status\n",
            ["common/session.py:1: common imports rpc"],
        ),
        (
            "rpc/worker_calls.py",
            "from master.master import Master\n",
            ["rpc/worker_calls.py:1: rpc imports master"],
        ),
        (
            "worker/graph_mgr.py",
            "import master.partition_runner\n",
            ["worker/graph_mgr.py:1: worker imports master"],
        ),
        (
            "master/master.py",
            "from worker import graph_mgr\n",
            ["master/master.py:1: master imports worker"],
        ),
        (
            "protos/graph_pb2.py",
            "from common import errors\n",
            ["protos/graph_pb2.py:1: protos imports common"],
        ),
    ],
)
def test_a_forbidden_import_is_caught(path: str, source: str, expected: list[str]) -> None:
    assert violations(path, source) == expected


@pytest.mark.parametrize(
    "path, source",
    [
        ("master/task_server.py", "from worker.server import WorkerServer\n"),  # colocation
        ("master/master.py", "from rpc.worker_calls import WorkerCalls\n"),
        ("client/session.py", "from common.session import Session\nimport numpy\n"),
        ("rpc/local_rpc.py", "import grpc\nfrom common.errors import OpError\n"),
        ("bench/cluster.py", "from worker.server import WorkerServer\n"),
    ],
)
def test_allowed_imports_pass(path: str, source: str) -> None:
    assert violations(path, source) == []
