"""Regenerate the Python code of the wire contract in protos/.

Runs grpc_tools.protoc from the repository root with ``-I.`` so generated modules
import each other as ``from protos import xxx_pb2``. Every .proto gets ``*_pb2.py`` and
``*_pb2.pyi``. No ``*_pb2_grpc.py``: nothing would import them, since servicers and stubs
are built from the service descriptors under both service names (rpc.service_paths).

    python tools/gen_protos.py           # rewrite protos/*_pb2*.py(i)
    python tools/gen_protos.py --check   # exit 1 listing files that differ
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROTO_DIR = REPO / "protos"
GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi")


def _protoc(args: list[str]) -> None:
    cmd = [sys.executable, "-m", "grpc_tools.protoc", "-I.", *args]
    subprocess.run(cmd, cwd=REPO, check=True)


def generate(out_dir: Path) -> list[Path]:
    """Generate all code under out_dir/protos and return the generated paths."""
    protos = sorted(p.relative_to(REPO).as_posix() for p in PROTO_DIR.glob("*.proto"))
    _protoc([f"--python_out={out_dir}", f"--pyi_out={out_dir}", *protos])
    return sorted(_generated_files(out_dir / "protos"))


def _generated_files(directory: Path) -> list[Path]:
    return [p for p in directory.iterdir() if p.name.endswith(GENERATED_SUFFIXES)]


def check() -> list[str]:
    """Return the names of generated files that differ from the committed ones."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = {p.name: p for p in generate(Path(tmp))}
        committed = {p.name: p for p in _generated_files(PROTO_DIR)}
        stale = []
        for name in sorted(fresh.keys() | committed.keys()):
            if name not in committed:
                stale.append(f"{name} (missing)")
            elif name not in fresh:
                stale.append(f"{name} (no longer generated)")
            elif not filecmp.cmp(fresh[name], committed[name], shallow=False):
                stale.append(f"{name} (differs)")
        return stale


def regenerate() -> None:
    for old in _generated_files(PROTO_DIR):
        old.unlink()
    with tempfile.TemporaryDirectory() as tmp:
        for path in generate(Path(tmp)):
            shutil.copy2(path, PROTO_DIR / path.name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only compare, do not write")
    args = parser.parse_args(argv)
    if not args.check:
        regenerate()
        return 0
    stale = check()
    for name in stale:
        print(f"protos/{name}", file=sys.stderr)
    if stale:
        print("generated code is stale: run python tools/gen_protos.py", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
