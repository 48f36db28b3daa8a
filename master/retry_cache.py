"""Master, RunStep de-duplication (TensorFlow's RecentRequestIds, with answers): a retried
request shares the step its first copy started.

TensorFlow's client re-sends an identical RunStepRequest (same request_id) when a call
fails with UNAVAILABLE; the master must not run that step twice. Entries are keyed by
(session handle, request id): ids are drawn by each client, so two clients (or two
sessions of one client) may draw the same id, and neither may ever see the other's
answer. An entry remembers a fingerprint of the request; a replayed id whose request
differs is an InvalidArgument, never the other request's result.

Thread-safe: one lock guards the table; waiting on an entry happens outside it.
"""

from __future__ import annotations

import collections
import concurrent.futures
import hashlib
import threading
from collections.abc import Sequence
from typing import Any

from common.errors import InvalidArgumentError
from rpc import wire

# Remembered answers (the newest ones); a retry arrives within seconds of its first copy.
DEFAULT_ENTRIES = 256
# Feeds up to this size enter the fingerprint whole; larger ones by dtype, shape and size
# (hashing a 1 GB feed would cost the master a copy of it and about a second).
_HASHED_FEED_BYTES = 16 << 20

Key = tuple[str, int]


def fingerprint(
    feeds: Sequence[tuple[str, wire.Tensor]],
    fetches: Sequence[str],
    targets: Sequence[str],
    options: Any,
    partial_run_handle: str,
) -> bytes:
    """A digest of what a RunStep asks for (everything but its request id)."""
    h = hashlib.blake2b(digest_size=16)

    def put(part: bytes | str) -> None:
        data = part.encode() if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)

    for name in fetches:
        put("f:" + name)
    for name in targets:
        put("t:" + name)
    put("p:" + partial_run_handle)
    put(options.SerializeToString(deterministic=True) if options is not None else b"")
    for name, tensor in feeds:
        put("x:" + name)
        if tensor.ByteSize() > _HASHED_FEED_BYTES:
            put(tensor.tensor_shape.SerializeToString(deterministic=True))
            put(f"{tensor.dtype}:{tensor.ByteSize()}")
        elif isinstance(tensor, wire.SplitTensor):  # as serialized: header, then content
            put(b"".join(memoryview(p).cast("B") for p in tensor.parts()))
        else:
            put(tensor.SerializeToString(deterministic=True))
    return h.digest()


class RetryCache:
    """The newest `entries` RunStep answers, by (session handle, request id)."""

    def __init__(self, entries: int = DEFAULT_ENTRIES) -> None:
        self._entries = entries
        self._lock = threading.Lock()
        self._steps: collections.OrderedDict[Key, tuple[bytes, concurrent.futures.Future]] = (
            collections.OrderedDict()
        )

    def claim(self, key: Key, digest: bytes) -> tuple[concurrent.futures.Future, bool]:
        """(the future of the step for `key`, whether the caller owns it and must run
        the step and settle the future). InvalidArgument when `key` was used for a
        different request."""
        with self._lock:
            entry = self._steps.get(key)
            if entry is not None:
                if entry[0] != digest:
                    raise InvalidArgumentError(
                        f"RunStep request_id {key[1]} was already used in session "
                        f"{key[0]} for a different request"
                    )
                return entry[1], False
            future: concurrent.futures.Future = concurrent.futures.Future()
            self._steps[key] = (digest, future)
            while len(self._steps) > self._entries:
                self._steps.popitem(last=False)
            return future, True

    def forget_session(self, handle: str) -> None:
        """Drop a closed session's answers (they hold its fetched tensors)."""
        with self._lock:
            for key in [k for k in self._steps if k[0] == handle]:
                del self._steps[key]
