"""Client, training: TF1's standard hooks — StopAtStepHook, NanTensorHook,
LoggingTensorHook, CheckpointSaverHook, SummarySaverHook, StepCounterHook — and the
timers that trigger them every N steps or seconds (SecondOrStepTimer)."""

from __future__ import annotations

import logging
import os
import time
from typing import Any

import numpy as np

from client.framework import ops as _ops
from client.training import training_util
from client.training.session_run_hook import SessionRunArgs, SessionRunHook

_LOG = logging.getLogger("tensorflow")


class NanLossDuringTrainingError(RuntimeError):
    def __str__(self) -> str:
        return "NaN loss during training."


class SecondOrStepTimer:
    """Triggers every `every_secs` seconds or `every_steps` steps (exactly one set)."""

    def __init__(self, every_secs: float | None = None, every_steps: int | None = None) -> None:
        if (every_secs is None) == (every_steps is None):
            raise ValueError("exactly one of every_secs and every_steps should be provided.")
        self._every_secs, self._every_steps = every_secs, every_steps
        self.reset()

    def reset(self) -> None:
        self._last_time: float | None = None
        self._last_step: int | None = None

    def should_trigger_for_step(self, step: int) -> bool:
        if self._last_step is None:
            return True
        if self._last_step == step:
            return False
        if self._every_secs is not None:
            assert self._last_time is not None
            return time.time() >= self._last_time + self._every_secs
        assert self._every_steps is not None
        return step >= self._last_step + self._every_steps

    def update_last_triggered_step(self, step: int) -> tuple[float | None, int | None]:
        """(seconds, steps) since the last trigger, (None, None) the first time."""
        now = time.time()
        last_time, last_step = self._last_time, self._last_step
        self._last_time, self._last_step = now, step
        if last_time is None or last_step is None:
            return None, None
        return now - last_time, step - last_step

    def last_triggered_step(self) -> int | None:
        return self._last_step


def _global_step_tensor() -> Any:
    gs = training_util.get_global_step()
    if gs is None:
        raise RuntimeError("Global step should be created to use this hook.")
    return gs


class StopAtStepHook(SessionRunHook):
    """Requests a stop once the global step reaches last_step (or start + num_steps)."""

    def __init__(self, num_steps: int | None = None, last_step: int | None = None) -> None:
        if num_steps is None and last_step is None:
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and last_step is not None:
            raise ValueError("Only one of num_steps or last_step can be specified.")
        self._num_steps, self._last_step = num_steps, last_step

    def begin(self) -> None:
        self._global_step_tensor = _global_step_tensor()

    def after_create_session(self, session: Any, coord: Any) -> None:
        if self._last_step is None:
            assert self._num_steps is not None  # one of the two, checked in __init__
            self._last_step = int(session.run(self._global_step_tensor)) + self._num_steps

    def before_run(self, run_context: Any) -> Any:
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        last = self._last_step
        assert last is not None  # set by after_create_session
        # Near the end, read the step again: other workers may have moved it on.
        if int(run_values.results) + 1 >= last and (
            int(run_context.session.run(self._global_step_tensor)) >= last
        ):
            run_context.request_stop()


class NanTensorHook(SessionRunHook):
    def __init__(self, loss_tensor: Any, fail_on_nan_loss: bool = True) -> None:
        self._loss_tensor, self._fail_on_nan_loss = loss_tensor, fail_on_nan_loss

    def before_run(self, run_context: Any) -> Any:
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        if np.isnan(run_values.results):
            message = "Model diverged with loss = NaN."
            if self._fail_on_nan_loss:
                _LOG.error(message)
                raise NanLossDuringTrainingError
            _LOG.warning(message)
            run_context.request_stop()


class LoggingTensorHook(SessionRunHook):
    """Logs the values of `tensors` (a list of tensors/names or a dict tag -> tensor)
    every N iterations or seconds, and at the end if asked."""

    def __init__(
        self,
        tensors: Any,
        every_n_iter: int | None = None,
        every_n_secs: float | None = None,
        at_end: bool = False,
        formatter: Any = None,
    ) -> None:
        only_log_at_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_log_at_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError(
                "either at_end and/or exactly one of every_n_iter and every_n_secs must be "
                "provided."
            )
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            self._tag_order = [getattr(t, "name", t) for t in tensors]
            tensors = {getattr(t, "name", t): t for t in tensors}
        else:
            self._tag_order = sorted(tensors)
        self._tensors = tensors
        self._formatter = formatter
        self._log_at_end = at_end
        self._timer = None if only_log_at_end else SecondOrStepTimer(every_n_secs, every_n_iter)

    def begin(self) -> None:
        if self._timer:
            self._timer.reset()
        self._iter_count = 0
        g = _ops.get_default_graph()
        self._current_tensors = {
            tag: g.as_graph_element(t) if isinstance(t, str) else t
            for tag, t in self._tensors.items()
        }

    def before_run(self, run_context: Any) -> Any:
        self._should_trigger = bool(
            self._timer and self._timer.should_trigger_for_step(self._iter_count)
        )
        return SessionRunArgs(self._current_tensors) if self._should_trigger else None

    def _log_tensors(self, values: dict) -> None:
        if self._formatter:
            _LOG.info(self._formatter(values))
        else:
            np.set_printoptions(suppress=True)
            _LOG.info(", ".join(f"{tag} = {values[tag]}" for tag in self._tag_order))

    def after_run(self, run_context: Any, run_values: Any) -> None:
        if self._should_trigger:
            assert self._timer is not None
            self._timer.update_last_triggered_step(self._iter_count)
            self._log_tensors(run_values.results)
        self._iter_count += 1

    def end(self, session: Any) -> None:
        if self._log_at_end:
            self._log_tensors(session.run(self._current_tensors))


