"""How many whole TF1 programs run on our runtime: a program-level probe, not a test.

The programs (tools.tf1_programs_models, _pipelines, _more and _third) are tutorial-style
TF1 scripts, each a function of the module `tf` and a session target returning what the
script prints. TensorFlow (tensorflow.compat.v1, local session) is the oracle; each
program then runs with our client in a local session ("ours") and, with --cluster, on a
LocalCluster (1 ps, 2 workers) driven by TensorFlow's client ("tf_on_cluster") and by
ours ("ours_on_cluster"). Verdicts reuse tools.tf1_probe: "equal", "differs",
"fails: <error>", per program per client, and JSON totals per client.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from tools.tf1_probe import DIFFERS, EQUAL, FAILS, verdict
from tools.tf1_programs_models import Program
from tools.tf1_programs_third import CLUSTER_ONLY, PROGRAMS

SKIPPED = "skipped"
KEYS = (EQUAL, DIFFERS, FAILS, "oracle fails", SKIPPED)


def run_program(tf: Any, prog: Program, target: str = "") -> Any:
    """What `prog` prints when run with module `tf` against `target`."""
    # Unseeded op seeds may come from Python's random: the same draws for every run.
    state = random.getstate()
    random.seed(0)
    try:
        return prog(tf, target)
    finally:
        random.setstate(state)
        if target:
            # Variables outlive sessions on a cluster: the next program starts anew.
            tf.Session.reset(target)


def tf_cluster_target(tf_real: Any) -> str:
    """A target on an in-process TensorFlow cluster shaped like LocalCluster's (1 ps,
    2 workers): the oracle for programs that place ops on jobs."""
    from tools.tf1_programs_oracle import start_tf_cluster

    return start_tf_cluster(tf_real)


def measure(
    programs: Sequence[tuple[str, Program]],
    oracle: Callable[[str, Program], Any],
    clients: dict[str, tuple[Any, str]],
) -> dict[str, Any]:
    """Verdicts per program per client ({client: (module, target)}) and totals."""
    results: dict[str, dict[str, str]] = {}
    for name, prog in programs:
        cache: list[Any] = []

        def theirs(name: str = name, prog: Program = prog, cache: list[Any] = cache) -> Any:
            # The oracle runs once per program, whatever the number of clients.
            if not cache:
                try:
                    cache.append(("ok", oracle(name, prog)))
                except Exception as e:  # noqa: BLE001 (re-raised for each client)
                    cache.append(("err", e))
            kind, value = cache[0]
            if kind == "err":
                raise value
            return value

        row = {}
        for client_name, (module, target) in clients.items():
            if name in CLUSTER_ONLY and not target:
                row[client_name] = f"{SKIPPED}: needs a cluster with jobs ps and worker"
                continue
            row[client_name] = verdict(functools.partial(run_program, module, prog, target), theirs)
        results[name] = row
    totals = {
        client_name: {
            **{
                key: sum(r[client_name].split(":")[0] == key for r in results.values())
                for key in KEYS
            },
            "total": len(results),
        }
        for client_name in clients
    }
    return {"results": results, "totals": totals}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", action="store_true", help="also run on a LocalCluster")
    parser.add_argument("-k", default="", help="only programs whose name contains this")
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf_real  # type: ignore[import-untyped]

    import client

    tf1 = tf_real.compat.v1

    def oracle(name: str, prog: Program) -> Any:
        return run_program(tf1, prog, tf_cluster_target(tf_real) if name in CLUSTER_ONLY else "")

    programs = [(n, p) for n, p in PROGRAMS if args.k in n]
    t0 = time.monotonic()
    clients: dict[str, tuple[Any, str]] = {"ours": (client, "")}
    if args.cluster:
        from deploy.launcher import LocalCluster

        with LocalCluster().start(timeout=300) as cluster:  # a busy host starts slowly
            clients["tf_on_cluster"] = (tf1, cluster.target)
            clients["ours_on_cluster"] = (client, cluster.target)
            report = measure(programs, oracle, clients)
    else:
        report = measure(programs, oracle, clients)
    report["seconds"] = round(time.monotonic() - t0, 1)
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
