"""Executor stage, propagation: frames, iterations and the pending counts that make nodes
ready (TensorFlow's PropagatorState).

Every node runs in a (frame, iteration). The root frame has one iteration; Enter creates
(or finds) a child frame instance, NextIteration moves a value to iteration i+1 (creating
it, or deferring it while `parallel_iterations` iterations are live), Exit hands a live
value to the parent frame and parks a dead one until the frame is done. Each iteration
owns its pending counters, dead counters and input slots, all laid out per frame by
GraphView. Dead values propagate as in TensorFlow: a node with a dead input is dead (not
run) except Merge (ready on its first live data input, dead once every data input is),
transfer nodes and ControlTrigger.

Not thread-safe by itself: the executor calls every method here under its one lock.
`ready` lists collect (node, frame, iteration, is_dead) tuples for the caller to run.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from common.executor.graph_view import (
    ENTER,
    EXIT,
    NEXT_ITERATION,
    NORMAL,
    FrameInfo,
    GraphView,
    hash64_combine,
)
from common.ops.registry import DEAD

Tagged = tuple  # (node index, FrameState, IterationState, is_dead)


class IterationState:
    __slots__ = (
        "dead",
        "frame_iter",
        "inputs",
        "iter_num",
        "outstanding_frames",
        "outstanding_ops",
        "pending",
    )

    def __init__(self, frame_id: int, iter_num: int, info: FrameInfo) -> None:
        self.iter_num = iter_num
        self.frame_iter = (frame_id, iter_num)  # what kernels see as ctx.frame_iter
        self.pending = info.pending[:]
        self.dead = [0] * len(info.pending)
        self.inputs: list[Any] = [DEAD] * info.total_inputs
        self.outstanding_ops = 0  # nodes of this iteration ready or running
        self.outstanding_frames = 0  # child frames started from this iteration


class FrameState:
    __slots__ = (
        "dead_exits",
        "frame_id",
        "info",
        "inv_values",
        "iteration_count",
        "iterations",
        "max_parallel",
        "next_iter_roots",
        "num_outstanding_iterations",
        "num_pending_inputs",
        "parent",
        "parent_iter",
    )

    def __init__(
        self,
        frame_id: int,
        info: FrameInfo,
        parent: FrameState | None,
        parent_iter: IterationState | None,
        max_parallel: int,
    ) -> None:
        self.frame_id = frame_id
        self.info = info
        self.parent = parent
        self.parent_iter = parent_iter
        self.max_parallel = max(1, max_parallel)
        self.iterations: dict[int, IterationState] = {0: IterationState(frame_id, 0, info)}
        self.iteration_count = 0
        self.num_outstanding_iterations = 1
        self.num_pending_inputs = info.input_count
        self.next_iter_roots: list[tuple[int, Any]] = []
        self.inv_values: list[tuple[int, Any]] = []
        self.dead_exits: list[int] = []

    def is_iteration_done(self, it: IterationState) -> bool:
        if it.outstanding_ops == 0 and it.outstanding_frames == 0:
            if it.iter_num == 0:
                return self.num_pending_inputs == 0
            return (it.iter_num - 1) not in self.iterations
        return False

    def is_done(self) -> bool:
        return self.num_pending_inputs == 0 and self.num_outstanding_iterations == 0


class Propagator:
    """The frames of one step of one executor."""

    def __init__(self, view: GraphView) -> None:
        self.view = view
        self.root = FrameState(0, view.frames[0], None, None, 1)
        self.frames: dict[int, FrameState] = {0: self.root}

    # -- activation ------------------------------------------------------------------------
    def activate(
        self,
        i: int,
        is_dead: bool,
        frame: FrameState,
        it: IterationState,
        outputs: list | None,
        ready: deque,
    ) -> int:
        """Deliver node i's outputs to its consumers in (frame, it); returns how many
        consumers became ready (appended to `ready`)."""
        view = self.view
        pend, deadc, inputs = it.pending, it.dead, it.inputs
        n = 0
        if not view.slow[i]:
            for slot, dst, loc, pid in view.out_edges[i]:
                v = DEAD if outputs is None else outputs[slot]
                inputs[loc] = v
                if v is DEAD:
                    deadc[pid] += 1
                c = pend[pid] - 1
                pend[pid] = c
                if c == 0:
                    ready.append((dst, frame, it, deadc[pid] > 0))
                    n += 1
            for dst, pid in view.ctrl_out[i]:
                if is_dead:
                    deadc[pid] += 1
                c = pend[pid] - 1
                pend[pid] = c
                if c == 0:
                    ready.append((dst, frame, it, deadc[pid] > 0))
                    n += 1
            return n
        return self._activate_slow(i, is_dead, frame, it, outputs, ready)

    def _activate_slow(self, i, is_dead, frame, it, outputs, ready) -> int:
        view = self.view
        is_merge, is_ct, num_inputs = view.is_merge, view.is_control_trigger, view.num_inputs
        pend, deadc, inputs = it.pending, it.dead, it.inputs
        from_enter = view.kinds[i] == ENTER
        n = 0
        for slot, dst, loc, pid in view.out_edges[i]:
            v = DEAD if outputs is None else outputs[slot]
            if is_merge[dst]:
                if v is not DEAD:
                    inputs[loc] = v
                    pend[pid] &= ~1  # mark live: clears the "waiting for data" bit
                    ready_now = pend[pid] == 0
                    dst_dead = False
                else:
                    # A dead Enter kills the Merge: a loop on an untaken cond branch.
                    deadc[pid] += 1
                    dst_dead = deadc[pid] == num_inputs[dst] or from_enter
                    ready_now = pend[pid] == 1 and dst_dead
            else:
                inputs[loc] = v
                if v is DEAD:
                    deadc[pid] += 1
                pend[pid] -= 1
                ready_now = pend[pid] == 0
                dst_dead = deadc[pid] > 0
            if ready_now:
                ready.append((dst, frame, it, dst_dead and not is_ct[dst]))
                n += 1
        for dst, pid in view.ctrl_out[i]:
            if is_merge[dst]:
                pend[pid] -= 2
                dst_dead = deadc[pid] == num_inputs[dst]
                ready_now = pend[pid] == 0 or (pend[pid] == 1 and dst_dead)
            else:
                if is_dead:
                    deadc[pid] += 1
                pend[pid] -= 1
                ready_now = pend[pid] == 0
                dst_dead = deadc[pid] > 0
            if ready_now:
                ready.append((dst, frame, it, dst_dead and not is_ct[dst]))
                n += 1
        return n

    # -- after a node ran -----------------------------------------------------------------------
    def propagate(
        self, i: int, frame: FrameState, it: IterationState, is_dead: bool, outputs, ready: deque
    ) -> None:
        """Node i finished in (frame, it): make its consumers ready, move values across
        frames and iterations, and retire finished iterations and frames."""
        kind = self.view.kinds[i]
        if kind == NORMAL:
            n = self.activate(i, is_dead, frame, it, outputs, ready)
            self.adjust(frame, it, n - 1, ready)
            return
        if kind == ENTER:
            self._propagate_enter(i, frame, it, is_dead, outputs, ready)
        elif kind == EXIT:
            if is_dead:
                if it.iter_num == frame.iteration_count:
                    frame.dead_exits.append(i)  # held until the frame is done
            else:
                parent, parent_iter = frame.parent, frame.parent_iter
                assert parent is not None and parent_iter is not None  # the root has no Exit
                n = self.activate(i, False, parent, parent_iter, outputs, ready)
                self.adjust(parent, parent_iter, n, ready)
        else:
            assert kind == NEXT_ITERATION
            if not is_dead:  # a dead NextIteration stops the deadness here
                self._propagate_next_iteration(i, frame, it, outputs, ready)
        self.adjust(frame, it, -1, ready)

    def _propagate_enter(self, i, frame, it, is_dead, outputs, ready) -> None:
        child = self._find_or_create_child(frame, it, i)
        it0 = child.iterations.get(0)
        child.num_pending_inputs -= 1
        if self.view.is_constant_enter[i]:
            self._add_loop_inv(child, i, DEAD if outputs is None else outputs[0], ready)
        elif it0 is not None:
            n = self.activate(i, is_dead, child, it0, outputs, ready)
            self.adjust(child, it0, n, ready)
        it0 = child.iterations.get(0)
        if it0 is not None and it0.outstanding_ops == 0:
            self.cleanup_iterations(child, it0, ready)

    def _propagate_next_iteration(self, i, frame, it, outputs, ready) -> None:
        if it.iter_num == frame.iteration_count:
            if frame.num_outstanding_iterations == frame.max_parallel:
                frame.next_iter_roots.append((i, outputs[0]))  # deferred
                return
            out_it = self._increment_iteration(frame, ready)
        else:
            out_it = frame.iterations[it.iter_num + 1]
        n = self.activate(i, False, frame, out_it, outputs, ready)
        self.adjust(frame, out_it, n, ready)

    # -- frames and iterations ------------------------------------------------------------------
    def _find_or_create_child(self, frame: FrameState, it: IterationState, i: int) -> FrameState:
        info = self.view.frames[self.view.enter_frame[i]]
        child_id = hash64_combine(frame.frame_id, hash64_combine(it.iter_num, info.name_hash))
        child = self.frames.get(child_id)
        if child is None:
            child = FrameState(child_id, info, frame, it, info.parallel_iterations)
            self.frames[child_id] = child
            it.outstanding_frames += 1
        return child

    def _add_loop_inv(self, frame: FrameState, i: int, value: Any, ready: deque) -> None:
        """A constant Enter: the value is visible to every iteration, present and future."""
        frame.inv_values.append((i, value))
        is_dead = value is DEAD
        for k in range(frame.iteration_count + 1):
            it = frame.iterations.get(k)
            if it is not None:
                n = self.activate(i, is_dead, frame, it, [value], ready)
                self.adjust(frame, it, n, ready)

    def _increment_iteration(self, frame: FrameState, ready: deque) -> IterationState:
        frame.iteration_count += 1
        it = IterationState(frame.frame_id, frame.iteration_count, frame.info)
        frame.iterations[frame.iteration_count] = it
        frame.num_outstanding_iterations += 1
        frame.dead_exits.clear()
        n = 0
        roots, frame.next_iter_roots = frame.next_iter_roots, []
        for i, value in roots:  # deferred NextIterations
            n += self.activate(i, value is DEAD, frame, it, [value], ready)
        for i, value in frame.inv_values:  # loop invariants
            n += self.activate(i, value is DEAD, frame, it, [value], ready)
        it.outstanding_ops += n
        return it

    def adjust(self, frame: FrameState, it: IterationState, delta: int, ready: deque) -> None:
        if delta == 0:
            return
        it.outstanding_ops += delta
        if it.outstanding_ops == 0:
            self.cleanup_iterations(frame, it, ready)

    def cleanup_iterations(self, frame: FrameState, it: IterationState, ready: deque) -> None:
        """Retire consecutive finished iterations (starting a deferred one for each), then
        the frame itself if it is done."""
        cur = it.iter_num
        if frame.iterations.get(cur) is not it:
            return  # already retired
        while cur <= frame.iteration_count and frame.is_iteration_done(it):
            del frame.iterations[cur]
            frame.num_outstanding_iterations -= 1
            cur += 1
            if frame.next_iter_roots:
                self._increment_iteration(frame, ready)
            if cur <= frame.iteration_count:
                it = frame.iterations[cur]
        if frame.parent is not None and frame.is_done() and frame.frame_id in self.frames:
            self._delete_frame(frame, ready)

    def _delete_frame(self, frame: FrameState, ready: deque) -> None:
        parent, parent_iter = frame.parent, frame.parent_iter
        assert parent is not None and parent_iter is not None
        n = 0
        for i in frame.dead_exits:
            n += self._propagate_dead_exit(i, parent, parent_iter, ready)
        frame.dead_exits = []
        del self.frames[frame.frame_id]
        parent_iter.outstanding_ops += n
        parent_iter.outstanding_frames -= 1
        if parent_iter.outstanding_ops == 0:
            self.cleanup_iterations(parent, parent_iter, ready)

    def _propagate_dead_exit(self, i, frame: FrameState, it: IterationState, ready) -> int:
        view = self.view
        pend, deadc = it.pending, it.dead
        n = 0
        for _, dst, _, pid in view.out_edges[i]:
            deadc[pid] += 1
            if view.is_merge[dst]:
                dst_dead = deadc[pid] == view.num_inputs[dst]
                ready_now = pend[pid] == 1 and dst_dead
            else:
                pend[pid] -= 1
                ready_now, dst_dead = pend[pid] == 0, True
            if ready_now:
                ready.append((dst, frame, it, dst_dead and not view.is_control_trigger[dst]))
                n += 1
        for dst, pid in view.ctrl_out[i]:
            if view.is_merge[dst]:
                pend[pid] -= 2
                dst_dead = deadc[pid] == view.num_inputs[dst]
                ready_now = pend[pid] == 0 or (pend[pid] == 1 and dst_dead)
            else:
                deadc[pid] += 1
                pend[pid] -= 1
                ready_now, dst_dead = pend[pid] == 0, True
            if ready_now:
                ready.append((dst, frame, it, dst_dead and not view.is_control_trigger[dst]))
                n += 1
        return n