class StepCounterHook(SessionRunHook):
    """Logs global steps per second every N steps (and writes it as a summary)."""

    def __init__(
        self,
        every_n_steps: int = 100,
        every_n_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: Any = None,
    ) -> None:
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_n_secs, every_n_steps)

    def begin(self) -> None:
        self._global_step_tensor = _global_step_tensor()

    def before_run(self, run_context: Any) -> Any:
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        step = int(run_values.results)
        if self._timer.should_trigger_for_step(step):
            secs, steps = self._timer.update_last_triggered_step(step)
            if secs and steps:
                _LOG.info("global_step/sec: %g", steps / secs)


class CheckpointSaverHook(SessionRunHook):
    """Saves a checkpoint when the session is created, every N steps or seconds, and
    at the end (into checkpoint_dir/model.ckpt-<global step>)."""

    def __init__(
        self,
        checkpoint_dir: str,
        save_secs: float | None = None,
        save_steps: int | None = None,
        saver: Any = None,
        checkpoint_basename: str = "model.ckpt",
        scaffold: Any = None,
        listeners: Any = None,
        save_graph_def: bool = True,
    ) -> None:
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver, self._scaffold = saver, scaffold
        self._checkpoint_dir = checkpoint_dir
        self._save_path = os.path.join(checkpoint_dir, checkpoint_basename)
        self._timer = SecondOrStepTimer(save_secs, save_steps)
        self._listeners = list(listeners or [])

    def begin(self) -> None:
        self._global_step_tensor = _global_step_tensor()
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session: Any, coord: Any) -> None:
        step = int(session.run(self._global_step_tensor))
        self._save(session, step)
        self._timer.update_last_triggered_step(step)

    def before_run(self, run_context: Any) -> Any:
        return SessionRunArgs(self._global_step_tensor)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        stale = int(run_values.results)
        if self._timer.should_trigger_for_step(stale + 1):
            step = int(run_context.session.run(self._global_step_tensor))
            if self._timer.should_trigger_for_step(step):
                self._timer.update_last_triggered_step(step)
                if self._save(run_context.session, step):
                    run_context.request_stop()

    def end(self, session: Any) -> None:
        step = int(session.run(self._global_step_tensor))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _get_saver(self) -> Any:
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        from client.training.saver import Saver

        savers = _ops.get_collection("savers")
        if savers:
            return savers[0]
        self._saver = Saver()
        return self._saver

    def _save(self, session: Any, step: int) -> bool:
        """Save; True when a listener asks to stop."""
        for listener in self._listeners:
            listener.before_save(session, step)
        self._get_saver().save(session, self._save_path, global_step=step)
        return any(bool(listener.after_save(session, step)) for listener in self._listeners)


class SummarySaverHook(SessionRunHook):
    """Runs the summary op every N steps or seconds and writes the result."""

    def __init__(
        self,
        save_steps: int | None = None,
        save_secs: float | None = None,
        output_dir: str | None = None,
        summary_writer: Any = None,
        scaffold: Any = None,
        summary_op: Any = None,
    ) -> None:
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op, self._scaffold = summary_op, scaffold
        self._output_dir, self._summary_writer = output_dir, summary_writer
        self._timer = SecondOrStepTimer(save_secs, save_steps)

    def begin(self) -> None:
        if self._summary_writer is None and self._output_dir:
            from client.summary import FileWriter

            self._summary_writer = FileWriter(self._output_dir)
        self._next_step: int | None = None
        self._global_step_tensor = _global_step_tensor()

    def _op(self) -> Any:
        return self._scaffold.summary_op if self._scaffold is not None else self._summary_op

    def before_run(self, run_context: Any) -> Any:
        self._request_summary = self._next_step is None or self._timer.should_trigger_for_step(
            self._next_step
        )
        requests: dict[str, Any] = {"global_step": self._global_step_tensor}
        if self._request_summary and self._op() is not None:
            requests["summary"] = self._op()
        return SessionRunArgs(requests)

    def after_run(self, run_context: Any, run_values: Any) -> None:
        if not self._summary_writer:
            return
        stale = int(run_values.results["global_step"])
        step = stale + 1
        if self._next_step is None or self._request_summary:
            step = int(run_context.session.run(self._global_step_tensor))
        if self._next_step is None:
            from protos.event_pb2 import SessionLog

            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), step)
        if self._request_summary:
            self._timer.update_last_triggered_step(step)
            if "summary" in run_values.results:
                self._summary_writer.add_summary(run_values.results["summary"], step)
        self._next_step = step + 1

    def end(self, session: Any = None) -> None:
        if self._summary_writer:
            self._summary_writer.flush()
