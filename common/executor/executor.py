"""Executor stage, scheduling: runs one registered graph for one step on one device
(TensorFlow's ExecutorImpl / ExecutorState).

A step starts from the root nodes (no inputs) and runs nodes as their pending counts reach
zero. Cheap kernels run inline on the thread that owns the step, in a loop (no recursion,
no thread hop). A kernel registered `expensive` goes to the device thread pool when its
running time estimate (its thread CPU time, sampled) is over EXPENSIVE_THRESHOLD_S, as
TensorFlow's KernelStats decides (until it has been timed it counts as costly), and the
other ready nodes are enough work to overlap it (another costly kernel, or many nodes).
Async kernels (_Recv) complete from whatever thread calls `done`.
One thread at a time owns a step's frame/pending bookkeeping and runs the loop without a
lock; results from other threads (async `done`, pool kernels) are posted to the step's
inbox and taken by the owner between nodes, or by the poster itself when no thread owns
the step (a lock guards only that hand-over). Kernels always run outside any lock. The
first error fails the step: it is attributed to its node, the step (and so its
rendezvous) is aborted, nothing new is scheduled, and `done(error)` is called once the
nodes already running have finished.
`Executor` is immutable after construction (apart from its traced view, built at the
first traced step, and the kernels' time estimates) and may run many steps concurrently.
A traced step runs the same loop over a view whose kernels record NodeExecStats
(common.executor.stats), so an untraced step pays nothing for tracing.
Floating-point errors are silent in every kernel: each scheduling loop (on whatever
thread) runs under one np.errstate(all="ignore") (math_util.FpErrorsIgnored).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from time import thread_time
from typing import Any

import numpy as np

from common import errors
from common.device import Device, thread_pool
from common.errors import (
    DeadlineExceededError,
    InternalError,
    InvalidArgumentError,
    OpError,
)
from common.executor import stats
from common.executor.graph_view import (
    TRIVIAL_CONST,
    TRIVIAL_FORWARD,
    TRIVIAL_LOOP_COND,
    TRIVIAL_NO_OUTPUT,
    TRIVIAL_SWITCH,
    GraphView,
    KernelLookup,
)
from common.executor.propagator import Propagator
from common.executor.step import StepState
from common.graph.graph import Graph
from common.ops.math_util import FpErrorsIgnored
from common.ops.registry import DEAD, FieldwiseOpKernelContext, OpKernelContext

DoneCallback = Callable[["OpError | None"], None]

# Exceptions from numpy kernels that mean "bad input" rather than "bug".
_BAD_INPUT_ERRORS = (
    ValueError,
    TypeError,
    IndexError,
    KeyError,
    ZeroDivisionError,
    OverflowError,
    ArithmeticError,
)

# An `expensive` kernel goes to the thread pool (when other nodes are ready) only while its
# running estimate of time is over this (TensorFlow's KernelStats: kernels are timed and
# cheap ones run inline). The time is the thread's CPU time, which a loaded machine does
# not inflate as it does wall time. A hand-off costs the owner a few microseconds; a kernel
# over the threshold (numpy releases the GIL) then runs beside the owner's Python work,
# which is what keeps a step's wall time down on a shared machine: on the bench's LSTM
# step, a 0.5 ms threshold (every MatMul inline, one busy thread) took 1.5x the wall time
# of this one at the same CPU time.
EXPENSIVE_THRESHOLD_S = 3e-5
# The estimate moves a tenth of the way to each new measurement (TensorFlow's kCostDecay).
_COST_DECAY = 10.0
_TIME_EVERY = 16
# Ready nodes enough to overlap a costly kernel handed to the pool (_worth_overlap).
_OVERLAP_READY = 8

# A trivial Merge's value_index output (np.int32, as its kernel gives), by input.
_INDICES = tuple(np.int32(k) for k in range(64))

# How long run() waits for running kernels after its timeout aborted the step.
_ABORT_GRACE_SECONDS = 10.0


def node_error(node_name: str, exc: BaseException) -> OpError:
    """`exc` as an OpError attributed to `node_name` (TF appends "[[{{node x}}]]")."""
    if isinstance(exc, OpError):
        if exc.node_name is not None:
            return exc
        # A new error: the original may be shared (a rendezvous abort reaches many nodes).
        return errors.from_code(
            exc.code, f"{exc.message}\n\t [[{{{{node {node_name}}}}}]]", node_name
        )
    cls = InvalidArgumentError if isinstance(exc, _BAD_INPUT_ERRORS) else InternalError
    return cls(f"{node_name}: {type(exc).__name__}: {exc}", node_name)


def _bad_outputs(node_name: str, outputs: Any, expected: int) -> InternalError:
    n = len(outputs)
    return InternalError(f"{node_name}: kernel returned {n} outputs, expected {expected}")


def _deref_value(value: Any) -> Any:
    """What a non-ref input sees of a ref-typed value (a TF1 variable): its current value."""
    from common.ops import state_ops

    return state_ops.deref(value)


def _time_this_run(runs: list, i: int) -> bool:
    """Whether to time this run of expensive node i: reading a thread's CPU clock is a
    system call (microseconds), so only the first run and then one in _TIME_EVERY are."""
    k = runs[i]
    runs[i] = k + 1
    return k % _TIME_EVERY == 0


def _update_cost(estimates: list, i: int, seconds: float) -> None:
    """Fold one timing of node i's kernel into its estimate (benign races: any thread)."""
    prev = estimates[i]
    estimates[i] = seconds if prev is None else prev + (seconds - prev) / _COST_DECAY


