"""Client, training: tf.train.SessionRunHook and the values passed around one
MonitoredSession.run (SessionRunArgs, SessionRunContext, SessionRunValues)."""

from __future__ import annotations

import collections
from typing import Any


class SessionRunHook:
    """Hook into a MonitoredSession: begin, after_create_session, before_run, after_run,
    end. Every method is optional."""

    def begin(self) -> None:
        pass

    def after_create_session(self, session: Any, coord: Any) -> None:
        pass

    def before_run(self, run_context: SessionRunContext) -> Any:
        return None

    def after_run(self, run_context: SessionRunContext, run_values: SessionRunValues) -> None:
        pass

    def end(self, session: Any) -> None:
        pass


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict", "options"])):
    """What a hook adds to a run: fetches (any fetch structure), feeds, RunOptions."""

    def __new__(cls, fetches: Any, feed_dict: Any = None, options: Any = None) -> SessionRunArgs:
        return super().__new__(cls, fetches, feed_dict, options)


class SessionRunContext:
    """The run being made (its original args and the session); a hook may stop the loop."""

    def __init__(self, original_args: SessionRunArgs, session: Any) -> None:
        self._original_args = original_args
        self._session = session
        self._stop_requested = False

    original_args = property(lambda self: self._original_args)
    session = property(lambda self: self._session)
    stop_requested = property(lambda self: self._stop_requested)

    def request_stop(self) -> None:
        self._stop_requested = True


class SessionRunValues(
    collections.namedtuple("SessionRunValues", ["results", "options", "run_metadata"])
):
    """The results of a hook's fetches (same structure), the options and metadata."""
