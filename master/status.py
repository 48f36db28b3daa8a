"""Master, observation from the command line: `python -m master status --target
grpc://HOST:PORT [--json]` asks a running master for its monitor's snapshot (the unary
extension method common.task_stats.CLUSTER_STATUS_PATH) and prints the cluster's tasks, the
open sessions and the recent failed steps as tables, or the snapshot as JSON.

Exit codes: 0 printed; 2 bad arguments; 3 the master did not answer within --timeout
(UnavailableError naming the target, on stderr).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

import grpc

from common import credentials
from common.task_stats import CLUSTER_STATUS_PATH
from rpc import auth


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m master status",
        description="Print a running master's cluster, sessions and recent failed steps.",
    )
    p.add_argument("--target", required=True, help="the master, grpc://HOST:PORT or HOST:PORT")
    p.add_argument("--json", action="store_true", help="print the snapshot as JSON")
    p.add_argument(
        "--timeout", type=float, default=5.0, help="seconds to wait for the master (default 5)"
    )
    return p.parse_args(argv)


def fetch(target: str, timeout: float) -> dict[str, Any]:
    address = target.removeprefix("grpc://")
    with auth.channel(address, (), credentials.load()) as channel:
        call: Any = channel.unary_unary(CLUSTER_STATUS_PATH)  # bytes in, bytes out
        answer: bytes = call(b"", timeout=timeout)
    return json.loads(answer)


def main(argv: Sequence[str]) -> int:
    args = parse_args(argv)
    try:
        snapshot = fetch(args.target, args.timeout)
    except grpc.RpcError as e:
        print(
            f"UnavailableError: master {args.target} did not answer: {e.code().name}: "
            f"{e.details()}",
            file=sys.stderr,
        )
        return 3
    if args.json:
        json.dump(snapshot, sys.stdout, indent=1)
        print()
    else:
        print(render(snapshot))
    return 0


def _bytes(n: float | None) -> str:
    if n is None:
        return ""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024:
            return f"{n:.0f} {unit}"
        n /= 1024
    return f"{n:.1f} TB"


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    cells = [headers] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render(s: dict[str, Any]) -> str:
    tasks = []
    for t in s["tasks"]:
        st = t.get("stats") or {}
        tasks.append(
            [
                t["name"],
                t["address"],
                "up" if t["up"] else "DOWN",
                len(t["devices"]),
                f"{st['uptime_s']:.0f}s" if "uptime_s" in st else "",
                _bytes(st.get("rss_bytes")),
                st.get("registered_graphs", ""),
                st.get("steps_in_flight", ""),
                "" if t["up"] else t.get("error", "")[:60],
            ]
        )
    sessions = [
        [
            x["handle"],
            x["nodes"],
            x["steps_ok"],
            x["steps_failed"],
            " ".join(f"{op}x{n}" for op, n in x["top_ops"][:4]),
        ]
        for x in s["sessions"]
    ]
    failed = [
        [
            x["id"],
            x["session"][:8],
            x["outcome"],
            f"{x['duration_ms'] or 0:.1f}",
            x["node"],
            x["error"][:70],
        ]
        for x in s["steps"]
        if x["outcome"] not in ("ok", "running")
    ][:10]
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(s["time"]))
    out = [
        f"master {s.get('master', '')}  up {s['uptime_s']:.0f}s  at {when}",
        "",
        "TASKS",
        _table(
            [
                "task",
                "address",
                "health",
                "devices",
                "uptime",
                "rss",
                "graphs",
                "in flight",
                "error",
            ],
            tasks,
        ),
        "",
        f"SESSIONS ({len(sessions)} open)",
        _table(["session", "nodes", "ok", "failed", "top ops"], sessions),
        "",
        "RECENT FAILED STEPS",
        _table(["step", "session", "code", "ms", "node", "error"], failed) if failed else "(none)",
    ]
    return "\n".join(out)