class Executor:
    """A graph registered on a device, ready to run steps."""

    def __init__(
        self,
        graph: Graph,
        device: Device | str,
        *,
        kernel_factory: KernelLookup | None = None,
        flib: Any = None,
        scope: Any = None,
    ) -> None:
        # kernel_factory(node, device_type) -> registry.KernelDef; default: the registry
        # entry for (node.op, device_type, node's "_kernel" label). `scope`: who registers
        # the graph (KernelConstruction.scope).
        self.graph = graph
        self.device = device if isinstance(device, Device) else Device(device)
        self.view = GraphView(
            graph,
            self.device.name,
            self.device.device_type,
            kernel_factory,
            flib if flib is not None else graph.flib,
            scope,
            allocation_limit=self.device.allocation_limit,
        )
        self._traced: GraphView | None = None  # built at the first traced step

    def traced_view(self) -> GraphView:
        """The view traced steps run over (common.executor.stats); built once. Two first
        traced steps racing may both build it: either copy serves."""
        traced = self._traced
        if traced is None:
            traced = self._traced = stats.traced_view(self.view)
        return traced

    def run_async(self, step: StepState, done: DoneCallback) -> None:
        """Run one step; `done(None)` or `done(error)` is called exactly once (possibly
        before this returns, possibly from another thread). A traced step (step.stats
        set) runs over the traced view: the choice is made here, once per step."""
        view = self.view if step.stats is None else self.traced_view()
        _ExecutorState(view, step, done).start()

    def run(self, step: StepState, *, timeout: float | None = None) -> None:
        """Run one step on this thread; raise the step's first error."""
        # A held lock that `done` releases: a one-shot event at a tenth of a
        # threading.Event's cost to make, and a step run inline has finished (released it)
        # before run_async returns.
        finished = threading.Lock()
        finished.acquire()
        result: list[OpError | None] = []

        def done(error: OpError | None) -> None:
            result.append(error)
            finished.release()

        self.run_async(step, done)
        if result:  # finished inline, the common case: no wait
            if result[0] is not None:
                raise result[0]
            return
        if not finished.acquire(timeout=-1 if timeout is None else max(0.0, timeout)):
            step.abort(
                DeadlineExceededError(
                    f"Step {step.step_id} on {self.device.name} timed out after {timeout}s"
                )
            )
            if not finished.acquire(timeout=_ABORT_GRACE_SECONDS):
                error = step.abort_error
                assert error is not None  # set by the abort above, or by an earlier one
                raise error
        if result[0] is not None:
            raise result[0]


