"""How many everyday TF1 calls run on our client: a probe, not a test.

Each case in tools.tf1_probe_cases builds one small TF1 graph given a module `tf`
(tensorflow.compat.v1 or our `client`) and returns its fetches, or a function of the
session that runs several steps. The probe runs every case with both modules in local
sessions (with --cluster, ours against a LocalCluster target instead), compares the
results and prints JSON: per case "equal", "differs" or "fails: <error>", and the totals.
TensorFlow is the oracle here, never a dependency of the runtime.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

Build = Callable[[Any], Any]

EQUAL = "equal"
DIFFERS = "differs"
FAILS = "fails"


def run_case(tf: Any, build: Build, target: str = "") -> Any:
    """`build`'s fetches run in a fresh graph and session of module `tf`."""
    g = tf.Graph()
    with g.as_default():
        # Unseeded initializers draw op seeds from Python's random: fix it so that both
        # modules see the same draw sequence.
        state = random.getstate()
        random.seed(0)
        try:
            out = build(tf)
        finally:
            random.setstate(state)
        init = [
            tf.global_variables_initializer(),
            tf.local_variables_initializer(),
            tf.tables_initializer(),
        ]
        try:
            with tf.Session(target, graph=g) as sess:
                sess.run(init)
                return out(sess) if callable(out) else sess.run(out)
        finally:
            if target:
                # Variables outlive a session on a cluster (as on TF's servers): clear
                # them so that the next case's "Variable" starts anew.
                tf.Session.reset(target)


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in _flatten(value[k])]
    if isinstance(value, (list, tuple)):
        return [x for v in value for x in _flatten(v)]
    if hasattr(value, "_fields") or hasattr(value, "indices"):  # SparseTensorValue etc.
        return [x for v in tuple(value) for x in _flatten(v)]
    return [value]


def same(ours: Any, theirs: Any, rtol: float = 1e-5, atol: float = 1e-6) -> bool:
    """Value for value: exact for ints/bools/strings, tolerances for floats."""
    a, b = _flatten(ours), _flatten(theirs)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if x is None or y is None:
            if x is not y:
                return False
            continue
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape:
            return False
        if x.dtype.kind in "fc" or y.dtype.kind in "fc":
            if x.dtype.kind not in "fciub" or y.dtype.kind not in "fciub":
                return False
            if not np.allclose(x, y, rtol=rtol, atol=atol, equal_nan=True):
                return False
        elif not _same_kind(x, y) or not np.array_equal(x, y):
            return False
    return True


def _same_kind(x: np.ndarray, y: np.ndarray) -> bool:
    """Same dtype; strings compare whether numpy holds them as bytes or objects."""
    return x.dtype == y.dtype or (x.dtype.kind in "SOU" and y.dtype.kind in "SOU")


def verdict(ours: Callable[[], Any], theirs: Callable[[], Any]) -> str:
    """ "equal" / "differs" / "fails: <error>" for one case; TensorFlow failing is
    reported as "oracle fails" (a broken case, not a finding about us)."""
    try:
        expected = theirs()
    except Exception as e:  # noqa: BLE001 (any failure is the verdict)
        return f"oracle fails: {type(e).__name__}: {_short(e)}"
    try:
        got = ours()
    except Exception as e:  # noqa: BLE001
        return f"{FAILS}: {type(e).__name__}: {_short(e)}"
    try:
        return EQUAL if same(got, expected) else DIFFERS
    except Exception as e:  # noqa: BLE001 (incomparable structures differ)
        return f"{DIFFERS}: {type(e).__name__}: {_short(e)}"


def _short(e: BaseException) -> str:
    return str(e).strip().splitlines()[0][:200] if str(e).strip() else ""


def probe(
    cases: Iterable[tuple[str, Build]], tf_module: Any, ours: Any, target: str = ""
) -> dict[str, Any]:
    """Verdicts per case and the totals (equal / differs / fails)."""
    results: dict[str, str] = {}
    for name, build in cases:
        results[name] = verdict(
            functools.partial(run_case, ours, build, target),
            functools.partial(run_case, tf_module, build),
        )
    totals = {
        key: sum(v.split(":")[0] == key for v in results.values())
        for key in (EQUAL, DIFFERS, FAILS, "oracle fails")
    }
    totals["total"] = len(results)
    return {"results": results, "totals": totals}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cluster", action="store_true", help="run ours on a LocalCluster")
    parser.add_argument("-k", default="", help="only cases whose name contains this")
    args = parser.parse_args(argv)
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf_real  # type: ignore[import-untyped]

    import client
    from tools.tf1_probe_cases import CASES

    cases = [(n, b) for n, b in CASES if args.k in n]
    t0 = time.monotonic()
    if args.cluster:
        from deploy.launcher import LocalCluster

        with LocalCluster().start() as cluster:
            report = probe(cases, tf_real.compat.v1, client, cluster.target)
    else:
        report = probe(cases, tf_real.compat.v1, client)
    report["seconds"] = round(time.monotonic() - t0, 1)
    json.dump(report, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
