"""Client, training: tf.train.Coordinator — stop requests and exception reporting shared
by a training loop's threads (queue runners, loopers), as TensorFlow's coordinator.

Thread-safe: every method may be called from any thread. The first exception reported
through request_stop (other than the clean-stop OutOfRange) is re-raised by join()."""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from typing import Any

from client import errors


class Coordinator:
    def __init__(self, clean_stop_exception_types: Iterable[type] | None = None) -> None:
        if clean_stop_exception_types is None:
            clean_stop_exception_types = (errors.OutOfRangeError,)
        self._clean_stop_exception_types = tuple(clean_stop_exception_types)
        self._lock = threading.Lock()
        self._stop_event = threading.Event()
        self._exc_info_to_raise: Any = None
        self._joined = False
        self._registered_threads: set[threading.Thread] = set()

    def _filter_exception(self, ex: Any) -> Any:
        exc = ex[1] if isinstance(ex, tuple) else ex
        if isinstance(exc, self._clean_stop_exception_types):
            return None
        return ex

    def request_stop(self, ex: Any = None) -> None:
        """Ask every thread to stop; `ex` (an exception or exc_info) is kept for join()."""
        with self._lock:
            ex = self._filter_exception(ex)
            if self._joined:
                if isinstance(ex, tuple):
                    raise ex[1].with_traceback(ex[2])
                if ex is not None:
                    raise ex
            if not self._stop_event.is_set():
                if ex is not None and self._exc_info_to_raise is None:
                    if isinstance(ex, tuple):
                        self._exc_info_to_raise = ex
                    else:
                        self._exc_info_to_raise = (type(ex), ex, ex.__traceback__)
                    if not isinstance(self._exc_info_to_raise[1], BaseException):
                        raise ValueError(
                            f"ex must be a tuple or sys.exc_info must return the current "
                            f"exception: {self._exc_info_to_raise}"
                        )
                self._stop_event.set()

    def clear_stop(self) -> None:
        with self._lock:
            self._joined = False
            self._exc_info_to_raise = None
            self._stop_event.clear()

    def should_stop(self) -> bool:
        return self._stop_event.is_set()

    @contextlib.contextmanager
    def stop_on_exception(self) -> Iterator[None]:
        try:
            yield
        except BaseException:  # as TF's: any exception is reported, then swallowed
            self.request_stop(ex=sys.exc_info())

    def wait_for_stop(self, timeout: float | None = None) -> bool:
        return self._stop_event.wait(timeout)

    def register_thread(self, thread: threading.Thread) -> None:
        with self._lock:
            self._registered_threads.add(thread)

    def join(
        self,
        threads: Iterable[threading.Thread] | None = None,
        stop_grace_period_secs: float = 120,
        ignore_live_threads: bool = False,
    ) -> None:
        """Wait for the threads (the given and the registered ones) after a stop request;
        RuntimeError naming those still alive after the grace period, unless ignored;
        then re-raise the first reported exception."""
        with self._lock:
            threads = set(self._registered_threads) | set(threads or ())
        while any(t.is_alive() for t in threads) and not self.wait_for_stop(1.0):
            pass
        deadline = time.monotonic() + stop_grace_period_secs
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        stragglers = [t.name for t in threads if t.is_alive()]
        with self._lock:
            self._joined = True
            self._registered_threads = set()
            if self._exc_info_to_raise:
                _, value, tb = self._exc_info_to_raise
                raise value.with_traceback(tb)
        if stragglers and not ignore_live_threads:
            raise RuntimeError(
                f"Coordinator stopped with threads still running: {' '.join(stragglers)}"
            )

    @property
    def joined(self) -> bool:
        return self._joined

    def raise_requested_exception(self) -> None:
        with self._lock:
            if self._exc_info_to_raise:
                _, value, tb = self._exc_info_to_raise
                raise value.with_traceback(tb)
