"""Memory budget of one process (TensorFlow's allocator limit, for numpy kernels): large
allocations are checked before they happen, so a graph that asks for more memory than
the process may use fails with ResourceExhausted naming the node and the size, instead
of the OOM killer taking the task (and every session on it).

The budget (`--memory-limit` of master and worker; `set_limit`) defaults to a fraction of
the machine's memory or of the cgroup's limit, whichever is lower. Kernels whose output
size comes from input values (Fill, BroadcastTo, Tile, Range, random ops ...) call
`check_allocation` with the node's KernelConstruction before allocating; a check compares
the request with the budget less the process's resident memory now. A
KernelConstruction may carry its own per-allocation cap (`allocation_limit`; constant
folding uses TensorFlow's 10 MB), which applies first.

The limit is process-wide and set once at start-up; checks are safe from any thread.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from common.errors import InvalidArgumentError, ResourceExhaustedError

# Of the machine's (or cgroup's) memory, what a process may use by default.
DEFAULT_FRACTION = 0.8
# Requests below this are not checked (the check reads /proc; small ones cannot matter).
_CHECKED_BYTES = 1 << 20
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def machine_memory() -> int:
    """Bytes of physical memory, or the cgroup's memory limit when that is lower."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(path).read_text().strip()
        except OSError:
            continue
        if text.isdigit():
            total = min(total, int(text))
    return total


def default_limit() -> int:
    return int(machine_memory() * DEFAULT_FRACTION)


_limit = default_limit()


def limit() -> int:
    """This process's budget in bytes."""
    return _limit


def set_limit(nbytes: int) -> None:
    global _limit
    if nbytes <= 0:
        raise InvalidArgumentError(f"memory limit must be positive, got {nbytes}")
    _limit = nbytes


def parse_size(text: str) -> int:
    """'4G', '512M', '1.5GB', '1073741824' -> bytes (binary units)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([KMGT]?)(I?B)?\s*", text.upper())
    if m is None:
        raise ValueError(f"not a size: {text!r} (e.g. 4G, 512M, 1073741824)")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def resident_bytes() -> int:
    """The process's resident set size now."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except OSError:
        return 0


def _shape_str(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


def check_allocation(k: Any, shape: Sequence[int], dtype: Any, what: str = "tensor") -> None:
    """ResourceExhausted (TensorFlow's OOM message, naming the node and the size) if an
    output of `shape` and numpy `dtype` does not fit the node's cap or the process's
    budget. `k`: the node's KernelConstruction (or None outside a graph)."""
    itemsize = 8 if dtype is object else getattr(dtype, "itemsize", None) or 8
    nbytes = math.prod(int(d) for d in shape) * int(itemsize)
    if nbytes < _CHECKED_BYTES:
        return
    cap = getattr(k, "allocation_limit", 0)
    if cap and nbytes > cap:
        reason = f"over this graph's allocation cap of {cap} bytes"
    else:
        free = _limit - resident_bytes()
        if nbytes <= free:
            return
        reason = f"process memory limit {_limit} bytes, {max(free, 0)} bytes free"
    node = getattr(k, "node_name", "") or ""
    device = getattr(k, "device", "") or "CPU"
    type_name = getattr(dtype, "name", str(dtype))
    raise ResourceExhaustedError(
        f"OOM when allocating {what} with shape{_shape_str(shape)} and type {type_name} on "
        f"{device} by allocator cpu: {nbytes} bytes ({reason})",
        node or None,
    )
