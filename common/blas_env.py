"""Process set-up, BLAS: how numpy's OpenBLAS runs in our processes. `configure()` must run
before numpy is imported (OpenBLAS reads its environment once, when it loads), so this
module imports nothing heavy; the command-line entry points call it first.

- `single_thread=True` (workers): BLAS runs single-threaded unless OPENBLAS_NUM_THREADS /
  OMP_NUM_THREADS / MKL_NUM_THREADS say otherwise. The executor already runs expensive
  kernels in parallel and splits a large MatMul by rows over its compute pool, and
  OpenBLAS's spinning threads on top of that made a loaded 2-core machine's MLP step 5x
  slower (bench mlp_step_ms: ~160-215 ms with 2 BLAS threads, ~32-38 ms with 1).
- Kernels for the CPU: OpenBLAS picks its kernels from CPUID, and where a virtual machine
  hides the CPU model (seen here: an AVX-512 AMD EPYC) it falls back to its Haswell (AVX2)
  kernels: a 256x1024 @ 1024x1024 float32 MatMul took 4.4 ms instead of 2.5 ms with the
  SkylakeX (AVX-512) ones. When /proc/cpuinfo lists every AVX-512 subset those kernels
  use (Linux lists them only when the OS saves their register state) and neither
  OPENBLAS_CORETYPE nor FLOWRT_BLAS_CORETYPE=keep says otherwise, OPENBLAS_CORETYPE is
  set to SkylakeX.
"""

from __future__ import annotations

import os

THREAD_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
AVX512_FOR_SKYLAKEX = frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})


def cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> frozenset[str]:
    """The first processor's flags (empty when unknown)."""
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.split(":", 1)[1].split())
    except OSError:
        pass
    return frozenset()


def coretype_for(flags: frozenset[str]) -> str | None:
    """The OPENBLAS_CORETYPE to force for these CPU flags, or None (let OpenBLAS pick)."""
    return "SkylakeX" if AVX512_FOR_SKYLAKEX.issubset(flags) else None


def configure(single_thread: bool = False, cpuinfo: str = "/proc/cpuinfo") -> dict[str, str]:
    """Set the BLAS environment of this process (see the module docstring); returns what
    it set."""
    chosen: dict[str, str] = {}
    if single_thread:
        for var in THREAD_VARS:
            if var not in os.environ:
                chosen[var] = "1"
    if "OPENBLAS_CORETYPE" not in os.environ and os.environ.get("FLOWRT_BLAS_CORETYPE") != "keep":
        core = coretype_for(cpu_flags(cpuinfo))
        if core is not None:
            chosen["OPENBLAS_CORETYPE"] = core
    os.environ.update(chosen)
    return chosen