class _ExecutorState:
    """One step of one executor (TensorFlow's ExecutorState).

    One thread at a time owns the step's scheduling state (ready queue, frames, pending
    counts, `outstanding`): the owner runs the hot loop without a lock. Any other thread
    with a result (an async kernel's `done`, an expensive kernel run on the pool) posts
    it to `inbox`; the owner takes it between nodes, or, when no thread owns the step,
    the poster becomes the owner. `lock` guards only the hand-over of ownership."""

    def __init__(self, view: GraphView, step: StepState, done: DoneCallback) -> None:
        self.view = view
        self.step = step
        self.done = done
        self.lock = threading.Lock()
        self.prop = Propagator(view)
        self.outstanding = 0  # nodes ready or running, over all frames (owner only)
        self.error: OpError | None = None
        self.finished = False
        self.inbox: deque = deque()  # (tagged, outputs, error) from other threads
        self.owned = True  # the thread calling start() owns the step

    def start(self) -> None:
        root = self.prop.root
        it0 = root.iterations[0]
        ready: deque = deque()
        append = ready.append
        for i in self.view.roots:
            append((i, root, it0, False))
        it0.outstanding_ops = self.outstanding = len(ready)
        if not ready:
            self._finish()
            return
        self.process(ready)

    # -- the hot loop ------------------------------------------------------------------------
    def process(self, ready: deque) -> None:
        """Run ready nodes (and posted results) until none is left; then give up ownership
        unless a result arrived meanwhile. Called by the owner."""
        try:
            with FpErrorsIgnored():  # for every kernel run inline here (see math_util)
                while True:
                    self._process(ready)
                    if self.finished:
                        return
                    with self.lock:
                        if not self.inbox:
                            self.owned = False
                            return
        except BaseException as e:  # noqa: BLE001  (an executor bug: fail, never hang)
            self._fail_hard(e)

    def _post(self, item: tuple) -> None:
        """A result from a thread that may not own the step (see the class docstring)."""
        self.inbox.append(item)
        with self.lock:
            if self.owned or self.finished:
                return  # the owner takes it before giving up ownership
            self.owned = True
        self.process(deque())

    def _process(self, ready: deque) -> None:
        view, step, inbox = self.view, self.step, self.inbox
        # One tuple unpacked instead of a dozen attribute lookups: this runs every step.
        plans, is_async, expensive, run_dead, deref, fast, out_edges, ctrl_out, consts, cost = (
            view.loop_tables
        )
        propagate, cleanup = self.prop.propagate, self.prop.cleanup_iterations
        np_bool, ndarray, costly = np.bool_, np.ndarray, self._costly
        outputs: Any  # a kernel's list, or a trivial node's tuple; None when dead
        popleft, append = ready.popleft, ready.append
        deref_value, context, new_context = _deref_value, OpKernelContext, FieldwiseOpKernelContext
        outstanding = self.outstanding
        while True:
            if inbox:
                self.outstanding = outstanding
                self._take_posted(ready)
                outstanding = self.outstanding
                if outstanding == 0:
                    self._finish()
                    return
            if not ready:
                break
            if step.abort_error is not None:  # set by our own failures too (_node_failed)
                self._note_abort()
                outstanding -= len(ready)
                ready.clear()
                if outstanding == 0:
                    self.outstanding = 0
                    self._finish()
                    return
                continue  # results of nodes still running elsewhere may be posted
            tagged = popleft()
            i, frame, it, is_dead = tagged
            t, plain, s, e, compute, n_out, name, nones, edge = plans[i]
            if is_dead:
                t = 0
            elif t:  # bookkeeping: the registered kernel's work, done here
                slots = it.inputs
                if t == TRIVIAL_FORWARD:
                    outputs = (slots[s],)
                    slots[s] = None
                elif t == TRIVIAL_CONST:
                    outputs = consts[i]
                elif t == TRIVIAL_NO_OUTPUT:
                    outputs = ()
                elif t == TRIVIAL_SWITCH:
                    pred = slots[s + 1]
                    if type(pred) is np_bool:
                        data = slots[s]
                        slots[s] = slots[s + 1] = None
                        outputs = (DEAD, data) if pred else (data, DEAD)
                    else:
                        t = 0  # the kernel checks the predicate and reports a bad one
                elif t == TRIVIAL_LOOP_COND:
                    pred = slots[s]
                    if type(pred) is np_bool or (type(pred) is ndarray and not pred.ndim):
                        outputs = (pred,)
                        slots[s] = None
                    else:
                        t = 0  # the kernel reports a predicate that is not a scalar
                else:  # TRIVIAL_MERGE: its first live input, and that input's index
                    k = s
                    while k < e and slots[k] is DEAD:
                        k += 1
                    if k < e and k - s < len(_INDICES):
                        outputs = (slots[k], _INDICES[k - s])
                        slots[s:e] = nones
                    else:
                        t = 0  # the kernel reports it
            if not t:
                if plain and not is_dead:  # the common case, kept short
                    ctx = new_context()
                    ctx.step, ctx.frame_iter, ctx.node_name = step, it.frame_iter, name
                    slots = it.inputs
                    try:
                        outputs = compute(ctx, slots[s:e])
                        if len(outputs) != n_out:
                            raise _bad_outputs(name, outputs, n_out)
                    except BaseException as exc:  # noqa: BLE001  (any kernel failure fails the node)
                        self._node_failed(i, exc)
                        outstanding -= 1
                        if outstanding == 0:
                            self.outstanding = 0
                            self._finish()
                            return
                        continue
                    slots[s:e] = nones  # the inputs are consumed: drop the step's references
                elif is_dead and not run_dead[i]:
                    outputs = None
                else:
                    slots = it.inputs
                    inputs = slots[s:e]
                    slots[s:e] = nones  # consumed (see above)
                    if is_dead:
                        inputs = [DEAD] * len(inputs)
                    elif deref[i]:
                        for k in deref[i]:
                            inputs[k] = deref_value(inputs[k])
                    ctx = context(step, it.frame_iter, name)
                    if is_async[i]:
                        self._start_async(tagged, ctx, inputs)
                        continue
                    timed = False
                    if expensive[i]:
                        if ready and costly(i) and self._worth_overlap(ready):
                            thread_pool().submit(self._run_on_pool, tagged, ctx, inputs)
                            continue
                        timed = _time_this_run(view.timed_runs, i)
                        if timed:
                            t0 = thread_time()
                    try:
                        outputs = compute(ctx, inputs)
                        if len(outputs) != n_out:
                            raise _bad_outputs(name, outputs, n_out)
                    except BaseException as exc:  # noqa: BLE001  (any kernel failure fails the node)
                        self._node_failed(i, exc)
                        outstanding -= 1
                        if outstanding == 0:
                            self.outstanding = 0
                            self._finish()
                            return
                        continue
                    if timed:
                        _update_cost(cost, i, thread_time() - t0)
                    if is_dead:
                        outputs = None
            if edge is not None:  # propagate() inlined: one plain consumer, one edge
                slot, dst, loc, pid = edge
                v = DEAD if outputs is None else outputs[slot]
                it.inputs[loc] = v
                deadc = it.dead
                if v is DEAD:
                    deadc[pid] += 1
                pend = it.pending
                c = pend[pid] - 1
                pend[pid] = c
                if c == 0:
                    append((dst, frame, it, deadc[pid] > 0))
                else:  # Propagator.adjust(frame, it, -1) inlined
                    ops = it.outstanding_ops - 1
                    it.outstanding_ops = ops
                    outstanding -= 1
                    if ops == 0:  # retiring the iteration may start a deferred one
                        before = len(ready)
                        cleanup(frame, it, ready)
                        outstanding += len(ready) - before
            elif fast[i]:  # propagate() inlined for plain nodes with plain consumers
                pend, deadc, slots = it.pending, it.dead, it.inputs
                n = 0
                for slot, dst, loc, pid in out_edges[i]:
                    v = DEAD if outputs is None else outputs[slot]
                    slots[loc] = v
                    if v is DEAD:
                        deadc[pid] += 1
                    c = pend[pid] - 1
                    pend[pid] = c
                    if c == 0:
                        append((dst, frame, it, deadc[pid] > 0))
                        n += 1
                for dst, pid in ctrl_out[i]:
                    if is_dead:
                        deadc[pid] += 1
                    c = pend[pid] - 1
                    pend[pid] = c
                    if c == 0:
                        append((dst, frame, it, deadc[pid] > 0))
                        n += 1
                if n != 1:  # Propagator.adjust(frame, it, n - 1) inlined
                    ops = it.outstanding_ops + n - 1
                    it.outstanding_ops = ops
                    if ops == 0:
                        before = len(ready)
                        cleanup(frame, it, ready)
                        n += len(ready) - before
                outstanding += n - 1
            else:
                before = len(ready)
                propagate(i, frame, it, is_dead, outputs, ready)
                outstanding += len(ready) - before - 1
            if outstanding == 0:
                self.outstanding = 0
                self._finish()
                return
        self.outstanding = outstanding

    # -- kernels off the owner's thread ----------------------------------------------------
    def _costly(self, i: int) -> bool:
        """Whether expensive node i is worth a hand-off to the pool (TensorFlow's
        KernelStats::IsExpensive): until it has been timed, or when its estimate is over
        the threshold."""
        estimate = self.view.cost_estimates[i]
        return estimate is None or estimate > EXPENSIVE_THRESHOLD_S

    def _worth_overlap(self, ready: deque) -> bool:
        """Whether the ready nodes are enough work to overlap a costly kernel run on the
        pool: another costly kernel (the two then run at once, numpy releasing the GIL), or
        at least _OVERLAP_READY nodes. A hand-off to overlap a few cheap nodes cost more
        than it saved: the pool thread's wake-up, the GIL passing back and forth and the
        step changing owner (bench LSTM step: 257 hand-offs, mostly with 1-3 cheap nodes
        ready, took ~20% more CPU than running those kernels inline)."""
        if len(ready) >= _OVERLAP_READY:
            return True
        expensive, costly = self.view.expensive, self._costly
        for tagged in ready:
            k = tagged[0]
            if expensive[k] and costly(k):
                return True
        return False

    def _run_on_pool(self, tagged: tuple, ctx: OpKernelContext, inputs: list) -> None:
        i = tagged[0]
        view = self.view
        try:
            with FpErrorsIgnored():
                timed = _time_this_run(view.timed_runs, i)
                t0 = thread_time() if timed else 0.0
                outputs = view.computes[i](ctx, inputs)
                if timed:
                    _update_cost(view.cost_estimates, i, thread_time() - t0)
            if len(outputs) != view.num_outputs[i]:
                raise _bad_outputs(view.names[i], outputs, view.num_outputs[i])
            item: tuple = (tagged, outputs, None)
        except BaseException as e:  # noqa: BLE001  (any kernel failure fails the node)
            item = (tagged, None, e)
        try:
            self._post(item)
        except BaseException as e:  # noqa: BLE001  (an executor bug: fail, never hang)
            self._fail_hard(e)

    def _start_async(self, tagged: tuple, ctx: OpKernelContext, inputs: list) -> None:
        """Start an async kernel; its `done` posts the result (maybe before this returns:
        the owner then takes it at once)."""

        def done(outputs: list | None, error: BaseException | None = None) -> None:
            try:
                self._post((tagged, outputs, error))
            except BaseException as e:  # noqa: BLE001  (an executor bug: fail, never hang)
                self._fail_hard(e)

        try:
            self.view.computes[tagged[0]](ctx, inputs, done)
        except BaseException as e:  # noqa: BLE001  (any kernel failure fails the node)
            done(None, e)

    def _take_posted(self, ready: deque) -> None:
        """Owner: complete every posted result (consumers go to `ready`)."""
        inbox, view = self.inbox, self.view
        while inbox:
            tagged, outputs, error = inbox.popleft()
            i, frame, it, is_dead = tagged
            if error is None and (outputs is None or len(outputs) != view.num_outputs[i]):
                error = InternalError(f"{view.names[i]}: async kernel returned bad outputs")
            self.outstanding -= 1
            if error is not None:
                self._node_failed(i, error)
                continue
            if self.step.abort_error is not None:
                self._note_abort()
                continue  # a failed step schedules nothing new
            before = len(ready)
            self.prop.propagate(i, frame, it, is_dead, None if is_dead else outputs, ready)
            self.outstanding += len(ready) - before

    # -- errors and the end of the step ----------------------------------------------------
    def _node_failed(self, i: int, exc: BaseException) -> None:
        """Node i failed (the caller has counted it done): the first error fails the step."""
        err = node_error(self.view.names[i], exc)
        with self.lock:
            first = self.error is None
            if first:
                self.error = err
        if first:
            self.step.abort(err)  # peers (other partitions of the step) fail fast

    def _note_abort(self) -> None:
        """The step was aborted (by a peer, a deadline or our own failure): that is its error."""
        with self.lock:
            if self.error is None:
                self.error = self.step.abort_error

    def _fail_hard(self, exc: BaseException) -> None:
        err = (
            exc
            if isinstance(exc, OpError)
            else InternalError(
                f"Executor failure on {self.step.device}: {type(exc).__name__}: {exc}"
            )
        )
        with self.lock:
            if self.error is None:
                self.error = err
        self.step.abort(err)
        self._finish()

    def _finish(self) -> None:
        with self.lock:
            if self.finished:
                return
            self.finished = True
            error = self.error
        self.done(error)
