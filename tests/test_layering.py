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

No import circle either: no module of ours reaches itself through the imports it makes, at
module level, inside a function or under TYPE_CHECKING alike (a function-level import only
hides a circle until the function runs). An import counts as an arrow to the module it
names: `from client.ops import array_ops` points at client/ops/array_ops.py, `from
client.framework.ops import Tensor` at client/framework/ops.py, and a package's
__init__.py only where the import names the package itself. `circles` is a pure function
of {module: source} and is shown failing on synthetic circles below.
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


def _module_name(path: str) -> str:
    """ "client/ops/array_ops.py" -> "client.ops.array_ops"; a package's __init__.py is
    the package."""
    name = path.removesuffix(".py").replace("/", ".")
    return name.removesuffix(".__init__")


def _imported_modules(module: str, is_package: bool, tree: ast.AST) -> set[str]:
    """The dotted names every import statement of `module` names: "a.b" for `import a.b`,
    "a.b.c" for `from a.b import c` (c may be a module or a name of a.b: `circles` tells)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                parts = parts[: len(parts) - node.level + (1 if is_package else 0)]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            out |= {f"{base}.{alias.name}" for alias in node.names}
    return out


def circles(sources: dict[str, str]) -> list[list[str]]:
    """The import circles among `sources` ({path: text}, paths as in `violations`): each a
    sorted list of the modules that reach each other, as dotted names; [] when none."""
    modules = {_module_name(path): path for path in sources}
    arrows: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(sources[path], path)
        is_package = path.endswith("__init__.py")
        targets = set()
        for name in _imported_modules(module, is_package, tree):
            # `from a.b import c`: c is a module when a.b.c is one; otherwise a.b is meant.
            parent = name.rpartition(".")[0]
            if name in modules:
                targets.add(name)
            elif parent in modules:
                targets.add(parent)
        arrows[module] = targets - {module}
    return _strongly_connected(arrows)


def _strongly_connected(arrows: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one node, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(arrows):
        if root in index:
            continue
        work = [(root, iter(sorted(arrows[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(arrows.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def _sources() -> list[Path]:
    return sorted(p for package in MAY_IMPORT for p in (ROOT / package).rglob("*.py"))


def test_the_tree_keeps_the_layering() -> None:
    found = []
    for path in _sources():
        rel = path.relative_to(ROOT).as_posix()
        found += violations(rel, path.read_text(encoding="utf-8"))
    assert found == []


def test_the_tree_has_no_import_circle() -> None:
    sources = {
        path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8") for path in _sources()
    }
    assert circles(sources) == []


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


@pytest.mark.parametrize(
    "sources, expected",
    [
        (  # module level, both ways
            {"client/a.py": "from client import b\n", "client/b.py": "import client.a\n"},
            [["client.a", "client.b"]],
        ),
        (  # a name taken from a module, and a function-level import back
            {
                "client/ops/x.py": "from client.ops.y import f\n",
                "client/ops/y.py": "def f():\n    from client.ops import x\n",
            },
            [["client.ops.x", "client.ops.y"]],
        ),
        (  # three modules, one of them under TYPE_CHECKING, one relative
            {
                "client/data/a.py": "from . import b\n",
                "client/data/b.py": "from client.data.c import C\n",
                "client/data/c.py": (
                    "from typing import TYPE_CHECKING\n"
                    "if TYPE_CHECKING:\n    from client.data.a import A\n"
                ),
            },
            [["client.data.a", "client.data.b", "client.data.c"]],
        ),
        (  # a package that imports its module, and the module the package back
            {
                "common/p/__init__.py": "from common.p.m import g\n",
                "common/p/m.py": "import common.p\n",
            },
            [["common.p", "common.p.m"]],
        ),
    ],
)
def test_an_import_circle_is_caught(sources: dict[str, str], expected: list[list[str]]) -> None:
    assert circles(sources) == expected


def test_a_chain_is_no_circle() -> None:
    # math_ops imports array_ops, both import op_builder, op_builder imports neither.
    sources = {
        "client/framework/op_builder.py": "from client.framework import ops\n",
        "client/framework/ops.py": "",
        "client/ops/array_ops.py": "from client.framework.op_builder import apply_op\n",
        "client/ops/math_ops.py": (
            "from client.framework.op_builder import apply_op\nfrom client.ops import array_ops\n"
        ),
    }
    assert circles(sources) == []
