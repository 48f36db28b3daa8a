"""Process set-up for BLAS (common.blas_env): which OpenBLAS kernels and thread count our
command-line processes ask for, from the CPU's flags and the environment."""

from __future__ import annotations

import os

import pytest

from common import blas_env

FULL = "fpu sse2 avx2 fma avx512f avx512cd avx512bw avx512dq avx512vl avx512ifma"


ORIGINAL_ENV = dict(os.environ)  # at collection, before any test of this file ran


def _cpuinfo(tmp_path, flags: str) -> str:
    path = tmp_path / "cpuinfo"
    path.write_text(
        f"processor\t: 0\nmodel name\t: AMD EPYC\nflags\t\t: {flags}\n\n"
        f"processor\t: 1\nflags\t\t: {flags}\n"
    )
    return str(path)


@pytest.fixture
def clean_env(monkeypatch):
    # setenv first so that monkeypatch restores each variable's state, absence included:
    # delenv(raising=False) of an absent variable records nothing, and what configure()
    # then sets (OPENBLAS_CORETYPE=SkylakeX) leaked into every process spawned later in
    # the run, which on a CPU without AVX-512 died of SIGILL in OpenBLAS.
    for var in (*blas_env.THREAD_VARS, "OPENBLAS_CORETYPE", "FLOWRT_BLAS_CORETYPE"):
        monkeypatch.setenv(var, "")
        monkeypatch.delenv(var)
    return monkeypatch


def test_cpu_flags_are_read_from_the_first_processor(tmp_path):
    flags = blas_env.cpu_flags(_cpuinfo(tmp_path, FULL))
    assert "avx512vl" in flags and "sse2" in flags and len(flags) == 10
    assert blas_env.cpu_flags(str(tmp_path / "missing")) == frozenset()


@pytest.mark.parametrize(
    "flags, core",
    [
        (FULL, "SkylakeX"),
        (FULL.replace(" avx512vl", ""), None),
        ("sse2 avx2 fma", None),
        ("", None),
    ],
    ids=["all-avx512", "no-vl", "avx2-only", "unknown"],
)
def test_skylakex_kernels_only_with_every_subset_they_use(flags, core):
    assert blas_env.coretype_for(frozenset(flags.split())) == core


def test_configure_sets_kernels_and_single_thread(tmp_path, clean_env):
    chosen = blas_env.configure(single_thread=True, cpuinfo=_cpuinfo(tmp_path, FULL))
    assert chosen == {
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_CORETYPE": "SkylakeX",
    }
    assert os.environ["OPENBLAS_CORETYPE"] == "SkylakeX"


def test_configure_keeps_what_the_environment_says(tmp_path, clean_env):
    clean_env.setenv("OPENBLAS_CORETYPE", "Haswell")
    clean_env.setenv("OMP_NUM_THREADS", "4")
    chosen = blas_env.configure(single_thread=True, cpuinfo=_cpuinfo(tmp_path, FULL))
    assert chosen == {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    assert os.environ["OPENBLAS_CORETYPE"] == "Haswell" and os.environ["OMP_NUM_THREADS"] == "4"


def test_keep_switch_and_avx2_machines_leave_the_kernels_to_openblas(tmp_path, clean_env):
    clean_env.setenv("FLOWRT_BLAS_CORETYPE", "keep")
    assert blas_env.configure(cpuinfo=_cpuinfo(tmp_path, FULL)) == {}
    clean_env.delenv("FLOWRT_BLAS_CORETYPE")
    assert blas_env.configure(cpuinfo=_cpuinfo(tmp_path, "sse2 avx2")) == {}
    assert "OPENBLAS_CORETYPE" not in os.environ


def test_configure_leaves_no_variable_behind_after_the_test():
    """Runs after the tests above (file order): none of them may leave the BLAS variables
    they had configure() set in this process's environment."""
    for var in ("OPENBLAS_CORETYPE", "FLOWRT_BLAS_CORETYPE"):
        assert os.environ.get(var) == ORIGINAL_ENV.get(var), var
