"""Command-line runner: the single-process way to run any exported GraphDef.

    python -m common run GRAPH.pb --feeds FEEDS.npz --fetch NAME:0 [--fetch ...] --out OUT.npz
    python -m common ops

A bad graph or feed prints one line naming the node (with TensorFlow's error code) on
stderr and exits non-zero; no traceback.
"""

from __future__ import annotations

from common import blas_env

blas_env.configure()  # before numpy loads OpenBLAS

import argparse  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import zipfile  # noqa: E402

import numpy as np  # noqa: E402


def _load_feeds(path: str | None) -> dict[str, np.ndarray]:
    """The feeds of an npz file. String feeds come as bytes (dtype "S") or unicode ("U",
    encoded as UTF-8) arrays and are fed as DT_STRING; object arrays are refused: npz stores
    them as pickles, and loading a pickle runs whatever code it names."""
    if not path:
        return {}
    feeds: dict[str, np.ndarray] = {}
    with np.load(path, allow_pickle=False) as data:
        for key in data.files:
            try:
                value = data[key]
            except ValueError as e:
                if "allow_pickle" not in str(e):
                    raise
                raise ValueError(
                    f"feed {key!r} in {path} is an object array, stored as a pickle: refused, "
                    "since loading a pickle can run arbitrary code. Save strings as a bytes "
                    "array (np.array([...], dtype=bytes)) or a unicode array (dtype=str)"
                ) from None
            feeds[key] = _string_feed(value) if value.dtype.kind in "SU" else value
    return feeds


def _string_feed(value: np.ndarray) -> np.ndarray:
    """A bytes or unicode array as a DT_STRING value (object array of bytes). numpy's "S"
    arrays drop trailing NUL bytes, so such strings cannot be fed through npz."""
    out = np.empty(value.shape, dtype=object)
    flat = out.reshape(-1)
    for i, item in enumerate(value.reshape(-1).tolist()):
        flat[i] = item.encode("utf-8") if isinstance(item, str) else item
    return out


def _save_outputs(path: str, names: list[str], values: list[np.ndarray]) -> None:
    """Write what np.savez writes (one NAME.npy per fetch in an uncompressed zip, ".npz"
    appended when missing), without np.savez's keyword form: a fetch named "file" or
    "allow_pickle" would collide with its parameters."""
    from common.session import to_savable

    if not path.endswith(".npz"):
        path += ".npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name, v in zip(names, values):
            with zf.open(f"{name}.npy", "w", force_zip64=True) as f:
                np.lib.format.write_array(f, to_savable(v), allow_pickle=False)


def _cmd_run(args: argparse.Namespace) -> int:
    from common.errors import OpError
    from common.session import Session, load_graph_def

    try:
        graph_def = load_graph_def(args.graph)
        feeds = _load_feeds(args.feeds)
        with Session(graph_def, num_devices=args.devices) as sess:
            values = sess.run(
                args.fetch, feeds, targets=args.target, timeout_s=args.timeout or None
            )
    except OpError as e:
        where = f" (node {e.node_name})" if e.node_name and e.node_name not in e.message else ""
        print(f"error: {e.code.name}: {e.message}{where}".replace("\n", " "), file=sys.stderr)
        return 1
    except (OSError, ValueError) as e:
        print(f"error: {type(e).__name__}: {e}".replace("\n", " "), file=sys.stderr)
        return 1
    if args.out:
        _save_outputs(args.out, args.fetch, values)
    else:
        for name, v in zip(args.fetch, values):
            print(f"{name} = {v!r}")
    return 0


def _cmd_ops(args: argparse.Namespace) -> int:
    import common.ops  # noqa: F401  (registers every op)
    from common.ops import registry

    for op in registry.all_ops():
        kernels = ", ".join(
            k.device_type + (f"[{k.label}]" if k.label else "")
            for k in registry.kernels_for(op.name)
        )
        print(f"{op.name}: {kernels or '(no kernels)'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m common", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a GraphDef (binary or text) in this process")
    run.add_argument("graph", help="GraphDef file: binary (.pb) or text (.pbtxt)")
    run.add_argument("--feeds", help="npz file; keys are tensor names such as 'x:0'")
    run.add_argument("--fetch", action="append", default=[], help="tensor to fetch (repeat)")
    run.add_argument("--target", action="append", default=[], help="node to run (repeat)")
    run.add_argument("--out", help="npz file for the fetched values, keyed by fetch name")
    run.add_argument("--devices", type=int, default=1, help="number of local CPU devices")
    run.add_argument("--timeout", type=float, default=0, help="step timeout in seconds")
    run.set_defaults(func=_cmd_run)
    ops = sub.add_parser("ops", help="list every registered op with its kernels")
    ops.set_defaults(func=_cmd_ops)
    args = parser.parse_args(argv)
    if args.command == "run" and not args.fetch and not args.target:
        parser.error("run needs at least one --fetch or --target")
    return args.func(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `python -m common ops | head`: the reader left
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
