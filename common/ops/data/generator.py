"""Ops (executor stage), a tf.data source calling functions: GeneratorDataset (TensorFlow's
generator_dataset_op.cc), what tf.data.Dataset.from_generator builds on.

An iterator runs `init_func` once, on its first get_next, for a state; then `next_func` on
that state for each element, until `next_func` fails with OutOfRange, which ends the
sequence; then `finalize_func` on the state, once. Functions run as child steps of the step
asking for the element (base.CapturedFunction). An iterator dropped before its end (its
resource deleted, re-made by MakeIterator, or gone with the session) runs `finalize_func`
as TensorFlow's destructor does: on a thread of its own (the drop may happen under a
lock the function's kernels need), as a child of a step made for it on the device of
the step that started the iterator.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any

from common.errors import OpError, OutOfRangeError
from common.ops.data.base import (
    CapturedFunction,
    Dataset,
    DatasetFn,
    DatasetIterator,
    Element,
    IteratorContext,
    as_element,
    dataset_kernel,
    function_factory,
    spec_of,
)
from common.ops.registry import KernelConstruction, OpKernelContext, register_op

register_op("GeneratorDataset",
            inputs=["init_func_other_args: Tinit_func_args",
                    "next_func_other_args: Tnext_func_args",
                    "finalize_func_other_args: Tfinalize_func_args"],
            outputs=["handle: variant"],
            attrs=["init_func: func", "next_func: func", "finalize_func: func",
                   "Tinit_func_args: list(type) >= 0", "Tnext_func_args: list(type) >= 0",
                   "Tfinalize_func_args: list(type) >= 0", "output_types: list(type) >= 1",
                   "output_shapes: list(shape) >= 1", "metadata: string = ''"],
            stateful=True)  # fmt: skip


class GeneratorDataset(Dataset):
    def __init__(
        self,
        init_func: CapturedFunction,
        next_func: CapturedFunction,
        finalize_func: CapturedFunction,
        types: list,
        shapes: list,
    ) -> None:
        super().__init__(types, shapes)
        self.init_func, self.next_func, self.finalize_func = init_func, next_func, finalize_func

    def make_iterator(self) -> DatasetIterator:
        return _GeneratorIterator(self)


class _GeneratorIterator(DatasetIterator):
    def __init__(self, ds: GeneratorDataset) -> None:
        super().__init__()
        self.ds = ds
        self.state: list | None = None
        self.finalized = False
        self._on_drop: weakref.finalize | None = None

    def _next(self, ctx: IteratorContext) -> Element | None:
        if self.state is None:
            self.state = self.ds.init_func(ctx, [])
            # Holds no reference to the iterator, so dropping it triggers the call.
            self._on_drop = weakref.finalize(
                self, _finalize_dropped, self.ds.finalize_func, self.state, ctx.step
            )
        if self.finalized:
            return None
        try:
            outputs = self.ds.next_func(ctx, self.state)
        except OutOfRangeError:
            # next_func ends the sequence by failing with OutOfRange (TF's contract);
            # what finalize_func returns is ignored.
            self.finalized = True
            if self._on_drop is not None:
                self._on_drop.detach()
            self.ds.finalize_func(ctx, self.state)
            return None
        return as_element(outputs, self.ds.output_types)


_finalize_ids = itertools.count()


def _finalize_dropped(finalize_func: CapturedFunction, state: list, started_by: Any) -> None:
    """An iterator was dropped before its end: run `finalize_func` on its state."""

    def run() -> None:
        from common.executor.step import StepState  # it imports the kernel registry

        container = f"__generator_finalize_{next(_finalize_ids)}"
        step = StepState(
            step_id=started_by.step_id,
            device=started_by.device,
            incarnation=started_by.incarnation,
            resource_mgr=started_by.resource_mgr,
            step_container=container,
            function_runtime=started_by.function_runtime,
        )
        try:
            finalize_func(IteratorContext(step), state)
        except OpError:
            pass  # TF's destructor logs the failure; nobody is waiting for it
        finally:
            step.resource_mgr.cleanup(container)

    threading.Thread(target=run, name="generator-finalize", daemon=True).start()


@dataset_kernel("GeneratorDataset")
def _generator_dataset(k: KernelConstruction) -> DatasetFn:
    types, shapes = spec_of(k)
    n_init = len(k.attr("Tinit_func_args"))
    n_next = len(k.attr("Tnext_func_args"))
    # The three functions' captured inputs follow one another.
    make_init = function_factory(k, "init_func", "Tinit_func_args", 0)
    make_next = function_factory(k, "next_func", "Tnext_func_args", n_init)
    make_finalize = function_factory(k, "finalize_func", "Tfinalize_func_args", n_init + n_next)

    def make(ctx: OpKernelContext, inputs: list) -> Dataset:
        return GeneratorDataset(
            make_init(ctx, inputs),
            make_next(ctx, inputs),
            make_finalize(ctx, inputs),
            types,
            shapes,
        )

    return make
